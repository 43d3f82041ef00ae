"""The predicates about the resize conditions (docs/reference.md §2.4, §2.5): ConditionsTruthful —
PodResizePending and PodResizeInProgress always describe the real state, and the scheduler never
nominates a resize where the variant does not — and its witnesses ResizeDeferred and
ResizeInProgress.
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, any_, implies, not_, or_
from kepcheck.model.expr.vectors import veq
from kepcheck.model.memo import pod_values
from kepcheck.model.state import NO_NODE, PodState, State

__all__ = ["conditions_truthful", "condition_checks", "resize_deferred", "resize_in_progress"]


def conditions_truthful(ctx: Context, state: State):
    return all_(pod_values(ctx, state, _conditions_truthful_for))


def _conditions_truthful_for(ctx: Context, i: int, pod: PodState):
    return implies(pod.phase == Phase.RUNNING, and_(*(holds for _, holds in condition_checks(ctx, pod))))


def condition_checks(ctx: Context, pod: PodState) -> tuple:
    """ConditionsTruthful's conjuncts for a running pod, named: ``(name, holds)``."""
    nominations_allowed = ctx.variant.double_preemption_guard == "nominated-node-name"
    return (
        ("in-progress", pod.in_progress == not_(veq(pod.allocated, pod.actual))),
        ("pending", implies(pod.observed, (pod.resize != ResizeReason.NONE) == not_(veq(pod.desired, pod.allocated)))),
        ("nominated", or_(nominations_allowed, pod.nominated == NO_NODE)),
    )


def resize_deferred(ctx: Context, state: State):
    return any_(and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED) for pod in state.pods)


def resize_in_progress(ctx: Context, state: State):
    return any_(and_(pod.phase == Phase.RUNNING, pod.in_progress) for pod in state.pods)
