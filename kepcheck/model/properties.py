"""One predicate per entry of the property catalog (``spec/properties.py``), with the same name.

State-scope predicates take ``(ctx, state)``; step-scope predicates take ``(ctx, before, action,
after)`` and judge the decision the action took. For ``always`` properties a true value means the
property holds there; for ``sometimes`` properties it means this state/step is a witness.
Like the actions, every predicate is written with ``model/expr.py`` helpers, so it evaluates to a
bool on concrete states and to a Z3 term on symbolic ones. The sums the capacity predicates compare
are built by term helpers (``kubelet_node_terms``, ``grant_terms``, ``victim_kept_terms``, summed by
``tally``), which ``model/explain.py`` also reads to say why a property fails, so a trace report
shows exactly the sum that was judged. ``eventually`` properties are given
as a premise and a goal per pod (``Response``: premise ~> goal) or as a kind of step that must
stop (``EventuallyNever``), in ``LIVENESS``; ``checks/liveness.py`` judges them on the state graph
under the fairness the catalog states.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from typing import Callable

from kepcheck.spec.properties import ALWAYS, PROPERTIES, SOMETIMES
from kepcheck.spec.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting import kubelet_resizing_pod_requests
from kepcheck.model.context import Context
from kepcheck.model.expr import (
    all_, and_, any_, implies, is_false, ite, nonzero, not_, or_, vadd, veq, vle, vmax, vmin, vsum_where, vzero,
)
from kepcheck.model.memo import changed_pods, node_local, pod_values
from kepcheck.model.state import NO_NODE, NO_POD, PodState, State
from kepcheck.model.step import Action, is_deferred, snake_case
from kepcheck.model.views import (
    admitted, allocatable_of, fits_deferred_pod, fits_new_pod, kubelet_footprint, leaving, on_node,
)

__all__ = ["PREDICATES", "LIVENESS", "Response", "EventuallyNever", "scheduler_grants",
           "kubelet_grants", "new_victims", "judges_states_only", "tally", "kubelet_node_terms", "grant_terms",
           "victim_kept_terms", "victims_in_flight", "condition_checks", "not_evicted_by_lower_or_equal"]


# --- terms: what a predicate adds up, shared with the explanations of ``model/explain.py`` -----------

def tally(ctx: Context, terms: list) -> tuple:
    """The sum of ``terms`` ``[(condition, pod index, role, vector)]`` whose condition holds."""
    return vsum_where(((condition, vector) for condition, _, _, vector in terms), ctx.width)


# --- always ----------------------------------------------------------------------------------------

def kubelet_never_overcommits(ctx: Context, state: State):
    return all_(_node_within_allocatable(ctx, state, node) for node in ctx.node_range)


def kubelet_node_terms(ctx: Context, state: State, node: int) -> list:
    """What KubeletNeverOvercommits adds up on ``node``: max(allocated, actual) of each admitted pod."""
    return [(and_(pod.node == node, admitted(pod)), i, "allocated", kubelet_footprint(pod))
            for i, pod in enumerate(state.pods)]


@node_local(lambda state, node: (node, None))
def _node_within_allocatable(ctx: Context, state: State, node: int):
    """The kubelet's allocations on ``node`` (max(allocated, actual) of its admitted pods) fit."""
    return vle(tally(ctx, kubelet_node_terms(ctx, state, node)), ctx.allocatable[node])


SCHEDULER_GRANTS = ("BindPod", "PreemptForPod", "PreemptForResize")


def scheduler_grants(ctx: Context, action: Action, after: State) -> list:
    """The capacity the scheduler grants in a step: [(condition, claimant, node, size)]. It grants by
    binding a pod, by nominating a preemptor and by preempting for a Deferred resize."""
    if action.name not in SCHEDULER_GRANTS:
        return []
    claimant = ctx.pod_index(action.param("pod"))
    pod = after.pods[claimant]
    if action.name == "PreemptForResize":  # the size it preempted for (the view's, with a stale view)
        return [(True, claimant, pod.node, vmax(pod.allocated, pod.actual, pod.promised))]
    return [(True, claimant, ctx.node_index(action.param("node")), pod.desired)]


def kubelet_grants(ctx: Context, before: State, after: State) -> list:
    """The capacity the kubelet allocates in a step: a running pod's allocation grows, when it
    allocates a resize and when it admits a bound pod (allocated 0 → desired): [(condition,
    claimant, node, size)]."""
    result = []
    for i, (grows, size) in changed_pods(ctx, before, after, _allocation_grows):
        if not is_false(grows):
            result.append((grows, i, after.pods[i].node, size))
    return result


def _allocation_grows(ctx: Context, i: int, old: PodState, new: PodState) -> tuple:
    grows = and_(new.phase == Phase.RUNNING, or_(*(n > o for n, o in zip(new.allocated, old.allocated))))
    return grows, (vmax(new.allocated, new.actual) if not is_false(grows) else None)


def _held(ctx: Context, pod: PodState, index: int, claimant_priority: int):
    """What a non-terminating pod really holds on its node, plus the resize promise it carries if
    that promise ranks at least as high as the claimant."""
    held = kubelet_footprint(pod)
    if ctx.priorities[index] >= claimant_priority:
        held = vmax(held, ite(nonzero(pod.promised), vmin(pod.desired, pod.promised), vzero(ctx.width)))
    return ite(pod.phase == Phase.BOUND, pod.desired, held)


def _grants_fit(ctx: Context, after: State, grants: list):
    """Each grant, plus the outstanding grants of equal or higher priority on its node (resize
    promises and nominations; a lower-priority one may be overtaken, reference §3.4), plus what the
    non-terminating pods hold, fits the node's allocatable."""
    if not grants:
        return True  # all_ of nothing
    return all_(_grant_fits(ctx, after, condition, claimant, node, size) for condition, claimant, node, size in grants)


def grant_terms(ctx: Context, after: State, claimant: int, node) -> list:
    """What a grant to ``claimant`` on ``node`` is added to: what every other non-terminating pod
    there holds (with its resize promise if it ranks at least as high) and the pending pods of equal
    or higher priority nominated there."""
    priority = ctx.priorities[claimant]
    terms = [(and_(on_node(pod, node), not_(leaving(pod))), i, "holds", _held(ctx, pod, i, priority))
             for i, pod in enumerate(after.pods) if i != claimant]
    terms += [(and_(pod.phase == Phase.PENDING, pod.nominated == node), i, "nominated", pod.desired)
              for i, pod in enumerate(after.pods) if i != claimant and ctx.priorities[i] >= priority]
    return terms


@node_local(lambda state, condition, claimant, node, size: (node, None), transient=True)
def _grant_fits(ctx: Context, after: State, condition, claimant: int, node, size):
    """One grant fits (reads only the pods on or nominated to ``node``; ``after`` is judged once)."""
    total = vadd(size, tally(ctx, grant_terms(ctx, after, claimant, node)))
    return implies(condition, vle(total, allocatable_of(ctx, node)))


def no_double_reservation(ctx: Context, before: State, action: Action, after: State):
    return _grants_fit(ctx, after, scheduler_grants(ctx, action, after))


def judges_states_only(predicate: Callable) -> Callable:
    """Marks a step predicate that reads only the states before and after the step, never the action:
    the symbolic engine may then judge it once on the symbolic next state instead of once per action
    instance (``checks.bmc.bad_at``)."""
    predicate.reads_action = False
    return predicate


@judges_states_only
def kubelet_honors_reservation(ctx: Context, before: State, action: Action, after: State):
    return _grants_fit(ctx, after, kubelet_grants(ctx, before, after))


def bound_pods_admitted(ctx: Context, state: State):
    return all_(pod.phase != Phase.REJECTED for pod in state.pods)


def victims_strictly_lower_priority(ctx: Context, state: State):
    return all_(chain.from_iterable(pod_values(ctx, state, not_evicted_by_lower_or_equal)))


def not_evicted_by_lower_or_equal(ctx: Context, i: int, pod: PodState) -> tuple:
    """Per pod of no higher priority than pod ``i``: ``i`` was not evicted for it."""
    return tuple(pod.preempted_by != preemptor
                 for preemptor in ctx.pod_range if ctx.priorities[i] >= ctx.priorities[preemptor])


def new_victims(ctx: Context, before: State, after: State) -> dict:
    """Pod index -> condition that the step evicted it by preemption."""
    result = {}
    for i, evicted in changed_pods(ctx, before, after, _evicted):
        if not is_false(evicted):
            result[i] = evicted
    return result


def _evicted(ctx: Context, i: int, old: PodState, new: PodState):
    """The step evicted the pod by preemption, or (asynchronous preemption) issued the call that will."""
    live = or_(old.phase == Phase.BOUND, old.phase == Phase.RUNNING)
    if new.evicting_for is None:
        return and_(live, new.phase == Phase.TERMINATING, new.preempted_by != NO_POD)
    return and_(live, old.evicting_for == NO_POD, new.evicting_for != NO_POD)


def _claimant(ctx: Context, action: Action) -> int:
    return ctx.pod_index(action.param("pod"))


def no_victim_without_need(ctx: Context, before: State, action: Action, after: State):
    if action.name not in ("PreemptForPod", "PreemptForResize"):
        return True
    claimant = _claimant(ctx, action)
    victims = new_victims(ctx, before, after)
    if action.name == "PreemptForResize":
        did_not_fit = not_(fits_deferred_pod(ctx, before, claimant))
        fits, node = fits_deferred_pod, before.pods[claimant].node
    else:
        node = ctx.node_index(action.param("node"))
        did_not_fit = not_(or_(*(fits_new_pod(ctx, before, claimant, n) for n in ctx.node_range)))
        fits = fits_new_pod
    needed = [
        implies(condition, not_(fits(ctx, before, claimant, node, {u: c for u, c in victims.items() if u != victim})))
        for victim, condition in victims.items()
    ]
    # a cycle on a stale view may "preempt" only pods the API no longer has: no victim, nothing to judge
    evicts = or_(*victims.values())
    return and_(implies(evicts, and_(still_claiming(ctx, before, action.name, claimant), did_not_fit)), *needed)


def still_claiming(ctx: Context, state: State, action_name: str, claimant: int):
    """The claimant still asks for room in the API: its resize is still Deferred, or it is still a
    pending pod (always so when the scheduler sees the API at once; with a stale view it may preempt
    for a resize already granted or reverted, or for a pod already deleted)."""
    pod = state.pods[claimant]
    return is_deferred(pod) if action_name == "PreemptForResize" else pod.phase == Phase.PENDING


def no_excess_victims(ctx: Context, before: State, action: Action, after: State):
    if action.name != "PreemptForResize":
        return True
    claimant = _claimant(ctx, action)
    pod = after.pods[claimant]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    verdicts = []
    for victim, condition in new_victims(ctx, before, after).items():
        total = vadd(own, tally(ctx, victim_kept_terms(ctx, before, after, claimant, victim)))
        verdicts.append(implies(condition, not_(vle(total, allocatable_of(ctx, pod.node)))))
    return all_(verdicts)


def victim_kept_terms(ctx: Context, before: State, after: State, claimant: int, victim: int) -> list:
    """With every pod that is leaving gone except ``victim`` (as it was before the eviction), what the
    kubelet counts beside the resizing ``claimant``: NoExcessVictims asks whether it still lacks room."""
    node = after.pods[claimant].node
    terms = []
    for i, (old, new) in enumerate(zip(before.pods, after.pods)):
        if i == claimant:
            continue
        staying = and_(on_node(new, node), or_(not_(leaving(new)), i == victim))
        terms.append((staying, i, "kept" if i == victim else "allocated",
                      ite(old.phase == Phase.BOUND, old.desired, kubelet_footprint(old))))
    return terms


def no_double_preemption(ctx: Context, before: State, action: Action, after: State):
    if action.name != "PreemptForResize":
        return True
    claimant = _claimant(ctx, action)
    evicted = or_(*new_victims(ctx, before, after).values())
    waiting = any_(victims_in_flight(ctx, before, claimant))
    return implies(evicted, not_(waiting))


def victims_in_flight(ctx: Context, before: State, claimant: int) -> list:
    """Per pod: it was evicted for ``claimant`` and is still terminating."""
    if ctx.variant.preemption_calls == "asynchronous":
        return [or_(and_(pod.phase == Phase.TERMINATING, pod.preempted_by == claimant), pod.evicting_for == claimant)
                for pod in before.pods]
    return [and_(pod.phase == Phase.TERMINATING, pod.preempted_by == claimant) for pod in before.pods]


def conditions_truthful(ctx: Context, state: State):
    return all_(pod_values(ctx, state, _conditions_truthful_for))


def _conditions_truthful_for(ctx: Context, i: int, pod: PodState):
    return implies(pod.phase == Phase.RUNNING, and_(*(holds for _, holds in condition_checks(ctx, pod))))


def condition_checks(ctx: Context, pod: PodState) -> tuple:
    """ConditionsTruthful's conjuncts for a running pod, named: ``(name, holds)``."""
    nominations_allowed = ctx.variant.double_preemption_guard == "nominated-node-name"
    return (
        ("in-progress", pod.in_progress == not_(veq(pod.allocated, pod.actual))),
        ("pending", implies(pod.observed, (pod.resize != ResizeReason.NONE) == not_(veq(pod.desired, pod.allocated)))),
        ("nominated", or_(nominations_allowed, pod.nominated == NO_NODE)),
    )


# --- sometimes -------------------------------------------------------------------------------------

def resize_deferred(ctx: Context, state: State):
    return any_(and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED) for pod in state.pods)


def resize_in_progress(ctx: Context, state: State):
    return any_(and_(pod.phase == Phase.RUNNING, pod.in_progress) for pod in state.pods)


def resize_preempted(ctx: Context, before: State, action: Action, after: State):
    return action.name == "PreemptForResize" and or_(*new_victims(ctx, before, after).values())


def resize_allocated_after_preemption(ctx: Context, before: State, action: Action, after: State):
    return any_(value for _, value in changed_pods(ctx, before, after, _allocated_after_promise))


def _allocated_after_promise(ctx: Context, i: int, old: PodState, new: PodState):
    return and_(nonzero(old.promised), new.phase == Phase.RUNNING, not_(veq(new.allocated, old.allocated)),
                veq(new.allocated, new.desired))


def victim_evicted(ctx: Context, before: State, action: Action, after: State):
    return or_(*new_victims(ctx, before, after).values())


def pod_admitted(ctx: Context, before: State, action: Action, after: State):
    return action.name == "AdmitPod"


def pending_pod_bound_beside_deferred_resize(ctx: Context, before: State, action: Action, after: State):
    if action.name != "BindPod":
        return False
    node = ctx.node_index(action.param("node"))
    return any_(and_(pod.node == node, pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)
                for pod in after.pods)


PREDICATES = {
    spec.name: globals()[snake_case(spec.name)]
    for spec in PROPERTIES
    if spec.kind in (ALWAYS, SOMETIMES)
}


# --- eventually (liveness): premise and goal per pod ------------------------------------------------

@dataclass(frozen=True)
class Response:
    """``premise(pod) ~> goal(pod)`` for every pod: whenever the premise holds, the goal holds then
    or later (TLA+ ``P ~> Q``). Both take ``(ctx, state, pod index)``; the words name them in
    trace reports."""

    premise: Callable
    goal: Callable
    premise_words: str = ""
    goal_words: str = ""


@dataclass(frozen=True)
class EventuallyNever:
    """``<>[] ~step``: from some point on, no step is an instance of ``step(ctx, before, after)``."""

    step: Callable
    step_words: str = ""


def _resize_outstanding(ctx: Context, state: State, index: int):
    pod = state.pods[index]
    return and_(pod.phase == Phase.RUNNING, not_(veq(pod.desired, pod.allocated)))


def _deferred(ctx: Context, state: State, index: int):
    pod = state.pods[index]
    return and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)


def _lower_priority_could_make_room(ctx: Context, state: State, index: int):
    """The kubelet would admit the resize if every strictly-lower-priority pod on the node were gone."""
    pod = state.pods[index]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    others = vsum_where(((and_(other.node == pod.node, admitted(other)), kubelet_footprint(other))
                         for j, other in enumerate(state.pods)
                         if j != index and ctx.priorities[j] >= ctx.priorities[index]), ctx.width)
    return vle(vadd(own, others), allocatable_of(ctx, pod.node))


def _could_be_placed(ctx: Context, state: State, index: int):
    """A pending pod fits some node now, or (if it may preempt) once every strictly-lower-priority
    pod there is gone (scheduler view)."""
    options = []
    for node in ctx.node_range:
        options.append(fits_new_pod(ctx, state, index, node))
        if not ctx.never_preempts[index]:
            removed = {j: True for j in ctx.pod_range if ctx.priorities[j] < ctx.priorities[index]}
            options.append(fits_new_pod(ctx, state, index, node, removed))
    return or_(*options)


def _pending_and_placeable(ctx: Context, state: State, index: int):
    return and_(state.pods[index].phase == Phase.PENDING, _could_be_placed(ctx, state, index))


def _not_pending_or_unplaceable(ctx: Context, state: State, index: int):
    return not_(_pending_and_placeable(ctx, state, index))


def _eviction(ctx: Context, before: State, after: State):
    return or_(*new_victims(ctx, before, after).values())


_RESOLVED = "its resize is allocated or reverted (desired = allocated), or the pod is no longer running"

LIVENESS = {
    "DeferredResizeResolved": Response(
        premise=lambda ctx, state, i: and_(_deferred(ctx, state, i), _lower_priority_could_make_room(ctx, state, i)),
        goal=lambda ctx, state, i: not_(_resize_outstanding(ctx, state, i)),
        premise_words="its resize is Deferred and the kubelet would fit it without the strictly-lower-priority pods",
        goal_words=_RESOLVED),
    "EveryDeferredResizeResolved": Response(
        premise=_deferred,
        goal=lambda ctx, state, i: not_(_resize_outstanding(ctx, state, i)),
        premise_words="its resize is Deferred", goal_words=_RESOLVED),
    "NoPreemptionLivelock": EventuallyNever(step=_eviction, step_words="a pod is evicted by preemption"),
    "PendingPodResolved": Response(
        premise=_pending_and_placeable, goal=_not_pending_or_unplaceable,
        premise_words="it is pending and fits some node now or once the strictly-lower-priority pods there are gone",
        goal_words="it is no longer pending, or no node could take it any more"),
}
