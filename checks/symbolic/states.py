"""Symbolic states: the model's own State with Z3 terms in every field, and the unrolling of the model.

The symbolic engines (bounded model checking ``checks/symbolic/bmc.py`` and k-induction
``checks/symbolic/induction.py``) build their transition relation by running the model's action functions
(``model.actions.next.transitions``) on these states: nothing of the behaviour is written twice. This
module holds a symbolic state per time step (``at_time`` naming, as in pySMT's
``model_checking.py``), the ``Unrolling`` that keeps one per step with the action instances leaving
it, and the substitution of a concrete state into a term, which the tests use to check that the
symbolic and the concrete evaluation of every guard and effect agree.
"""

from __future__ import annotations

import time
from dataclasses import fields
import z3
from z3.z3 import _to_expr_ref

from kepcheck.model.actions.next import transitions
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import int_variable, z3_and, z3_eq
from kepcheck.model.memo import caching
from kepcheck.model.schema import BOOL_FIELDS, VECTOR_FIELDS, flatten, pod_fields
from kepcheck.model.state import PodState, State

__all__ = ["at_time", "symbolic_state", "Substitution", "concrete_bindings", "evaluate", "state_leaves", "states_equal", "as_bool",
           "Unrolling"]



def at_time(name: str, step: int) -> str:
    """The name of a state variable at a time step: ``name@step``."""
    return f"{name}@{step}"


def symbolic_state(ctx: Context, step: int) -> State:
    """A State whose every field is a fresh Z3 constant named after the pod, field and step."""
    pods = []
    for i, name in enumerate(ctx.names):
        values = {}
        for field in pod_fields(ctx):
            label = at_time(f"{name}.{field.name}", step)
            if field.name in VECTOR_FIELDS:
                values[field.name] = tuple(int_variable(f"{label}.{r}") for r in ctx.scenario.resources)
            elif field.name in BOOL_FIELDS:
                values[field.name] = z3.Bool(label)
            else:
                values[field.name] = int_variable(label)
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


class Substitution:
    """Constants bound to values, ready to substitute into many terms (the C arrays built once)."""

    def __init__(self, pairs: list):
        self.pairs = pairs
        self._from = (z3.Ast * len(pairs))(*(constant.as_ast() for constant, _ in pairs))
        self._to = (z3.Ast * len(pairs))(*(value.as_ast() for _, value in pairs))
        self._ctx = pairs[0][0].ctx if pairs else z3.main_ctx()

    def __call__(self, term):
        substituted = z3.Z3_substitute(self._ctx.ref(), term.as_ast(), len(self.pairs), self._from, self._to)
        return z3.simplify(_to_expr_ref(substituted, self._ctx))


def concrete_bindings(symbolic: State, concrete: State) -> Substitution:
    """Every field of ``symbolic`` bound to its value in ``concrete``."""
    pairs = []
    for sym_pod, pod in zip(symbolic.pods, concrete.pods):
        for field in fields(PodState):
            if getattr(sym_pod, field.name) is not None:  # None: not a field of this context's states
                pairs += _leaves(getattr(sym_pod, field.name), getattr(pod, field.name))
    pairs += _leaves(symbolic.retry_due, concrete.retry_due)
    pairs += _leaves(symbolic.env_used, concrete.env_used)
    pairs += _leaves(symbolic.env_events, concrete.env_events)
    return Substitution(pairs)


def evaluate(term, bindings: Substitution):
    """The value of a term (or a plain value) under the bindings, as a Python int or bool."""
    if isinstance(term, bool) or isinstance(term, int):
        return term
    value = bindings(term)
    if z3.is_true(value):
        return True
    if z3.is_false(value):
        return False
    if z3.is_int_value(value):
        return value.as_long()
    raise ValueError(f"term does not reduce to a value: {value}")


def state_leaves(state: State) -> list:
    """Every field of a state in a fixed order (``model/schema.flatten``)."""
    return flatten(state)


def states_equal(a: State, b: State):
    """``a = b``, field by field."""
    return z3_and([z3_eq(x, y) for x, y in zip(state_leaves(a), state_leaves(b))])


def as_bool(term):
    return z3.BoolVal(term) if isinstance(term, bool) else term


class Unrolling:
    """The symbolic model of one context: a State of Z3 constants per step, the action instances
    enabled from it (``(action, guard, successor)``, computed once per step) and the selector
    ``action@t``. ``init`` is the initial state (concrete, or with Z3 sizes in parametric mode)."""

    def __init__(self, ctx: Context, init: State, assumptions: list | None = None):
        self.ctx = ctx
        self.init = init
        self.assumptions = list(assumptions or [])  # parametric constraints
        self._states: dict[int, State] = {}
        self._instances: dict[int, list] = {}
        self._chooses: dict[int, list] = {}
        self.build_seconds: dict[int, float] = {}

    def state(self, step: int) -> State:
        if step not in self._states:
            self._states[step] = symbolic_state(self.ctx, step)
        return self._states[step]

    def instances(self, step: int) -> list:
        """The action instances leaving the state at ``step`` (guards and successors as Z3 terms)."""
        if step not in self._instances:
            started = time.perf_counter()
            with caching(self.ctx, concrete=False):  # one step's actions share the terms of its scheduling cycles
                self._instances[step] = list(transitions(self.ctx, self.state(step)))
            self.build_seconds[step] = time.perf_counter() - started
        return self._instances[step]

    def selector(self, step: int):
        return int_variable(at_time("action", step))

    def chooses(self, step: int) -> list:
        """``action@step = i`` for every action instance ``i`` of the step (built once)."""
        if step not in self._chooses:
            selector = self.selector(step)
            self._chooses[step] = [selector == i for i in range(len(self.instances(step)))]
        return self._chooses[step]
