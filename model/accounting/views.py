"""How the scheduler and the kubelet see a node: per-pod footprints and fit checks on a State.

Every footprint goes through ``model/accounting/footprints.py`` (docs/reference.md §1): the scheduler counts an
assigned pod with ``combine_totals`` (v1.37 max of desired, allocated and actual; Infeasible
ignores desired), the kubelet counts other admitted pods at max(allocated, actual) and the
resizing pod at its desired size (docs/reference.md §1.7, §2.2). The variant's ``accounting`` option
changes only the scheduler's footprints (docs/design.md §3).

A pod that is bound but not yet admitted has no status: its allocated and actual vectors are
zero in the state, so ``combine_totals`` yields its desired size, as ``PodRequests`` falls back to
desired when no status is present (docs/reference.md §1.2).

Every function here is written with ``model/expr/scalars.py`` helpers, so it evaluates on plain ints and
on Z3 terms alike: node indices and pod fields may be state values; pod indices and the variant
are parameters. ``removed`` maps a pod index to a condition (a bool or a term) under which the pod
is taken off the node (preemption dry-runs). The fit checks read only the pods of one node and are
memoised on those (``model/memo.node_local``) when the engine keeps a cache.

Left out: pod count limits, ephemeral storage and extended resources; the "non-zero" requests
used only for scoring.
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting.footprints import (
    combine_totals, deferred_fit_delta, kubelet_other_pod_requests, kubelet_resizing_pod_requests,
)
from kepcheck.model.context import Context, overridable
from kepcheck.model.expr.scalars import and_, is_false, ite, not_, or_, pick
from kepcheck.model.expr.vectors import vadd, vle, vmax, vsub, vsum_where
from kepcheck.model.memo import node_local, of_values
from kepcheck.model.state import NO_POD, PodState, State

__all__ = ["assigned", "admitted", "on_node", "scheduler_footprint", "max_footprint", "aligned_footprint", "scheduler_requested", "nominated_load", "fits_new_pod", "fits_deferred_pod", "kubelet_footprint", "kubelet_counts_other", "kubelet_fits_resize", "kubelet_fits_admission", "kubelet_free", "allocatable_of", "leaving"]


def assigned(pod: PodState):
    """Bound, running or terminating: counted on its node by the scheduler."""
    return and_(pod.phase >= Phase.BOUND, pod.phase <= Phase.TERMINATING)


def leaving(pod: PodState):
    """The pod is terminating, or a preemption call for it is in flight (asynchronous preemption)."""
    if pod.evicting_for is None:
        return pod.phase == Phase.TERMINATING
    return or_(pod.phase == Phase.TERMINATING, pod.evicting_for != NO_POD)


def admitted(pod: PodState):
    """Admitted by the kubelet and still holding its allocation."""
    return or_(pod.phase == Phase.RUNNING, pod.phase == Phase.TERMINATING)


def on_node(pod: PodState, node):
    return and_(pod.node == node, assigned(pod))


def allocatable_of(ctx: Context, node):
    return pick(ctx.allocatable, node)


@of_values
def scheduler_footprint(ctx: Context, pod: PodState, evaluating_deferred: bool = False):
    """What the scheduler's NodeInfo counts for an assigned pod (docs/reference.md §1.6), per the variant's
    accounting. ``evaluating_deferred``: the footprint of *another* pod while a Deferred pod's
    restricted cycle runs; only the ``kubelet-aligned`` accounting treats that case differently."""
    accounting = ctx.variant.accounting
    if accounting == "allocated-only":  # an assumed/bound pod has no status yet: counted at desired
        return ite(pod.phase == Phase.BOUND, pod.desired, vmax(pod.allocated, pod.assumed))
    if evaluating_deferred and accounting == "kubelet-aligned":
        return aligned_footprint(ctx, pod)
    return max_footprint(ctx, pod)


@overridable
def max_footprint(ctx: Context, pod: PodState):
    """The v1.37 accounting: max(desired, allocated, actual), Infeasible ignoring desired (docs/reference.md §1.2)."""
    return combine_totals(pod.desired, pod.allocated, pod.actual, pod.resize == ResizeReason.INFEASIBLE)


@overridable
def aligned_footprint(ctx: Context, pod: PodState):
    """The kubelet-aligned accounting of another pod during a Deferred pod's cycle: max(allocated,
    actual) like the kubelet; a bound pod without status at its desired (KEP-5836 'Risk of
    Additional Preemption')."""
    return ite(pod.phase == Phase.BOUND, pod.desired, kubelet_other_pod_requests(pod.allocated, pod.actual))


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
    """Pods nominated to ``node`` with priority >= ``priority`` (docs/reference.md §3.2, §7.4 P-4).

    Only pending pods are held by the scheduler's nominator; a bound pod with a nomination is
    already counted in NodeInfo (so the nominated-node-name guard for resizes adds nothing here).
    """
    return vsum_where(
        ((and_(pod.phase == Phase.PENDING, pod.nominated == node), pod.desired)
         for i, pod in enumerate(state.pods) if i != exclude and ctx.priorities[i] >= priority),
        ctx.width,
    )


@node_local(lambda state, claimant, node, removed=None: (node, state.pods[claimant]))
def fits_new_pod(ctx: Context, state: State, claimant: int, node: int, removed=None):
    """NodeResourcesFit for a pending pod, with nominated pods of >= priority (docs/reference.md §3.2, §3.5)."""
    pod = state.pods[claimant]
    used = vadd(scheduler_requested(ctx, state, node, removed),
                nominated_load(ctx, state, node, ctx.priorities[claimant], claimant))
    return vle(vadd(used, pod.desired), ctx.allocatable[node])


@node_local(lambda state, claimant, node=None, removed=None, queued=None: (state.pods[claimant].node, queued))
def fits_deferred_pod(ctx: Context, state: State, claimant: int, node=None, removed=None, queued=None):
    """NodeResourcesFit for a Deferred pod on its own node (docs/reference.md §4.4, §7.4 P-7; ``node`` is
    the pod's own, accepted so that this has the signature of ``fits_new_pod``).

    The pod is already in NodeInfo; the request checked is the excess of the queue copy over the
    cache copy, ``max(0, desired - cache footprint)``, against ``Allocatable - Requested``, for every
    resource the pod requests. With a synchronous informer the queue copy equals the cache copy
    (``queued`` None); with the stale view ``queued`` is the queue copy's requests, and a pod the
    cache no longer has on the node is checked at its whole request.
    """
    pod = state.pods[claimant]
    footprint = scheduler_footprint(ctx, pod)
    if queued is not None:
        footprint = ite(on_node(pod, pod.node), footprint, tuple(0 for _ in footprint))
    desired = pod.desired if queued is None else queued
    delta = deferred_fit_delta(desired, footprint)
    used = vadd(scheduler_requested(ctx, state, pod.node, removed, evaluating=claimant),
                nominated_load(ctx, state, pod.node, ctx.priorities[claimant], claimant))
    need = vadd(used, delta)
    allocatable = allocatable_of(ctx, pod.node)
    return and_(*(or_(desired[r] == 0, need[r] <= allocatable[r]) for r in range(ctx.width)))


def kubelet_footprint(pod: PodState):
    """What another admitted pod really holds on its node: max(allocated, actual) (docs/reference.md §1.7).
    The properties judge with this; the kubelet's own admission counts with ``kubelet_counts_other``."""
    return kubelet_other_pod_requests(pod.allocated, pod.actual)


@overridable
def kubelet_counts_other(ctx: Context, pod: PodState):
    """What the kubelet's admission counts for another admitted pod: ``kubelet_footprint``."""
    return kubelet_footprint(pod)


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
        pairs.append((present, kubelet_counts_other(ctx, pod)))
    return vsum_where(pairs, ctx.width)


@node_local(lambda state, index, removed=None: (state.pods[index].node, None))
def kubelet_fits_resize(ctx: Context, state: State, index: int, removed=None):
    """The kubelet's resize admission: others at max(allocated, actual) + this pod as measured by the
    variant (desired in the implementation, max in the KEP text) fit allocatable (docs/reference.md §2.2)."""
    pod = state.pods[index]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index, removed), own), allocatable_of(ctx, pod.node))


@node_local(lambda state, index: (state.pods[index].node, None))
def kubelet_fits_admission(ctx: Context, state: State, index: int):
    """Admission of a newly bound pod: its desired requests fit next to the admitted pods (docs/reference.md §2.1)."""
    pod = state.pods[index]
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index), pod.desired), allocatable_of(ctx, pod.node))


def kubelet_free(ctx: Context, state: State, node: int):
    """Allocatable minus what the kubelet counts for every admitted pod."""
    return vsub(ctx.allocatable[node], _kubelet_others(ctx, state, node, exclude=-1))
