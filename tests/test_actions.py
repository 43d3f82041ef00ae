"""Each action's guard and effect on small hand-built states (``model/actions/user.py``, ``model/actions/scheduler.py``,
``model/actions/kubelet.py``).

Scenarios are written in Kubernetes vocabulary and parsed with ``parse_scenario``; states come from
``initial_state`` and, where a situation is hard to reach, from ``replace_pod`` (``dataclasses.replace``). Steps are
taken through ``next_steps`` / ``apply_action``, so every effect is seen together with what the
scheduler's event handlers do with it (``scheduler_observes``).

Expectations come from ``docs/reference.md``: kubelet retry order (§2.3, §7.2
K-11), a newer spec during actuation (§2.5, K-9), victim selection and fit (§3.3, §7.4 P-1, P-2,
P-4..P-7), the resize-preemption integration tests
(§7.3 S-1, S-3..S-5) and queueing hints (§7.3 S-6..S-11, S-15..S-18). A case where the model
disagrees with the reference is a strict xfail, never a weakened assertion.

Not covered because the model leaves them out: label-only updates (S-12), node allocatable changes
(S-13, S-14), PodScheduled. QoS classes (K-11's Guaranteed pod) and PodDisruptionBudgets are covered
in ``tests/test_qos.py`` and ``tests/test_disruption_budgets.py``.
"""

from __future__ import annotations

import pytest


from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.model.actions.next import next_steps
from kepcheck.model.actions.kubelet import pending_resize_slots
from kepcheck.model.actions.next import apply_action as step
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.model.state import NO_NODE, replace_pod
from kepcheck.spec.kubernetes.quantities import parse_quantity
from kepcheck.spec.language.loader import default_scenarios, parse_scenario
from kepcheck.spec.kep.variants import variant_by_name
from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason


# --- helpers --------------------------------------------------------------------------------------------

def build(nodes, pods, environment=None, variant="alpha-1.37"):
    """(ctx, initial state) of a scenario given as node and pod mappings."""
    document = {"name": "test", "nodes": nodes, "pods": pods}
    if environment is not None:
        document["environment"] = environment
    ctx = Context.build(parse_scenario(document, "test"), variant_by_name(variant))
    return ctx, initial_state(ctx)


def node(name, cpu, memory=None, **extra):
    allocatable = {"cpu": cpu} if memory is None else {"cpu": cpu, "memory": memory}
    return {"name": name, "allocatable": allocatable, **extra}


def pod(name, cpu, *, node=None, priority=0, allocated=None, **extra):
    spec = {"name": name, "priority": priority, "requests": {"cpu": cpu}, **extra}
    if node is not None:
        spec["node"] = node
    if allocated is not None:
        spec["allocated"] = {"cpu": allocated}
    return spec


def deferred(name, cpu, allocated, *, node="n1", priority=0, **extra):
    return pod(name, cpu, node=node, priority=priority, allocated=allocated, resize="Deferred", **extra)


def enabled(ctx, state) -> list[str]:
    return [action.label() for action, _ in next_steps(ctx, state)]


def names_enabled(ctx, state) -> set[str]:
    return {action.name for action, _ in next_steps(ctx, state)}


def get(ctx, state, name):
    return state.pods[ctx.names.index(name)]


def setp(ctx, state, name, **changes):
    return replace_pod(state, ctx.names.index(name), **changes)


def units(ctx, cpu_text: str) -> tuple:
    """A cpu quantity in the scenario's model units, e.g. ``units(ctx, "2")``."""
    amount, unit = parse_quantity(cpu_text, "cpu"), ctx.scenario.units[0]
    assert amount % unit == 0, f"{cpu_text} is not a whole number of model units ({unit}m)"
    return (amount // unit,)


def run(ctx, state, *labels):
    for label in labels:
        state = step(ctx, state, label)
    return state


# --- RequestResize ----------------------------------------------------------------------------------------

def test_request_resize_sets_desired_and_marks_it_unobserved():
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}], "maxEvents": 1})
    assert enabled(ctx, state) == ["RequestResize(pod=web, requests=[cpu 2])"]
    after = step(ctx, state, "RequestResize(pod=web, requests=[cpu 2])")
    web = get(ctx, after, "web")
    assert web.desired == units(ctx, "2")
    assert web.allocated == web.actual == units(ctx, "1")
    assert web.observed is False and web.resize == ResizeReason.NONE and not web.in_progress
    assert after.env_events == 1 and after.env_used == (True,)
    assert "RequestResize" not in names_enabled(ctx, after)  # each menu entry happens at most once


def test_request_resize_disabled_once_max_events_is_used_up():
    environment = {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "3"}}]}
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")], {**environment, "maxEvents": 1})
    assert enabled(ctx, state) == ["RequestResize(pod=web, requests=[cpu 2])", "RequestResize(pod=web, requests=[cpu 3])"]
    after = step(ctx, state, "RequestResize(pod=web, requests=[cpu 2])")
    assert "RequestResize" not in names_enabled(ctx, after)  # the other entry is unused but the budget is spent

    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")], {**environment, "maxEvents": 2})
    after = step(ctx, state, "RequestResize(pod=web, requests=[cpu 2])")
    assert "RequestResize(pod=web, requests=[cpu 3])" in enabled(ctx, after)

    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")], {**environment, "maxEvents": 0})
    assert enabled(ctx, state) == []


def test_request_resize_needs_a_running_pod():
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}], "deletions": ["web"], "maxEvents": 2})
    after = step(ctx, state, "DeletePod(pod=web)")
    assert get(ctx, after, "web").phase == Phase.TERMINATING
    assert "RequestResize" not in names_enabled(ctx, after)


# --- RetryPendingResizes ----------------------------------------------------------------------------------

def test_retry_allocates_a_resize_that_fits():
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1"), pod("batch", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}]})
    state = step(ctx, state, "RequestResize(pod=web, requests=[cpu 2])")
    assert "RetryPendingResizes(node=n1)" in enabled(ctx, state)
    after = step(ctx, state, "RetryPendingResizes(node=n1)")
    web = get(ctx, after, "web")
    assert web.allocated == units(ctx, "2") and web.actual == units(ctx, "1")
    assert web.in_progress and web.resize == ResizeReason.NONE and web.observed
    assert "RetryPendingResizes" not in names_enabled(ctx, after)


def test_retry_allocates_a_deferred_resize_once_room_is_freed():
    """PodResizePending=Deferred is cleared and PodResizeInProgress set; the scheduler drops the pod."""
    ctx, state = build([node("n1", "4")], [deferred("web", "3", "2"), pod("batch", "2", node="n1")],
                       {"deletions": ["batch"]})
    state = run(ctx, state, "DeletePod(pod=batch)", "FinishTermination(pod=batch)")
    assert get(ctx, state, "web").resize == ResizeReason.DEFERRED
    after = step(ctx, state, "RetryPendingResizes(node=n1)")
    web = get(ctx, after, "web")
    assert web.allocated == units(ctx, "3") and web.resize == ResizeReason.NONE and web.in_progress
    assert web.queue == Queue.NOT_QUEUED  # condition gone: UpdatePod removes it from the queue (§4.3 (1))


def test_retry_defers_a_resize_that_does_not_fit_and_the_scheduler_enqueues_it():
    """S-18: an assigned running pod that gains PodResizePending=Deferred is enqueued by UpdatePod."""
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1"), pod("batch", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "4"}}]})
    state = step(ctx, state, "RequestResize(pod=web, requests=[cpu 4])")
    assert get(ctx, state, "web").queue == Queue.NOT_QUEUED
    after = step(ctx, state, "RetryPendingResizes(node=n1)")
    web = get(ctx, after, "web")
    assert web.resize == ResizeReason.DEFERRED and web.observed
    assert web.allocated == units(ctx, "1") and not web.in_progress
    assert web.queue == Queue.ACTIVE


def test_retry_clears_the_condition_on_a_revert():
    ctx, state = build([node("n1", "4")], [deferred("web", "3", "2"), pod("batch", "2", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}]})
    state = step(ctx, state, "RequestResize(pod=web, requests=[cpu 2])")
    assert get(ctx, state, "web").resize == ResizeReason.DEFERRED and not get(ctx, state, "web").observed
    after = step(ctx, state, "RetryPendingResizes(node=n1)")
    web = get(ctx, after, "web")
    assert web.resize == ResizeReason.NONE and web.observed and not web.in_progress
    assert web.allocated == web.desired == units(ctx, "2")
    assert web.queue == Queue.NOT_QUEUED


# --- kubelet retry order (§2.3, K-11) -----------------------------------------------------------------

def test_pending_resize_order_follows_kubelet_sort():
    """K-11 without the QoS tie-break (``tests/test_qos.py``): non-increasing first, then priority, then
    pods that carry PodResizePending (older first; the initial conditions tie, so declaration order),
    then pods without it."""
    pods = [
        pod("pod5", "1", node="n1"),  # grows, no condition yet
        deferred("pod1", "1500m", "1", priority=100),
        deferred("pod3", "1500m", "1"),
        pod("pod0", "1", node="n1"),  # shrinks
        deferred("pod4", "1500m", "1"),
    ]
    ctx, state = build([node("n1", "16")], pods)
    state = setp(ctx, state, "pod5", desired=units(ctx, "1500m"), observed=False)
    state = setp(ctx, state, "pod0", desired=units(ctx, "500m"), observed=False)
    order = [ctx.names[i] for i, condition in pending_resize_slots(ctx, state, 0) if condition]
    assert order == ["pod0", "pod1", "pod3", "pod4", "pod5"]


def test_the_older_pending_condition_is_retried_first():
    """``sortPendingResizes`` (docs/reference.md §2.3): among equal priority and QoS class, the older
    PodResizePending lastTransitionTime first. b's resize is Deferred first, so b is retried before a,
    which is declared first (scenario 22)."""
    ctx, state = build([node("n1", "4")], [pod("a", "1", node="n1", priority=10), pod("b", "1", node="n1", priority=10),
                                           pod("base", "2", node="n1", priority=10)],
                       {"resizes": [{"pod": "b", "requests": {"cpu": "2"}}, {"pod": "a", "requests": {"cpu": "2"}}]})
    state = run(ctx, state, "RequestResize(pod=b, requests=[cpu 2])", "RetryPendingResizes(node=n1)",
                "RequestResize(pod=a, requests=[cpu 2])", "RetryPendingResizes(node=n1)")
    assert [get(ctx, state, name).resize for name in "ab"] == [ResizeReason.DEFERRED] * 2
    assert [get(ctx, state, name).pending_since for name in "ab"] == [1, 0]
    assert [ctx.names[i] for i, condition in pending_resize_slots(ctx, state, 0) if condition] == ["b", "a"]


@pytest.mark.parametrize("before, after, rank", [
    (ResizeReason.DEFERRED, ResizeReason.DEFERRED, 0),  # the same reason again: lastTransitionTime kept
    (ResizeReason.INFEASIBLE, ResizeReason.DEFERRED, 1),  # the reason changed: a new lastTransitionTime
    (ResizeReason.NONE, ResizeReason.DEFERRED, 1),  # a new condition
])
def test_a_pending_condition_gets_a_new_time_when_it_appears_or_its_reason_changes(before, after, rank):
    """The status manager keeps lastTransitionTime while the reason is unchanged and sets it anew when the
    reason changes (kubernetes/kubernetes #131478, closed: "consider the changed reason as deleting the
    condition and adding a new one"). ``other`` has carried Deferred all along."""
    from kepcheck.model.actions.queue_order import stamped
    ctx, state = build([node("n1", "4")], [deferred("other", "2", "1"), deferred("web", "2", "1")])
    old = setp(ctx, state, "web", resize=before)
    new = setp(ctx, state, "web", resize=after)
    assert get(ctx, stamped(ctx, old, new), "web").pending_since == rank


def test_when_only_one_upsize_fits_the_higher_priority_pod_gets_it():
    pods = [deferred("low", "2", "1", priority=10), deferred("high", "2", "1", priority=100),
            pod("filler", "1", node="n1")]
    ctx, state = build([node("n1", "4")], pods)
    after = step(ctx, state, "PeriodicRetryPendingResizes(node=n1)")
    assert get(ctx, after, "high").allocated == units(ctx, "2")
    assert get(ctx, after, "high").resize == ResizeReason.NONE
    assert get(ctx, after, "low").allocated == units(ctx, "1")
    assert get(ctx, after, "low").resize == ResizeReason.DEFERRED
    # First come, first served (the kubelet-fifo variant) gives it to the pod declared first instead.
    ctx, state = build([node("n1", "4")], pods, variant="kubelet-fifo")
    after = step(ctx, state, "PeriodicRetryPendingResizes(node=n1)")
    assert get(ctx, after, "low").allocated == units(ctx, "2")
    assert get(ctx, after, "high").resize == ResizeReason.DEFERRED


def test_a_non_increasing_resize_is_decided_before_a_higher_priority_upsize():
    """low's pending revert (allocated 3, actual 1) frees room in the same pass, before high is tried."""
    ctx, state = build([node("n1", "4")], [deferred("high", "3", "1", priority=100), pod("low", "1", node="n1")])
    state = setp(ctx, state, "low", desired=units(ctx, "1"), allocated=units(ctx, "3"), actual=units(ctx, "1"),
                 in_progress=True, observed=False)
    after = step(ctx, state, "RetryPendingResizes(node=n1)")
    assert get(ctx, after, "low").allocated == units(ctx, "1")
    assert get(ctx, after, "high").allocated == units(ctx, "3")
    assert get(ctx, after, "high").resize == ResizeReason.NONE


def test_a_deferred_high_priority_resize_does_not_block_a_later_one():
    """§2.3: each pass tries every pending pod; an upsize that does not fit does not stop the pass."""
    pods = [deferred("high", "4", "1", priority=100), deferred("low", "2", "1", priority=10),
            pod("filler", "1", node="n1")]
    ctx, state = build([node("n1", "4")], pods)
    after = step(ctx, state, "PeriodicRetryPendingResizes(node=n1)")
    assert get(ctx, after, "high").resize == ResizeReason.DEFERRED
    assert get(ctx, after, "low").allocated == units(ctx, "2") and get(ctx, after, "low").resize == ResizeReason.NONE


def test_newer_spec_that_does_not_fit_while_the_previous_one_is_in_progress():
    """§2.5 / K-9: B is Deferred while A is still being actuated: both conditions are present."""
    ctx, state = build([node("n1", "4")],
                       [{"name": "web", "node": "n1", "requests": {"cpu": "2"}, "allocated": {"cpu": "2"},
                         "actual": {"cpu": "1"}, "resize": "InProgress"}, pod("other", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "4"}}]})
    assert get(ctx, state, "web").in_progress
    after = run(ctx, state, "RequestResize(pod=web, requests=[cpu 4])", "RetryPendingResizes(node=n1)")
    web = get(ctx, after, "web")
    assert web.resize == ResizeReason.DEFERRED and web.in_progress
    assert web.allocated == units(ctx, "2")
    after = step(ctx, after, "ActuateResize(pod=web)")
    web = get(ctx, after, "web")
    assert web.actual == units(ctx, "2") and not web.in_progress and web.resize == ResizeReason.DEFERRED


# --- AdmitPod, RejectPod, ActuateResize, FinishTermination ------------------------------------------------

def test_admit_pod_that_fits():
    ctx, state = build([node("n1", "4")], [pod("running", "2", node="n1"), pod("new", "2")])
    state = step(ctx, state, "BindPod(pod=new, node=n1)")
    assert get(ctx, state, "new").phase == Phase.BOUND
    assert "AdmitPod(pod=new)" in enabled(ctx, state)
    assert "RejectPod" not in names_enabled(ctx, state)
    after = step(ctx, state, "AdmitPod(pod=new)")
    new = get(ctx, after, "new")
    assert new.phase == Phase.RUNNING and new.allocated == new.actual == new.desired == units(ctx, "2")


def test_reject_pod_that_does_not_fit_next_to_the_admitted_pods():
    ctx, state = build([node("n1", "4")], [pod("running", "2", node="n1"), pod("new", "2")])
    state = step(ctx, state, "BindPod(pod=new, node=n1)")
    # The kubelet sees more than the scheduler did: running's allocation grew meanwhile.
    state = setp(ctx, state, "running", desired=units(ctx, "4"), allocated=units(ctx, "4"), actual=units(ctx, "4"))
    assert "RejectPod(pod=new)" in enabled(ctx, state)
    assert "AdmitPod" not in names_enabled(ctx, state)
    after = step(ctx, state, "RejectPod(pod=new)")
    assert get(ctx, after, "new").phase == Phase.REJECTED


def test_actuate_resize_sets_actual_to_allocated():
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}]})
    assert "ActuateResize" not in names_enabled(ctx, state)
    state = run(ctx, state, "RequestResize(pod=web, requests=[cpu 2])", "RetryPendingResizes(node=n1)")
    assert state.retry_due == (False,)
    after = step(ctx, state, "ActuateResize(pod=web)")
    web = get(ctx, after, "web")
    assert web.actual == web.allocated == units(ctx, "2") and not web.in_progress
    assert "ActuateResize" not in names_enabled(ctx, after)
    assert after.retry_due == (True,)  # pod_resized: a completed resize triggers a retry pass (§2.3)


def test_finish_termination_marks_the_nodes_retry_due():
    ctx, state = build([node("n1", "4"), node("n2", "4")],
                       [pod("a", "1", node="n1"), pod("b", "1", node="n2")], {"deletions": ["b"]})
    state = step(ctx, state, "DeletePod(pod=b)")
    assert get(ctx, state, "b").phase == Phase.TERMINATING and state.retry_due == (False, False)
    after = step(ctx, state, "FinishTermination(pod=b)")
    assert get(ctx, after, "b").phase == Phase.GONE
    assert after.retry_due == (False, True)
    assert "RetryPendingResizes(node=n2)" in enabled(ctx, after)
    assert "RetryPendingResizes(node=n1)" not in enabled(ctx, after)
    assert step(ctx, after, "RetryPendingResizes(node=n2)").retry_due == (False, False)


# --- PreemptForResize, ParkDeferredPod, ResizeUnschedulable (§4.3, §7.3) -----------------------------------

def s1_pods(*others):
    """TestDeferredResizePodPreemption: node 300m / 300; the preemptor spec (300m, 100), allocated (100m, 100)."""
    preemptor = {"name": "preemptor", "node": "n1", "priority": 100, "requests": {"cpu": "300m", "memory": "100"},
                 "allocated": {"cpu": "100m", "memory": "100"}, "resize": "Deferred"}
    return [preemptor, *others]


S1_NODE = node("n1", "300m", "300")


def test_s1_lower_priority_pod_is_evicted_and_no_nomination_is_set():
    low = {"name": "low", "node": "n1", "priority": 10, "requests": {"cpu": "200m", "memory": "100"}}
    ctx, state = build([S1_NODE], s1_pods(low))
    assert get(ctx, state, "preemptor").queue == Queue.ACTIVE  # S-17: enqueued at start-up
    assert "PreemptForResize(pod=preemptor)" in enabled(ctx, state)
    assert not {"ParkDeferredPod", "ResizeUnschedulable"} & names_enabled(ctx, state)
    after = step(ctx, state, "PreemptForResize(pod=preemptor)")
    victim, preemptor = get(ctx, after, "low"), get(ctx, after, "preemptor")
    assert victim.phase == Phase.TERMINATING and victim.preempted_by == ctx.names.index("preemptor")
    assert preemptor.nominated == NO_NODE  # nominatedNodeName stays ""
    assert preemptor.queue == Queue.UNSCHEDULABLE  # still in the scheduling queue
    assert preemptor.phase == Phase.RUNNING and preemptor.resize == ResizeReason.DEFERRED
    # The victim goes away, the preemptor is requeued, the kubelet allocates the resize and the
    # scheduler drops the pod from its queue.
    after = step(ctx, after, "FinishTermination(pod=low)")
    assert get(ctx, after, "preemptor").queue == Queue.ACTIVE
    after = step(ctx, after, "RetryPendingResizes(node=n1)")
    preemptor = get(ctx, after, "preemptor")
    assert preemptor.allocated == preemptor.desired and preemptor.resize == ResizeReason.NONE
    assert preemptor.queue == Queue.NOT_QUEUED


def test_s3_preemption_policy_never_evicts_nothing():
    low = {"name": "low", "node": "n1", "priority": 10, "requests": {"cpu": "200m", "memory": "100"}}
    pods = s1_pods(low)
    pods[0] = {**pods[0], "preemptionPolicy": "Never"}
    ctx, state = build([S1_NODE], pods)
    assert "PreemptForResize" not in names_enabled(ctx, state)
    after = step(ctx, state, "ResizeUnschedulable(pod=preemptor)")
    assert get(ctx, after, "preemptor").queue == Queue.UNSCHEDULABLE  # still in the queue
    exploration = explore(kep_system(ctx))
    assert "PreemptForResize" not in exploration.action_counts
    assert "VictimEvicted" not in exploration.found


def test_s4_a_resize_that_fits_is_parked_without_evictions():
    ctx, state = build([S1_NODE], s1_pods())
    assert "ParkDeferredPod(pod=preemptor)" in enabled(ctx, state)
    assert not {"PreemptForResize", "ResizeUnschedulable"} & names_enabled(ctx, state)
    after = step(ctx, state, "ParkDeferredPod(pod=preemptor)")
    preemptor = get(ctx, after, "preemptor")
    assert preemptor.queue == Queue.UNSCHEDULABLE and preemptor.nominated == NO_NODE
    assert not any(preemptor.promised)


def test_s5_node_opt_out_keeps_the_deferred_pod_out_of_the_queue():
    low = {"name": "low", "node": "n1", "priority": 10, "requests": {"cpu": "200m", "memory": "100"}}
    opted_out = {**S1_NODE, "disableResizePreemption": ["test-skew-operator"]}
    ctx, state = build([opted_out], s1_pods(low), {"deletions": ["low"]})
    assert get(ctx, state, "preemptor").queue == Queue.NOT_QUEUED
    exploration = explore(kep_system(ctx), keep_graph=True)
    scheduler_cycles = {"ParkDeferredPod", "PreemptForResize", "ResizeUnschedulable"}
    assert not scheduler_cycles & set(exploration.action_counts)
    for state in exploration.graph.explored:
        assert get(ctx, state, "preemptor").queue == Queue.NOT_QUEUED
    assert "VictimEvicted" not in exploration.found


def test_victims_are_strictly_lower_priority():
    """P-1: equal- and higher-priority pods are never victims."""
    pods = [deferred("web", "3", "2", priority=100), pod("peer", "1", node="n1", priority=100),
            pod("low", "1", node="n1", priority=10)]
    ctx, state = build([node("n1", "4")], pods)
    after = step(ctx, state, "PreemptForResize(pod=web)")
    assert get(ctx, after, "low").phase == Phase.TERMINATING
    assert get(ctx, after, "peer").phase == Phase.RUNNING
    # Only equal or higher priority on the node: no candidate, the pod waits unschedulable.
    pods = [deferred("web", "3", "2", priority=100), pod("peer", "1", node="n1", priority=100),
            pod("boss", "1", node="n1", priority=200)]
    ctx, state = build([node("n1", "4")], pods)
    assert "PreemptForResize" not in names_enabled(ctx, state)
    assert "ResizeUnschedulable(pod=web)" in enabled(ctx, state)


def test_greedy_reprieve_keeps_the_most_important_victims():
    """P-2: reprieve higher priority first; the result is minimal by greedy, not minimum (evicting
    only ``a`` would also have made room)."""
    pods = [deferred("web", "3", "1", priority=100), pod("a", "2", node="n1", priority=50),
            pod("b", "1", node="n1", priority=10), pod("c", "1", node="n1", priority=5)]
    ctx, state = build([node("n1", "5")], pods)
    after = step(ctx, state, "PreemptForResize(pod=web)")
    phases = {name: get(ctx, after, name).phase for name in ("a", "b", "c")}
    assert phases == {"a": Phase.RUNNING, "b": Phase.TERMINATING, "c": Phase.TERMINATING}


def test_greedy_reprieve_of_equal_priority_keeps_the_older_pod():
    """P-2: within a priority, the older pod (declared first) is reprieved first."""
    pods = [deferred("web", "3", "2", priority=100), pod("older", "1", node="n1", priority=10),
            pod("younger", "1", node="n1", priority=10)]
    ctx, state = build([node("n1", "4")], pods)
    after = step(ctx, state, "PreemptForResize(pod=web)")
    assert get(ctx, after, "older").phase == Phase.RUNNING
    assert get(ctx, after, "younger").phase == Phase.TERMINATING


def test_resize_preemption_clears_lower_priority_nominations_on_the_node():
    """§3.3 Execution / P-5 applies to the resize's own node as well."""
    pods = [deferred("web", "3", "2", priority=100), pod("low", "2", node="n1", priority=1),
            pod("waiting", "1", priority=50, nominatedNodeName="n1")]
    ctx, state = build([node("n1", "4")], pods)
    state = setp(ctx, state, "waiting", queue=Queue.UNSCHEDULABLE)
    after = step(ctx, state, "PreemptForResize(pod=web)")
    assert get(ctx, after, "low").phase == Phase.TERMINATING
    assert get(ctx, after, "waiting").nominated == NO_NODE


def test_deferred_fit_checks_only_resources_the_pod_requests():
    """P-7: the node passes when Requested <= Allocatable for every resource the Deferred pod requests;
    memory the scheduler sees overcommitted by another pod's Deferred upsize does not matter to a
    cpu-only resize, but does to a resize that requests memory."""
    def situation(web_memory):
        web = {"name": "web", "node": "n1", "priority": 1000, "requests": {"cpu": "3"}, "allocated": {"cpu": "2"},
               "resize": "Deferred"}
        if web_memory:
            web["requests"]["memory"] = web["allocated"]["memory"] = web_memory
        mem_a = {"name": "mem-a", "node": "n1", "priority": 10, "requests": {"cpu": "500m", "memory": "3Gi"},
                 "allocated": {"cpu": "500m", "memory": "2Gi"}, "resize": "Deferred"}
        mem_b = {"name": "mem-b", "node": "n1", "priority": 10, "requests": {"cpu": "500m", "memory": "1Gi"}}
        return build([node("n1", "4", "4Gi")], [web, mem_a, mem_b])

    ctx, state = situation(None)  # cpu 3 + 0.5 + 0.5 = 4 fits; memory 3Gi + 1Gi = 4Gi fits
    assert "ParkDeferredPod(pod=web)" in enabled(ctx, state)
    ctx, state = situation("1Gi")  # memory 1Gi + 3Gi + 1Gi = 5Gi > 4Gi
    assert "ParkDeferredPod" not in names_enabled(ctx, state)
    assert "PreemptForResize(pod=web)" in enabled(ctx, state)


# --- gate off -------------------------------------------------------------------------------------------

def test_gate_off_never_queues_deferred_pods():
    scheduler_cycles = {"ParkDeferredPod", "PreemptForResize", "ResizeUnschedulable"}
    for scenario in default_scenarios()[:2] + [s for s in default_scenarios() if s.name == "two-nodes"]:
        ctx = Context.build(scenario, variant_by_name("gate-off"))
        exploration = explore(kep_system(ctx), keep_graph=True)
        assert exploration.complete
        assert not scheduler_cycles & set(exploration.action_counts), scenario.name
        for state in exploration.graph.explored:
            for p in state.pods:
                if p.phase != Phase.PENDING:
                    assert p.queue == Queue.NOT_QUEUED, scenario.name


def test_gate_off_a_resize_that_becomes_deferred_is_not_enqueued():
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1"), pod("batch", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "4"}}]}, variant="gate-off")
    after = run(ctx, state, "RequestResize(pod=web, requests=[cpu 4])", "RetryPendingResizes(node=n1)")
    assert get(ctx, after, "web").resize == ResizeReason.DEFERRED
    assert get(ctx, after, "web").queue == Queue.NOT_QUEUED


# --- BindPod and PreemptForPod (§3.2..§3.4, P-4..P-6) -------------------------------------------------------

def test_bind_respects_nominated_pods_of_equal_or_higher_priority():
    """P-4: a pod nominated to the node with priority >= the claimant's counts; a lower one is ignored."""
    def situation(claimant_priority):
        pods = [pod("resident", "2", node="n1", priority=1000), pod("nominee", "2", priority=50, nominatedNodeName="n1"),
                pod("claimant", "2", priority=claimant_priority)]
        ctx, state = build([node("n1", "4")], pods)
        return ctx, setp(ctx, state, "nominee", queue=Queue.UNSCHEDULABLE)

    for priority in (10, 50):
        ctx, state = situation(priority)
        assert "BindPod" not in names_enabled(ctx, state), priority
        assert "PodUnschedulable(pod=claimant)" in enabled(ctx, state)
    ctx, state = situation(100)
    assert "BindPod(pod=claimant, node=n1)" in enabled(ctx, state)


def test_bind_goes_to_the_nominated_node_when_it_fits():
    pods = [pod("nominee", "1", priority=50, nominatedNodeName="n2")]
    ctx, state = build([node("n1", "4"), node("n2", "4")], pods)
    assert [label for label in enabled(ctx, state) if label.startswith("BindPod")] == ["BindPod(pod=nominee, node=n2)"]
    after = step(ctx, state, "BindPod(pod=nominee, node=n2)")
    nominee = get(ctx, after, "nominee")
    assert nominee.phase == Phase.BOUND and nominee.node == 1 and nominee.nominated == NO_NODE
    assert nominee.queue == Queue.NOT_QUEUED


def test_preempt_for_pod_nominates_and_clears_lower_priority_nominations():
    """P-5: on preemption, lower-priority pods nominated to the chosen node lose their nomination."""
    pods = [pod("low", "4", node="n1", priority=1), pod("claimant", "2", priority=100),
            pod("mid", "2", priority=50, nominatedNodeName="n1"), pod("top", "2", priority=200, nominatedNodeName="n1")]
    ctx, state = build([node("n1", "4")], pods)
    state = setp(ctx, setp(ctx, state, "mid", queue=Queue.UNSCHEDULABLE), "top", queue=Queue.UNSCHEDULABLE)
    assert "PreemptForPod(pod=claimant, node=n1)" in enabled(ctx, state)
    assert "BindPod" not in names_enabled(ctx, state)
    after = step(ctx, state, "PreemptForPod(pod=claimant, node=n1)")
    assert get(ctx, after, "low").phase == Phase.TERMINATING
    assert get(ctx, after, "low").preempted_by == ctx.names.index("claimant")
    claimant = get(ctx, after, "claimant")
    assert claimant.nominated == 0 and claimant.queue == Queue.UNSCHEDULABLE and claimant.phase == Phase.PENDING
    assert get(ctx, after, "mid").nominated == NO_NODE
    assert get(ctx, after, "top").nominated == 0


def test_nominated_preemptor_waits_for_its_terminating_victims():
    """§3.3 Eligibility: with victims still terminating on its nominated node, the pod does not preempt again."""
    pods = [pod("low", "4", node="n1", priority=1), pod("other", "1", node="n1", priority=2),
            pod("claimant", "2", priority=100)]
    ctx, state = build([node("n1", "5")], pods)
    after = step(ctx, state, "PreemptForPod(pod=claimant, node=n1)")
    assert get(ctx, after, "low").phase == Phase.TERMINATING and get(ctx, after, "other").phase == Phase.RUNNING
    after = step(ctx, after, "FlushUnschedulablePod(pod=claimant)")
    assert "PreemptForPod" not in names_enabled(ctx, after)
    assert "PodUnschedulable(pod=claimant)" in enabled(ctx, after)


def test_preemption_picks_the_node_with_the_lowest_priority_victims():
    """§3.3 Node choice: lowest highest-victim priority first, then fewest victims, then the first node."""
    pods = [pod("on-n1", "4", node="n1", priority=10), pod("on-n2", "4", node="n2", priority=5),
            pod("claimant", "2", priority=100)]
    ctx, state = build([node("n1", "4"), node("n2", "4")], pods)
    assert [l for l in enabled(ctx, state) if l.startswith("PreemptForPod")] == ["PreemptForPod(pod=claimant, node=n2)"]
    pods = [pod("a1", "2", node="n1", priority=5), pod("a2", "2", node="n1", priority=5),
            pod("b1", "4", node="n2", priority=5), pod("claimant", "4", priority=100)]
    ctx, state = build([node("n1", "4"), node("n2", "4")], pods)
    assert [l for l in enabled(ctx, state) if l.startswith("PreemptForPod")] == ["PreemptForPod(pod=claimant, node=n2)"]


def test_pod_larger_than_every_node_never_preempts():
    """P-6: request > allocatable is UnschedulableAndUnresolvable: the node is never a candidate."""
    ctx, state = build([node("n1", "4")], [pod("low", "1", node="n1", priority=1), pod("huge", "5", priority=100)])
    assert enabled(ctx, state) == ["PodUnschedulable(pod=huge)"]


# --- queueing hints (§4.3 (6), §7.3 S-6..S-11, S-15..S-17) ---------------------------------------------------

def hints(environment, *, node1="250m", other="200m", mine="100m", mine_allocated="50m"):
    """TestDeferredResizeQueueingHints: node1 holds other-pod (high priority) and the Deferred pod
    (low priority); node2 500m holds an irrelevant 200m pod. The Deferred pod is parked first.
    Upstream's node1 is 200m, which its allocated 50m plus other-pod's 200m overfill; the loader
    refuses a node its pods already overfill, so node1 is 250m here (the hints are the same)."""
    pods = [pod("other-pod", other, node="n1", priority=1000),
            deferred("deferred", mine, mine_allocated, priority=1),
            pod("irrelevant", "200m", node="n2", priority=1000)]
    ctx, state = build([node("n1", node1), node("n2", "500m")], pods, environment)
    cycle = [label for label in enabled(ctx, state)
             if label.split("(")[0] in ("ResizeUnschedulable", "ParkDeferredPod")]
    assert cycle, enabled(ctx, state)
    state = step(ctx, state, cycle[0])
    assert get(ctx, state, "deferred").queue == Queue.UNSCHEDULABLE
    return ctx, state


def queue_after(ctx, state, *labels):
    """The Deferred pod's queue after each step."""
    queues = []
    for label in labels:
        state = step(ctx, state, label)
        queues.append(get(ctx, state, "deferred").queue)
    return queues


def test_s6_scale_down_on_another_node_does_not_requeue():
    ctx, state = hints({"resizes": [{"pod": "irrelevant", "requests": {"cpu": "100m"}}]})
    queues = queue_after(ctx, state, "RequestResize(pod=irrelevant, requests=[cpu 100m])",
                         "RetryPendingResizes(node=n2)", "ActuateResize(pod=irrelevant)")
    assert queues == [Queue.UNSCHEDULABLE] * 3


def test_s7_scale_down_on_the_same_node_requeues():
    """The scheduler counts other-pod at max(desired, allocated, actual): its footprint, and with it
    the hint, drops when the kubelet has actuated the downsize."""
    ctx, state = hints({"resizes": [{"pod": "other-pod", "requests": {"cpu": "100m"}}]})
    queues = queue_after(ctx, state, "RequestResize(pod=other-pod, requests=[cpu 100m])",
                         "RetryPendingResizes(node=n1)", "ActuateResize(pod=other-pod)")
    assert queues[-1] == Queue.ACTIVE


def test_s8_deletion_on_another_node_does_not_requeue():
    ctx, state = hints({"deletions": ["irrelevant"]})
    queues = queue_after(ctx, state, "DeletePod(pod=irrelevant)", "FinishTermination(pod=irrelevant)")
    assert queues == [Queue.UNSCHEDULABLE, Queue.UNSCHEDULABLE]


def test_s9_deletion_on_the_same_node_requeues():
    ctx, state = hints({"deletions": ["other-pod"]})
    queues = queue_after(ctx, state, "DeletePod(pod=other-pod)", "FinishTermination(pod=other-pod)")
    assert queues[-1] == Queue.ACTIVE


def test_deletions_requeue_a_parked_pod_only_from_its_own_node():
    """The same hints for a pod parked because its resize fits (ParkDeferredPod)."""
    for victim, expected in (("irrelevant", Queue.UNSCHEDULABLE), ("other-pod", Queue.ACTIVE)):
        ctx, state = hints({"deletions": [victim]}, node1="300m", other="100m", mine="200m")
        assert get(ctx, state, "deferred").queue == Queue.UNSCHEDULABLE
        queues = queue_after(ctx, state, f"DeletePod(pod={victim})", f"FinishTermination(pod={victim})")
        assert queues[-1] == expected, victim


def test_s10_scale_up_on_another_node_does_not_requeue():
    ctx, state = hints({"resizes": [{"pod": "irrelevant", "requests": {"cpu": "300m"}}]}, node1="300m", mine="200m")
    queues = queue_after(ctx, state, "RequestResize(pod=irrelevant, requests=[cpu 300m])", "RetryPendingResizes(node=n2)")
    assert queues == [Queue.UNSCHEDULABLE] * 2


def test_s11_scale_up_on_the_same_node_requeues():
    ctx, state = hints({"resizes": [{"pod": "other-pod", "requests": {"cpu": "250m"}}]}, node1="300m", mine="200m")
    assert queue_after(ctx, state, "RequestResize(pod=other-pod, requests=[cpu 250m])") == [Queue.ACTIVE]


def test_s15_own_scale_down_requeues():
    ctx, state = hints({"resizes": [{"pod": "deferred", "requests": {"cpu": "80m"}}]})
    assert queue_after(ctx, state, "RequestResize(pod=deferred, requests=[cpu 80m])") == [Queue.ACTIVE]


def test_s16_own_scale_up_requeues():
    ctx, state = hints({"resizes": [{"pod": "deferred", "requests": {"cpu": "450m"}}]}, node1="500m", mine="400m")
    assert queue_after(ctx, state, "RequestResize(pod=deferred, requests=[cpu 450m])") == [Queue.ACTIVE]


def test_s17_scheduler_restart_reenqueues_deferred_pods():
    ctx, state = hints({"schedulerRestarts": 1})
    after = step(ctx, state, "RestartScheduler")
    assert get(ctx, after, "deferred").queue == Queue.ACTIVE
    assert get(ctx, after, "other-pod").queue == Queue.NOT_QUEUED


def test_deleting_an_assigned_pod_requeues_an_unschedulable_pending_pod():
    """§3.5: assigned-pod Delete is registered by NodeResourcesFit for pending pods (any node)."""
    ctx, state = build([node("n1", "4"), node("n2", "4")],
                       [pod("big", "3", node="n2", priority=1000), pod("n1-pod", "3", node="n1", priority=1000),
                        pod("pending", "2", priority=1)], {"deletions": ["big"]})
    state = step(ctx, state, "PodUnschedulable(pod=pending)")
    state = step(ctx, state, "DeletePod(pod=big)")
    assert get(ctx, state, "pending").queue == Queue.UNSCHEDULABLE  # still terminating: still counted
    state = step(ctx, state, "FinishTermination(pod=big)")
    assert get(ctx, state, "pending").queue == Queue.ACTIVE
    assert "BindPod(pod=pending, node=n2)" in enabled(ctx, state)


def test_deleting_a_nominated_pending_pod_requeues_an_unschedulable_pending_pod():
    pods = [pod("resident", "2", node="n1", priority=1000), pod("nominee", "2", priority=50, nominatedNodeName="n1"),
            pod("waiting", "2", priority=10)]
    ctx, state = build([node("n1", "4")], pods, {"deletions": ["nominee"]})
    state = setp(ctx, state, "nominee", queue=Queue.UNSCHEDULABLE)
    state = step(ctx, state, "PodUnschedulable(pod=waiting)")  # the nomination holds the room
    state = step(ctx, state, "DeletePod(pod=nominee)")
    assert get(ctx, state, "nominee").phase == Phase.GONE
    assert get(ctx, state, "waiting").queue == Queue.ACTIVE
