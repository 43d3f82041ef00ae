"""PodDisruptionBudgets in victim selection (``spec/language/disruption_budgets.py``, ``model/actions/preemption.py``;
issue 11, gap 6).

Sources: ``SelectVictimsOnNode`` and ``filterPodsWithPDBViolation`` in
``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`` (the potential victims,
sorted most important first, are split into PDB-violating and non-violating ones, each using one of
``status.disruptionsAllowed`` of every budget that selects it, a budget taken below 0 meaning a
violation; the violating ones are reprieved first), ``pickOneNodeForPreemption`` in
``pkg/scheduler/framework/preemption/preemption.go`` (fewest PDB violations first), and the
disruption controller's ``disruptionsAllowed`` = healthy pods − ``minAvailable``, at least 0
(``pkg/controller/disruption/disruption.go``, ``updatePdbStatus`` / ``countHealthyPods``). docs/reference.md §3.3.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kepcheck.checks.engines.explicit import check_explicit
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.model.actions.preemption import budget_violating, disruptions_allowed
from kepcheck.spec.language.loader import load_scenario, parse_scenario
from kepcheck.spec.kep.variants import variant_by_name
from kepcheck.spec.kep.vocabulary import Phase

from conftest import assert_refused
from test_actions import deferred, get, node, pod, run, setp

SHIPPED = "spec/scenarios/20-budget-protected-deferred-pod.yaml"


def _with_budgets(nodes, pods, budgets, environment=None, variant="alpha-1.37"):
    document = {"name": "test", "nodes": nodes, "pods": pods, "podDisruptionBudgets": budgets}
    if environment is not None:
        document["environment"] = environment
    ctx = Context.build(parse_scenario(document, "test"), variant_by_name(variant))
    return ctx, initial_state(ctx)


def _evicted(ctx, state) -> set:
    return {ctx.names[i] for i, p in enumerate(state.pods) if p.phase == Phase.TERMINATING}


# --- the loader ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("budgets, field, words", [
    ([{"name": "b", "pods": ["ghost"], "minAvailable": 1}], "podDisruptionBudgets[0].pods[0]", "unknown pod"),
    ([{"name": "b", "pods": ["a", "a"], "minAvailable": 1}], "podDisruptionBudgets[0].pods[1]", "listed twice"),
    ([{"name": "b", "pods": [], "minAvailable": 1}], "podDisruptionBudgets[0].pods", "at least one pod"),
    ([{"name": "b", "pods": ["a"], "minAvailable": -1}], "podDisruptionBudgets[0].minAvailable", "at least 0"),
    ([{"name": "b", "pods": ["a"], "minAvailable": "50%"}], "podDisruptionBudgets[0].minAvailable", "integer"),
    ([{"name": "b", "pods": ["a"]}], "podDisruptionBudgets[0]", "minAvailable"),
    ([{"name": "b", "pods": ["a"], "minAvailable": 1, "maxUnavailable": 1}], "podDisruptionBudgets[0]", "maxUnavailable"),
    ([{"name": "b", "pods": ["a"], "minAvailable": 1}, {"name": "b", "pods": ["a"], "minAvailable": 0}],
     "podDisruptionBudgets[1].name", "duplicate PodDisruptionBudget name"),
    ([{"name": "B_1", "pods": ["a"], "minAvailable": 1}], "podDisruptionBudgets[0].name", "RFC 1123 subdomain"),
])
def test_the_loader_refuses_bad_budgets_with_one_line(budgets, field, words):
    document = {"name": "t", "nodes": [node("n1", "2")], "pods": [pod("a", "1", node="n1")],
                "podDisruptionBudgets": budgets}
    assert_refused(document, field, words)


# --- disruptionsAllowed and filterPodsWithPDBViolation ---------------------------------------------------

def test_disruptions_allowed_counts_healthy_pods_above_min_available():
    """Healthy = Ready and not being deleted: a terminating pod no longer counts."""
    ctx, state = _with_budgets([node("n1", "4")], [pod(n, "1", node="n1") for n in "abc"],
                               [{"name": "b", "pods": ["a", "b", "c"], "minAvailable": 1}])
    assert disruptions_allowed(ctx, state, 0) == 2
    state = setp(ctx, state, "a", phase=Phase.TERMINATING)
    assert disruptions_allowed(ctx, state, 0) == 1
    state = setp(ctx, state, "b", phase=Phase.TERMINATING)
    assert disruptions_allowed(ctx, state, 0) == 0
    state = setp(ctx, state, "c", phase=Phase.TERMINATING)
    assert disruptions_allowed(ctx, state, 0) == 0  # never below 0


def test_each_victim_uses_one_disruption_and_the_first_beyond_the_budget_violates():
    """Walking the victims in order, a budget with one disruption allowed lets the first selected
    victim go and counts the second as a violation; a pod no budget selects never violates."""
    ctx, state = _with_budgets([node("n1", "4")], [pod(n, "1", node="n1") for n in "abc"],
                               [{"name": "b", "pods": ["a", "b"], "minAvailable": 1}])
    violating = budget_violating(ctx, state, {0: True, 1: True, 2: True}, [0, 1, 2])
    assert violating == {0: False, 1: True, 2: False}
    violating = budget_violating(ctx, state, {0: False, 1: True, 2: True}, [0, 1, 2])
    assert violating == {0: False, 1: False, 2: False}  # a pod not on the node uses nothing


# --- the reprieve order and the node choice --------------------------------------------------------------

VICTIMS_ON_ONE_NODE = [deferred("web", "3", "2", priority=100), pod("low", "1", node="n1", priority=5),
                       pod("mid", "1", node="n1", priority=10)]


@pytest.mark.parametrize("budgets, victim", [
    ([], "low"),  # the most important (mid) is reprieved first: low is the victim
    ([{"name": "protect-low", "pods": ["low"], "minAvailable": 1}], "mid"),  # the violating low is reprieved first
    # walked most important first, mid uses the one disruption allowed, so low violates and is reprieved first
    ([{"name": "protect-both", "pods": ["low", "mid"], "minAvailable": 1}], "mid"),
])
def test_budget_violating_victims_are_reprieved_first(budgets, victim):
    ctx, state = _with_budgets([node("n1", "4")], VICTIMS_ON_ONE_NODE, budgets)
    assert _evicted(ctx, run(ctx, state, "PreemptForResize(pod=web)")) == {victim}


def test_the_node_with_fewest_budget_violations_is_chosen_first():
    """Without budgets the pending pod preempts on n1 (the lower victim priority); when low's budget
    would be violated it preempts on n2, although n2's victim has the higher priority."""
    nodes = [node("n1", "2"), node("n2", "2")]
    pods = [pod("low", "2", node="n1", priority=1), pod("mid", "2", node="n2", priority=5),
            pod("urgent", "2", priority=100)]
    for budgets, chosen in (([], "n1"), ([{"name": "b", "pods": ["low"], "minAvailable": 1}], "n2")):
        ctx, state = _with_budgets(nodes, pods, budgets)
        state = run(ctx, state, f"PreemptForPod(pod=urgent, node={chosen})")
        assert get(ctx, state, "urgent").nominated == ctx.node_names.index(chosen)


# --- the shipped scenario: a verdict the budget changes ----------------------------------------------------

def _verdicts(scenario, variant="alpha-1.37"):
    return {r.property: r for r in check_explicit(Context.build(scenario, variant_by_name(variant), ()))}


def test_the_budget_turns_one_victim_into_two_the_kubelet_did_not_need():
    """Scenario 20: with cache-pdb the preemption for web evicts api and batch (NoExcessVictims ✗);
    the same cluster without the budget evicts cache alone (NoExcessVictims ✓) — the old behaviour."""
    shipped = load_scenario(SHIPPED)
    with_budget = _verdicts(shipped)
    assert with_budget["NoExcessVictims"].verdict == "violated"
    assert with_budget["NoExcessVictims"].trace.labels == ["PreemptForResize(pod=web)"]
    ctx = Context.build(shipped, variant_by_name("alpha-1.37"), ())
    assert _evicted(ctx, run(ctx, initial_state(ctx), "PreemptForResize(pod=web)")) == {"api", "batch"}

    without = replace(shipped, budgets=())
    assert _verdicts(without)["NoExcessVictims"].verdict == "holds"
    ctx = Context.build(without, variant_by_name("alpha-1.37"), ())
    assert _evicted(ctx, run(ctx, initial_state(ctx), "PreemptForResize(pod=web)")) == {"cache"}
