"""The initial state of a scenario (TLA+ ``Init``).

Pods on a node start Running with their declared allocation and actual size (defaulting to the
requests), their resize condition and PodResizeInProgress as declared; pods without a node start
Pending in activeQ (with their nominatedNodeName, if any); arrivals start Absent, waiting for the
environment to create them. Then the scheduler's informer runs its start-up AddPod pass
(docs/reference.md §4.3 (1): Deferred pods are enqueued at start-up).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.accounting.copies import seen_copy
from kepcheck.model.actions.informer import scheduler_observes
from kepcheck.model.context import Context
from kepcheck.model.state import NO_NODE, NO_POD, PodState, State, evolve

__all__ = ["initial_state"]

_RESIZE_REASONS = {"Deferred": ResizeReason.DEFERRED, "Infeasible": ResizeReason.INFEASIBLE}


def _initial_pod(ctx: Context, spec) -> PodState:
    zero = (0,) * ctx.width
    blank = dict(promised=zero, assumed=zero)
    if spec.arrival:
        return PodState(int(Phase.ABSENT), NO_NODE, spec.requests, zero, zero, **blank)
    if spec.node is None:
        nominated = ctx.node_index(spec.nominated_node) if spec.nominated_node else NO_NODE
        return PodState(int(Phase.PENDING), NO_NODE, spec.requests, zero, zero, queue=int(Queue.ACTIVE),
                        nominated=nominated, **blank)
    allocated = spec.allocated if spec.allocated is not None else spec.requests
    actual = spec.actual if spec.actual is not None else allocated
    resize = _RESIZE_REASONS.get(spec.resize, ResizeReason.NONE)
    return PodState(int(Phase.RUNNING), ctx.node_index(spec.node), spec.requests, allocated, actual,
                    resize=int(resize), in_progress=allocated != actual, **blank)


def _with_scheduler_fields(ctx: Context, pod: PodState) -> PodState:
    """The fields only some variants have: the informer's copy equal to the API (the scheduler starts
    by listing every pod), no preemption call in flight."""
    if ctx.variant.scheduler_view == "stale":
        pod = evolve(pod, **seen_copy(pod))
    if ctx.variant.preemption_calls == "asynchronous":
        pod = evolve(pod, evicting_for=NO_POD, preempting=False)
    return pod


def initial_state(ctx: Context) -> State:
    """The scenario's start state, after the scheduler's start-up pass."""
    pods = tuple(_with_scheduler_fields(ctx, _initial_pod(ctx, spec)) for spec in ctx.scenario.pods)
    state = State(pods=pods, retry_due=(False,) * len(ctx.node_names), env_used=(False,) * len(ctx.events))
    return scheduler_observes(ctx, None, state)
