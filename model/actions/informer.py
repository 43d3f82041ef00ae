"""The kube-scheduler's event handlers: what the scheduler does with the pod updates of one step.

After every action's effect (and on the initial state) ``scheduler_observes`` applies what the
scheduler's informer event handlers do (synchronous informer: docs/design.md §3 "scheduler view:
synchronous"; the handlers see each update at once):

* AddPod at start-up / UpdatePod: a running pod that gains PodResizePending=Deferred enters the
  queue (gate on; node not opted out, with the v1.37 opt-out); when the condition disappears or the
  pod goes away it leaves the queue and the scheduler forgets what it kept for it (docs/reference.md §4.3
  (1), §4.4, §7.3 S-5, S-17, S-18).
* Queueing hints: a parked/unschedulable Deferred pod is requeued when another pod on its node
  changes size or is deleted, or when its own desired changes (S-6..S-16); an unschedulable
  pending pod is requeued when an assigned pod is deleted or scales down, or a nominated pending
  pod is deleted (docs/reference.md §3.5).
* Beta (``scale_up_requeue: add-or-activate``): when an assigned pod scales up, updatePod calls
  ``SchedulingQueue.AddOrActivate`` for the Deferred pods on its node, wherever they are (KEP-5836
  beta 'Handling Node Evaluation Results'). With ``scale_up_events: other-pods`` (the narrower reading)
  the Deferred pod's own growth is not such an event for itself.

Updates are detected by value (``model/memo.differs``): a pod the step did not change raises no
event. Every pod of a state is at the handlers' fixed point for "no event", so only the pods a
step changed, and the pods an event may concern, are visited.

Left out: informer lag (the stale-view variant of docs/design.md §3), label-only updates, node events.
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue

from kepcheck.model.accounting.copies import queued_copy, seen_copy
from kepcheck.model.accounting.views import assigned, scheduler_footprint
from kepcheck.model.actions.queueing import kept_promise, handler_fields, _same
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, any_, is_false, not_, or_
from kepcheck.model.expr.vectors import veq
from kepcheck.model.memo import of_values
from kepcheck.model.state import NO_NODE, PodState, State, evolve
from kepcheck.model.step import is_deferred

__all__ = ["scheduler_observes", "delivered", "queued_deferred_copy", "pod_event"]


def scheduler_observes(ctx: Context, before: State | None, after: State) -> State:
    """``after`` with the handlers' effect on every pod applied (``before`` None: the start-up pass,
    where the AddPod handler sees every pod as added). With the stale view the handlers run when the
    informer delivers an update (``delivered``), not here: a step only keeps the ghost promises true."""
    if before is not None and ctx.variant.scheduler_view == "stale":
        return _promises_kept(ctx, before, after)
    return _handlers(ctx, before, after)


def delivered(ctx: Context, state: State, index: int) -> State:
    """The scheduler's informer delivers pod ``index``'s undelivered update (the queue's copy → the
    API's version now): cache and queue take the new copy and the handlers run on the queue's copies
    of the pods, from which other pods' reactions (hints, AddOrActivate) follow (stale view only)."""
    after = evolve(state, pods=tuple(evolve(pod, **seen_copy(pod)) if j == index else pod
                                     for j, pod in enumerate(state.pods)))
    old_view, new_view = _queue_view(state), _queue_view(after)
    handled = _handlers(ctx, old_view, new_view)
    pods = list(after.pods)
    for j, (seen, reacted) in enumerate(zip(new_view.pods, handled.pods)):
        if reacted is not seen:
            pods[j] = evolve(pods[j], **{name: getattr(reacted, name) for name in _KEPT})
    return evolve(after, pods=tuple(pods))


def _queue_view(state: State) -> State:
    return evolve(state, pods=tuple(queued_copy(pod) for pod in state.pods))


def queued_deferred_copy(ctx: Context, pod: PodState):
    """The scheduler's queue holds the pod as a Deferred resize (by the queue's copy; stale view)."""
    return and_(pod.queue != Queue.NOT_QUEUED, ctx.variant.gate_on, is_deferred(queued_copy(pod)))


# What the scheduler keeps for a pod (its queue and memory, and the nomination it writes itself); the
# ghost ``promised`` follows the API, not the scheduler's view (``_promises_kept``).
_KEPT = ("queue", "assumed", "tracking", "nominated")


def _promises_kept(ctx: Context, before: State, after: State) -> State:
    """The ghost promise of a pod is dropped once its resize is no longer pending in the API."""
    pods = None
    for j, (old, new) in enumerate(zip(before.pods, after.pods)):
        if old is new:
            continue
        promised = kept_promise(ctx, new)
        if _same(new.promised, promised):
            continue
        if pods is None:
            pods = list(after.pods)
        pods[j] = evolve(new, promised=promised)
    return after if pods is None else evolve(after, pods=tuple(pods))


def _handlers(ctx: Context, before: State | None, after: State) -> State:
    """The handlers' effect of the updates from ``before`` to ``after`` (both as the scheduler sees them)."""
    if before is None:
        return _handle(ctx, after, range(len(after.pods)), {}, False, [], skip_unchanged=False)
    pairs = list(enumerate(zip(before.pods, after.pods)))
    try:  # memo.differs, inline: this runs for every pod of every step
        updated = [i for i, (old, new) in pairs if old is not new and old != new]
    except ValueError:  # numpy columns: every rewritten pod is an update
        updated = [i for i, (old, new) in pairs if old is not new]
    own_changes, shrunk_terms, changed = {}, [], []
    for i in updated:
        old, new = pairs[i][1]
        terms, footprint_changed, grew, own_change, gained = pod_event(ctx, old, new)
        own_changes[i] = (own_change, gained)
        shrunk_terms += terms
        if not (is_false(footprint_changed) and is_false(grew)):
            changed.append((footprint_changed, grew, old.node, i))
    shrunk = or_(*shrunk_terms)
    visit = updated if is_false(shrunk) and not changed else range(len(after.pods))  # no event: only the updated
    return _handle(ctx, after, visit, own_changes, shrunk, changed)


def _handle(ctx: Context, state: State, visit, own_changes: dict, shrunk, changed: list,
            skip_unchanged: bool = True) -> State:
    """Apply the handlers to the pods ``visit`` (indices). A pod outside ``own_changes`` was not
    updated: with ``skip_unchanged`` it is skipped unless some event may concern it; without it (the
    start-up pass) every pod counts as just added."""
    pods = None
    by_node: dict = {}
    added = not skip_unchanged
    for j in visit:
        pod = state.pods[j]
        updated = j in own_changes
        if skip_unchanged and not updated and is_false(shrunk) \
                and all(is_false(node == pod.node) for _, _, node, _ in changed):
            continue  # not updated, no event for it: already at the handlers' fixed point
        if not changed:
            node_events = (False, False)
        elif type(pod.node) is int:  # concrete node: the same answer for every pod on it
            node_events = by_node.get(pod.node)
            if node_events is None:
                node_events = by_node[pod.node] = _node_events(changed, pod.node)
        else:
            node_events = _node_events(changed, pod.node)
        if changed and ctx.variant.scale_up_events == "other-pods":  # its own growth is no scale-up event for it
            node_events = (node_events[0], _node_events([e for e in changed if e[3] != j], pod.node)[1])
        own_change, gained = own_changes[j] if updated else (False, added)
        fields = handler_fields(ctx, pod, own_change, gained, shrunk, *node_events)
        if fields is not None:
            if pods is None:
                pods = list(state.pods)
            pods[j] = evolve(pod, **fields)
    return state if pods is None else evolve(state, pods=tuple(pods))


def _node_events(changed: list, node) -> tuple:
    """(a pod's scheduler footprint changed on ``node`` in this step: a queueing-hint event; an
    assigned pod on ``node`` scaled up: the beta's AddOrActivate event)."""
    return (any_(and_(condition, where == node) for condition, _, where, _ in changed),
            any_(and_(grew, where == node) for _, grew, where, _ in changed))


@of_values
def pod_event(ctx: Context, old: PodState, new: PodState) -> tuple:
    """What the handlers see of one pod's update: the terms saying it freed room for unschedulable
    pending pods; the condition that its scheduler footprint changed on its (old) node; the
    condition that it scaled up there (an assigned pod whose desired, allocated or actual size grew
    in some resource: the beta text's 'assigned pod scale-up', read as any of the three, since it
    names the kubelet granting a competing resize as one); that its desired requests changed; and
    that it was added to what the scheduler queues (it gained the Deferred condition, or it was
    created or recreated pending: the AddPod handler)."""
    terms = [and_(old.phase == Phase.PENDING, old.nominated != NO_NODE, new.phase == Phase.GONE)]
    footprint_changed = grew = False
    was = assigned(old)
    if not is_false(was):
        still = assigned(new)
        old_size, new_size = scheduler_footprint(ctx, old), scheduler_footprint(ctx, new)
        resized = not_(veq(old_size, new_size))
        smaller = or_(*(n < o for n, o in zip(new_size, old_size)))
        footprint_changed = and_(was, or_(not_(still), resized))
        terms.append(and_(was, or_(not_(still), and_(still, smaller))))
        grew = and_(was, still, or_(*(n > o for field in ("desired", "allocated", "actual")
                                      for n, o in zip(getattr(new, field), getattr(old, field)))))
    gained = or_(and_(not_(is_deferred(old)), is_deferred(new)),
                 and_(old.phase != Phase.PENDING, new.phase == Phase.PENDING))
    return terms, footprint_changed, grew, not_(veq(old.desired, new.desired)), gained


