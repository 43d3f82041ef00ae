"""The eventually-properties (liveness): each given as a premise and a goal per pod (``Response``:
premise ~> goal) or as a kind of step that must stop (``EventuallyNever``), in ``LIVENESS``;
``checks/engines/liveness.py`` judges them on the explored state graph under the fairness the
catalog states (``spec/kep/fairness.py``). Written with ``model/expr`` helpers like every
predicate, so they trace and evaluate on packed states as well.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Callable

from kepcheck.spec.kep.properties import EVENTUALLY
from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting.footprints import kubelet_resizing_pod_requests
from kepcheck.model.accounting.views import admitted, allocatable_of, fits_new_pod, kubelet_footprint
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, not_, or_
from kepcheck.model.expr.vectors import vadd, veq, vle, vsum_where
from kepcheck.model.properties.victims import new_victims
from kepcheck.model.state import State

__all__ = ["liveness_observers", "Response", "EventuallyNever", "LIVENESS"]


@dataclass(frozen=True)
class Response:
    """``premise(pod) ~> goal(pod)`` for every pod: whenever the premise holds, the goal holds then
    or later (TLA+ ``P ~> Q``). Both take ``(ctx, state, pod index)``; the words name them in
    trace reports."""

    premise: Callable
    goal: Callable
    premise_words: str = ""
    goal_words: str = ""


@dataclass(frozen=True)
class EventuallyNever:
    """``<>[] ~step``: from some point on, no step is an instance of ``step(ctx, before, after)``."""

    step: Callable
    step_words: str = ""


def _resize_outstanding(ctx: Context, state: State, index: int):
    pod = state.pods[index]
    return and_(pod.phase == Phase.RUNNING, not_(veq(pod.desired, pod.allocated)))


def _deferred(ctx: Context, state: State, index: int):
    pod = state.pods[index]
    return and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)


def _lower_priority_could_make_room(ctx: Context, state: State, index: int):
    """The kubelet would admit the resize if every strictly-lower-priority pod on the node were gone."""
    pod = state.pods[index]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    others = vsum_where(((and_(other.node == pod.node, admitted(other)), kubelet_footprint(other))
                         for j, other in enumerate(state.pods)
                         if j != index and ctx.priorities[j] >= ctx.priorities[index]), ctx.width)
    return vle(vadd(own, others), allocatable_of(ctx, pod.node))


def _could_be_placed(ctx: Context, state: State, index: int):
    """A pending pod fits some node now, or (if it may preempt) once every strictly-lower-priority
    pod there is gone (scheduler view)."""
    options = []
    for node in ctx.node_range:
        options.append(fits_new_pod(ctx, state, index, node))
        if not ctx.never_preempts[index]:
            removed = {j: True for j in ctx.pod_range if ctx.priorities[j] < ctx.priorities[index]}
            options.append(fits_new_pod(ctx, state, index, node, removed))
    return or_(*options)


def _pending_and_placeable(ctx: Context, state: State, index: int):
    return and_(state.pods[index].phase == Phase.PENDING, _could_be_placed(ctx, state, index))


def _not_pending_or_unplaceable(ctx: Context, state: State, index: int):
    return not_(_pending_and_placeable(ctx, state, index))


def _eviction(ctx: Context, before: State, after: State):
    return or_(*new_victims(ctx, before, after).values())


_RESOLVED = "its resize is allocated or reverted (desired = allocated), or the pod is no longer running"


LIVENESS = {
    "DeferredResizeResolved": Response(
        premise=lambda ctx, state, i: and_(_deferred(ctx, state, i), _lower_priority_could_make_room(ctx, state, i)),
        goal=lambda ctx, state, i: not_(_resize_outstanding(ctx, state, i)),
        premise_words="its resize is Deferred and the kubelet would fit it without the strictly-lower-priority pods",
        goal_words=_RESOLVED),
    "EveryDeferredResizeResolved": Response(
        premise=_deferred,
        goal=lambda ctx, state, i: not_(_resize_outstanding(ctx, state, i)),
        premise_words="its resize is Deferred", goal_words=_RESOLVED),
    "NoPreemptionLivelock": EventuallyNever(step=_eviction, step_words="a pod is evicted by preemption"),
    "PendingPodResolved": Response(
        premise=_pending_and_placeable, goal=_not_pending_or_unplaceable,
        premise_words="it is pending and fits some node now or once the strictly-lower-priority pods there are gone",
        goal_words="it is no longer pending, or no node could take it any more"),
}


def liveness_observers(ctx: Context, properties) -> tuple[list, list]:
    """What the eventually-properties among ``properties`` read (``LIVENESS``):
    ``([((name, pod, "premise"|"goal"), predicate(state)), ...], [(name, predicate(before, after)), ...])``,
    the keys the liveness checker asks ``StateGraph.state_values`` and ``step_values`` for."""
    state_observers, step_observers = [], []
    for spec in properties:
        if spec.kind != EVENTUALLY:
            continue
        liveness = LIVENESS[spec.name]
        if isinstance(liveness, EventuallyNever):
            step_observers.append((spec.name, partial(liveness.step, ctx)))
            continue
        for pod in ctx.pod_range:
            for role, predicate in (("premise", liveness.premise), ("goal", liveness.goal)):
                state_observers.append(((spec.name, pod, role), lambda state, f=predicate, i=pod: f(ctx, state, i)))
    return state_observers, step_observers
