"""Node choice among preemption candidates (``model/actions/preemption.py`` ``chosen_node``), one test
per rule of upstream ``pickOneNodeForPreemption``, each transcribing a case of ``TestSelectBestCandidate``
(kubernetes/kubernetes ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go``
at ``5def93b10a782c40035e7cf3bf5156616b1ce62e``) by its upstream name.

Upstream's nodes are 500m cpu / 500 memory and every request is cpu and memory in the same proportion
(small 100m/100, medium 200m/200, large 300m/300, very large 500m/500), so cpu alone decides each case:
the transcriptions keep only cpu. Priorities: neg -100, low 0, mid 100, high 1000, very high 10000.
Upstream's start times (``StartTime(epochTimeN)``) become declaration order, the model's stand-in for a
pod's start time: pods are declared in the order of their upstream start times.

The fewest-PDB-violations rule (1) has no ``TestSelectBestCandidate`` case at that commit; it is
tested in ``tests/test_disruption_budgets.py`` (``test_the_node_with_fewest_budget_violations_is_chosen_first``).
"""

from __future__ import annotations

from kepcheck.model.actions.next import next_steps
from kepcheck.model.actions.preemption import ADJUSTMENT, victim_key
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.spec.kep.variants import variant_by_name
from kepcheck.spec.language.loader import parse_scenario

NEG, LOW, MID, HIGH, VERY_HIGH = -100, 0, 100, 1000, 10000
SMALL, MEDIUM, LARGE, VERY_LARGE = "100m", "200m", "300m", "500m"


def chosen(nodes, pods, preemptor=HIGH, request=VERY_LARGE, variant="alpha-1.37") -> list[str]:
    """The nodes PreemptForPod may choose for the pending pod ``p``: ``pods`` are (name, node,
    priority, cpu), declared in the given order (= start order)."""
    document = {
        "name": "select-best-candidate",
        "nodes": [{"name": n, "allocatable": {"cpu": "500m"}} for n in nodes],
        "pods": [{"name": name, "node": node, "priority": priority, "requests": {"cpu": cpu}}
                 for name, node, priority, cpu in pods]
        + [{"name": "p", "priority": preemptor, "requests": {"cpu": request}}],
    }
    ctx = Context.build(parse_scenario(document, "test"), variant_by_name(variant))
    state = initial_state(ctx)
    return [action.param("node") for action, _ in next_steps(ctx, state) if action.name == "PreemptForPod"]


def test_a_pod_that_fits_on_both_nodes_when_lower_priority_pods_are_preempted():
    """Upstream accepts node1 or node2 (equal start times: the first node of a Go map's order). The
    model's start times are declaration order, so rule 5 decides before rule 6: p2 started later, node2."""
    pods = [("p1", "node1", MID, LARGE), ("p2", "node2", MID, LARGE)]
    assert chosen(["node1", "node2"], pods, request=LARGE) == ["node2"]
    assert chosen(["node1", "node2"], pods[::-1], request=LARGE) == ["node1"]


def test_node_with_min_highest_priority_pod_is_picked():
    """Rule 2."""
    pods = [("p1.1", "node1", MID, MEDIUM), ("p1.2", "node1", MID, LARGE),
            ("p2.1", "node2", MID, MEDIUM), ("p2.2", "node2", LOW, MEDIUM),
            ("p3.1", "node3", LOW, MEDIUM), ("p3.2", "node3", LOW, MEDIUM)]
    assert chosen(["node1", "node2", "node3"], pods) == ["node3"]


def test_when_highest_priorities_are_the_same_minimum_sum_of_priorities_is_picked():
    """Rule 3 with equal victim counts: the adjusted and the plain sums agree."""
    pods = [("p1.1", "node1", MID, MEDIUM), ("p1.2", "node1", MID, LARGE),
            ("p2.1", "node2", MID, LARGE), ("p2.2", "node2", LOW, MEDIUM),
            ("p3.1", "node3", MID, MEDIUM), ("p3.2", "node3", MID, MEDIUM)]
    assert chosen(["node1", "node2", "node3"], pods) == ["node2"]


def test_when_highest_priority_and_sum_are_the_same_minimum_number_of_pods_is_picked():
    """Rules 3 and 4: every plain sum is 0; node2 has the fewest victims (and so the least adjusted sum)."""
    pods = [("p1.1", "node1", MID, SMALL), ("p1.2", "node1", NEG, SMALL),
            ("p1.3", "node1", MID, SMALL), ("p1.4", "node1", NEG, SMALL),
            ("p2.1", "node2", MID, LARGE), ("p2.2", "node2", NEG, MEDIUM),
            ("p3.1", "node3", MID, MEDIUM), ("p3.2", "node3", NEG, SMALL), ("p3.3", "node3", LOW, SMALL)]
    assert chosen(["node1", "node2", "node3"], pods) == ["node2"]


SUM_OF_ADJUSTED = [("p1.1", "node1", MID, SMALL), ("p1.2", "node1", NEG, SMALL), ("p1.3", "node1", NEG, SMALL),
                   ("p2.1", "node2", MID, LARGE), ("p2.2", "node2", NEG, MEDIUM),
                   ("p3.1", "node3", MID, MEDIUM), ("p3.2", "node3", NEG, SMALL), ("p3.3", "node3", LOW, SMALL)]


def test_sum_of_adjusted_priorities_is_considered():
    """Rule 3: plain sums are node1 -100, node2 0, node3 0 (a plain sum picks node1); adjusted sums
    (priority + MaxInt32 + 1 each) are node1 3·2³¹ − 100, node2 2·2³¹, node3 3·2³¹: node2."""
    assert chosen(["node1", "node2", "node3"], SUM_OF_ADJUSTED) == ["node2"]


def test_the_adjusted_sum_counts_each_victim_once_more_than_its_priority():
    ctx = Context.build(parse_scenario({
        "name": "t", "nodes": [{"name": "n1", "allocatable": {"cpu": "1"}}],
        "pods": [{"name": "a", "node": "n1", "priority": -100, "requests": {"cpu": "100m"}},
                 {"name": "b", "node": "n1", "priority": 100, "requests": {"cpu": "100m"}}]}, "t"),
        variant_by_name("alpha-1.37"))
    highest, total, count, start = victim_key(ctx, {0: True, 1: True})
    assert (highest, total, count) == (100, 2 * ADJUSTMENT, 2)
    assert start == 2 - 1  # pods minus the start of the earliest highest-priority victim, b (index 1)


def test_non_overlapping_lowest_high_priority_sum_priorities_and_number_of_pods():
    """Rules 2..4 each separate a different pair of nodes. Upstream's node3 holds 600m on a 500m node,
    which the model's loader refuses: p3.4 is small instead of medium here (node3 still loses every
    pod, so its victims and the outcome are the same)."""
    pods = [("p1.1", "node1", MID, SMALL), ("p1.2", "node1", LOW, SMALL), ("p1.3", "node1", LOW, SMALL),
            ("p2.1", "node2", HIGH, LARGE),
            ("p3.1", "node3", MID, MEDIUM), ("p3.2", "node3", LOW, SMALL), ("p3.3", "node3", LOW, SMALL),
            ("p3.4", "node3", LOW, SMALL),
            ("p4.1", "node4", MID, MEDIUM), ("p4.2", "node4", MID, SMALL), ("p4.3", "node4", MID, SMALL),
            ("p4.4", "node4", NEG, SMALL)]
    assert chosen(["node1", "node2", "node3", "node4"], pods, preemptor=VERY_HIGH) == ["node1"]


def test_same_priority_same_number_of_victims_different_start_time_for_each_nodes_pod():
    """Rule 5: node3's pods started first (t1), node1's next (t2), node2's last (t3): node2."""
    pods = [("p3.1", "node3", MID, MEDIUM), ("p3.2", "node3", MID, MEDIUM),
            ("p1.1", "node1", MID, MEDIUM), ("p1.2", "node1", MID, MEDIUM),
            ("p2.1", "node2", MID, MEDIUM), ("p2.2", "node2", MID, MEDIUM)]
    assert chosen(["node1", "node2", "node3"], pods) == ["node2"]


def test_same_priority_same_number_of_victims_different_start_time_for_all_pods():
    """Rule 5 on the earliest victim of each node: node1 t2, node2 t1, node3 t3: node3."""
    pods = [("p2.2", "node2", MID, MEDIUM), ("p1.2", "node1", MID, MEDIUM), ("p3.1", "node3", MID, MEDIUM),
            ("p1.1", "node1", MID, MEDIUM), ("p2.1", "node2", MID, MEDIUM), ("p3.2", "node3", MID, MEDIUM)]
    assert chosen(["node1", "node2", "node3"], pods) == ["node3"]


def test_different_priority_same_number_of_victims_different_start_time_for_all_pods():
    """Rule 5 reads only the highest-priority victims (mid): node1 t2, node2 t6, node3 t5: node2."""
    pods = [("p2.2", "node2", LOW, MEDIUM), ("p1.2", "node1", MID, MEDIUM), ("p3.1", "node3", LOW, MEDIUM),
            ("p1.1", "node1", LOW, MEDIUM), ("p3.2", "node3", MID, MEDIUM), ("p2.1", "node2", MID, MEDIUM)]
    assert chosen(["node1", "node2", "node3"], pods) == ["node2"]
