"""The kube-scheduler's actions for a Deferred resize (KEP-5836): the restricted cycle of a Deferred
pod on its own node (docs/reference.md §4). A Deferred pod whose resize fits in the scheduler's view is
parked for the kubelet (``ParkDeferredPod``, v1.37) or passes a no-op Bind and leaves the queue
(``BindDeferredPod``, the beta design); one that does not fit preempts on its own node
(``PreemptForResize``, no ``nominatedNodeName`` in the alpha) or waits (``ResizeUnschedulable``);
with the beta's refreshed copy a cycle whose pod is no longer Deferred in the cache is aborted
(``AbortDeferredCycle``). The cycles for pending pods, and what both share (the head of activeQ,
evicting victims), are in ``model/actions/scheduler.py``.

Left out: as in ``model/actions/scheduler.py``.
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue

from kepcheck.model.accounting.copies import queued_copy, scheduler_view
from kepcheck.model.accounting.views import fits_deferred_pod
from kepcheck.model.actions.preemption import select_victims
from kepcheck.model.actions.scheduler import evict_victims, victims_terminating_on, at_head
from kepcheck.model.context import Context, overridable
from kepcheck.model.expr.scalars import and_, any_, is_false, not_, or_, pick
from kepcheck.model.expr.vectors import vmax
from kepcheck.model.memo import per_state
from kepcheck.model.state import State
from kepcheck.model.step import Action, is_deferred, set_pod, update

__all__ = [
    "resize_preemption_eligible", "double_preemption_guard_allows", "node_allows_resize_preemption",
    "abort_deferred_cycle", "park_deferred_pod", "bind_deferred_pod", "resize_claimant_fields",
    "preempt_for_resize", "resize_unschedulable",
]


def resize_preemption_eligible(ctx: Context, state: State, claimant: int):
    """May this Deferred pod preempt now? ``preemptionPolicy: Never`` forbids it (docs/reference.md §4.3
    (10)); the double-preemption guard of the variant may make it wait (docs/reference.md §4.6)."""
    if ctx.never_preempts[claimant]:
        return False
    return double_preemption_guard_allows(ctx, state, claimant)


@overridable
def double_preemption_guard_allows(ctx: Context, state: State, claimant: int):
    """The variant's double-preemption guard lets the Deferred pod preempt now (docs/reference.md §4.6)."""
    pod = state.pods[claimant]
    guard = ctx.variant.double_preemption_guard
    if guard == "none":
        return True
    if guard == "in-memory":
        return not_(and_(pod.tracking, any_(and_(other.phase == Phase.TERMINATING, other.preempted_by == claimant)
                                            for other in state.pods)))
    if guard == "nominated-node-name":
        return or_(pod.nominated != pod.node, not_(victims_terminating_on(ctx, state, claimant, pod.node)))
    return not_(victims_terminating_on(ctx, state, claimant, pod.node))  # node-name-as-nomination


def node_allows_resize_preemption(ctx: Context, state: State, claimant: int):
    """DeferredPodScheduling.Filter's policy check (beta ``opt_out_enforcement: filter``): the pod's
    node does not disable resize preemption, else UnschedulableAndUnresolvable, so the pod neither
    preempts nor binds (KEP-5836 beta 'Policy Enforcement via DeferredPodScheduling Plugin';
    docs/reference.md §7.3 S-20). With the v1.37 option such a pod is never queued (``model/actions/informer.py``)."""
    if ctx.variant.opt_out_enforcement != "filter":
        return True
    return not_(pick(ctx.resize_preemption_disabled, state.pods[claimant].node, False))


@per_state
def _deferred_cycles(ctx: Context, state: State) -> list:
    """(claimant, condition, fits, queued requests) for each pod the scheduler may pop as a Deferred
    resize and evaluate, on the scheduler's view of ``state``. The pod is popped as its queue copy has
    it; with the stale view that copy may lag the cache's (``views.queued_copy``): with
    ``larger-of-copies`` the cycle runs on the popped copy, its requests in excess of the cache copy's
    counted (queued requests given); with ``refreshed-from-cache`` it runs on the cache's copy, and
    only when that copy is Deferred (``abort_deferred_cycle`` otherwise)."""
    view = scheduler_view(ctx, state)
    cycles = []
    for claimant in ctx.pod_range:
        popped = _popped_copy(ctx, state, claimant)
        deferred = is_deferred(popped)
        if is_false(deferred):
            continue
        base = and_(at_head(ctx, view, claimant), deferred)
        queued = None
        if view is not state and ctx.variant.queued_pod_copy == "larger-of-copies":
            queued = popped.desired
        else:
            base = and_(base, is_deferred(view.pods[claimant]))
        if not is_false(base):
            fits = and_(node_allows_resize_preemption(ctx, view, claimant),
                        fits_deferred_pod(ctx, view, claimant, None, None, queued))
            cycles.append((claimant, base, fits, queued))
    return cycles


def _popped_copy(ctx: Context, state: State, claimant: int):
    """The Deferred pod as the queue hands it to a cycle: the queue's copy (the pod itself with the
    synchronous view)."""
    pod = state.pods[claimant]
    return queued_copy(pod) if ctx.variant.scheduler_view == "stale" else pod


@per_state
def _resize_victims(ctx: Context, state: State, claimant: int, queued=None):
    """(candidate, victims) for a Deferred pod on its own node (docs/reference.md §4.3 (3)-(5), §4.4)."""
    eligible = and_(node_allows_resize_preemption(ctx, state, claimant),
                    resize_preemption_eligible(ctx, state, claimant))
    if is_false(eligible):
        return False, {}
    fits = fits_deferred_pod if queued is None else \
        (lambda ctx_, state_, claimant_, node=None, removed=None: fits_deferred_pod(ctx_, state_, claimant_, node,
                                                                                   removed, queued))
    candidate, victims = select_victims(ctx, state, claimant, state.pods[claimant].node, fits)
    return and_(eligible, candidate), victims


def abort_deferred_cycle(ctx: Context, state: State):
    """Beta (``queued_pod_copy: refreshed-from-cache``): the popped Deferred pod is swapped for the
    cache's copy, which is gone or no longer Deferred; the cycle aborts and calls
    SchedulingQueue.Done, and the pod leaves the queue without requeueing (KEP-5836 beta 'Conflicting
    Sources of Truth for the Pod'). Only with the stale view can the two copies differ."""
    if ctx.variant.scheduler_view != "stale" or ctx.variant.queued_pod_copy != "refreshed-from-cache":
        return
    view = scheduler_view(ctx, state)
    for claimant in ctx.pod_range:
        popped = _popped_copy(ctx, state, claimant)
        guard = and_(at_head(ctx, view, claimant), is_deferred(popped), not_(is_deferred(view.pods[claimant])))
        if is_false(guard):
            continue
        yield Action("AbortDeferredCycle", (("pod", ctx.names[claimant]),)), guard, \
            set_pod(state, claimant, queue=Queue.NOT_QUEUED)


def park_deferred_pod(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod whose resize fits its node: Permit rejects it with
    "pod resize fits, waiting for Kubelet actuation" and it is parked (v1.37 ``fitted_resize:
    park``; docs/reference.md §4.4, §7.3 S-21)."""
    yield from _fitted_resizes(ctx, state, "park", "ParkDeferredPod", Queue.UNSCHEDULABLE)


def bind_deferred_pod(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod whose resize fits its node, in the beta design
    (``fitted_resize: bind``): it passes Permit, Bind does nothing for a pod that is already bound,
    and the pod leaves the scheduling queue; the cache keeps its room (KEP-5836 beta 'Handling Node
    Evaluation Results', 'Summary of Scheduling Cycle Flow'). A same-node scale-up brings it back
    (``SchedulingQueue.AddOrActivate``, ``model/actions/informer.py``)."""
    yield from _fitted_resizes(ctx, state, "bind", "BindDeferredPod", Queue.NOT_QUEUED)


def _fitted_resizes(ctx: Context, state: State, option: str, name: str, queue: int):
    """The cycles of Deferred pods whose resize fits, under the variant's ``fitted_resize`` option."""
    if ctx.variant.fitted_resize != option:
        return
    for claimant, base, fits, _ in _deferred_cycles(ctx, state):
        guard = and_(base, fits)
        if is_false(guard):
            continue
        yield Action(name, (("pod", ctx.names[claimant]),)), guard, set_pod(state, claimant, queue=queue)


@overridable
def resize_claimant_fields(ctx: Context, state: State, claimant: int) -> dict:
    """What the scheduler writes and keeps for a Deferred pod it preempted for: it waits in the
    unschedulable pool, carries the promise of its desired size (a ghost field for the properties),
    and, per the variant, an in-memory assume of that size, victims tracked in memory, or its own
    node as nominatedNodeName (docs/reference.md §4.3 (5), §4.6)."""
    pod = state.pods[claimant]
    fields = dict(queue=Queue.UNSCHEDULABLE, promised=pod.desired)
    if ctx.variant.reservation == "assume":
        fields["assumed"] = pod.desired
    if ctx.variant.double_preemption_guard == "in-memory":
        fields["tracking"] = True
    if ctx.variant.double_preemption_guard == "nominated-node-name":
        fields["nominated"] = pod.node
    return fields


def preempt_for_resize(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod that does not fit: DefaultPreemption evicts victims on
    its own node; nominatedNodeName is never set in the alpha (docs/reference.md §4.3 (5), (9), §7.3 S-1)."""
    for claimant, base, fits, queued in _deferred_cycles(ctx, state):
        base = and_(base, not_(fits))
        if is_false(base):
            continue
        view = scheduler_view(ctx, state)
        candidate, victims = _resize_victims(ctx, view, claimant, queued)
        guard = and_(base, candidate)
        if is_false(guard):
            continue
        changes = evict_victims(ctx, state, claimant, view.pods[claimant].node, victims)
        fields = resize_claimant_fields(ctx, view, claimant)
        if queued is not None:  # it preempted for the larger of the two copies' requests
            fields["promised"] = vmax(fields["promised"], queued)
        changes.append((claimant, True, fields))
        yield Action("PreemptForResize", (("pod", ctx.names[claimant]),)), guard, update(state, changes)


def resize_unschedulable(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod that does not fit and cannot preempt (no strictly
    lower-priority victims that suffice, preemptionPolicy Never, or the double-preemption guard):
    it waits in the unschedulable pool (docs/reference.md §4.3 (5), §7.3 S-3)."""
    for claimant, base, fits, queued in _deferred_cycles(ctx, state):
        base = and_(base, not_(fits))
        if is_false(base):
            continue
        candidate, _ = _resize_victims(ctx, scheduler_view(ctx, state), claimant, queued)
        guard = and_(base, not_(candidate))
        if is_false(guard):
            continue
        after = set_pod(state, claimant, queue=Queue.UNSCHEDULABLE)
        yield Action("ResizeUnschedulable", (("pod", ctx.names[claimant]),)), guard, after
