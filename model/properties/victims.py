"""The predicates about victims (docs/reference.md §3.3, §4.3–§4.6): VictimsStrictlyLowerPriority,
NoVictimWithoutNeed, NoExcessVictims, NoNeedlessVictimForPendingPod and NoDoublePreemption, with the terms they judge (who was
evicted in a step and for whom, which victims a claimant still had in flight), which
``model/properties/explain.py`` reads to say why one fails.
"""

from __future__ import annotations

from itertools import chain

from kepcheck.spec.kep.vocabulary import Phase

from kepcheck.model.accounting.footprints import kubelet_resizing_pod_requests
from kepcheck.model.accounting.views import (
    aligned_footprint, allocatable_of, fits_deferred_pod, fits_new_pod, kubelet_footprint, leaving, nominated_load,
    on_node, pod_count_fits, remaining_on,
)
from kepcheck.model.actions.preemption import potential_victims, reprieve
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, any_, implies, is_false, ite, not_, or_
from kepcheck.model.expr.vectors import vadd, vle, vsum_where
from kepcheck.model.memo import changed_pods, pod_values
from kepcheck.model.properties.capacity import tally
from kepcheck.model.state import NO_POD, PodState, State
from kepcheck.model.step import Action, is_deferred

__all__ = [
    "victims_strictly_lower_priority", "not_evicted_by_lower_or_equal", "new_victims", "no_victim_without_need",
    "still_claiming", "no_excess_victims", "victim_kept_terms", "no_double_preemption", "victims_in_flight",
    "no_needless_victim_for_pending_pod", "kubelet_allocation_fit", "kubelet_fit_victims",
]


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


def no_needless_victim_for_pending_pod(ctx: Context, before: State, action: Action, after: State):
    """Every victim of a pending pod's preemption is one the same victim selection picks when the node's
    pods count at the kubelet's allocations (``kubelet_fit_victims``): none is evicted only because the
    scheduler counts a Deferred resize at its desired size (KEP-5836 review point (c): "we probably
    don't want to kill the original pod if it's not necessary"). A Deferred preemptor's victims are
    judged by NoExcessVictims."""
    if action.name != "PreemptForPod":
        return True
    claimant, node = _claimant(ctx, action), ctx.node_index(action.param("node"))
    needed = kubelet_fit_victims(ctx, before, claimant, node)
    return all_(implies(condition, needed.get(victim, False))
                for victim, condition in new_victims(ctx, before, after).items())


def kubelet_fit_victims(ctx: Context, state: State, claimant: int, node) -> dict:
    """Pod index -> condition: the victims upstream's selection (all strictly-lower-priority pods
    removed, then the greedy reprieve, docs/reference.md §3.3, P-1, P-2) picks for the pending ``claimant`` on
    ``node`` with ``kubelet_allocation_fit`` as the fit. The unmutated selection: this is the judge."""
    potential = potential_victims.__wrapped__(ctx, state, claimant, node)
    if not potential:
        return {}
    return reprieve.__wrapped__(ctx, state, claimant, node, kubelet_allocation_fit, dict(potential))


def kubelet_allocation_fit(ctx: Context, state: State, claimant: int, node, removed=None):
    """The pending ``claimant`` fits ``node`` when the pods there count as the kubelet counts them,
    max(allocated, actual) (a bound pod without status at its desired: ``aligned_footprint``), with
    the scheduler's nominations of >= priority and its pod count; only the accounting of assigned
    pods differs from ``fits_new_pod``."""
    removed = removed or {}
    pairs = []
    for i, pod in enumerate(state.pods):
        present = remaining_on(pod, node, i, removed)
        if i != claimant and not is_false(present):
            pairs.append((present, aligned_footprint.__wrapped__(ctx, pod)))
    used = vadd(vsum_where(pairs, ctx.width), nominated_load(ctx, state, node, ctx.priorities[claimant], claimant))
    return and_(vle(vadd(used, state.pods[claimant].desired), allocatable_of(ctx, node)),
                pod_count_fits(ctx, state, node, claimant, removed))


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
