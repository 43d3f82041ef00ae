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

The pod count (allocatable ``pods``, when a scenario gives it) is checked as upstream ``FitsRequest``
does (kubernetes/kubernetes ``pkg/scheduler/framework/plugins/helper/resource_fit.go`` at
``e6021a542a820c64e868d1d1189ce3bed9409ea4``): ``len(NodeInfo pods) + 1 <= allowed``, before and apart
from the Deferred pod's delta adjustment, so a Deferred pod (already in NodeInfo) is counted twice;
the kubelet's admission of a new pod counts its admitted pods the same way. The kubelet's resize
admission has no pod-count term (the resizing pod is already one of its pods).

Left out: ephemeral storage and extended resources; the "non-zero" requests used only for scoring.
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

__all__ = ["assigned", "admitted", "on_node", "scheduler_footprint", "max_footprint", "aligned_footprint", "scheduler_requested", "nominated_load", "fits_new_pod", "fits_deferred_pod", "kubelet_footprint", "kubelet_counts_other", "kubelet_fits_resize", "kubelet_fits_admission", "kubelet_free", "allocatable_of", "leaving", "pod_count_fits", "remaining_on"]


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


def remaining_on(pod: PodState, node, index: int, removed: dict):
    """``pod`` (index ``index``) is on ``node`` and not taken off it by ``removed`` (a dry-run)."""
    present = on_node(pod, node)
    return and_(present, not_(removed[index])) if index in removed else present


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
        present = remaining_on(pod, node, i, removed)
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


def pod_count_fits(ctx: Context, state: State, node, claimant: int, removed=None):
    """``FitsRequest``'s pod count: the pods in the scheduler's NodeInfo of ``node`` (assigned there, not
    ``removed``; the claimant itself when it is one of them, as a Deferred pod is) and the pending
    pods nominated there with priority >= the claimant's (added like ``nominated_load``), plus one,
    within allocatable ``pods``. True when no node of the scenario has a pod-count limit."""
    if all(limit is None for limit in ctx.max_pods):
        return True
    removed = removed or {}
    unlimited = len(ctx.priorities) + 1
    limit = pick(tuple(unlimited if m is None else m for m in ctx.max_pods), node)
    count = 0
    for i, pod in enumerate(state.pods):
        present = remaining_on(pod, node, i, removed)
        if not is_false(present):
            count = count + ite(present, 1, 0)
        if i != claimant and ctx.priorities[i] >= ctx.priorities[claimant]:
            nominated = and_(pod.phase == Phase.PENDING, pod.nominated == node)
            if not is_false(nominated):
                count = count + ite(nominated, 1, 0)
    return count + 1 <= limit


@node_local(lambda state, claimant, node, removed=None: (node, state.pods[claimant]))
def fits_new_pod(ctx: Context, state: State, claimant: int, node: int, removed=None):
    """NodeResourcesFit for a pending pod, with nominated pods of >= priority (docs/reference.md §3.2, §3.5),
    and the pod count (``pod_count_fits``)."""
    pod = state.pods[claimant]
    used = vadd(scheduler_requested(ctx, state, node, removed),
                nominated_load(ctx, state, node, ctx.priorities[claimant], claimant))
    return and_(vle(vadd(used, pod.desired), ctx.allocatable[node]),
                pod_count_fits(ctx, state, node, claimant, removed))


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
    return and_(*(or_(desired[r] == 0, need[r] <= allocatable[r]) for r in range(ctx.width)),
                pod_count_fits(ctx, state, pod.node, claimant, removed))


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
    """Admission of a newly bound pod: its desired requests fit next to the admitted pods (docs/reference.md §2.1),
    and, with a pod-count limit, the admitted pods plus this one are within allocatable ``pods``."""
    pod = state.pods[index]
    fits = vle(vadd(_kubelet_others(ctx, state, pod.node, index), pod.desired), allocatable_of(ctx, pod.node))
    if all(limit is None for limit in ctx.max_pods):
        return fits
    unlimited = len(ctx.priorities) + 1
    count = sum((ite(and_(other.node == pod.node, admitted(other)), 1, 0)
                 for i, other in enumerate(state.pods) if i != index), 0)
    return and_(fits, count + 1 <= pick(tuple(unlimited if m is None else m for m in ctx.max_pods), pod.node))


def kubelet_free(ctx: Context, state: State, node: int):
    """Allocatable minus what the kubelet counts for every admitted pod."""
    return vsub(ctx.allocatable[node], _kubelet_others(ctx, state, node, exclude=-1))
