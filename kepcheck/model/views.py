"""How the scheduler and the kubelet see a node: per-pod footprints and fit checks on a State.

Every footprint goes through ``model/accounting.py`` (reference §1): the scheduler counts an
assigned pod with ``combine_totals`` (v1.37 max of desired, allocated and actual; Infeasible
ignores desired), the kubelet counts other admitted pods at max(allocated, actual) and the
resizing pod at its desired size (reference §1.7, §2.2). The variant's ``accounting`` option
changes only the scheduler's footprints (DESIGN.md §3).

A pod that is bound but not yet admitted has no status: its allocated and actual vectors are
zero in the state, so ``combine_totals`` yields its desired size, as ``PodRequests`` falls back to
desired when no status is present (reference §1.2).

Every function here is written with ``model/expr.py`` helpers, so it evaluates on plain ints and
on Z3 terms alike: node indices and pod fields may be state values; pod indices, the variant and
the mutants are parameters. ``removed`` maps a pod index to a condition (a bool or a term) under
which the pod is taken off the node (preemption dry-runs).

Left out: pod count limits, ephemeral storage and extended resources; the "non-zero" requests
used only for scoring.
"""

from __future__ import annotations

from kepcheck.spec.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting import combine_totals, deferred_fit_delta, kubelet_other_pod_requests, kubelet_resizing_pod_requests
from kepcheck.model.context import Context, node_local
from kepcheck.model.expr import and_, is_concrete, is_false, ite, not_, or_, pick, vadd, vle, vmax, vsub, vsum_where
from kepcheck.model.state import PodState, State

__all__ = [
    "assigned", "admitted", "on_node", "scheduler_footprint", "scheduler_requested", "nominated_load",
    "fits_new_pod", "fits_deferred_pod", "kubelet_footprint", "kubelet_fits_resize", "kubelet_fits_admission",
    "scheduler_free", "kubelet_free", "allocatable_of",
]


def assigned(pod: PodState):
    """Bound, running or terminating: counted on its node by the scheduler."""
    return and_(pod.phase >= Phase.BOUND, pod.phase <= Phase.TERMINATING)


def admitted(pod: PodState):
    """Admitted by the kubelet and still holding its allocation."""
    return or_(pod.phase == Phase.RUNNING, pod.phase == Phase.TERMINATING)


def on_node(pod: PodState, node):
    return and_(pod.node == node, assigned(pod))


def allocatable_of(ctx: Context, node):
    return pick(ctx.allocatable, node)


def scheduler_footprint(ctx: Context, pod: PodState, evaluating_deferred: bool = False):
    """What the scheduler's NodeInfo counts for an assigned pod (reference §1.6).

    ``evaluating_deferred``: the footprint of *another* pod while a Deferred pod's restricted cycle
    runs; only the ``kubelet-aligned`` accounting treats that case differently. Concrete results
    are memoised per context (a pure function of the pod).
    """
    concrete = is_concrete(pod.phase)
    if concrete:
        key = (pod, evaluating_deferred)
        cached = ctx.cache.get(key)
        if cached is not None:
            return cached
    result = _scheduler_footprint(ctx, pod, evaluating_deferred)
    if concrete:
        ctx.cache[key] = result
    return result


def _scheduler_footprint(ctx: Context, pod: PodState, evaluating_deferred: bool):
    bound = pod.phase == Phase.BOUND  # assumed/bound pod: no status yet, counted at desired
    accounting = ctx.variant.accounting
    if accounting == "allocated-only":
        return ite(bound, pod.desired, vmax(pod.allocated, pod.assumed))
    if evaluating_deferred and accounting == "kubelet-aligned" and not ctx.has("aligned-counts-desired"):
        return ite(bound, pod.desired, kubelet_other_pod_requests(pod.allocated, pod.actual))
    if ctx.has("scheduler-ignores-actual"):
        return vmax(pod.desired, pod.allocated)  # the pre-v1.33 accounting of #129532, minus actual
    full = combine_totals(pod.desired, pod.allocated, pod.actual, pod.resize == ResizeReason.INFEASIBLE)
    if ctx.has("ignore-desired-for-deferred"):
        return ite(pod.resize == ResizeReason.DEFERRED, vmax(pod.allocated, pod.actual), full)
    return full


def scheduler_requested(ctx: Context, state: State, node, removed=None, evaluating=None):
    """NodeInfo.Requested of ``node``, without the pods ``removed`` (preemption dry-run).

    ``evaluating`` is the index of a Deferred pod whose restricted cycle is running: it is counted
    with the normal accounting and the other pods per the variant.
    """
    removed = removed or {}
    pairs = []
    for i, pod in enumerate(state.pods):
        present = on_node(pod, node)
        if i in removed:
            present = and_(present, not_(removed[i]))
        if is_false(present):
            continue
        deferred_cycle = evaluating is not None and i != evaluating
        pairs.append((present, scheduler_footprint(ctx, pod, deferred_cycle)))
    return vsum_where(pairs, ctx.width)


def nominated_load(ctx: Context, state: State, node, priority: int, exclude: int):
    """Pods nominated to ``node`` with priority >= ``priority`` (reference §3.2, §7.4 P-4).

    Only pending pods are held by the scheduler's nominator; a bound pod with a nomination is
    already counted in NodeInfo (so the nominated-node-name guard for resizes adds nothing here).
    """
    return vsum_where(
        ((and_(pod.phase == Phase.PENDING, pod.nominated == node), pod.desired)
         for i, pod in enumerate(state.pods) if i != exclude and ctx.priorities[i] >= priority),
        ctx.width,
    )


def _removed_key(removed):
    """``removed`` as part of a memo key, or None when a condition is not concrete."""
    if not removed:
        return ()
    for condition in removed.values():
        if type(condition) is not bool:
            return None
    return tuple(removed.items())


def _on_node_memo(ctx: Context, state: State, name: str, pod: int, node, removed, compute):
    """``compute(ctx, state, pod, node, removed)`` memoised on pod ``pod`` and the pods on or
    nominated to ``node`` (``model/context.node_local``), unless a removal condition is symbolic."""
    removed_key = _removed_key(removed)
    if removed_key is None:
        return compute(ctx, state, pod, node, removed)
    return node_local(ctx, state, node, (name, pod, state.pods[pod], removed_key),
                      lambda: compute(ctx, state, pod, node, removed))


def fits_new_pod(ctx: Context, state: State, claimant: int, node: int, removed=None):
    """NodeResourcesFit for a pending pod, with nominated pods of >= priority (reference §3.2, §3.5).
    Reads the claimant and the pods on or nominated to ``node`` only (memoised on those)."""
    return _on_node_memo(ctx, state, "fits_new_pod", claimant, node, removed, _fits_new_pod)


def _fits_new_pod(ctx: Context, state: State, claimant: int, node: int, removed):
    pod = state.pods[claimant]
    used = vadd(scheduler_requested(ctx, state, node, removed),
                nominated_load(ctx, state, node, ctx.priorities[claimant], claimant))
    return vle(vadd(used, pod.desired), ctx.allocatable[node])


def fits_deferred_pod(ctx: Context, state: State, claimant: int, removed=None):
    """NodeResourcesFit for a Deferred pod on its own node (reference §4.4, §7.4 P-7).

    The pod is already in NodeInfo; the request checked is the excess of the queue copy over the
    cache copy, ``max(0, desired - cache footprint)``, against ``Allocatable - Requested``, for every
    resource the pod requests. With a synchronous informer the queue copy equals the cache copy.
    Reads the claimant and the pods on or nominated to its node only (memoised on those).
    """
    return _on_node_memo(ctx, state, "fits_deferred_pod", claimant, state.pods[claimant].node, removed,
                         _fits_deferred_pod)


def _fits_deferred_pod(ctx: Context, state: State, claimant: int, node, removed):
    pod = state.pods[claimant]
    delta = deferred_fit_delta(pod.desired, scheduler_footprint(ctx, pod))
    used = vadd(scheduler_requested(ctx, state, pod.node, removed, evaluating=claimant),
                nominated_load(ctx, state, pod.node, ctx.priorities[claimant], claimant))
    need = vadd(used, delta)
    allocatable = allocatable_of(ctx, pod.node)
    return and_(*(or_(pod.desired[r] == 0, need[r] <= allocatable[r]) for r in range(ctx.width)))


def kubelet_footprint(pod: PodState):
    """What the kubelet counts for another admitted pod: max(allocated, actual) (reference §1.7)."""
    return kubelet_other_pod_requests(pod.allocated, pod.actual)


def _kubelet_others(ctx: Context, state: State, node, exclude: int, removed=None):
    removed = removed or {}
    pairs = []
    for i, pod in enumerate(state.pods):
        if i == exclude:
            continue
        present = and_(pod.node == node, admitted(pod))
        if i in removed:
            present = and_(present, not_(removed[i]))
        if is_false(present):
            continue
        size = pod.allocated if ctx.has("kubelet-ignores-others-actual") else kubelet_footprint(pod)
        pairs.append((present, size))
    return vsum_where(pairs, ctx.width)


def kubelet_fits_resize(ctx: Context, state: State, index: int, removed=None):
    """The kubelet's resize admission: others at max(allocated, actual) + this pod as measured by the
    variant (desired in the implementation, max in the KEP text) fit allocatable (reference §2.2).
    Reads the pod and the pods on its node only (memoised on those)."""
    return _on_node_memo(ctx, state, "kubelet_fits_resize", index, state.pods[index].node, removed,
                         _kubelet_fits_resize)


def _kubelet_fits_resize(ctx: Context, state: State, index: int, node, removed):
    pod = state.pods[index]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index, removed), own), allocatable_of(ctx, pod.node))


def kubelet_fits_admission(ctx: Context, state: State, index: int):
    """Admission of a newly bound pod: its desired requests fit next to the admitted pods (reference §2.1).
    Reads the pod and the pods on its node only (memoised on those)."""
    pod = state.pods[index]
    return node_local(ctx, state, pod.node, ("kubelet_fits_admission", index, pod),
                      lambda: _kubelet_fits_admission(ctx, state, index))


def _kubelet_fits_admission(ctx: Context, state: State, index: int):
    pod = state.pods[index]
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index), pod.desired), allocatable_of(ctx, pod.node))


def scheduler_free(ctx: Context, state: State, node: int):
    """Allocatable minus the scheduler's Requested (may be negative: #135107)."""
    return vsub(ctx.allocatable[node], scheduler_requested(ctx, state, node))


def kubelet_free(ctx: Context, state: State, node: int):
    """Allocatable minus what the kubelet counts for every admitted pod."""
    return vsub(ctx.allocatable[node], _kubelet_others(ctx, state, node, exclude=-1))
