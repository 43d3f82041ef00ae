"""One predicate per entry of the property catalog (``spec/properties.py``), with the same name.

State-scope predicates take ``(ctx, state)``; step-scope predicates take ``(ctx, before, action,
after)`` and judge the decision the action took. For ``always`` properties ``True`` means the
property holds there; for ``sometimes`` properties ``True`` means this state/step is a witness.
``eventually`` properties are judged by the liveness engine (issue 3) on the state graph and
have no predicate here yet.
"""

from __future__ import annotations

from spec.properties import ALWAYS, PROPERTIES, SOMETIMES
from spec.vocabulary import Phase, ResizeReason

from model.accounting import kubelet_resizing_pod_requests
from model.actions import Action
from model.context import Context
from model.expr import vadd, vle, vmax, vmin, vzero
from model.state import NO_NODE, NO_POD, PodState, State
from model.views import fits_deferred_pod, fits_new_pod, kubelet_footprint, pods_on_node

__all__ = ["PREDICATES", "predicate_for", "scheduler_grants", "kubelet_grants"]


# --- always ----------------------------------------------------------------------------------------

def kubelet_never_overcommits(ctx: Context, state: State) -> bool:
    for node in ctx.node_range:
        total = vzero(ctx.width)
        for i in pods_on_node(ctx, state, node):
            pod = state.pods[i]
            if pod.admitted:
                total = vadd(total, kubelet_footprint(pod))
        if not vle(total, ctx.allocatable[node]):
            return False
    return True


SCHEDULER_GRANTS = ("BindPod", "PreemptForPod", "PreemptForResize")


def scheduler_grants(ctx: Context, action: Action, after: State) -> list[tuple[int, int, tuple]]:
    """The capacity the scheduler grants in a step: (claimant, node, size). It grants by binding a
    pod, by nominating a preemptor and by preempting for a Deferred resize."""
    if action.name not in SCHEDULER_GRANTS:
        return []
    params = dict(action.params)
    claimant = ctx.names.index(params["pod"])
    pod = after.pods[claimant]
    if action.name == "PreemptForResize":
        return [(claimant, pod.node, vmax(pod.allocated, pod.actual, pod.desired))]
    return [(claimant, ctx.node_names.index(params["node"]), pod.desired)]


def kubelet_grants(ctx: Context, before: State, after: State) -> list[tuple[int, int, tuple]]:
    """The resizes the kubelet allocates in a step (the allocation grows): (claimant, node, size)."""
    return [
        (i, new.node, vmax(new.allocated, new.actual))
        for i, (old, new) in enumerate(zip(before.pods, after.pods))
        if new.phase == Phase.RUNNING and any(n > o for n, o in zip(new.allocated, old.allocated))
    ]


def _held(ctx: Context, pod: PodState, index: int, claimant_priority: int):
    """What a non-terminating pod really holds on its node, plus the resize promise it carries if
    that promise ranks at least as high as the claimant."""
    if pod.phase == Phase.BOUND:
        return pod.desired
    held = kubelet_footprint(pod)
    if pod.promised and ctx.priorities[index] >= claimant_priority:
        held = vmax(held, vmin(pod.desired, pod.promised))
    return held


def _grants_fit(ctx: Context, after: State, grants: list[tuple[int, int, tuple]]) -> bool:
    """Each grant, plus the outstanding grants of equal or higher priority on its node (resize
    promises and nominations; a lower-priority one may be overtaken, reference §3.4), plus what the
    non-terminating pods hold, fits the node's allocatable."""
    for claimant, node, size in grants:
        priority = ctx.priorities[claimant]
        total = size
        for i in pods_on_node(ctx, after, node):
            pod = after.pods[i]
            if i != claimant and pod.phase != Phase.TERMINATING:
                total = vadd(total, _held(ctx, pod, i, priority))
        for i, pod in enumerate(after.pods):
            if i != claimant and pod.phase == Phase.PENDING and pod.nominated == node and ctx.priorities[i] >= priority:
                total = vadd(total, pod.desired)
        if not vle(total, ctx.allocatable[node]):
            return False
    return True


def no_double_reservation(ctx: Context, before: State, action: Action, after: State) -> bool:
    return _grants_fit(ctx, after, scheduler_grants(ctx, action, after))


def kubelet_honors_reservation(ctx: Context, before: State, action: Action, after: State) -> bool:
    return _grants_fit(ctx, after, kubelet_grants(ctx, before, after))


def bound_pods_admitted(ctx: Context, state: State) -> bool:
    return all(pod.phase != Phase.REJECTED for pod in state.pods)


def victims_strictly_lower_priority(ctx: Context, state: State) -> bool:
    return all(
        pod.preempted_by == NO_POD or ctx.priorities[i] < ctx.priorities[pod.preempted_by]
        for i, pod in enumerate(state.pods)
    )


def _new_victims(before: State, after: State) -> list[int]:
    return [
        i for i, (old, new) in enumerate(zip(before.pods, after.pods))
        if old.phase in (Phase.BOUND, Phase.RUNNING) and new.phase == Phase.TERMINATING and new.preempted_by != NO_POD
    ]


def _claimant(ctx: Context, action: Action) -> int:
    return ctx.names.index(dict(action.params)["pod"])


def no_victim_without_need(ctx: Context, before: State, action: Action, after: State) -> bool:
    if action.name not in ("PreemptForPod", "PreemptForResize"):
        return True
    claimant = _claimant(ctx, action)
    victims = _new_victims(before, after)
    if action.name == "PreemptForResize":
        if fits_deferred_pod(ctx, before, claimant):
            return False
        fits = lambda removed: fits_deferred_pod(ctx, before, claimant, removed)
    else:
        node = ctx.node_names.index(dict(action.params)["node"])
        if any(fits_new_pod(ctx, before, claimant, n) for n in ctx.node_range):
            return False
        fits = lambda removed: fits_new_pod(ctx, before, claimant, node, removed)
    return not any(fits(frozenset(victims) - {v}) for v in victims)


def no_excess_victims(ctx: Context, before: State, action: Action, after: State) -> bool:
    if action.name != "PreemptForResize":
        return True
    claimant = _claimant(ctx, action)
    pod = after.pods[claimant]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    for victim in _new_victims(before, after):
        total = own
        for i in pods_on_node(ctx, after, pod.node):
            other = before.pods[i]  # the victim as it was before the eviction
            if i == claimant or (after.pods[i].phase == Phase.TERMINATING and i != victim):
                continue
            total = vadd(total, other.desired if other.phase == Phase.BOUND else kubelet_footprint(other))
        if vle(total, ctx.allocatable[pod.node]):
            return False  # the kubelet would have had room without this victim
    return True


def no_double_preemption(ctx: Context, before: State, action: Action, after: State) -> bool:
    if action.name != "PreemptForResize" or not _new_victims(before, after):
        return True
    claimant = _claimant(ctx, action)
    return not any(pod.phase == Phase.TERMINATING and pod.preempted_by == claimant for pod in before.pods)


def conditions_truthful(ctx: Context, state: State) -> bool:
    nominations_allowed = ctx.variant.double_preemption_guard == "nominated-node-name"
    for pod in state.pods:
        if pod.phase != Phase.RUNNING:
            continue
        if pod.in_progress != (pod.allocated != pod.actual):
            return False
        if pod.observed and (pod.resize != ResizeReason.NONE) != (pod.desired != pod.allocated):
            return False
        if pod.nominated != NO_NODE and not nominations_allowed:
            return False
    return True


# --- sometimes -------------------------------------------------------------------------------------

def resize_deferred(ctx: Context, state: State) -> bool:
    return any(pod.phase == Phase.RUNNING and pod.resize == ResizeReason.DEFERRED for pod in state.pods)


def resize_in_progress(ctx: Context, state: State) -> bool:
    return any(pod.phase == Phase.RUNNING and pod.in_progress for pod in state.pods)


def resize_preempted(ctx: Context, before: State, action: Action, after: State) -> bool:
    return action.name == "PreemptForResize" and bool(_new_victims(before, after))


def resize_allocated_after_preemption(ctx: Context, before: State, action: Action, after: State) -> bool:
    return any(
        old.promised and new.phase == Phase.RUNNING and new.allocated != old.allocated and new.allocated == new.desired
        for old, new in zip(before.pods, after.pods)
    )


def victim_evicted(ctx: Context, before: State, action: Action, after: State) -> bool:
    return bool(_new_victims(before, after))


def pod_admitted(ctx: Context, before: State, action: Action, after: State) -> bool:
    return action.name == "AdmitPod"


def pending_pod_bound_beside_deferred_resize(ctx: Context, before: State, action: Action, after: State) -> bool:
    if action.name != "BindPod":
        return False
    node = ctx.node_names.index(dict(action.params)["node"])
    return any(pod.node == node and pod.phase == Phase.RUNNING and pod.resize == ResizeReason.DEFERRED
               for pod in after.pods)


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


PREDICATES = {
    spec.name: globals()[_snake(spec.name)]
    for spec in PROPERTIES
    if spec.kind in (ALWAYS, SOMETIMES)
}


def predicate_for(name: str):
    return PREDICATES[name]
