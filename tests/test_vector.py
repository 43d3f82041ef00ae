"""The vector core (``checks/vector/layers.py``, ``checks/search/hybrid.py``): the one model traced and evaluated over
whole frontiers, by numpy or compiled to C, over packed states.

* The three interpretations of the model agree: on every reachable state of the default matrix the
  traced graph evaluated with numpy gives the concrete model's guards, successors and property
  values, and on a sample of those states Z3's evaluation does too.
* The vector core's searches are the interpreted search's: the same states, transitions, depth,
  deadlocks, action counts, findings and traces — with numpy on every context of the matrix, with
  the compiled evaluator with symmetry reduction on and off, and when the search hands over midway.
* The SPIN toy has the reference counts; results do not depend on the number of workers; budgets
  are exact; a value outside its packed domain stops the search naming the field.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy
import pytest

from kepcheck.checks.vector.compiled import CompiledExpander
from kepcheck.checks.vector.dag import evaluate, needed, value_of
from kepcheck.checks.vector.intervals import reachable_leaves
from kepcheck.checks.engine import Budget, EngineOptions
from kepcheck.checks.search.hybrid import Prepared, explore_kep
from kepcheck.checks.vector.layout import Layout
from kepcheck.checks.vector.native import available
from kepcheck.checks.run import run_checks
from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.checks.symbolic.states import symbolic_state
from kepcheck.checks.vector.traced_system import trace_kep
from kepcheck.checks.vector.layers import NumpyExpander, explore_vector
from kepcheck.model.actions.next import transitions
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.schema import flatten
from kepcheck.model.symmetry import make_representative, symmetry_classes
from kepcheck.spec.kep.properties import EVENTUALLY, PROPERTIES
from kepcheck.spec.kep.variants import VARIANTS

from conftest import SCENARIOS, context, cross_checked
from test_symbolic_agreement import assert_symbolic_agrees

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from toy_resize import toy_system, toy_traced  # noqa: E402

SAFETY = [p for p in PROPERTIES if p.kind != EVENTUALLY]
needs_cc = pytest.mark.skipif(available() is None, reason="no C compiler: the vector core runs on numpy alone")


def _numpy_prepared(ctx) -> Prepared:
    traced = trace_kep(ctx, SAFETY)
    return Prepared(traced, NumpyExpander(traced, Layout(reachable_leaves(traced))))


def _summary(exploration) -> dict:
    """Everything a search reports, traces as their action labels."""
    return {"states": exploration.states, "transitions": exploration.transitions, "depth": exploration.depth,
            "deadlocks": exploration.deadlocks, "complete": exploration.complete,
            "actions": dict(sorted(exploration.action_counts.items())),
            "found": {name: trace.labels for name, trace in sorted(exploration.found.items())}}


_PINNED = json.loads((Path(__file__).parent / "state_counts.json").read_text())
STALE_STATES_CHECKED = 3000  # the stale variants on the scenarios up to this many states (all but the largest two)


def variants_of(scenario: str) -> list:
    """The synchronous variants the engines' cross-checks run the scenario under
    (``conftest.cross_checked``); the stale ones where their state space is small enough to evaluate
    in full three ways within the test budget (all but the largest scenarios)."""
    return [v for v in VARIANTS if (v.scheduler_view == "synchronous" and cross_checked(scenario, v.name))
            or (v.scheduler_view != "synchronous" and _PINNED[f"{scenario}/{v.name}"][0] <= STALE_STATES_CHECKED)]


@pytest.mark.parametrize("scenario", [value if i == 0 else pytest.param(value, marks=pytest.mark.slow) for i, value in enumerate(SCENARIOS)])
def test_three_interpretations_agree(scenario):
    """For every variant: on every reachable state the numpy evaluation of the traced graph is the
    concrete model (enabled instances, every field of every successor, every always/sometimes
    property on states and steps); every reachable value fits the packed layout exactly; and on
    three states Z3's evaluation of the same functions is the concrete model too."""
    for variant in variants_of(scenario):
        ctx = context(scenario, variant.name)
        graph = explore(kep_system(ctx, []), keep_graph=True).graph
        states = graph.explored
        traced = trace_kep(ctx, SAFETY)
        layout = Layout(reachable_leaves(traced))
        flat = numpy.array([flatten(state) for state in states], dtype=numpy.int64)
        columns = layout.unpack(layout.pack(list(flat.T)))  # raises if a reachable value is outside its domain
        assert numpy.array_equal(numpy.array(columns, dtype=numpy.int64).T, flat)
        roots = [i.guard for i in traced.instances] + [v for i in traced.instances for v in i.successor]
        roots += [v for p in traced.state_properties + traced.step_properties for v in p.values]
        values = evaluate(needed(roots), {leaf.name: column for leaf, column in zip(traced.leaves, columns)})
        n = len(states)
        expected = [{} for _ in states]  # per state, the concrete successor of every enabled action (next_steps)
        for source, target, action in graph.edge_triples():
            expected[source][action.label()] = states[target]
        enabled = numpy.zeros(n, dtype=numpy.int64)
        for k, instance in enumerate(traced.instances):
            label = instance.action.label()
            rows = numpy.flatnonzero(value_of(instance.guard, values, n))
            assert all(label in expected[row] for row in rows), (variant.name, label)
            enabled[rows] += 1
            successors = numpy.array([value_of(v, values, n)[rows] for v in instance.successor]).T
            for row, successor in zip(rows, successors):
                after = expected[row][label]
                assert successor.tolist() == [int(x) for x in flatten(after)], (variant.name, label)
                for p in traced.step_properties:
                    assert bool(value_of(p.values[k], values, n)[row]) == \
                        PREDICATES[p.name](ctx, states[row], instance.action, after), (variant.name, p.name, label)
        assert enabled.tolist() == [len(e) for e in expected], variant.name
        for p in traced.state_properties:
            assert value_of(p.values[0], values, n).tolist() == [PREDICATES[p.name](ctx, s) for s in states], p.name
        symbolic = symbolic_state(ctx, 0)
        symbolic_steps = list(transitions(ctx, symbolic))
        for concrete in (states[0], states[n // 2], states[-1]):
            assert_symbolic_agrees(ctx, symbolic, symbolic_steps, concrete)


@pytest.mark.parametrize("scenario", [value if i == 0 else pytest.param(value, marks=pytest.mark.slow) for i, value in enumerate(SCENARIOS)])
def test_numpy_vector_core_searches_as_the_interpreted_one(scenario):
    """Every variant from the initial state on; ``alpha-1.37`` also handing over after the first layers."""
    for variant in variants_of(scenario):
        ctx = context(scenario, variant.name)
        reference = _summary(explore(kep_system(ctx, SAFETY)))
        prepared = _numpy_prepared(ctx)
        for hand_over_at in (0, 5) if variant.name == "alpha-1.37" else (0,):
            vector = explore_kep(ctx, SAFETY, hand_over_at=hand_over_at, prepared=prepared)
            assert _summary(vector) == reference, (variant.name, hand_over_at)


@needs_cc
@pytest.mark.parametrize("scenario", [value if i == 0 else pytest.param(value, marks=pytest.mark.slow) for i, value in enumerate(SCENARIOS)])
def test_compiled_vector_core_searches_as_the_interpreted_one(scenario):
    """``alpha-1.37`` without symmetry; with symmetry every variant of ``variants_of`` where the
    scenario has interchangeable pods (the compiled evaluator canonicalises packed states)."""
    ctx = context(scenario, "alpha-1.37")
    assert _summary(explore_kep(ctx, SAFETY, hand_over_at=0)) == _summary(explore(kep_system(ctx, SAFETY)))
    for variant in variants_of(scenario):
        ctx = context(scenario, variant.name)
        if not symmetry_classes(ctx):
            continue
        representative = make_representative(ctx)
        reference = _summary(explore(kep_system(ctx, SAFETY), symmetry=representative))
        for hand_over_at in (0, 5):
            vector = explore_kep(ctx, SAFETY, symmetry=representative, hand_over_at=hand_over_at)
            assert _summary(vector) == reference, (variant.name, hand_over_at)


@pytest.mark.slow
def test_explicit_engine_on_the_vector_core_gives_the_same_results():
    """The explicit engine with ``core="vector"`` (and two workers): every record, verdict and trace
    as with the interpreted core, and each as the manifest expects."""
    scenarios = [SCENARIOS["two-nodes"], SCENARIOS["additional-preemption"]]
    variants = [v for v in VARIANTS if v.name in ("alpha-1.37", "kubelet-aligned")]

    def records(options):
        return [(run.ctx.scenario.name, run.ctx.variant.name, r.property, r.verdict, r.expected,
                 r.trace.labels if r.trace else None)
                for run in run_checks(scenarios, variants, SAFETY, options=options) for r in run.results]

    interpreted = records(EngineOptions(core="interpreted", symmetry=True))
    assert records(EngineOptions(core="vector", workers=2, symmetry=True)) == interpreted
    assert all(r[3] == r[4] for r in interpreted)


def _toy_expander(system, workers=1, numpy_only=False):
    layout = Layout(reachable_leaves(system))
    return NumpyExpander(system, layout) if numpy_only else CompiledExpander(system, layout, workers)


def test_toy_vector_core_searches_as_the_interpreted_one():
    reference = explore(toy_system(3))
    for numpy_only in (True, False) if available() else (True,):
        vector = explore_vector(toy_traced(3), _toy_expander(toy_traced(3), numpy_only=numpy_only))
        assert (vector.states, vector.transitions, vector.depth, vector.deadlocks) == \
            (reference.states, reference.transitions, reference.depth, reference.deadlocks)
        assert not vector.found and not reference.found


@needs_cc
def test_toy_has_the_reference_counts_and_workers_do_not_change_the_result():
    """NP = 5: SPIN's counts (1,037,149 states, 13,720,870 transitions, less SPIN's own pre-initial
    state); one worker and two give the same states in the same order with the same parent links."""
    system = toy_traced(5)
    one = explore_vector(system, _toy_expander(system, 1))
    two = explore_vector(system, _toy_expander(system, 2))
    assert (one.states, one.transitions) == (1_037_149, 13_720_870)
    assert (two.states, two.transitions, two.depth, two.deadlocks) == (one.states, one.transitions, one.depth,
                                                                       one.deadlocks)
    for a, b in ((one.parents, two.parents), (one.instances, two.instances)):
        assert numpy.array_equal(numpy.concatenate(a), numpy.concatenate(b))


def test_budgets_are_exact_and_reported():
    system = toy_traced(4)
    for numpy_only in (True, False) if available() else (True,):
        capped = explore_vector(system, _toy_expander(system, numpy_only=numpy_only), max_states=1000)
        assert (capped.states, capped.complete, capped.budget) == (1000, False, "state budget of 1000 reached")
        timed = explore_vector(system, _toy_expander(system, numpy_only=numpy_only), timeout=1e-9)
        assert not timed.complete and timed.budget.startswith("time budget")
    ctx = context("two-nodes", "alpha-1.37")
    results = run_checks([ctx.scenario], [ctx.variant], SAFETY, budget=Budget(max_states=50),
                         options=EngineOptions(core="vector"))
    always = {p.name for p in SAFETY if p.kind == "always"}
    verdicts = {r.property: r.verdict for run in results for r in run.results if r.property in always}
    assert set(verdicts.values()) == {"inconclusive"}  # a budget reached never says "holds"


def test_a_value_outside_its_packed_domain_names_the_field():
    """Packing never wraps around: a successor outside its field's domain (here a domain narrowed
    by hand, as a wrong analysis would) stops the search with the field named."""
    from dataclasses import replace

    system = toy_traced(2)
    leaves = list(reachable_leaves(system))
    leaves[0] = replace(leaves[0], low=0, high=0)  # node.0: as if pod 0 could never be placed
    for expander in (NumpyExpander(system, Layout(tuple(leaves))),
                     *([CompiledExpander(system, Layout(tuple(leaves)))] if available() else [])):
        with pytest.raises(ValueError, match=r"node\.0: value outside its domain \[0, 0\]"):
            explore_vector(system, expander)


def test_without_a_c_compiler_the_vector_core_runs_on_numpy(monkeypatch):
    """Where ``cc`` is missing: without symmetry the vector core evaluates with numpy; with symmetry
    (canonicalisation needs the compiled evaluator) the search stays interpreted. Either way the
    results are the interpreted search's."""
    import kepcheck.checks.search.hybrid as hybrid

    monkeypatch.setattr(hybrid, "available", lambda: None)
    ctx = context("additional-preemption", "alpha-1.37")
    assert isinstance(hybrid.prepare(ctx, SAFETY).expander, NumpyExpander)
    assert _summary(explore_kep(ctx, SAFETY, hand_over_at=0)) == _summary(explore(kep_system(ctx, SAFETY)))
    representative = make_representative(ctx)
    assert _summary(explore_kep(ctx, SAFETY, symmetry=representative, hand_over_at=0)) == \
        _summary(explore(kep_system(ctx, SAFETY), symmetry=representative))
