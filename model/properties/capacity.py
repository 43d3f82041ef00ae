"""The predicates about capacity (docs/reference.md §1, §2, §4.5): KubeletNeverOvercommits, NoDoubleReservation,
KubeletHonorsReservation and BoundPodsAdmitted, with the terms they add up (``tally``): what the
kubelet has allocated on a node, what the scheduler granted in a step and what the kubelet granted,
and what still holds each grant — terms ``model/properties/explain.py`` reads, so a trace report
shows exactly the sum that was judged.
"""

from __future__ import annotations

from typing import Callable

from kepcheck.spec.kep.vocabulary import Phase

from kepcheck.model.accounting.views import admitted, allocatable_of, kubelet_footprint, leaving, on_node
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, implies, is_false, ite, not_, or_
from kepcheck.model.expr.vectors import nonzero, vadd, vle, vmax, vmin, vsum_where, vzero
from kepcheck.model.memo import changed_pods, node_local
from kepcheck.model.state import PodState, State
from kepcheck.model.step import Action

__all__ = [
    "tally", "kubelet_never_overcommits", "kubelet_node_terms", "SCHEDULER_GRANTS", "scheduler_grants",
    "kubelet_grants", "grant_terms", "no_double_reservation", "judges_states_only",
    "kubelet_honors_reservation", "bound_pods_admitted",
]


def tally(ctx: Context, terms: list) -> tuple:
    """The sum of ``terms`` ``[(condition, pod index, role, vector)]`` whose condition holds."""
    return vsum_where(((condition, vector) for condition, _, _, vector in terms), ctx.width)


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
    promises and nominations; a lower-priority one may be overtaken, docs/reference.md §3.4), plus what the
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
    instance (``checks.symbolic.bmc.bad_at``)."""
    predicate.reads_action = False
    return predicate


@judges_states_only
def kubelet_honors_reservation(ctx: Context, before: State, action: Action, after: State):
    return _grants_fit(ctx, after, kubelet_grants(ctx, before, after))


def bound_pods_admitted(ctx: Context, state: State):
    return all_(pod.phase != Phase.REJECTED for pod in state.pods)
