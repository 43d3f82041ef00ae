"""What every action is made of: the ``Action`` value, and the helpers its effect is written with.

An action function (``model/actions/user.py``, ``model/actions/scheduler.py``, ``model/actions/kubelet.py``) takes ``(ctx,
state)`` and yields ``(Action, guard, next_state)`` for every instance of the action: the finite
choice (which pod, which node, which menu entry) is Python iteration over parameters; the guard
is an expression over the state; the effect builds the next state with the helpers below,
changing only the fields it names, with ``ite`` where the change depends on the state. Every
helper is written with ``model/expr/scalars.py``, so effects evaluate on plain ints and on Z3 terms alike.
"""

from __future__ import annotations

from dataclasses import dataclass

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.expr.scalars import and_, ite, not_, or_
from kepcheck.model.state import PodState, State, evolve

__all__ = ["Action", "snake_case", "guarded", "update", "set_pod", "mark_retry_due", "within_budget", "use_event", "menu",
           "is_running", "is_deferred", "queue_seen_at_once"]


@dataclass(frozen=True, slots=True)
class Action:
    """An action with its parameters, e.g. ``PreemptForResize(pod=web)``: the name is the action's
    row in ``spec/transitions.ACTIONS``, the parameters are names from the scenario (static), so an
    action means the same on concrete and symbolic states. Traces carry these values."""

    name: str
    params: tuple = ()  # ((key, value), ...) in a fixed order

    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in self.params)})"

    def param(self, key: str, default=None):
        """The value of parameter ``key`` (``default`` when the action has none)."""
        for name, value in self.params:
            if name == key:
                return value
        return default

    def __str__(self) -> str:
        return self.label()


def snake_case(name: str) -> str:
    """``PreemptForResize`` -> ``preempt_for_resize``: the function of an action (or a property) of
    that name."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")


def guarded(pod: PodState, condition, fields: dict) -> PodState:
    """``pod`` with ``fields`` changed where ``condition`` holds (concretely: changed or not)."""
    if condition is True:
        return evolve(pod, **fields)
    if condition is False:
        return pod
    return evolve(pod, **{name: ite(condition, value, getattr(pod, name)) for name, value in fields.items()})


def update(state: State, changes: list) -> State:
    """Apply ``[(pod index, condition, {field: value}), ...]`` to the pods of ``state``, in order."""
    pods = list(state.pods)
    for index, condition, fields in changes:
        pods[index] = guarded(pods[index], condition, fields)
    return evolve(state, pods=tuple(pods))


def set_pod(state: State, index: int, **fields) -> State:
    return update(state, [(index, True, fields)])


def mark_retry_due(state: State, node) -> State:
    """The kubelet of ``node`` (a state value) owes a retry pass over its pending resizes."""
    due = tuple(or_(node == n, flag) for n, flag in enumerate(state.retry_due))
    return evolve(state, retry_due=due)


def within_budget(ctx, state: State, event: int):
    """Entry ``event`` of the environment's menu is unused, an equal entry before it is used
    (``Context.previous_twins``), and the run has events left (maxEvents)."""
    twin = ctx.previous_twins[event]
    return and_(state.env_events < ctx.max_events, not_(state.env_used[event]), *((state.env_used[twin],) if twin >= 0 else ()))


def use_event(state: State, event: int) -> State:
    used = tuple(True if i == event else flag for i, flag in enumerate(state.env_used))
    return evolve(state, env_used=used, env_events=state.env_events + 1)


def menu(ctx, kind: str):
    """``(index, EnvEvent)`` for every entry of the environment's menu of this kind."""
    for index, event in enumerate(ctx.events):
        if event.kind == kind:
            yield index, event


def is_running(pod: PodState):
    return pod.phase == Phase.RUNNING


def is_deferred(pod: PodState):
    return and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)


def queue_seen_at_once(ctx, queue: int) -> dict:
    """``{"queue": queue}`` when the scheduler's handlers see an API write in the step that makes it
    (synchronous view), else nothing: with the stale view the queue learns of it at the delivery
    (``model/informer.delivered``)."""
    return {} if ctx.variant.scheduler_view == "stale" else {"queue": queue}
