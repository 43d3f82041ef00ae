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
on Z3 terms alike: node indices and pod fields may be state values; pod indices and the variant
are parameters. ``removed`` maps a pod index to a condition (a bool or a term) under which the pod
is taken off the node (preemption dry-runs). The fit checks read only the pods of one node and are
memoised on those (``model/memo.node_local``) when the engine keeps a cache.

Left out: pod count limits, ephemeral storage and extended resources; the "non-zero" requests
used only for scoring.
"""

from __future__ import annotations

from functools import lru_cache

from kepcheck.spec.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting import (
    combine_totals, deferred_fit_delta, kubelet_other_pod_requests, kubelet_resizing_pod_requests,
)
from kepcheck.model.context import Context, overridable
from kepcheck.model.expr import and_, is_false, ite, not_, or_, pick, vadd, veq, vle, vmax, vsub, vsum_where
from kepcheck.model.memo import node_local, of_values, per_state
from kepcheck.model.state import NO_POD, PodState, State, evolve

__all__ = [
    "assigned", "admitted", "on_node", "scheduler_footprint", "max_footprint", "aligned_footprint",
    "scheduler_requested", "nominated_load", "fits_new_pod", "fits_deferred_pod", "kubelet_footprint",
    "kubelet_counts_other", "kubelet_fits_resize", "kubelet_fits_admission", "kubelet_free",
    "allocatable_of", "SEEN_FIELDS", "api_copy", "seen_copy", "queued_copy", "cached_copy", "scheduler_view", "update_undelivered",
    "api_unchanged", "leaving",
]


# The API fields the scheduler's informer copies, and the field of ``PodState`` that holds each copy.
# Of allocated and actual the scheduler's accounting reads only max(allocated, actual) (reference §1.2:
# max(desired, allocated, actual), Infeasible ignoring desired), so the copy holds that one vector: an
# update that changes neither is one the scheduler cannot tell from no update.
SEEN_FIELDS = (("phase", "seen_phase"), ("node", "seen_node"), ("desired", "seen_desired"), ("resize", "seen_resize"))


def api_copy(pod: PodState) -> dict:
    """What the scheduler's informer copies of a pod as the API has it now, by ``PodState`` field
    (allocated and actual both by their maximum, ``held``)."""
    held = vmax(pod.allocated, pod.actual)
    return dict(allocated=held, actual=held, **{api: getattr(pod, api) for api, _ in SEEN_FIELDS})


def seen_copy(pod: PodState) -> dict:
    """The ``seen_*`` fields of a copy of the pod as the API has it now (a delivery, or the scheduler's
    own write), cache and queue alike."""
    fields = {seen: getattr(pod, api) for api, seen in SEEN_FIELDS}
    fields.update(seen_held=vmax(pod.allocated, pod.actual), cache_ahead=False)
    return fields


def queued_copy(pod: PodState) -> PodState:
    """The pod as the scheduler's queue has it (the copy last delivered to the queue): its API fields
    replaced by the copy (allocated and actual both by their maximum); what the scheduler keeps itself
    (queue, nomination, promises) as it is."""
    if type(pod.phase) is int:
        return _queued_copy_of_values(pod)
    return _queued_copy(pod)


@lru_cache(maxsize=1 << 16)
def _queued_copy_of_values(pod: PodState) -> PodState:
    return _queued_copy(pod)


def _queued_copy(pod: PodState) -> PodState:
    return evolve(pod, allocated=pod.seen_held, actual=pod.seen_held,
                  **{api: getattr(pod, seen) for api, seen in SEEN_FIELDS})


def cached_copy(pod: PodState) -> PodState:
    """The pod as the scheduler's cache (NodeInfo) has it: the queue's copy, or the API's version once
    the cache has it and the queue not yet (``cache_ahead``)."""
    queued = queued_copy(pod)
    if pod.cache_ahead is False:
        return queued
    return evolve(queued, **{name: ite(pod.cache_ahead, value, getattr(queued, name))
                             for name, value in api_copy(pod).items()})


@per_state
def scheduler_view(ctx: Context, state: State) -> State:
    """The state as the kube-scheduler's cache sees it: with the stale view (``scheduler_view: stale``)
    every pod as its informer last delivered it to the cache, else the state itself (DESIGN.md §3).
    The scheduler's guards, fits and victim choices are computed on this view (a Deferred pod's own
    requests may come from the queue's copy, ``queued_copy``); their effects go to the API state."""
    if ctx.variant.scheduler_view != "stale":  # (not with allocated-only accounting: spec/variants.Variant)
        return state
    return evolve(state, pods=tuple(cached_copy(pod) for pod in state.pods))


def update_undelivered(pod: PodState):
    """The API has a version of the pod the scheduler's queue has not received yet (its cache may have)."""
    if type(pod.phase) is int:  # plain values: the same test, without building expressions
        return (pod.phase != pod.seen_phase or pod.node != pod.seen_node or pod.desired != pod.seen_desired
                or pod.resize != pod.seen_resize
                or tuple(a if a >= b else b for a, b in zip(pod.allocated, pod.actual)) != pod.seen_held)
    return not_(_same_copy(api_copy(pod), api_copy(queued_copy(pod))))


def api_unchanged(old: PodState, new: PodState):
    """The step wrote none of the pod's API fields the scheduler copies."""
    if old is new:
        return True
    return _same_copy(api_copy(old), api_copy(new))


def _same_copy(a: dict, b: dict):
    return and_(*(veq(a[name], b[name]) if isinstance(a[name], tuple) else a[name] == b[name] for name in a))


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
    """What the scheduler's NodeInfo counts for an assigned pod (reference §1.6), per the variant's
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
    """The v1.37 accounting: max(desired, allocated, actual), Infeasible ignoring desired (reference §1.2)."""
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
    """Pods nominated to ``node`` with priority >= ``priority`` (reference §3.2, §7.4 P-4).

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
    """NodeResourcesFit for a pending pod, with nominated pods of >= priority (reference §3.2, §3.5)."""
    pod = state.pods[claimant]
    used = vadd(scheduler_requested(ctx, state, node, removed),
                nominated_load(ctx, state, node, ctx.priorities[claimant], claimant))
    return vle(vadd(used, pod.desired), ctx.allocatable[node])


@node_local(lambda state, claimant, node=None, removed=None, queued=None: (state.pods[claimant].node, queued))
def fits_deferred_pod(ctx: Context, state: State, claimant: int, node=None, removed=None, queued=None):
    """NodeResourcesFit for a Deferred pod on its own node (reference §4.4, §7.4 P-7; ``node`` is
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
    """What another admitted pod really holds on its node: max(allocated, actual) (reference §1.7).
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
    variant (desired in the implementation, max in the KEP text) fit allocatable (reference §2.2)."""
    pod = state.pods[index]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index, removed), own), allocatable_of(ctx, pod.node))


@node_local(lambda state, index: (state.pods[index].node, None))
def kubelet_fits_admission(ctx: Context, state: State, index: int):
    """Admission of a newly bound pod: its desired requests fit next to the admitted pods (reference §2.1)."""
    pod = state.pods[index]
    return vle(vadd(_kubelet_others(ctx, state, pod.node, index), pod.desired), allocatable_of(ctx, pod.node))


def kubelet_free(ctx: Context, state: State, node: int):
    """Allocatable minus what the kubelet counts for every admitted pod."""
    return vsub(ctx.allocatable[node], _kubelet_others(ctx, state, node, exclude=-1))
