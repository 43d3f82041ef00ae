"""Resize generations and the resize conditions across several resizes (issue 11, gap 5).

Sources, read in kubernetes/kubernetes:
- ``pkg/kubelet/allocation/allocation_manager.go``, ``handlePodResourcesResize``: the kubelet evaluates
  the latest spec against the allocation. Equal: PodResizePending cleared (resolution "reverted").
  Allocated: PodResizePending cleared, PodResizeInProgress cleared and set again with the pod's current
  generation. Neither fits: PodResizePending set with the current generation.
- ``pkg/kubelet/kubelet.go``, ``SyncPod``: just before ``generateAPIPodStatus`` it sets
  PodResizeInProgress when the runtime's resources differ from the allocation and clears it otherwise
  (event ResizeCompleted) — so the API sees the condition exactly when allocated differs from actual.
- the status manager keeps a condition's lastTransitionTime while its reason stays the same
  (kubernetes/kubernetes #131478), and ``IsPodResizeDeferred`` reads the reason only, never
  ``observedGeneration`` (docs/reference.md §1 "Infeasible detection").

So the model keeps no generation numbers: ``observed`` says whether the kubelet has evaluated the
current generation. "Resize, revert, resize again" is a scenario (``deferred-resize-requested-again``);
before these changes the loader refused it (a resize to the pod's declared requests, or the same
resize twice).
"""

from __future__ import annotations

from kepcheck.checks.engines.explicit import check_explicit
from kepcheck.model.init import initial_state
from kepcheck.spec.kep.properties import property_by_name
from kepcheck.spec.language.loader import parse_scenario
from kepcheck.spec.kep.vocabulary import ResizeReason

from conftest import assert_refused, context
from test_actions import build, deferred, enabled, get, node, pod, run, units

REVERTED_UNSEEN = ("RequestResize(pod=a, requests=[cpu 2])", "RetryPendingResizes(node=n1)",
                   "ResizeUnschedulable(pod=b)", "RequestResize(pod=b, requests=[cpu 1])", "PreemptForResize(pod=a)",
                   "RequestResize(pod=b, requests=[cpu 2])", "FinishTermination(pod=batch)")


def _again(environment: dict) -> dict:
    return {"name": "t", "nodes": [node("n1", "4")], "pods": [pod("web", "1", node="n1")], "environment": environment}


# --- the loader ------------------------------------------------------------------------------------------

def test_a_resize_may_be_repeated_when_another_resize_can_come_between():
    document = _again({"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "1"}},
                                   {"pod": "web", "requests": {"cpu": "2000m"}}]})
    scenario = parse_scenario(document, "t.yaml")
    assert [r.requests for r in scenario.resizes] == [(2,), (1,), (2,)]  # the revert to 1 is allowed beside it


def test_a_repeat_with_nothing_between_is_refused():
    assert_refused(_again({"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "2"}}]}),
                   "environment.resizes[1].requests", "repeats environment.resizes[0]")


def test_a_recreation_lets_a_resize_repeat():
    """A recreated pod is pending at its declared requests again, so the same resize can happen twice."""
    parse_scenario(_again({"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "2"}}],
                           "deletions": ["web"], "recreations": ["web"]}), "t.yaml")


def test_a_resize_to_the_declared_requests_needs_another_resize():
    assert_refused(_again({"resizes": [{"pod": "web", "requests": {"cpu": "1"}}]}),
                   "environment.resizes[0].requests", "not a resize")


# --- equal menu entries are taken in order -------------------------------------------------------------

def test_the_second_of_two_equal_resizes_waits_for_the_first():
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "1"}},
                                    {"pod": "web", "requests": {"cpu": "2"}}]})
    assert ctx.previous_twins == (-1, -1, 0)
    assert enabled(ctx, state).count("RequestResize(pod=web, requests=[cpu 2])") == 1
    state = run(ctx, state, "RequestResize(pod=web, requests=[cpu 2])", "RequestResize(pod=web, requests=[cpu 1])")
    assert state.env_used == (True, True, False)
    state = run(ctx, state, "RequestResize(pod=web, requests=[cpu 2])")  # now the repeat
    assert state.env_used == (True, True, True) and get(ctx, state, "web").desired == units(ctx, "2")


# --- what the kubelet writes across several resizes --------------------------------------------------

def test_revert_of_an_allocation_not_yet_actuated_leaves_no_in_progress_condition():
    """allocation_manager.go allocates the revert and sets PodResizeInProgress with the new generation;
    SyncPod clears it before the status reaches the API, as allocated equals actual again."""
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "1"}}]})
    state = run(ctx, state, "RequestResize(pod=web, requests=[cpu 2])", "RetryPendingResizes(node=n1)")
    web = get(ctx, state, "web")
    assert web.allocated == units(ctx, "2") and web.actual == units(ctx, "1") and web.in_progress
    state = run(ctx, state, "RequestResize(pod=web, requests=[cpu 1])", "RetryPendingResizes(node=n1)")
    web = get(ctx, state, "web")
    assert web.allocated == web.actual == units(ctx, "1") and not web.in_progress and web.resize == ResizeReason.NONE


def test_a_newer_resize_allocated_during_actuation_keeps_in_progress():
    """B allocated while A is not yet actuated: the condition is set again (B's generation), still present."""
    ctx, state = build([node("n1", "4")], [pod("web", "1", node="n1")],
                       {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "3"}}]})
    state = run(ctx, state, "RequestResize(pod=web, requests=[cpu 2])", "RetryPendingResizes(node=n1)",
                "RequestResize(pod=web, requests=[cpu 3])", "RetryPendingResizes(node=n1)")
    web = get(ctx, state, "web")
    assert web.allocated == units(ctx, "3") and web.in_progress and web.observed


def test_an_unseen_revert_keeps_the_condition_and_its_age():
    """Resize, revert, resize again before the kubelet looks: it evaluates only the latest spec, so b's
    PodResizePending stays with its lastTransitionTime, older than a's, and b is granted first."""
    ctx = context("deferred-resize-requested-again", "beta-1.38")
    state = run(ctx, initial_state(ctx), *REVERTED_UNSEEN)
    a, b = get(ctx, state, "a"), get(ctx, state, "b")
    assert b.resize == a.resize == ResizeReason.DEFERRED and not b.observed
    assert b.pending_since < a.pending_since
    state = run(ctx, state, "RetryPendingResizes(node=n1)")
    assert get(ctx, state, "b").allocated == units(ctx, "2") and get(ctx, state, "a").allocated == units(ctx, "1")


def test_a_seen_revert_clears_the_condition_and_the_new_one_is_younger():
    """The same steps with the kubelet evaluating the revert: b's condition is cleared, the new one is
    younger than a's, and a, the pod the scheduler preempted for, is granted."""
    ctx = context("deferred-resize-requested-again", "beta-1.38")
    labels = list(REVERTED_UNSEEN)
    labels.insert(4, "RetryPendingResizes(node=n1)")  # after the revert
    labels.insert(7, "RetryPendingResizes(node=n1)")  # after the second request
    state = run(ctx, initial_state(ctx), *labels)
    a, b = get(ctx, state, "a"), get(ctx, state, "b")
    assert b.resize == ResizeReason.DEFERRED and b.pending_since > a.pending_since
    state = run(ctx, state, "RetryPendingResizes(node=n1)")
    assert get(ctx, state, "a").allocated == units(ctx, "2") and get(ctx, state, "b").allocated == units(ctx, "1")


def test_resize_revert_resize_again_changes_the_verdict_of_one_resize():
    """older-deferred-resize-first is the same cluster with b's one resize: the kubelet honours the
    scheduler's reservation there under beta-1.38; with the revert and the second request it does not."""
    def verdict(scenario):
        (result,) = check_explicit(context(scenario, "beta-1.38"), [property_by_name("KubeletHonorsReservation")])
        return result.verdict
    assert verdict("older-deferred-resize-first") == "holds"
    assert verdict("deferred-resize-requested-again") == "violated"


def test_a_deferred_condition_of_an_older_generation_still_counts_for_the_scheduler():
    """IsPodResizeDeferred reads the reason only: after b's revert, before the kubelet looks, b is
    still Deferred to the scheduler, which may preempt for it (NoExcessVictims' finding)."""
    ctx, state = build([node("n1", "4")], [deferred("b", "2", "1"), pod("a", "2", node="n1")],
                       {"resizes": [{"pod": "b", "requests": {"cpu": "1"}}]})
    state = run(ctx, state, "RequestResize(pod=b, requests=[cpu 1])")
    b = get(ctx, state, "b")
    assert b.desired == b.allocated and b.resize == ResizeReason.DEFERRED and not b.observed


def _concrete_sizes_admitted(ctx) -> bool:
    """The parametric family of ``ctx``'s scenario contains the scenario itself: its constraints hold
    at the concrete sizes."""
    import z3

    from kepcheck.checks.symbolic.parametric import parametric_model
    model = parametric_model(ctx, (1, 64))
    solver = z3.Solver()
    solver.add(*model.constraints)
    solver.add(*(variable == value for variable, value in model.variables.values()))
    return solver.check() == z3.sat


def test_parametric_sizes_keep_a_resize_back_to_the_declared_requests_and_equal_entries():
    """Parametric mode keeps the scenario's shape: b's second resize goes back to its declared requests
    (it equals them), and two equal menu entries stay equal, so Context.previous_twins still holds."""
    assert _concrete_sizes_admitted(context("deferred-resize-requested-again", "alpha-1.37"))
    ctx, _ = build([node("n1", "4")], [pod("web", "1", node="n1")],
                   {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}, {"pod": "web", "requests": {"cpu": "3"}},
                                {"pod": "web", "requests": {"cpu": "2"}}]})
    assert ctx.previous_twins == (-1, -1, 0) and _concrete_sizes_admitted(ctx)
