"""The actions of the asynchronous scheduler: its informer delivering pod updates late (the stale
view, ``scheduler_view: stale``) and the preemption's API calls completing after the cycle
(``preemption_calls: asynchronous``); docs/design.md §3, docs/reference.md §3.1, §3.3.

They are kube-scheduler actions (``spec/transitions.ACTIONS``), re-exported by ``model/actions/scheduler.py``
where ``NEXT`` finds every scheduler action. Each yields nothing under the variants that do not use it.

Delivery: a pod's undelivered update (the API's version against the copy the scheduler last took,
``views.update_undelivered``) reaches cache and queue in one step (``DeliverPodUpdate``), except for a
Deferred pod the queue holds, whose handler call updates the cache first (``UpdatePodInCache``) and
then the queue (``UpdatePodInSchedulingQueue``) with a scheduling cycle possibly between the two
(KEP-5836 'Conflicting Sources of Truth for the Pod'). How far behind the informer may be is
``model/actions.within_lag_bound``.

Left out: node and other objects' events (the model's nodes do not change), informer resyncs and
relists other than on a scheduler restart (``model/user.restart_scheduler``).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue

from kepcheck.model.accounting.copies import update_undelivered
from kepcheck.model.actions.informer import delivered, queued_deferred_copy
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, is_false, not_, or_
from kepcheck.model.state import NO_POD, State
from kepcheck.model.step import Action, queue_seen_at_once, set_pod, update

__all__ = ["deliver_pod_update", "update_pod_in_cache", "update_pod_in_scheduling_queue", "evict_victim"]


def deliver_pod_update(ctx: Context, state: State):
    """The scheduler's informer delivers a pod's update (the API's version now) to its cache, queue
    and event handlers at once: a pod the queue does not hold as a Deferred resize (stale view only,
    ``scheduler_view: stale``; docs/design.md §3). Updates of one pod merge (``model/informer.delivered``)."""
    for i, guard in _deliveries(ctx, state, queued_deferred=False):
        yield Action("DeliverPodUpdate", (("pod", ctx.names[i]),)), guard, delivered(ctx, state, i)


def update_pod_in_cache(ctx: Context, state: State):
    """The handler's first half for a Deferred pod the queue holds: the cache takes the API's version;
    the queue still has its old copy until ``update_pod_in_scheduling_queue`` (KEP-5836 'Conflicting
    Sources of Truth for the Pod': cache first, then queue)."""
    for i, guard in _deliveries(ctx, state, queued_deferred=True):
        yield Action("UpdatePodInCache", (("pod", ctx.names[i]),)), guard, set_pod(state, i, cache_ahead=True)


def update_pod_in_scheduling_queue(ctx: Context, state: State):
    """The handler's second half: the queue takes the cache's copy and the handlers react (queue
    moves, hints, AddOrActivate)."""
    if ctx.variant.scheduler_view != "stale":
        return
    for i, pod in enumerate(state.pods):
        guard = pod.cache_ahead
        if is_false(guard):
            continue
        yield Action("UpdatePodInSchedulingQueue", (("pod", ctx.names[i]),)), guard, delivered(ctx, state, i)


def _deliveries(ctx: Context, state: State, queued_deferred: bool) -> list:
    """(pod, condition) for each pod with an undelivered update, split by whether the queue holds it as
    a Deferred resize (two-step delivery) or not (one step)."""
    if ctx.variant.scheduler_view != "stale":
        return []
    result = []
    for i, pod in enumerate(state.pods):
        held = queued_deferred_copy(ctx, pod)
        guard = and_(update_undelivered(pod), not_(pod.cache_ahead), held if queued_deferred else not_(held))
        if not is_false(guard):
            result.append((i, guard))
    return result


def evict_victim(ctx: Context, state: State):
    """A preemption's API calls for one victim complete (asynchronous preemption only): the victim
    gets DisruptionTarget and starts terminating, unless it is already deleting or gone; once a
    preemptor's last call is done, PreEnqueue lets it back into activeQ on its next event (docs/reference.md
    §3.1, §3.3 'Execution')."""
    if ctx.variant.preemption_calls != "asynchronous":
        return
    for v, victim in enumerate(state.pods):
        guard = victim.evicting_for != NO_POD
        if is_false(guard):
            continue
        live = or_(victim.phase == Phase.BOUND, victim.phase == Phase.RUNNING)
        evicted = dict(phase=Phase.TERMINATING, preempted_by=victim.evicting_for,
                       **queue_seen_at_once(ctx, Queue.NOT_QUEUED))
        changes = [(v, live, evicted), (v, True, dict(evicting_for=NO_POD))]
        for c, preemptor in enumerate(state.pods):  # the preemptor's last call: it is no longer preempting
            last = and_(victim.evicting_for == c,
                        *(other.evicting_for != c for u, other in enumerate(state.pods) if u != v))
            if not is_false(last):
                changes.append((c, last, dict(preempting=False)))
        yield Action("EvictVictim", (("pod", ctx.names[v]),)), guard, update(state, changes)
