"""The kube-scheduler's actions: scheduling cycles for pending pods and, with KEP-5836, the
restricted cycle of a Deferred pod on its own node (reference §3, §4).

A cycle pops the pod at the head of activeQ (``at_head``: PrioritySort; pods of equal priority by
queue timestamp). A pending pod that fits is bound (``BindPod``); one that fits nowhere preempts
(``PreemptForPod``: victims evicted, ``nominatedNodeName`` set) or waits in the unschedulable pool
(``PodUnschedulable``). A Deferred pod whose resize fits in the scheduler's view is parked for the
kubelet (``ParkDeferredPod``, v1.37) or passes a no-op Bind and leaves the queue (``BindDeferredPod``,
the beta design); one that does not fit preempts on its own node
(``PreemptForResize``, no ``nominatedNodeName`` in the alpha) or waits (``ResizeUnschedulable``).
``FlushUnschedulablePod`` is the periodic flush of the unschedulable pool (5 minutes: time is
abstract, it may happen at any time).

Left out: extenders, scoring (every fitting node is a legitimate choice), the backoff queue
(folded into activeQ). PodDisruptionBudgets are in victim selection (``model/preemption.py``).
"""

from __future__ import annotations

from kepcheck.spec.vocabulary import Phase, Queue

from kepcheck.model.context import Context, overridable
from kepcheck.model.expr import and_, any_, is_false, not_, or_, pick, vle, vmax
from kepcheck.model.asynchrony import (
    deliver_pod_update, evict_victim, update_pod_in_cache, update_pod_in_scheduling_queue,
)
from kepcheck.model.informer import released_from_unschedulable_pool
from kepcheck.model.memo import per_state
from kepcheck.model.preemption import budget_violations, chosen_node, select_victims
from kepcheck.model.state import NO_NODE, NO_POD, State
from kepcheck.model.step import Action, is_deferred, queue_seen_at_once, set_pod, update
from kepcheck.model.views import fits_deferred_pod, fits_new_pod, queued_copy, scheduler_view

__all__ = ["at_head", "resize_preemption_eligible", "double_preemption_guard_allows", "resize_claimant_fields",
           "bind_pod", "preempt_for_pod", "pod_unschedulable", "park_deferred_pod", "bind_deferred_pod",
           "node_allows_resize_preemption", "preempt_for_resize",
           "resize_unschedulable", "flush_unschedulable_pod", "abort_deferred_cycle", "deliver_pod_update", "update_pod_in_cache",
           "update_pod_in_scheduling_queue", "evict_victim"]


def at_head(ctx: Context, state: State, claimant: int):
    """The next scheduling cycle may pop ``claimant``: it is in activeQ, no pod of higher priority
    is, and no pod of equal priority with an earlier queue timestamp is (PrioritySort's Less:
    priority, then ``QueuedPodInfo.Timestamp``; equal timestamps in either order; reference §3.1,
    ``model/queue_order.py``)."""
    priority = ctx.priorities[claimant]
    pod = state.pods[claimant]
    active = pod.queue == Queue.ACTIVE
    if is_false(active):
        return False
    if active is True and type(pod.queued_at) is int:  # plain values: the same test, directly
        return not any(other.queue == Queue.ACTIVE and (ctx.priorities[j] > priority or (
            ctx.priorities[j] == priority and other.queued_at < pod.queued_at)) for j, other in enumerate(state.pods))
    ahead = []
    for j in ctx.pod_range:
        other = state.pods[j]
        if ctx.priorities[j] > priority:
            ahead.append(other.queue == Queue.ACTIVE)
        elif ctx.priorities[j] == priority and j != claimant:
            ahead.append(and_(other.queue == Queue.ACTIVE, other.queued_at < pod.queued_at))
    return and_(active, *(not_(term) for term in ahead))


def _victims_terminating_on(ctx: Context, state: State, claimant: int, node):
    """A lower-priority pod on ``node`` is terminating because of preemption (reference §3.3
    'Eligibility': the preemptor waits for its nominated node's victims)."""
    priority = ctx.priorities[claimant]
    return any_(
        and_(pod.phase == Phase.TERMINATING, pod.node == node, pod.preempted_by != NO_POD)
        for i, pod in enumerate(state.pods) if ctx.priorities[i] < priority
    )


def _pending_pod_eligible(ctx: Context, state: State, claimant: int):
    """PodEligibleToPreemptOthers for a pending pod (reference §3.3)."""
    if ctx.never_preempts[claimant]:
        return False
    nominated = state.pods[claimant].nominated
    return or_(nominated == NO_NODE, not_(_victims_terminating_on(ctx, state, claimant, nominated)))


def resize_preemption_eligible(ctx: Context, state: State, claimant: int):
    """May this Deferred pod preempt now? ``preemptionPolicy: Never`` forbids it (reference §4.3
    (10)); the double-preemption guard of the variant may make it wait (reference §4.6)."""
    if ctx.never_preempts[claimant]:
        return False
    return double_preemption_guard_allows(ctx, state, claimant)


@overridable
def double_preemption_guard_allows(ctx: Context, state: State, claimant: int):
    """The variant's double-preemption guard lets the Deferred pod preempt now (reference §4.6)."""
    pod = state.pods[claimant]
    guard = ctx.variant.double_preemption_guard
    if guard == "none":
        return True
    if guard == "in-memory":
        return not_(and_(pod.tracking, any_(and_(other.phase == Phase.TERMINATING, other.preempted_by == claimant)
                                            for other in state.pods)))
    if guard == "nominated-node-name":
        return or_(pod.nominated != pod.node, not_(_victims_terminating_on(ctx, state, claimant, pod.node)))
    return not_(_victims_terminating_on(ctx, state, claimant, pod.node))  # node-name-as-nomination


class _PendingCycle:
    """What one scheduling cycle computes for a pending pod: fit per node, and per node the
    preemption candidate and its victims (reference §3.2-§3.4)."""

    def __init__(self, ctx: Context, state: State, claimant: int):
        pod = state.pods[claimant]
        self.fits = [fits_new_pod(ctx, state, claimant, n) for n in ctx.node_range]
        self.any_fit = or_(*self.fits)
        nominated_fits = or_(*(and_(pod.nominated == n, fit) for n, fit in enumerate(self.fits)))
        # a pod whose nominated node fits goes there; otherwise any fitting node
        self.may_bind = [and_(fit, or_(pod.nominated == n, not_(nominated_fits))) for n, fit in enumerate(self.fits)]
        self._ctx, self._state, self._claimant = ctx, state, claimant
        self._options = None

    def options(self) -> dict:
        """node -> (candidate, victims) for every node the claimant could preempt on."""
        if self._options is None:
            ctx, state, claimant = self._ctx, self._state, self._claimant
            desired = state.pods[claimant].desired
            eligible = _pending_pod_eligible(ctx, state, claimant)
            options = {}
            for node in ctx.node_range:
                resolvable = and_(eligible, vle(desired, ctx.allocatable[node]))  # P-6: never a candidate otherwise
                if is_false(resolvable):
                    continue
                candidate, victims = select_victims(ctx, state, claimant, node, fits_new_pod)
                candidate = and_(resolvable, candidate)
                if not is_false(candidate):
                    options[node] = (candidate, victims, budget_violations(ctx, state, claimant, node, victims))
            self._options = options
        return self._options

    def can_preempt(self):
        return or_(*(option[0] for option in self.options().values()))


@per_state
def _pending_cycles(ctx: Context, state: State) -> list:
    """(claimant, head-and-pending condition, cycle) for each pod the scheduler may pop as pending,
    computed on the scheduler's view of ``state`` (``views.scheduler_view``)."""
    state = scheduler_view(ctx, state)
    cycles = []
    for claimant in ctx.pod_range:
        pending = state.pods[claimant].phase == Phase.PENDING
        if is_false(pending):
            continue
        base = and_(at_head(ctx, state, claimant), pending)
        if not is_false(base):
            cycles.append((claimant, base, _PendingCycle(ctx, state, claimant)))
    return cycles


def _evict(ctx: Context, state: State, claimant: int, node, victims: dict) -> list:
    """prepareCandidate: delete victims with DisruptionTarget, clear lower-priority nominations on
    the node (reference §3.3 'Execution', §7.4 P-5). Returns ``update`` changes on the API state
    ``state`` (a call on a pod already deleting or gone changes nothing). With asynchronous
    preemption the victims' calls are only issued here (``evicting_for``; ``evict_victim`` completes
    each) and the preemptor is marked as preempting, which PreEnqueue holds back; a victim whose
    call another preemptor already issued keeps that call."""
    changes = []
    asynchronous = ctx.variant.preemption_calls == "asynchronous"
    issued = []
    for victim, condition in victims.items():
        pod = state.pods[victim]
        live = and_(condition, or_(pod.phase == Phase.BOUND, pod.phase == Phase.RUNNING))
        if asynchronous:
            live = and_(live, pod.evicting_for == NO_POD)
            issued.append(live)
            fields = dict(evicting_for=claimant)
        else:
            fields = dict(phase=Phase.TERMINATING, preempted_by=claimant, **queue_seen_at_once(ctx, Queue.NOT_QUEUED))
        if not is_false(live):
            changes.append((victim, live, fields))
    if asynchronous:
        changes.append((claimant, True, dict(preempting=or_(state.pods[claimant].preempting, *issued))))
    for i, pod in enumerate(state.pods):
        if ctx.priorities[i] < ctx.priorities[claimant]:
            nominated_here = and_(pod.phase == Phase.PENDING, pod.nominated == node)
            if not is_false(nominated_here):
                changes.append((i, nominated_here, dict(nominated=NO_NODE)))
    return changes


def _bound(ctx: Context, node: int) -> dict:
    """The binding's writes: spec.nodeName, and with the stale view the assumed pod in the
    scheduler's own cache (it sees its own binding at once; reference §3.2 'assume'). A binding of a
    pod that the API no longer has as pending fails and writes nothing."""
    fields = dict(phase=Phase.BOUND, node=node)
    if ctx.variant.scheduler_view == "stale":
        fields.update(seen_phase=Phase.BOUND, seen_node=node)
    return fields


def bind_pod(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits: assume and bind (reference §3.2)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        for node in ctx.node_range:
            guard = and_(base, cycle.may_bind[node])
            if is_false(guard):
                continue
            after = update(state, [(claimant, state.pods[claimant].phase == Phase.PENDING, _bound(ctx, node)),
                                   (claimant, True, dict(queue=Queue.NOT_QUEUED, nominated=NO_NODE))])
            yield Action("BindPod", (("pod", ctx.names[claimant]), ("node", ctx.node_names[node]))), guard, after


def preempt_for_pod(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits nowhere: PostFilter evicts victims and sets
    nominatedNodeName (reference §3.3)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        base = and_(base, not_(cycle.any_fit))
        if is_false(base):
            continue
        options = cycle.options()
        for node in options:
            guard = and_(base, chosen_node(ctx, options, node))
            if is_false(guard):
                continue
            changes = _evict(ctx, state, claimant, node, options[node][1])
            changes.append((claimant, True, dict(nominated=node, queue=Queue.UNSCHEDULABLE)))
            action = Action("PreemptForPod", (("pod", ctx.names[claimant]), ("node", ctx.node_names[node])))
            yield action, guard, update(state, changes)


def pod_unschedulable(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits nowhere and cannot preempt: it goes to the
    unschedulable pool (reference §3.1)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        base = and_(base, not_(cycle.any_fit))
        if is_false(base):
            continue
        guard = and_(base, not_(cycle.can_preempt()))
        if is_false(guard):
            continue
        after = set_pod(state, claimant, queue=Queue.UNSCHEDULABLE)
        yield Action("PodUnschedulable", (("pod", ctx.names[claimant]),)), guard, after


def node_allows_resize_preemption(ctx: Context, state: State, claimant: int):
    """DeferredPodScheduling.Filter's policy check (beta ``opt_out_enforcement: filter``): the pod's
    node does not disable resize preemption, else UnschedulableAndUnresolvable, so the pod neither
    preempts nor binds (KEP-5836 beta 'Policy Enforcement via DeferredPodScheduling Plugin';
    reference §7.3 S-20). With the v1.37 option such a pod is never queued (``model/informer.py``)."""
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
    """(candidate, victims) for a Deferred pod on its own node (reference §4.3 (3)-(5), §4.4)."""
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
    park``; reference §4.4, §7.3 S-21)."""
    yield from _fitted_resizes(ctx, state, "park", "ParkDeferredPod", Queue.UNSCHEDULABLE)


def bind_deferred_pod(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod whose resize fits its node, in the beta design
    (``fitted_resize: bind``): it passes Permit, Bind does nothing for a pod that is already bound,
    and the pod leaves the scheduling queue; the cache keeps its room (KEP-5836 beta 'Handling Node
    Evaluation Results', 'Summary of Scheduling Cycle Flow'). A same-node scale-up brings it back
    (``SchedulingQueue.AddOrActivate``, ``model/informer.py``)."""
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
    node as nominatedNodeName (reference §4.3 (5), §4.6)."""
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
    its own node; nominatedNodeName is never set in the alpha (reference §4.3 (5), (9), §7.3 S-1)."""
    for claimant, base, fits, queued in _deferred_cycles(ctx, state):
        base = and_(base, not_(fits))
        if is_false(base):
            continue
        view = scheduler_view(ctx, state)
        candidate, victims = _resize_victims(ctx, view, claimant, queued)
        guard = and_(base, candidate)
        if is_false(guard):
            continue
        changes = _evict(ctx, state, claimant, view.pods[claimant].node, victims)
        fields = resize_claimant_fields(ctx, view, claimant)
        if queued is not None:  # it preempted for the larger of the two copies' requests
            fields["promised"] = vmax(fields["promised"], queued)
        changes.append((claimant, True, fields))
        yield Action("PreemptForResize", (("pod", ctx.names[claimant]),)), guard, update(state, changes)


def resize_unschedulable(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod that does not fit and cannot preempt (no strictly
    lower-priority victims that suffice, preemptionPolicy Never, or the double-preemption guard):
    it waits in the unschedulable pool (reference §4.3 (5), §7.3 S-3)."""
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


def flush_unschedulable_pod(ctx: Context, state: State):
    """The periodic flush moves a pod that waited long enough in the unschedulable pool back to
    the active queue (5 minutes; reference §3.1, §7.4 P-8)."""
    for i, pod in enumerate(state.pods):
        guard = released_from_unschedulable_pool(ctx, pod, True)
        if is_false(guard):
            continue
        yield Action("FlushUnschedulablePod", (("pod", ctx.names[i]),)), guard, set_pod(state, i, queue=Queue.ACTIVE)
