"""The sometimes-properties of steps: witnesses that the behaviour the always-properties judge does
happen (a resize preempted for, then allocated; a victim evicted; a pod admitted; a pending pod
bound, or preempting, beside a Deferred resize), so that no safety verdict is vacuous (docs/design.md §4).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, any_, not_, or_
from kepcheck.model.expr.vectors import nonzero, veq
from kepcheck.model.memo import changed_pods
from kepcheck.model.properties.victims import new_victims
from kepcheck.model.state import PodState, State
from kepcheck.model.step import Action

__all__ = [
    "resize_preempted", "resize_allocated_after_preemption", "victim_evicted", "pod_admitted",
    "pending_pod_bound_beside_deferred_resize", "pending_pod_preempts_beside_deferred_resize",
]


def resize_preempted(ctx: Context, before: State, action: Action, after: State):
    return action.name == "PreemptForResize" and or_(*new_victims(ctx, before, after).values())


def resize_allocated_after_preemption(ctx: Context, before: State, action: Action, after: State):
    return any_(value for _, value in changed_pods(ctx, before, after, _allocated_after_promise))


def _allocated_after_promise(ctx: Context, i: int, old: PodState, new: PodState):
    return and_(nonzero(old.promised), new.phase == Phase.RUNNING, not_(veq(new.allocated, old.allocated)),
                veq(new.allocated, new.desired))


def victim_evicted(ctx: Context, before: State, action: Action, after: State):
    return or_(*new_victims(ctx, before, after).values())


def pod_admitted(ctx: Context, before: State, action: Action, after: State):
    return action.name == "AdmitPod"


def pending_pod_bound_beside_deferred_resize(ctx: Context, before: State, action: Action, after: State):
    if action.name != "BindPod":
        return False
    node = ctx.node_index(action.param("node"))
    return any_(and_(pod.node == node, pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)
                for pod in after.pods)


def pending_pod_preempts_beside_deferred_resize(ctx: Context, before: State, action: Action, after: State):
    """The scheduler evicts for a pending pod on a node that holds a Deferred resize: the premise of
    NoNeedlessVictimForPendingPod."""
    if action.name != "PreemptForPod":
        return False
    node = ctx.node_index(action.param("node"))
    beside = any_(and_(pod.node == node, pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)
                  for pod in before.pods)
    return and_(beside, or_(*new_victims(ctx, before, after).values()))
