"""Timestamps the model keeps as ranks (time is abstract): the scheduling queue's, and the
``lastTransitionTime`` of the kubelet's ``PodResizePending`` condition.

**The queue.** PrioritySort orders pods of equal priority by ``QueuedPodInfo.Timestamp`` (docs/reference.md §3.1;
``plugins/queuesort/priority_sort.go: Less``), which the queue sets when a pod is added
(``newQueuedPodInfo``) and again when a scheduling cycle fails and the pod goes back
(``backend/queue/scheduling_queue.go: AddUnschedulableIfNotPresent``, "Refresh the timestamp since the pod
is re-added"); moving a pod from the unschedulable pool back to activeQ (a queueing hint, the flush,
``AddOrActivate``'s activation) keeps it. ``queued_at`` is the number of queued pods (activeQ or the
unschedulable pool) with an older timestamp, so equal timestamps are equal ranks and either pod may be
popped first (the heap's order between equal keys): a pod that entered the queue, or that a cycle moved
from activeQ to the unschedulable pool, gets the newest timestamp (ranked after every other queued pod;
several in one step tie); the others keep their order; a pod out of the queue has rank 0.

**The kubelet's pending condition.** ``sortPendingResizes`` puts older ``PodResizePending`` conditions
first among pending resizes of equal priority and QoS class (docs/reference.md §2.3;
``pkg/kubelet/allocation/allocation_manager.go``). The status manager gives the condition a new
``lastTransitionTime`` when it appears or its reason changes (Deferred ↔ Infeasible) and keeps it when the
kubelet sets the same reason again, for a later resize too (kubernetes/kubernetes #131478: the PR that
would have tied it to the status instead was closed, "can consider the changed reason as deleting the
condition and adding a new one"). ``pending_since`` ranks it among the running pods that carry the
condition, the same way (several set in one retry pass tie, and the kubelet's sort then takes
declaration order, the order in which the pass met them when their keys were equal); 0 without one.
The scenario's initial conditions all tie (declaration order).

Both are written with ``model/expr/scalars.py``, so they run on ints, Z3 terms, traced terms and numpy columns
alike.

Left out: the backoff queue's own order (backoff is folded into activeQ), and the order in which a
restarted scheduler lists its pods (a restart gives every pod it queues the same timestamp; one that
was out of the queue before is ranked after the others).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, ite, not_, or_
from kepcheck.model.expr.vectors import vsum_where
from kepcheck.model.state import State, evolve

__all__ = ["stamped"]


def _count(conditions) -> object:
    return vsum_where(((condition, (1,)) for condition in conditions), 1)[0]


def stamped(ctx: Context, before: State, after: State) -> State:
    """``after`` with every pod's ``queued_at`` and ``pending_since`` re-ranked for the step from ``before``."""
    if type(after.env_events) is int:  # plain values: this runs on every step of the explicit engine
        return _stamped_values(before, after)
    queued, fresh = [], []
    for old, new in zip(before.pods, after.pods):
        in_queue = new.queue != Queue.NOT_QUEUED
        queued.append(in_queue)
        fresh.append(and_(in_queue, or_(old.queue == Queue.NOT_QUEUED,
                                        and_(old.queue == Queue.ACTIVE, new.queue == Queue.UNSCHEDULABLE))))
    after = _reranked(after, "queued_at", queued, fresh)
    pending, fresh = [], []
    for old, new in zip(before.pods, after.pods):
        has_condition = and_(new.phase == Phase.RUNNING, new.resize != ResizeReason.NONE)
        pending.append(has_condition)
        fresh.append(and_(has_condition, or_(old.phase != Phase.RUNNING, old.resize != new.resize)))
    return _reranked(after, "pending_since", pending, fresh)


def _reranked(after: State, field: str, members: list, fresh: list) -> State:
    """``after`` with ``field`` of every pod re-ranked: a fresh member gets the newest rank (after every
    kept member; fresh ones tie), a kept member the number of kept members ranked strictly before it,
    a pod that is no member 0."""
    kept = [and_(m, not_(f)) for m, f in zip(members, fresh)]
    newest = _count(kept)
    pods = list(after.pods)
    changed = False
    for i, pod in enumerate(after.pods):
        mine = getattr(pod, field)
        older = _count(and_(kept[j], getattr(other, field) < mine) for j, other in enumerate(after.pods) if j != i)
        rank = ite(fresh[i], newest, ite(kept[i], older, 0))
        if rank is not mine and not (type(rank) is int and type(mine) is int and rank == mine):
            pods[i] = evolve(pod, **{field: rank})
            changed = True
    return evolve(after, pods=tuple(pods)) if changed else after


def _stamped_values(before: State, after: State) -> State:
    """``stamped`` on plain values. A field is re-ranked only when some pod joined or left its members
    or is fresh: otherwise the ranks ``before`` had are already the re-ranked ones."""
    queued, fresh_queued, pending, fresh_pending = [], [], [], []
    queue_moved = pending_moved = False
    for old, new in zip(before.pods, after.pods):
        was, member = old.queue != Queue.NOT_QUEUED, new.queue != Queue.NOT_QUEUED
        fresh = member and (not was or (old.queue == Queue.ACTIVE and new.queue == Queue.UNSCHEDULABLE))
        queued.append(member)
        fresh_queued.append(fresh)
        queue_moved = queue_moved or fresh or was != member
        was = old.phase == Phase.RUNNING and old.resize != ResizeReason.NONE
        member = new.phase == Phase.RUNNING and new.resize != ResizeReason.NONE
        fresh = member and (not was or old.resize != new.resize)
        pending.append(member)
        fresh_pending.append(fresh)
        pending_moved = pending_moved or fresh or was != member
    if queue_moved:
        after = _reranked_values(after, "queued_at", queued, fresh_queued)
    if pending_moved:
        after = _reranked_values(after, "pending_since", pending, fresh_pending)
    return after


def _reranked_values(after: State, field: str, members: list, fresh: list) -> State:
    """``_reranked`` on plain values: the same ranks, computed directly (this runs on every step)."""
    ranks = [None if not m else -1 if f else getattr(pod, field) for pod, m, f in zip(after.pods, members, fresh)]
    kept_ranks = [r for r in ranks if r is not None and r >= 0]
    pods = None
    for i, (pod, rank) in enumerate(zip(after.pods, ranks)):
        value = 0 if rank is None else len(kept_ranks) if rank < 0 else sum(1 for r in kept_ranks if r < rank)
        if value != getattr(pod, field):
            if pods is None:
                pods = list(after.pods)
            pods[i] = evolve(pod, **{field: value})
    return after if pods is None else evolve(after, pods=tuple(pods))
