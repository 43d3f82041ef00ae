"""Symbolic states: the model's own State with Z3 terms in every field.

The symbolic engine (bounded model checking and k-induction, issue 4) builds its transition
relation by running the model's action functions (``model.actions.transitions``) on these
states: nothing of the behaviour is written twice. This module holds the pieces that exist so
far: a symbolic state per time step (``at_time`` naming, as in pySMT's ``model_checking.py``) and
the substitution of a concrete state into a term, which the tests use to check that the
symbolic and the concrete evaluation of every guard and effect agree.
"""

from __future__ import annotations

from dataclasses import fields

import z3

from kepcheck.model.context import Context, initial_state
from kepcheck.model.expr import int_variable
from kepcheck.model.state import PodState, State

__all__ = ["at_time", "symbolic_state", "concrete_bindings", "evaluate"]

_INT_FIELDS = ("phase", "node", "resize", "queue", "nominated", "preempted_by")
_BOOL_FIELDS = ("in_progress", "observed", "tracking")
_VECTOR_FIELDS = ("desired", "allocated", "actual", "promised", "assumed")


def at_time(name: str, step: int) -> str:
    """The name of a state variable at a time step: ``name@step``."""
    return f"{name}@{step}"


def symbolic_state(ctx: Context, step: int) -> State:
    """A State whose every field is a fresh Z3 constant named after the pod, field and step."""
    pods = []
    for i, name in enumerate(ctx.names):
        values = {}
        for field in fields(PodState):
            label = at_time(f"{name}.{field.name}", step)
            if field.name in _INT_FIELDS:
                values[field.name] = int_variable(label)
            elif field.name in _BOOL_FIELDS:
                values[field.name] = z3.Bool(label)
            else:
                values[field.name] = tuple(int_variable(f"{label}.{r}") for r in ctx.scenario.resources)
        pods.append(PodState(**values))
    return State(
        pods=tuple(pods),
        retry_due=tuple(z3.Bool(at_time(f"retry_due.{n}", step)) for n in ctx.node_names),
        env_used=tuple(z3.Bool(at_time(f"env_used.{k}", step)) for k in range(len(ctx.events))),
        env_events=int_variable(at_time("env_events", step)),
    )


def _leaves(symbolic, concrete):
    if isinstance(symbolic, tuple):
        for s, c in zip(symbolic, concrete):
            yield from _leaves(s, c)
    elif z3.is_bool(symbolic):
        yield symbolic, z3.BoolVal(bool(concrete))
    else:
        yield symbolic, z3.IntVal(int(concrete))


def concrete_bindings(symbolic: State, concrete: State) -> list:
    """(constant, value) pairs binding every field of ``symbolic`` to ``concrete``."""
    pairs = []
    for sym_pod, pod in zip(symbolic.pods, concrete.pods):
        for field in fields(PodState):
            pairs += _leaves(getattr(sym_pod, field.name), getattr(pod, field.name))
    pairs += _leaves(symbolic.retry_due, concrete.retry_due)
    pairs += _leaves(symbolic.env_used, concrete.env_used)
    pairs += _leaves(symbolic.env_events, concrete.env_events)
    return pairs


def evaluate(term, bindings: list):
    """The value of a term (or a plain value) under the bindings, as a Python int or bool."""
    if isinstance(term, bool) or isinstance(term, int):
        return term
    value = z3.simplify(z3.substitute(term, *bindings))
    if z3.is_true(value):
        return True
    if z3.is_false(value):
        return False
    if z3.is_int_value(value):
        return value.as_long()
    raise ValueError(f"term does not reduce to a value: {value}")
