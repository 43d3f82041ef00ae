"""How the scheduler and the kubelet see a node: per-pod footprints and fit checks on a State.

Every footprint goes through ``model/accounting.py`` (reference §1): the scheduler counts an
assigned pod with ``combine_totals`` (v1.37 max of desired, allocated and actual; Infeasible
ignores desired), the kubelet counts other admitted pods at max(allocated, actual) and the
resizing pod at its desired size (reference §1.7, §2.2). The variant's ``accounting`` option
changes only the scheduler's footprints (DESIGN.md §3).

A pod that is bound but not yet admitted has no status: its allocated and actual vectors are
zero in the state, so ``combine_totals`` yields its desired size, as ``PodRequests`` falls back to
desired when no status is present (reference §1.2).

Left out: pod count limits, ephemeral storage and extended resources; the "non-zero" requests
used only for scoring.
"""

from __future__ import annotations

from spec.vocabulary import Phase, ResizeReason

from model.accounting import combine_totals, deferred_fit_delta, kubelet_other_pod_requests, kubelet_resizing_pod_requests
from model.expr import and_, ite, or_, vadd, vle, vmax, vsub, vzero
from model.context import Context
from model.state import PodState, State

__all__ = [
    "scheduler_footprint", "scheduler_requested", "nominated_load", "fits_new_pod", "fits_deferred_pod",
    "kubelet_footprint", "kubelet_fits_resize", "kubelet_fits_admission", "scheduler_free", "kubelet_free",
    "pods_on_node",
]


def pods_on_node(ctx: Context, state: State, node: int):
    """Indices of pods assigned to ``node`` (bound, running or terminating)."""
    return [i for i, pod in enumerate(state.pods) if pod.node == node and Phase.BOUND <= pod.phase <= Phase.TERMINATING]


def _max_accounting(pod: PodState):
    return combine_totals(pod.desired, pod.allocated, pod.actual, pod.resize == ResizeReason.INFEASIBLE)


def scheduler_footprint(ctx: Context, pod: PodState, evaluating_deferred: bool = False):
    """What the scheduler's NodeInfo counts for an assigned pod (reference §1.6).

    ``evaluating_deferred``: the footprint of *another* pod while a Deferred pod's restricted cycle
    runs; only the ``kubelet-aligned`` accounting treats that case differently. A pure function of
    the pod for a given context, memoised per context.
    """
    key = (pod, evaluating_deferred)
    cached = ctx.cache.get(key)
    if cached is None:
        cached = ctx.cache[key] = _scheduler_footprint(ctx, pod, evaluating_deferred)
    return cached


def _scheduler_footprint(ctx: Context, pod: PodState, evaluating_deferred: bool):
    accounting = ctx.variant.accounting
    if pod.phase == Phase.BOUND:
        return pod.desired  # assumed/bound pod: no status yet
    if accounting == "allocated-only":
        return vmax(pod.allocated, pod.assumed) if pod.assumed else pod.allocated
    if evaluating_deferred and accounting == "kubelet-aligned" and not ctx.has("aligned-counts-desired"):
        return kubelet_other_pod_requests(pod.allocated, pod.actual)
    if ctx.has("scheduler-ignores-actual"):
        return vmax(pod.desired, pod.allocated)  # the pre-v1.33 accounting of #129532, minus actual
    if ctx.has("ignore-desired-for-deferred") and pod.resize == ResizeReason.DEFERRED:
        return vmax(pod.allocated, pod.actual)
    return _max_accounting(pod)


def scheduler_requested(ctx: Context, state: State, node: int, removed=(), evaluating=None):
    """NodeInfo.Requested of ``node``, without the pods in ``removed`` (preemption dry-run).

    ``evaluating`` is the index of a Deferred pod whose restricted cycle is running: it is counted
    with the normal accounting and the other pods per the variant.
    """
    total = vzero(ctx.width)
    for i in pods_on_node(ctx, state, node):
        if i in removed:
            continue
        pod = state.pods[i]
        deferred_cycle = evaluating is not None and i != evaluating
        total = vadd(total, scheduler_footprint(ctx, pod, deferred_cycle))
    return total


def nominated_load(ctx: Context, state: State, node: int, priority: int, exclude: int):
    """Pods nominated to ``node`` with priority >= ``priority`` (reference §3.2, §7.4 P-4).

    Only pending pods are held by the scheduler's nominator; a bound pod with a nomination is
    already counted in NodeInfo (so the nominated-node-name guard for resizes adds nothing here).
    """
    total = vzero(ctx.width)
    for i, pod in enumerate(state.pods):
        if i != exclude and pod.phase == Phase.PENDING and pod.nominated == node and ctx.priorities[i] >= priority:
            total = vadd(total, pod.desired)
    return total


def fits_new_pod(ctx: Context, state: State, claimant: int, node: int, removed=()):
    """NodeResourcesFit for a pending pod, with nominated pods of >= priority (reference §3.2, §3.5)."""
    pod = state.pods[claimant]
    used = vadd(scheduler_requested(ctx, state, node, removed), nominated_load(ctx, state, node, ctx.priorities[claimant], claimant))
    return vle(vadd(used, pod.desired), ctx.allocatable[node])


def fits_deferred_pod(ctx: Context, state: State, claimant: int, removed=()):
    """NodeResourcesFit for a Deferred pod on its own node (reference §4.4, §7.4 P-7).

    The pod is already in NodeInfo; the request checked is the excess of the queue copy over the
    cache copy, ``max(0, desired - cache footprint)``, against ``Allocatable - Requested``, for every
    resource the pod requests. With a synchronous informer the queue copy equals the cache copy.
    """
    pod = state.pods[claimant]
    node = pod.node
    delta = deferred_fit_delta(pod.desired, scheduler_footprint(ctx, pod))
    used = vadd(scheduler_requested(ctx, state, node, removed, evaluating=claimant),
                nominated_load(ctx, state, node, ctx.priorities[claimant], claimant))
    need = vadd(used, delta)
    allocatable = ctx.allocatable[node]
    return and_(*(or_(pod.desired[r] == 0, need[r] <= allocatable[r]) for r in range(ctx.width)))


def kubelet_footprint(pod: PodState):
    """What the kubelet counts for another admitted pod: max(allocated, actual) (reference §1.7)."""
    return kubelet_other_pod_requests(pod.allocated, pod.actual)


def _kubelet_others(ctx: Context, state: State, node: int, exclude: int, removed=()):
    total = vzero(ctx.width)
    for i in pods_on_node(ctx, state, node):
        pod = state.pods[i]
        if i == exclude or i in removed or not pod.admitted:
            continue
        if ctx.has("kubelet-ignores-others-actual"):
            total = vadd(total, pod.allocated)
        else:
            total = vadd(total, kubelet_footprint(pod))
    return total


def kubelet_fits_resize(ctx: Context, state: State, index: int, removed=()):
    """The kubelet's resize admission: others at max(allocated, actual) + this pod as measured by the
    variant (desired in the implementation, max in the KEP text) fit allocatable (reference §2.2)."""
    pod = state.pods[index]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index, removed), own), ctx.allocatable[pod.node])


def kubelet_fits_admission(ctx: Context, state: State, index: int):
    """Admission of a newly bound pod: its desired requests fit next to the admitted pods (reference §2.1)."""
    pod = state.pods[index]
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index), pod.desired), ctx.allocatable[pod.node])


def scheduler_free(ctx: Context, state: State, node: int):
    """Allocatable minus the scheduler's Requested (may be negative: #135107)."""
    return vsub(ctx.allocatable[node], scheduler_requested(ctx, state, node))


def kubelet_free(ctx: Context, state: State, node: int):
    """Allocatable minus what the kubelet counts for every admitted pod."""
    return vsub(ctx.allocatable[node], _kubelet_others(ctx, state, node, exclude=-1))
