"""The model's next-state relation: ``NEXT``, the list of action functions, and how to take steps.

``NEXT`` is derived from ``spec/transitions.ACTIONS`` (the actions grouped by actor, in the order
the model tries them): the action ``PreemptForResize`` of the scheduler is the function
``preempt_for_resize`` of ``model/actions/resize_preemption.py``: each action is the function of its
name in its actor's modules — the user's ``model/actions/user.py``, the scheduler's
``model/actions/scheduler.py`` (pending pods), ``model/actions/resize_preemption.py`` (Deferred
resizes) and ``model/actions/asynchrony.py`` (late deliveries), the kubelet's
``model/actions/kubelet.py``. ``ACTOR_OF`` is the spec's actor of each action. After every effect the scheduler's event handlers run (``model/actions/informer.py``) and the
queue's timestamps are re-ranked (``model/actions/queue_order.py``).

Each action function takes ``(ctx, state)`` and yields ``(Action, guard, next_state)`` for every
instance (``model/step.py``). On a concrete state a guard is a bool: ``next_steps`` yields the
instances whose guard is True; on a symbolic state guards and successors are Z3 terms
(``transitions``), from which the symbolic engine builds its transition relation.
"""

from __future__ import annotations

from typing import Callable, Iterator

from kepcheck.spec.kep.transitions import ACTIONS
from kepcheck.spec.kep.vocabulary import Actor

from kepcheck.model.accounting.copies import api_unchanged, update_undelivered
from kepcheck.model.actions import asynchrony, kubelet, resize_preemption, scheduler, user
from kepcheck.model.actions.informer import scheduler_observes
from kepcheck.model.actions.queue_order import stamped
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, implies, not_, or_
from kepcheck.model.memo import per_state
from kepcheck.model.state import State
from kepcheck.model.step import Action, snake_case

__all__ = ["NEXT", "ACTION_NAMES", "ACTOR_OF", "transitions", "next_steps", "apply_action", "find_step",
           "within_lag_bound"]

_MODULES_OF = {Actor.USER: (user,), Actor.SCHEDULER: (scheduler, resize_preemption, asynchrony), Actor.KUBELET: (kubelet,)}


def _function(spec) -> "ActionFunction":
    """The action function of an action of the spec: the function of its name in its actor's modules."""
    name = snake_case(spec.name)
    return next(getattr(module, name) for module in _MODULES_OF[spec.actor] if hasattr(module, name))


ActionFunction = Callable[[Context, State], Iterator[tuple[Action, object, State]]]

NEXT: tuple[ActionFunction, ...] = tuple(_function(spec) for spec in ACTIONS)
ACTION_NAMES: tuple[str, ...] = tuple(spec.name for spec in ACTIONS)
ACTOR_OF: dict[str, Actor] = {spec.name: spec.actor for spec in ACTIONS}


def transitions(ctx: Context, state: State) -> Iterator[tuple[Action, object, State]]:
    """Every action instance with its guard and its successor (event handlers applied), in NEXT
    order. On a symbolic state the guards and successors are Z3 terms."""
    for action_function in NEXT:
        for action, guard, after in action_function(ctx, state):
            after = stamped(ctx, state, scheduler_observes(ctx, state, after))
            yield action, and_(guard, within_lag_bound(ctx, state, after)), after


def next_steps(ctx: Context, state: State) -> Iterator[tuple[Action, State]]:
    """Every enabled action instance and its successor on a concrete state (deterministic order)."""
    for action_function in NEXT:
        for action, guard, after in action_function(ctx, state):
            if guard is True:
                after = stamped(ctx, state, scheduler_observes(ctx, state, after))
                if within_lag_bound(ctx, state, after):
                    yield action, after
            elif guard is not False:
                raise TypeError(f"{action.label()}: guard is not concrete on a concrete state: {guard!r}")


def within_lag_bound(ctx: Context, before: State, after: State):
    """The stale view's bound (``scheduler_view: stale``): the scheduler's informer is at most one step
    behind. A step may start only when every update is delivered, or when it writes no pod beyond
    those whose update is still undelivered (its writes merge into theirs). The pod informer is one
    watch stream delivered in order across pods; this bound keeps that order (a later write to
    another pod is never seen before an earlier one) and keeps the state space finite and small.
    What it hides: the scheduler acting while it is two or more writes to different pods behind, and
    an API write landing between the cache and the queue update of one handler call (a window inside
    the scheduler, which a real write would only see delivered after)."""
    if ctx.variant.scheduler_view != "stale":
        return True
    if type(before.env_events) is int:  # plain values: only the pods the step rewrote can break the bound
        pending = _pending(ctx, before)
        lagging = any(pending)
        for old, new, was in zip(before.pods, after.pods, pending):
            if old is not new and ((old.cache_ahead and not api_unchanged(old, new))
                                   or (lagging and not was and update_undelivered(new))):
                return False
        return True
    pending = [update_undelivered(pod) for pod in before.pods]
    # between the handler's cache update and its queue update (``cache_ahead``) the pod is not written
    handler_window = [implies(old.cache_ahead, api_unchanged(old, new)) for old, new in zip(before.pods, after.pods)]
    return and_(or_(not_(or_(*pending)),
                    and_(*(implies(update_undelivered(new), was) for new, was in zip(after.pods, pending)))),
                *handler_window)


def find_step(ctx: Context, state: State, action) -> tuple[Action, State]:
    """The enabled action ``action`` (an ``Action``, or its label) and its successor; ValueError if
    it is not enabled here, or is not a label."""
    wanted = action if isinstance(action, Action) else Action.parse(str(action))
    for candidate, after in next_steps(ctx, state):
        if candidate == wanted:
            return candidate, after
    enabled = ", ".join(a.label() for a, _ in next_steps(ctx, state)) or "none"
    raise ValueError(f"action {wanted.label()} is not enabled here (enabled: {enabled})")


def apply_action(ctx: Context, state: State, action) -> State:
    """The successor reached by ``action`` (an ``Action`` or its label); ValueError if it is not enabled."""
    return find_step(ctx, state, action)[1]


@per_state
def _pending(ctx: Context, state: State) -> tuple:
    return tuple(update_undelivered(pod) for pod in state.pods)
