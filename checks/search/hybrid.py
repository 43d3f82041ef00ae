"""The explicit engine's search of the KEP model: interpreted for the first states, vector after.

A small state space is searched fastest by the interpreted search (``checks/search/breadth_first.py``): no model
to trace or compile. A large one by the vector core (``checks/vector/layers.py``). ``explore_kep`` starts
interpreted; past ``hand_over_at`` states it stops at the next layer boundary and the vector core
goes on from exactly there — the same visited states, ids, parent links, counts and open
properties — so the state space is explored once, in the same breadth-first order, whichever core
takes which layers. Every trace (found by either) is a trace of the model: the vector core's are
rebuilt by replaying its actions from the initial state.

The vector core evaluates the model compiled to C where the machine has a C compiler
(``checks/vector/compiled.py``), else with numpy (``checks/vector.NumpyExpander``). It judges always- and
sometimes-properties, with or without symmetry reduction (the compiled evaluator canonicalises
packed states as ``model/symmetry.py`` does), and keeps the explored graph as arrays with the
observations the eventually-properties need (``keep_graph``, ``checks/vector/graph.StateGraph``), so
the liveness checker judges either core's graph. Only a step hook keeps the search interpreted
throughout (it is called with the model's ``State`` values).
"""

from __future__ import annotations

import time
from functools import partial
from typing import Callable, NamedTuple
import numpy

from kepcheck.spec.kep.properties import ALWAYS, PropertySpec, property_by_name

from kepcheck.checks.result import EngineError, Trace, replay
from kepcheck.checks.search.breadth_first import Exploration, Search, concretise, kep_system
from kepcheck.checks.vector.compiled import CompiledExpander
from kepcheck.checks.vector.intervals import reachable_leaves
from kepcheck.checks.vector.layers import Layers, NumpyExpander, VectorExploration
from kepcheck.checks.vector.layout import Layout
from kepcheck.checks.vector.native import available
from kepcheck.checks.vector.traced_system import TracedSystem, trace_kep
from kepcheck.model.actions.next import find_step
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.model.memo import caching
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.schema import flatten

__all__ = ["HAND_OVER_AT", "Prepared", "choose_expander", "explore_kep", "prepare"]

HAND_OVER_AT = 20_000  # states: past this the vector core takes over (tracing and compiling then pay off)


def choose_expander(system: TracedSystem, layout: Layout, workers: int = 1, timeout: float | None = None):
    """The compiled evaluator (on ``workers`` cores) where the machine has a C compiler, else numpy's;
    ``TimeoutError`` if compiling needs more than ``timeout`` seconds."""
    return CompiledExpander(system, layout, workers, timeout) if available() else NumpyExpander(system, layout)


class Prepared(NamedTuple):
    """The vector core's model of one context: traced, laid out, and its evaluator (compiled)."""

    traced: TracedSystem
    expander: object


def prepare(ctx: Context, properties: list[PropertySpec], symmetry: bool = False, workers: int = 1,
            timeout: float | None = None) -> Prepared:
    """Trace the model of ``ctx`` with the always- and sometimes-properties of ``properties`` and
    build its evaluator; ``TimeoutError`` if that takes more than ``timeout`` seconds (tracing is
    not interrupted, compiling is)."""
    started = time.perf_counter()
    traced = trace_kep(ctx, properties, symmetry=symmetry)
    layout = Layout(reachable_leaves(traced))
    left = None if timeout is None else timeout - (time.perf_counter() - started)
    return Prepared(traced, choose_expander(traced, layout, workers, left))


def explore_kep(ctx: Context, properties: list[PropertySpec], *, max_states: int | None = None,
                timeout: float | None = None, progress=None, symmetry: Callable | None = None,
                hand_over_at: int | None = HAND_OVER_AT, workers: int = 1, prepared: Prepared | None = None,
                keep_graph: bool = False, step_hook: Callable | None = None) -> Exploration:
    """Explore the model of ``ctx`` judging the always- and sometimes-properties of ``properties``;
    ``symmetry``: the representative function of ``model/symmetry.py`` (the vector core then needs the
    compiled evaluator, which canonicalises packed states; with numpy alone the search stays
    interpreted); ``prepared``: the vector core's model, when already built (``prepare``);
    ``keep_graph``: keep the explored graph (``checks/vector/graph.StateGraph``) for the
    eventually-properties among ``properties``, whose predicates both cores then evaluate;
    ``step_hook(before, action, after)``: called on every transition (``hand_over_at`` None: the
    interpreted search throughout)."""
    system = kep_system(ctx, properties)
    if symmetry is not None and not available():
        hand_over_at = None
    with system.session():
        search = Search(system, max_states, timeout, keep_graph, symmetry, step_hook, progress)
        exploration = search.run(hand_over_at=hand_over_at)
    if not search.handed_over:
        return exploration
    remaining = None if timeout is None else max(0.001, timeout - exploration.seconds)
    if prepared is None:
        preparing = time.perf_counter()
        try:
            prepared = prepare(ctx, properties, symmetry is not None, workers, remaining)
        except TimeoutError:  # the budget ran out while compiling: what the interpreted search found stands
            exploration.complete, exploration.budget = False, f"time budget of {timeout:g} s reached"
            exploration.seconds += time.perf_counter() - preparing
            return exploration
    open_names = {p.name for p in properties} - set(exploration.found)
    return _go_on(ctx, prepared, open_names, search, exploration, max_states, remaining, progress, symmetry)


def _go_on(ctx, prepared: Prepared, open_names: set, search: Search, exploration: Exploration, max_states, timeout,
           progress, symmetry) -> Exploration:
    traced, layout = prepared.traced, prepared.expander.layout
    layers = Layers(traced, prepared.expander, max_states, timeout, progress, keep_graph=search.graph is not None)
    layers.open_states &= open_names
    layers.open_steps &= open_names
    packed = layout.pack(list(numpy.array([flatten(state) for state in search.states], dtype=numpy.int64).T))
    layers.visited.insert(packed)
    instance_of = {instance.action: k for k, instance in enumerate(traced.instances)}
    if search.graph is not None:
        _hand_over_graph(layers, search, packed, instance_of)
    layers.result.parents.append(numpy.array([parent for parent, _ in search.parents], dtype=numpy.int32))
    layers.result.instances.append(numpy.array([-1 if action is None else instance_of[action]
                                                for _, action in search.parents], dtype=layers.instance_type))
    frontier_ids = numpy.array(search.queue, dtype=numpy.int64)
    result = layers.result
    result.transitions, result.deadlocks = exploration.transitions, exploration.deadlocks
    result.action_counts, result.depth = dict(exploration.action_counts), search.depths[search.queue[0]]
    vector = layers.run(packed[frontier_ids], frontier_ids)
    found = dict(exploration.found)
    found.update({name: _trace(ctx, traced, vector, where, name, symmetry) for name, where in vector.found.items()})
    return Exploration(states=vector.states, transitions=vector.transitions, depth=vector.depth,
                       seconds=exploration.seconds + vector.seconds, complete=vector.complete, budget=vector.budget,
                       found=found, action_counts=vector.action_counts, deadlocks=vector.deadlocks, graph=vector.graph)


def _hand_over_graph(layers: Layers, search: Search, packed, instance_of: dict) -> None:
    """The edges the interpreted search took, as the vector core keeps them: its actions as the traced
    instances, and the step observations of its transitions from the expander (the same transitions,
    in the same order, as the states it expanded yield them)."""
    record = search.graph
    kinds = numpy.array([instance_of[action] for action in record.actions], dtype=layers.instance_type)
    expanded = len(record.degrees)
    expansion = layers.expander.expand(packed[:expanded], set())
    degrees = numpy.frombuffer(record.degrees, dtype=numpy.int64)
    if len(expansion.parents) != len(record.targets) or not numpy.array_equal(
            numpy.bincount(expansion.parents, minlength=expanded), degrees):
        raise EngineError("hand-over: the vector core's transitions differ from the interpreted search's")
    record_kinds = numpy.frombuffer(record.kinds, dtype=numpy.int32)
    layers.graph.add(numpy.frombuffer(record.targets, dtype=numpy.int32), kinds[record_kinds] if len(kinds) else
                     record_kinds.astype(layers.instance_type), degrees, expansion.observed)
    depths = search.depths
    layers.layer_starts = [0] + [i for i in range(1, len(depths)) if depths[i] != depths[i - 1]]


def _trace(ctx: Context, traced: TracedSystem, vector: VectorExploration, found: tuple, name: str,
           symmetry: Callable | None) -> Trace:
    """The trace of a vector finding: the actions along the parent links, replayed; under symmetry the
    actions were taken from representatives, and the path of representatives is re-executed
    concretely (``checks.search.breadth_first.concretise``)."""
    actions = [traced.instances[k].action for k in vector.path(found[1])]
    if found[0] == "step":
        actions.append(traced.instances[found[2]].action)
    if symmetry is None:
        return replay(ctx, actions)
    with caching(ctx):
        state = symmetry(initial_state(ctx))
        path = [(None, state)]
        for number, taken in enumerate(actions, start=1):
            action, after = find_step(ctx, state, taken)
            state = after if number == len(actions) and found[0] == "step" else symmetry(after)
            path.append((action, state))
        predicate = partial(PREDICATES[name], ctx)
        check = (property_by_name(name).kind == ALWAYS,
                 predicate if found[0] == "step" else (lambda before, action, after: predicate(after)))
        return Trace(tuple(concretise(kep_system(ctx, []), symmetry, path, check)))
