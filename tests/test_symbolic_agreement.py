"""The same action and property definitions evaluate on Z3 terms: for sampled reachable states,
the symbolic guards, successors and properties, with the concrete state substituted, equal what
the explicit engine computes on that state. This is what lets the symbolic engine reuse the model
instead of a second encoding."""

from __future__ import annotations

from dataclasses import fields

import pytest

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, SOMETIMES
from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.checks.symbolic.states import concrete_bindings, evaluate, symbolic_state
from kepcheck.model.actions.next import next_steps, transitions
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.state import PodState

from conftest import context

CASES = [("deferred-upsize-one-victim", "alpha-1.37"), ("nominated-pending-pod", "alpha-1.37"),
         ("competing-resizes", "kubelet-aligned"), ("resize-superseded", "dp-in-memory"),
         ("two-nodes", "allocated-only-assume"), ("downsize-in-progress", "dp-nominated-node-name"),
         ("later-competing-resize", "kubelet-fifo"), ("competing-resizes", "beta-1.38"),
         ("later-competing-resize", "alpha-1.37-stale"), ("resize-races-binding", "beta-1.38-stale")]
SAMPLE = 6


def _concretise(state, bindings):
    pods = []
    for pod in state.pods:
        values = {}
        for field in fields(PodState):
            value = getattr(pod, field.name)
            values[field.name] = (tuple(evaluate(v, bindings) for v in value) if isinstance(value, tuple)
                                  else None if value is None else evaluate(value, bindings))
        pods.append(values)
    return pods, tuple(evaluate(v, bindings) for v in state.retry_due), \
        tuple(evaluate(v, bindings) for v in state.env_used), evaluate(state.env_events, bindings)


def _plain_value(value):
    if isinstance(value, tuple):
        return tuple(int(x) for x in value)
    if value is None or isinstance(value, bool):
        return value
    return int(value)


def _plain(state):
    pods = [{f.name: _plain_value(getattr(p, f.name)) for f in fields(PodState)} for p in state.pods]
    return pods, tuple(state.retry_due), tuple(state.env_used), state.env_events


@pytest.mark.parametrize("scenario,variant", [case if i == 0 else pytest.param(*case, marks=pytest.mark.slow) for i, case in enumerate(CASES)], ids=[f"{s}/{v}" for s, v in CASES])
def test_symbolic_evaluation_agrees_with_concrete(scenario, variant):
    ctx = context(scenario, variant)
    exploration = explore(kep_system(ctx, []), keep_graph=True)
    states = exploration.graph.explored
    step = max(1, len(states) // SAMPLE)
    symbolic = symbolic_state(ctx, 0)
    symbolic_steps = list(transitions(ctx, symbolic))
    for concrete in states[::step][:SAMPLE]:
        assert_symbolic_agrees(ctx, symbolic, symbolic_steps, concrete)


def assert_symbolic_agrees(ctx, symbolic, symbolic_steps: list, concrete) -> None:
    """On ``concrete``, the symbolic guards, successors and always/sometimes properties (of
    ``symbolic_state(ctx, 0)`` and its ``transitions``), with the state substituted, are the concrete ones."""
    bindings = concrete_bindings(symbolic, concrete)
    expected = {action.label(): after for action, after in next_steps(ctx, concrete)}
    enabled = {action.label(): after for action, guard, after in symbolic_steps if evaluate(guard, bindings)}
    assert set(enabled) == set(expected)
    for label, after in enabled.items():
        assert _concretise(after, bindings) == _plain(expected[label]), label
    for spec in PROPERTIES:
        if spec.kind not in (ALWAYS, SOMETIMES):
            continue
        predicate = PREDICATES[spec.name]
        if spec.scope == "state":
            assert evaluate(predicate(ctx, symbolic), bindings) == predicate(ctx, concrete), spec.name
        else:
            for action, guard, after in symbolic_steps:
                if action.label() not in expected:
                    continue
                assert evaluate(predicate(ctx, symbolic, action, after), bindings) == \
                    predicate(ctx, concrete, action, expected[action.label()]), (spec.name, action.label())


def test_terms_built_through_the_c_api_mean_what_z3py_builds():
    """``model/expr/scalars.py`` builds comparisons, sums, And/Or/Not/If and equalities through Z3's C API;
    each term is equivalent to the one z3py's operators build."""
    import z3

    from kepcheck.model.expr.scalars import and_, int_variable, ite, not_, or_, z3_eq

    x, y, p = int_variable("x"), int_variable("y"), z3.Bool("p")
    zx, zy = z3.Int("x"), z3.Int("y")
    pairs = [(x == 3, zx == 3), (x != y, zx != zy), (x <= 2, zx <= 2), (3 < x, 3 < zx), (x >= y, zx >= zy),
             (x > 0, zx > 0), (x + 1 == y, zx + 1 == zy), (2 + x == y, 2 + zx == zy), (x - y == 1, zx - zy == 1),
             (5 - x == y, 5 - zx == zy), (and_(p, x < 1), z3.And(p, zx < 1)), (or_(p, x < 1), z3.Or(p, zx < 1)),
             (not_(p), z3.Not(p)), (ite(p, x, 4) == y, z3.If(p, zx, 4) == zy), (z3_eq(p, True), p == True),
             (z3_eq(x, 2), zx == 2), (ite(p, x, y) + 1 == 3, z3.If(p, zx, zy) + 1 == 3)]
    for fast, reference in pairs:
        solver = z3.Solver()
        solver.add(fast != reference)
        assert solver.check() == z3.unsat, (fast, reference)
    assert type(x + 1) is type(x) and type(ite(p, x, 4)) is type(x)  # sums and Ifs keep the fast path
