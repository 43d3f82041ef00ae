"""The kube-scheduler's actions for pending pods: scheduling cycles, preemption and the
unschedulable pool (docs/reference.md §3); what the restricted cycle of a Deferred pod (KEP-5836,
``model/actions/resize_preemption.py``) shares with them: the head of activeQ and the eviction of
victims. The informer's late deliveries are ``model/actions/asynchrony.py``'s.

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
(folded into activeQ). PodDisruptionBudgets are in victim selection (``model/actions/preemption.py``).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue

from kepcheck.model.accounting.copies import scheduler_view
from kepcheck.model.accounting.views import fits_new_pod
from kepcheck.model.actions.preemption import budget_violations, chosen_node, select_victims
from kepcheck.model.actions.queueing import released_from_unschedulable_pool
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, any_, is_false, not_, or_
from kepcheck.model.expr.vectors import vle
from kepcheck.model.memo import per_state
from kepcheck.model.state import NO_NODE, NO_POD, State
from kepcheck.model.step import Action, queue_seen_at_once, set_pod, update

__all__ = [
    "at_head", "bind_pod", "preempt_for_pod", "pod_unschedulable", "flush_unschedulable_pod",
]


def at_head(ctx: Context, state: State, claimant: int):
    """The next scheduling cycle may pop ``claimant``: it is in activeQ, no pod of higher priority
    is, and no pod of equal priority with an earlier queue timestamp is (PrioritySort's Less:
    priority, then ``QueuedPodInfo.Timestamp``; equal timestamps in either order; docs/reference.md §3.1,
    ``model/actions/queue_order.py``)."""
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


def victims_terminating_on(ctx: Context, state: State, claimant: int, node):
    """A lower-priority pod on ``node`` is terminating because of preemption (docs/reference.md §3.3
    'Eligibility': the preemptor waits for its nominated node's victims)."""
    priority = ctx.priorities[claimant]
    return any_(
        and_(pod.phase == Phase.TERMINATING, pod.node == node, pod.preempted_by != NO_POD)
        for i, pod in enumerate(state.pods) if ctx.priorities[i] < priority
    )


def _pending_pod_eligible(ctx: Context, state: State, claimant: int):
    """PodEligibleToPreemptOthers for a pending pod (docs/reference.md §3.3)."""
    if ctx.never_preempts[claimant]:
        return False
    nominated = state.pods[claimant].nominated
    return or_(nominated == NO_NODE, not_(victims_terminating_on(ctx, state, claimant, nominated)))


class _PendingCycle:
    """What one scheduling cycle computes for a pending pod: fit per node, and per node the
    preemption candidate and its victims (docs/reference.md §3.2-§3.4)."""

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


def evict_victims(ctx: Context, state: State, claimant: int, node, victims: dict) -> list:
    """prepareCandidate: delete victims with DisruptionTarget, clear lower-priority nominations on
    the node (docs/reference.md §3.3 'Execution', §7.4 P-5). Returns ``update`` changes on the API state
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
    scheduler's own cache (it sees its own binding at once; docs/reference.md §3.2 'assume'). A binding of a
    pod that the API no longer has as pending fails and writes nothing."""
    fields = dict(phase=Phase.BOUND, node=node)
    if ctx.variant.scheduler_view == "stale":
        fields.update(seen_phase=Phase.BOUND, seen_node=node)
    return fields


def bind_pod(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits: assume and bind (docs/reference.md §3.2)."""
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
    nominatedNodeName (docs/reference.md §3.3)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        base = and_(base, not_(cycle.any_fit))
        if is_false(base):
            continue
        options = cycle.options()
        for node in options:
            guard = and_(base, chosen_node(ctx, options, node))
            if is_false(guard):
                continue
            changes = evict_victims(ctx, state, claimant, node, options[node][1])
            changes.append((claimant, True, dict(nominated=node, queue=Queue.UNSCHEDULABLE)))
            action = Action("PreemptForPod", (("pod", ctx.names[claimant]), ("node", ctx.node_names[node])))
            yield action, guard, update(state, changes)


def pod_unschedulable(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits nowhere and cannot preempt: it goes to the
    unschedulable pool (docs/reference.md §3.1)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        base = and_(base, not_(cycle.any_fit))
        if is_false(base):
            continue
        guard = and_(base, not_(cycle.can_preempt()))
        if is_false(guard):
            continue
        after = set_pod(state, claimant, queue=Queue.UNSCHEDULABLE)
        yield Action("PodUnschedulable", (("pod", ctx.names[claimant]),)), guard, after


def flush_unschedulable_pod(ctx: Context, state: State):
    """The periodic flush moves a pod that waited long enough in the unschedulable pool back to
    the active queue (5 minutes; docs/reference.md §3.1, §7.4 P-8)."""
    for i, pod in enumerate(state.pods):
        guard = released_from_unschedulable_pool(ctx, pod, True)
        if is_false(guard):
            continue
        yield Action("FlushUnschedulablePod", (("pod", ctx.names[i]),)), guard, set_pod(state, i, queue=Queue.ACTIVE)
