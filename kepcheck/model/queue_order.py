"""The scheduling queue's timestamps: PrioritySort orders pods of equal priority by
``QueuedPodInfo.Timestamp`` (reference §3.1; ``plugins/queuesort/priority_sort.go: Less``), which
the queue sets when a pod is added (``newQueuedPodInfo``) and again when a scheduling cycle fails
and the pod goes back (``backend/queue/scheduling_queue.go: AddUnschedulableIfNotPresent``,
"Refresh the timestamp since the pod is re-added"); moving a pod from the unschedulable pool back
to activeQ (a queueing hint, the flush, ``AddOrActivate``'s activation) keeps it.

Time is abstract, so a timestamp is kept as a rank: ``queued_at`` is the number of queued pods
(activeQ or the unschedulable pool) with an older timestamp, so equal timestamps are equal ranks
and either pod may be popped first (the heap's order between equal keys). After every step
``stamped`` re-ranks: a pod that entered the queue, or that a cycle moved from activeQ to the
unschedulable pool, gets the newest timestamp (ranked after every other queued pod; several in one
step tie); the others keep their order; a pod out of the queue has rank 0. Written with
``model/expr.py``, so it runs on ints, Z3 terms, traced terms and numpy columns alike.

Left out: the backoff queue's own order (backoff is folded into activeQ), and the order in which a
restarted scheduler lists its pods (a restart gives every pod it queues the same timestamp; one that
was out of the queue before is ranked after the others).
"""

from __future__ import annotations

from kepcheck.spec.vocabulary import Queue

from kepcheck.model.context import Context
from kepcheck.model.expr import and_, ite, not_, or_, vsum_where
from kepcheck.model.state import State, evolve

__all__ = ["stamped"]


def _count(conditions) -> object:
    return vsum_where(((condition, (1,)) for condition in conditions), 1)[0]


def stamped(ctx: Context, before: State, after: State) -> State:
    """``after`` with every pod's ``queued_at`` re-ranked for the step from ``before``."""
    if type(after.env_events) is int:
        return _stamped_values(before, after)
    queued, fresh = [], []
    for old, new in zip(before.pods, after.pods):
        in_queue = new.queue != Queue.NOT_QUEUED
        queued.append(in_queue)
        fresh.append(and_(in_queue, or_(old.queue == Queue.NOT_QUEUED,
                                        and_(old.queue == Queue.ACTIVE, new.queue == Queue.UNSCHEDULABLE))))
    kept = [and_(q, not_(f)) for q, f in zip(queued, fresh)]
    newest = _count(kept)
    pods = list(after.pods)
    changed = False
    for i, pod in enumerate(after.pods):
        older = _count(and_(kept[j], other.queued_at < pod.queued_at) for j, other in enumerate(after.pods) if j != i)
        rank = ite(fresh[i], newest, ite(kept[i], older, 0))
        if rank is not pod.queued_at and not (type(rank) is int and type(pod.queued_at) is int and rank == pod.queued_at):
            pods[i] = evolve(pod, queued_at=rank)
            changed = True
    return evolve(after, pods=tuple(pods)) if changed else after


def _stamped_values(before: State, after: State) -> State:
    """``stamped`` on plain values: the same ranks, computed directly (this runs on every step)."""
    ranks, kept_ranks = [], []
    for old, new in zip(before.pods, after.pods):
        if new.queue == Queue.NOT_QUEUED:
            ranks.append(None)
        elif old.queue == Queue.NOT_QUEUED or (old.queue == Queue.ACTIVE and new.queue == Queue.UNSCHEDULABLE):
            ranks.append(-1)
        else:
            ranks.append(new.queued_at)
            kept_ranks.append(new.queued_at)
    pods = None
    for i, (pod, rank) in enumerate(zip(after.pods, ranks)):
        value = 0 if rank is None else len(kept_ranks) if rank < 0 else sum(1 for r in kept_ranks if r < rank)
        if value != pod.queued_at:
            if pods is None:
                pods = list(after.pods)
            pods[i] = evolve(pod, queued_at=value)
    return after if pods is None else evolve(after, pods=tuple(pods))
