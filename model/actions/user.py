"""The actions of users and controllers: the environment around a resize (docs/design.md §2).

Each is bounded by the scenario's menu (``environment``: each entry happens at most once) and by
``maxEvents``; users and controllers are never assumed fair (``spec/kep/fairness.py``).

A controller recreates a gone pod at most once per ``recreations`` entry (``recreate_pod``); a resize
entry may repeat another (resize, revert, resize again), the equal entries taken in menu order
(``Context.previous_twins``). Left out: a controller that recreates pods without bound, node
add/remove and allocatable changes.
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.accounting.copies import seen_copy
from kepcheck.model.actions.queueing import startup_queue
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, is_false, ite, not_, or_
from kepcheck.model.expr.vectors import veq, vzero
from kepcheck.model.state import NO_NODE, NO_POD, State
from kepcheck.model.step import (
    Action, Requests, is_running, menu, queue_seen_at_once, set_pod, update, use_event, within_budget,
)

__all__ = ["request_resize", "create_pod", "delete_pod", "restart_scheduler"]


def request_resize(ctx: Context, state: State):
    """A user PATCHes the pod's /resize subresource: desired changes (docs/reference.md §2.1, §2.5).

    Requests above the node's allocatable are rejected by the API server since v1.36 and never
    reach the pod; the scenario loader refuses them.
    """
    for event_index, event in menu(ctx, "resize"):
        pod = state.pods[event.pod]
        guard = and_(within_budget(ctx, state, event_index), is_running(pod), not_(veq(pod.desired, event.requests)))
        if is_false(guard):
            continue
        after = set_pod(use_event(state, event_index), event.pod, desired=event.requests, observed=False)
        action = Action("RequestResize", (("pod", ctx.names[event.pod]), ("requests", Requests.of(ctx.scenario, event.requests))))
        yield action, guard, after


def _added_to_queue(ctx: Context) -> int:
    """Where a new pending pod is as the API write happens: in activeQ at once with the synchronous
    view; with the stale view not queued until the informer delivers it (the AddPod handler)."""
    return Queue.NOT_QUEUED if ctx.variant.scheduler_view == "stale" else Queue.ACTIVE


def create_pod(ctx: Context, state: State):
    """A controller creates a pending pod (an arrival of the scenario)."""
    for event_index, event in menu(ctx, "arrival"):
        guard = and_(within_budget(ctx, state, event_index), state.pods[event.pod].phase == Phase.ABSENT)
        if is_false(guard):
            continue
        after = set_pod(use_event(state, event_index), event.pod, phase=Phase.PENDING, queue=_added_to_queue(ctx))
        yield Action("CreatePod", (("pod", ctx.names[event.pod]),)), guard, after


def delete_pod(ctx: Context, state: State):
    """A user deletes a pod: a pending pod disappears, a pod on a node starts terminating."""
    for event_index, event in menu(ctx, "deletion"):
        pod = state.pods[event.pod]
        pending = pod.phase == Phase.PENDING
        guard = and_(within_budget(ctx, state, event_index),
                     or_(pending, pod.phase == Phase.BOUND, pod.phase == Phase.RUNNING))
        if is_false(guard):
            continue
        after = set_pod(use_event(state, event_index), event.pod, phase=ite(pending, Phase.GONE, Phase.TERMINATING),
                        nominated=ite(pending, NO_NODE, pod.nominated), **queue_seen_at_once(ctx, Queue.NOT_QUEUED))
        yield Action("DeletePod", (("pod", ctx.names[event.pod]),)), guard, after


def recreate_pod(ctx: Context, state: State):
    """A controller recreates a pod that is gone (evicted, deleted) under the same name, as a
    StatefulSet does: a new pending pod at the declared requests, in activeQ, with nothing of the
    old one's status (docs/design.md §2, environment). Each recreation of the menu happens at most once,
    so evictions stay finite and the liveness properties are checked where they are not final. With
    asynchronous preemption a preemption call still in flight for the old pod completes first (it
    names the old pod's UID; the model has no UIDs, so it orders the two instead)."""
    for event_index, event in menu(ctx, "recreation"):
        guard = and_(within_budget(ctx, state, event_index), state.pods[event.pod].phase == Phase.GONE)
        if ctx.variant.preemption_calls == "asynchronous":  # a call for the old pod (its UID) is done first
            guard = and_(guard, state.pods[event.pod].evicting_for == NO_POD)
        if is_false(guard):
            continue
        zero = vzero(ctx.width)
        after = set_pod(use_event(state, event_index), event.pod, phase=Phase.PENDING, node=NO_NODE,
                        desired=ctx.scenario.pods[event.pod].requests, allocated=zero, actual=zero,
                        resize=ResizeReason.NONE, in_progress=False, observed=True, queue=_added_to_queue(ctx),
                        nominated=NO_NODE, preempted_by=NO_POD, promised=zero, assumed=zero, tracking=False)
        yield Action("RecreatePod", (("pod", ctx.names[event.pod]),)), guard, after


def _restarted(ctx: Context, pod, zero) -> dict:
    """What a restarted scheduler has for a pod: a fresh informer copy (it lists every pod), the
    start-up queue, no memory; preemption calls the old process had in flight are lost with it."""
    fields = dict(queue=startup_queue(ctx, pod), assumed=zero, tracking=False, queued_at=0)
    if ctx.variant.scheduler_view == "stale":
        fields.update(seen_copy(pod))
    if ctx.variant.preemption_calls == "asynchronous":
        fields.update(evicting_for=NO_POD, preempting=False)
    return fields


def restart_scheduler(ctx: Context, state: State):
    """The kube-scheduler restarts: its queue and in-memory state are lost; on start-up the AddPod
    handler re-enqueues pending and Deferred pods (docs/reference.md §4.3 (1), §7.3 S-17)."""
    for event_index, _ in menu(ctx, "restart"):
        guard = within_budget(ctx, state, event_index)
        if is_false(guard):
            continue
        zero = vzero(ctx.width)
        changes = [(i, True, _restarted(ctx, pod, zero)) for i, pod in enumerate(state.pods)]
        yield Action("RestartScheduler"), guard, update(use_event(state, event_index), changes)
