"""The beta design's choices and the asynchronous scheduler, action by action, on small hand-built
clusters (``model/actions/scheduler.py``, ``model/actions/informer.py``, ``model/actions/asynchrony.py``).

Expectations come from the KEP's beta text (the KEP-5836 README, beta, v1.38: kubernetes/enhancements
``keps/sig-scheduling/5836-scheduler-preemption-for-ippr/README.md``, cited by section title) and from the reference: async preemption's PreEnqueue (§3.1), prepareCandidate's
calls (§3.3 'Execution'), the v1.37 opt-out (§4.4, §7.3 S-5, S-20) and the queue/cache copies
(§4.4 ``adjustDeltasToAccomodateCacheDiscrepancy``). Steps go through ``next_steps``, so each effect is
seen with what the handlers (or, with the stale view, the deliveries) do with it.
"""

from __future__ import annotations

import pytest

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason
from kepcheck.model.actions.next import within_lag_bound
from kepcheck.model.state import NO_POD
from kepcheck.model.accounting.copies import scheduler_view, update_undelivered

from test_actions import build, deferred, enabled, get, names_enabled, node, pod, run, setp

ONE_VICTIM = ([node("n1", "4")], [deferred("web", "3", "2", priority=100), pod("batch", "2", node="n1", priority=10)])


# --- beta-1.38: a fitted resize binds and leaves the queue; AddOrActivate brings it back -----------------

def test_beta_fitted_resize_passes_bind_and_leaves_the_queue():
    """'Handling Node Evaluation Results': a resize that fits passes Permit and a Bind that does
    nothing for a bound pod, and the pod is removed from the scheduling queue (alpha parks it)."""
    ctx, state = build([node("n1", "4")], [deferred("web", "3", "2", priority=100)], variant="beta-1.38")
    assert enabled(ctx, state)[0] == "BindDeferredPod(pod=web)"
    assert "ParkDeferredPod" not in names_enabled(ctx, state)
    after = run(ctx, state, "BindDeferredPod(pod=web)")
    assert get(ctx, after, "web").queue == Queue.NOT_QUEUED
    alpha, start = build([node("n1", "4")], [deferred("web", "3", "2", priority=100)])
    assert "BindDeferredPod" not in names_enabled(alpha, start)
    assert get(alpha, run(alpha, start, "ParkDeferredPod(pod=web)"), "web").queue == Queue.UNSCHEDULABLE


def test_beta_same_node_scale_up_adds_the_deferred_pod_back():
    """'Reconsideration Race Conditions' step 3: another pod on the node scales up and updatePod
    calls SchedulingQueue.AddOrActivate for the Deferred pods there, although web left the queue."""
    ctx, state = build([node("n1", "6")], [deferred("web", "3", "2", priority=100), pod("c", "1", node="n1", priority=200)],
                       {"resizes": [{"pod": "c", "requests": {"cpu": "2"}}], "maxEvents": 1}, variant="beta-1.38")
    state = run(ctx, state, "BindDeferredPod(pod=web)")
    assert get(ctx, state, "web").queue == Queue.NOT_QUEUED
    after = run(ctx, state, "RequestResize(pod=c, requests=[cpu 2])")
    assert get(ctx, after, "web").queue == Queue.ACTIVE


def test_beta_opt_out_is_enforced_in_filter():
    """'Policy Enforcement via DeferredPodScheduling Plugin' (docs/reference.md §7.3 S-20): the pod is queued,
    its own node is UnschedulableAndUnresolvable, so it neither preempts nor binds. The v1.37
    implementation does not keep such a pod in the queue at all (S-5)."""
    opted_out = [node("n1", "4", disableResizePreemption=["test-skew-operator"])]
    cluster = [deferred("web", "3", "2", priority=100), pod("batch", "2", node="n1", priority=10)]
    ctx, state = build(opted_out, cluster, variant="beta-1.38")
    assert get(ctx, state, "web").queue == Queue.ACTIVE
    assert enabled(ctx, state)[0] == "ResizeUnschedulable(pod=web)"
    assert not {"PreemptForResize", "BindDeferredPod"} & names_enabled(ctx, state)
    alpha, start = build(opted_out, cluster)
    assert get(alpha, start, "web").queue == Queue.NOT_QUEUED


# --- the stale view --------------------------------------------------------------------------------------

def test_the_scheduler_sees_an_update_only_when_it_is_delivered():
    ctx, state = build(*ONE_VICTIM, {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}], "maxEvents": 1},
                       variant="alpha-1.37-stale")
    after = run(ctx, state, "RequestResize(pod=web, requests=[cpu 2])")
    web = get(ctx, after, "web")
    assert update_undelivered(web) and web.seen_desired == (3,) and web.desired == (2,)
    assert scheduler_view(ctx, after).pods[0].desired == (3,)  # the cycle still sees resize A
    assert "PreemptForResize(pod=web)" in enabled(ctx, after)
    delivered = run(ctx, after, "UpdatePodInCache(pod=web)", "UpdatePodInSchedulingQueue(pod=web)")
    assert not update_undelivered(get(ctx, delivered, "web"))


def test_the_scheduler_sees_its_own_binding_at_once():
    """docs/reference.md §3.2: the scheduler assumes the pod in its cache when it binds it."""
    ctx, state = build([node("n1", "4")], [pod("new", "1", priority=5)], variant="alpha-1.37-stale")
    after = run(ctx, state, "BindPod(pod=new, node=n1)")
    new = get(ctx, after, "new")
    assert new.phase == Phase.BOUND and new.seen_phase == Phase.BOUND and not update_undelivered(new)


def test_the_informer_is_at_most_one_step_behind():
    """The bound: while one pod's update is undelivered, a step may not write another pod."""
    ctx, state = build([node("n1", "4")], [pod("a", "1", node="n1"), pod("b", "1", node="n1")],
                       {"resizes": [{"pod": "a", "requests": {"cpu": "2"}}, {"pod": "b", "requests": {"cpu": "2"}}],
                        "maxEvents": 2}, variant="alpha-1.37-stale")
    after = run(ctx, state, "RequestResize(pod=a, requests=[cpu 2])")
    assert "RequestResize(pod=b, requests=[cpu 2])" not in enabled(ctx, after)
    assert "RetryPendingResizes(node=n1)" in enabled(ctx, after)  # a write to a (merges into its update)
    written_b = setp(ctx, after, "b", desired=(2,))
    assert not within_lag_bound(ctx, after, written_b)
    assert "RequestResize(pod=b, requests=[cpu 2])" in enabled(ctx, run(ctx, after, "DeliverPodUpdate(pod=a)"))


@pytest.mark.parametrize("variant,next_action", [("alpha-1.37-stale", "PreemptForResize(pod=web)"),
                                                 ("beta-1.38-stale", "AbortDeferredCycle(pod=web)")])
def test_a_cycle_between_the_cache_and_the_queue_update(variant, next_action):
    """'Conflicting Sources of Truth for the Pod': the handler updates the cache, then the queue. A
    cycle in between pops the queue's copy, still Deferred: v1.37 evaluates it (the excess of the
    queue copy over the cache copy counted), the beta refreshes it from the cache and aborts."""
    ctx, state = build([node("n1", "5")], [deferred("web", "4", "2", priority=100),
                                           deferred("helper", "2", "1", priority=50),
                                           pod("victim", "1", node="n1", priority=10)], variant=variant)
    granted = setp(ctx, state, "web", allocated=(4,), resize=ResizeReason.NONE, in_progress=True)
    state = run(ctx, granted, "UpdatePodInCache(pod=web)")
    web = get(ctx, state, "web")
    assert web.cache_ahead and web.seen_resize == ResizeReason.DEFERRED
    assert next_action in enabled(ctx, state)
    after = run(ctx, state, next_action)
    if variant.startswith("beta"):
        assert get(ctx, after, "web").queue == Queue.NOT_QUEUED
    else:
        # helper is evicted for a resize the kubelet has already granted (the cache knows, the queue not)
        assert get(ctx, after, "helper").evicting_for == ctx.names.index("web")


# --- asynchronous preemption ------------------------------------------------------------------------------

def test_preemption_calls_complete_after_the_cycle_and_pre_enqueue_holds_the_preemptor():
    """docs/reference.md §3.1: DefaultPreemption's PreEnqueue keeps the preemptor out of activeQ while its
    calls run; §3.3 'Execution': each victim gets DisruptionTarget and is deleted."""
    ctx, state = build(*ONE_VICTIM, variant="alpha-1.37-stale")
    after = run(ctx, state, "PreemptForResize(pod=web)")
    web, batch = get(ctx, after, "web"), get(ctx, after, "batch")
    assert batch.phase == Phase.RUNNING and batch.evicting_for == ctx.names.index("web") and web.preempting
    assert "FlushUnschedulablePod(pod=web)" not in enabled(ctx, after)
    done = run(ctx, after, "EvictVictim(pod=batch)")
    batch = get(ctx, done, "batch")
    assert batch.phase == Phase.TERMINATING and batch.preempted_by == ctx.names.index("web")
    assert batch.evicting_for == NO_POD and not get(ctx, done, "web").preempting
    assert "FlushUnschedulablePod(pod=web)" in enabled(ctx, done)


def test_a_restart_loses_the_calls_in_flight_and_relists():
    ctx, state = build(*ONE_VICTIM, {"schedulerRestarts": 1, "maxEvents": 1}, variant="beta-1.38-stale")
    after = run(ctx, state, "PreemptForResize(pod=web)", "RestartScheduler")
    assert get(ctx, after, "batch").evicting_for == NO_POD and not get(ctx, after, "web").preempting
    assert get(ctx, after, "batch").phase == Phase.RUNNING
    assert not any(update_undelivered(p) for p in after.pods)


# --- the queue's timestamps (PrioritySort) ----------------------------------------------------------------

def test_equal_priority_pods_leave_active_queue_by_timestamp():
    """priority_sort.go ``Less``: equal priorities by ``Timestamp``; scheduling_queue.go
    ``AddUnschedulableIfNotPresent`` refreshes it when a cycle fails, the flush keeps it. Two pods
    added together tie (either first); the one that failed and was flushed back goes after the other."""
    ctx, state = build([node("n1", "1")], [pod("a", "2", priority=5), pod("b", "2", priority=5)])
    assert {"PodUnschedulable(pod=a)", "PodUnschedulable(pod=b)"} <= set(enabled(ctx, state))
    state = run(ctx, state, "PodUnschedulable(pod=a)", "FlushUnschedulablePod(pod=a)")
    assert get(ctx, state, "a").queued_at > get(ctx, state, "b").queued_at
    assert "PodUnschedulable(pod=b)" in enabled(ctx, state) and "PodUnschedulable(pod=a)" not in enabled(ctx, state)
    state = run(ctx, state, "PodUnschedulable(pod=b)")
    assert "PodUnschedulable(pod=a)" in enabled(ctx, state)


def test_the_smallest_equal_priority_deadlock_still_fails():
    """The smallest counterexample of the one-node sweep to DeferredResizeResolved (docs/findings.md finding 8,
    scenario 17's shape at smaller sizes) is still one with the queue ordered by timestamp."""
    from kepcheck.checks.engines.explicit import check_explicit
    from kepcheck.spec.kep.properties import property_by_name
    ctx, _ = build([node("n1", "3")], [deferred("a", "2", "1", priority=1), deferred("b", "2", "1", priority=1),
                                       pod("c", "1", node="n1", priority=0)])
    result, = check_explicit(ctx, [property_by_name("DeferredResizeResolved")])
    assert result.verdict == "violated" and result.trace.loop is not None


# --- switching one beta choice back (``beta-1.38+decision=option``) -----------------------------------------

def test_one_beta_choice_can_be_switched_back_without_editing_the_variants():
    from kepcheck.checks.run import SelectionError, run_checks, select_variants
    from kepcheck.spec.kep.properties import property_by_name
    from kepcheck.spec.language.loader import default_scenarios
    variant, = select_variants(["beta-1.38+double_preemption_guard=none"])
    assert variant.fitted_resize == "bind" and variant.double_preemption_guard == "none"
    scenario = [s for s in default_scenarios() if s.name == "resize-superseded"]
    run, = run_checks(scenario, [variant], [property_by_name("NoDoublePreemption")])
    result, = run.results
    assert result.verdict == "violated" and result.expected is None  # a derived variant has no expectation
    for bad in ("beta-1.38+fitted=park", "beta-1.38+fitted_resize=parked", "beta-9+fitted_resize=park",
                "allocated-only+scheduler_view=stale"):
        with pytest.raises(SelectionError):
            select_variants([bad])
