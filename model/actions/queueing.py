"""Where the scheduler's event handlers put a pod: the scheduling queue's rules the informer
(``model/actions/informer.py``) applies to each pod of a step — the queueing hints that release a
pod from the unschedulable pool, DefaultPreemption's PreEnqueue, which Deferred pods the scheduler
queues at all (KEP-5836), where a pod goes when the scheduler starts, and the fields the handlers
write (docs/reference.md §3.1, §4.3, §4.4; beta's ``SchedulingQueue.AddOrActivate``).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.accounting.views import assigned
from kepcheck.model.context import Context, overridable
from kepcheck.model.expr.scalars import and_, ite, not_, or_, pick
from kepcheck.model.expr.vectors import veq, vzero
from kepcheck.model.memo import of_values
from kepcheck.model.state import NO_NODE, PodState
from kepcheck.model.step import is_deferred, is_running

__all__ = [
    "kept_promise", "released_from_unschedulable_pool", "held_back_by_pre_enqueue", "queued_deferred_pod",
    "startup_queue", "handler_fields",
]


def kept_promise(ctx: Context, pod: PodState):
    """The pod's ghost promise while its resize is still outstanding in the API (the pod runs, its
    desired requests are not allocated, and the kubelet has not marked the resize Infeasible, which
    the scheduler no longer reserves room for: docs/reference.md §1.2, max(A, R)); zero otherwise."""
    outstanding = and_(is_running(pod), not_(veq(pod.desired, pod.allocated)), pod.resize != ResizeReason.INFEASIBLE)
    return ite(outstanding, pod.promised, vzero(ctx.width))


@overridable
def released_from_unschedulable_pool(ctx: Context, pod: PodState, event):
    """The pod waits in the unschedulable pool and ``event`` releases it to activeQ (a queueing
    hint, or the periodic flush when ``event`` is True), unless PreEnqueue holds it back."""
    return and_(pod.queue == Queue.UNSCHEDULABLE, event, not_(held_back_by_pre_enqueue(ctx, pod)))


def held_back_by_pre_enqueue(ctx: Context, pod: PodState):
    """DefaultPreemption's PreEnqueue keeps a pod out of activeQ while its own preemption calls are in
    flight (asynchronous preemption only; docs/reference.md §3.1)."""
    if ctx.variant.preemption_calls != "asynchronous":
        return False
    return pod.preempting


def queued_deferred_pod(ctx: Context, pod: PodState):
    """A Deferred pod the scheduler keeps in its queue (gate on; with the v1.37 opt-out, not on a
    node that disables resize preemption: docs/reference.md §4.3 (1), §4.4, §7.3 S-5)."""
    candidate = and_(ctx.variant.gate_on, is_deferred(pod))
    if ctx.variant.opt_out_enforcement == "not-queued":
        candidate = and_(candidate, not_(pick(ctx.resize_preemption_disabled, pod.node, False)))
    return candidate


def startup_queue(ctx: Context, pod: PodState):
    """Where the AddPod handler puts a pod when the scheduler starts: pending and Deferred pods in
    activeQ (docs/reference.md §4.3 (1) cold start, §7.3 S-17)."""
    return ite(or_(pod.phase == Phase.PENDING, queued_deferred_pod(ctx, pod)), Queue.ACTIVE, Queue.NOT_QUEUED)


@of_values
def handler_fields(ctx: Context, pod: PodState, own_change, gained, shrunk, others_changed, scaled_up) -> dict | None:
    """The fields the handlers write on one pod: its queue, and what the scheduler keeps for it
    (``own_change``: its own desired changed in this step; ``gained``: it gained the Deferred
    condition, or was added at start-up; ``shrunk``: some pod freed room; ``others_changed``: a pod
    on its node changed size or went away; ``scaled_up``: a pod on its node scaled up). None when
    they write nothing new (concretely).

    A Deferred pod enters the queue when it gains the condition. v1.37: it is in the queue as long
    as it is Deferred, and the hints move it from the unschedulable pool on its own or a same-node
    change. Beta (``scale_up_requeue: add-or-activate``): a fitted resize may have left the queue,
    so a same-node scale-up adds or activates it wherever it is (``SchedulingQueue.AddOrActivate``).
    """
    zero = vzero(ctx.width)
    pending = pod.phase == Phase.PENDING
    candidate = queued_deferred_pod(ctx, pod)
    hinted = released_from_unschedulable_pool(ctx, pod, or_(own_change, others_changed))
    gated = held_back_by_pre_enqueue(ctx, pod)
    if ctx.variant.scale_up_requeue == "add-or-activate":
        enqueue = or_(gained, and_(scaled_up, not_(gated)), hinted)
    else:
        enqueue = or_(pod.queue == Queue.NOT_QUEUED, hinted)
    added = ite(gated, Queue.UNSCHEDULABLE, Queue.ACTIVE)  # PreEnqueue parks a gated pod in the pool
    queue = ite(pending, ite(or_(gained, released_from_unschedulable_pool(ctx, pod, shrunk)), Queue.ACTIVE, pod.queue),
                ite(candidate, ite(enqueue, added, pod.queue), Queue.NOT_QUEUED))
    outside = not_(or_(pending, candidate))  # neither pending nor a Deferred pod the scheduler tracks
    fields = dict(queue=queue, assumed=ite(outside, zero, pod.assumed), tracking=and_(not_(outside), pod.tracking),
                  promised=kept_promise(ctx, pod),
                  # the nominated-node-name guard's nomination is cleared with the Deferred condition
                  nominated=ite(and_(outside, assigned(pod)), NO_NODE, pod.nominated))
    if all(_same(getattr(pod, name), value) for name, value in fields.items()):
        return None
    return fields


def _same(old, new) -> bool:
    """Concretely equal (a symbolic value is never 'the same': it is always written)."""
    if isinstance(old, tuple):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new))
    return isinstance(old, int) and isinstance(new, int) and old == new
