"""What every action is made of: the ``Action`` value, and the helpers its effect is written with.

An action function (``model/actions/user.py``, ``model/actions/scheduler.py``, ``model/actions/kubelet.py``) takes ``(ctx,
state)`` and yields ``(Action, guard, next_state)`` for every instance of the action: the finite
choice (which pod, which node, which menu entry) is Python iteration over parameters; the guard
is an expression over the state; the effect builds the next state with the helpers below,
changing only the fields it names, with ``ite`` where the change depends on the state. Every
helper is written with ``model/expr/scalars.py``, so effects evaluate on plain ints and on Z3 terms alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason
from kepcheck.spec.kubernetes.quantities import format_quantity, parse_quantity

from kepcheck.model.expr.scalars import and_, ite, not_, or_
from kepcheck.model.state import PodState, State, evolve

__all__ = ["Action", "Requests", "snake_case", "guarded", "update", "set_pod", "mark_retry_due", "within_budget", "use_event", "menu",
           "is_running", "is_deferred", "queue_seen_at_once"]


@dataclass(frozen=True, slots=True)
class Requests:
    """The requests of a resize, as an action parameter: ``((resource, amount), ...)`` in the
    scenario's resource order, each amount an exact Kubernetes quantity (cpu in millicores, memory
    in bytes; a Z3 term in parametric mode). Shown as ``[cpu 5, memory 1Gi]``; the mapping
    ``{"cpu": "5", "memory": "1Gi"}`` is its Kubernetes spelling (``resources.requests``)."""

    amounts: tuple

    @classmethod
    def of(cls, scenario, vector) -> "Requests":
        """The requests of ``vector`` (model units) in ``scenario``'s resources."""
        return cls(tuple((name, value * unit) for name, value, unit in zip(scenario.resources, vector, scenario.units)))

    @classmethod
    def parse(cls, text: str) -> "Requests":
        """``[cpu 5, memory 1Gi]`` back to its value; ValueError for anything else."""
        inner = text.strip()
        if not (inner.startswith("[") and inner.endswith("]")):
            raise ValueError(f"requests {text!r} are not [resource quantity, ...]")
        amounts = []
        for part in inner[1:-1].split(","):
            name, _, quantity = part.strip().partition(" ")
            if not name or not quantity:
                raise ValueError(f"requests {text!r} are not [resource quantity, ...]")
            amounts.append((name, parse_quantity(quantity.strip(), name)))
        return cls(tuple(amounts))

    @classmethod
    def from_mapping(cls, mapping: dict) -> "Requests":
        """From the Kubernetes spelling ``{"cpu": "5"}``; ValueError for a quantity Kubernetes rejects."""
        return cls(tuple((str(name), parse_quantity(quantity, str(name))) for name, quantity in mapping.items()))

    def mapping(self) -> dict:
        """The Kubernetes spelling: resource name -> quantity string."""
        return {name: self._quantity(name, amount) for name, amount in self.amounts}

    @staticmethod
    def _quantity(name: str, amount) -> str:
        return format_quantity(amount, name) if isinstance(amount, int) else str(amount)

    def __str__(self) -> str:
        return "[" + ", ".join(f"{name} {self._quantity(name, amount)}" for name, amount in self.amounts) + "]"


_LABEL = re.compile(r"(?P<name>[A-Za-z]+)(?:\((?P<params>.*)\))?")
_VALUE_TYPES = {"requests": Requests.parse}  # parameters whose values are not plain names


@dataclass(frozen=True, slots=True)
class Action:
    """An action with its parameters, e.g. ``PreemptForResize(pod=web)``: the name is the action's
    row in ``spec/kep/transitions.ACTIONS``, the parameters are values from the scenario (static:
    names of pods and nodes, a resize's ``Requests``), so an action means the same on concrete and
    symbolic states. Traces carry these values; ``label()`` is the one place they are rendered and
    ``Action.parse`` the one place a label is read back."""

    name: str
    params: tuple = ()  # ((key, value), ...) in a fixed order

    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in self.params)})"

    @classmethod
    def parse(cls, label: str) -> "Action":
        """The action a label names (the inverse of ``label()``); ValueError for text that is not one."""
        match = _LABEL.fullmatch(label.strip())
        if match is None:
            raise ValueError(f"{label!r} is not an action label (Name or Name(key=value, ...))")
        params, text = [], match.group("params")
        for part in _top_level_parts(text) if text else ():
            key, equals, value = part.partition("=")
            if not equals or not key.strip() or not value.strip():
                raise ValueError(f"{label!r}: parameter {part.strip()!r} is not key=value")
            key, value = key.strip(), value.strip()
            params.append((key, _VALUE_TYPES[key](value) if key in _VALUE_TYPES else value))
        return cls(match.group("name"), tuple(params))

    def param(self, key: str, default=None):
        """The value of parameter ``key`` (``default`` when the action has none)."""
        for name, value in self.params:
            if name == key:
                return value
        return default

    def __str__(self) -> str:
        return self.label()


def _top_level_parts(text: str) -> list[str]:
    """``text`` split at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


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
