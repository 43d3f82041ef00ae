"""Breadth-first search over every reachable state of a transition system (the explicit engine's core).

Breadth-first order makes every counterexample and witness a shortest one. The ``always`` and
``sometimes`` properties given are judged in one search: state properties on every state, step
properties on every transition. The first violation (or witness) of each property is kept (its
trace is rebuilt from parent links); the search goes on until every state is explored or the
budget (states or seconds) runs out, which the ``Exploration`` records. Optionally the reachable
graph is kept, as arrays (``checks/vector/graph.StateGraph``: an int per edge for its target and
one for its action), for the liveness checker, which reads the eventually-properties' predicates
on the search's states through it. The verdicts are the engines' business (``checks/engines/explicit.py``,
``checks/engines/liveness.py``).

With symmetry reduction (``model/symmetry.py``) the search stores one representative per class
of states; a trace found there is a path of representatives, which is turned into a trace of
the model by re-execution: from the concrete initial state, each step takes the first enabled
action whose successor has the next representative as its own (it exists because the model is
symmetric under the reduction), and the last step one that breaks (or witnesses) the property.
No second search.

The model's caches (``model/memo.py``) live for one search: ``kep_system`` gives the search a
``caching`` session for its context.
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from contextlib import nullcontext
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable

import numpy

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, SOMETIMES, PropertySpec

from kepcheck.checks.result import EngineError, Progress, Trace
from kepcheck.checks.vector.graph import StateGraph
from kepcheck.model.actions.next import next_steps
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.model.memo import caching
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.properties.eventually import liveness_observers

__all__ = ["Exploration", "TransitionSystem", "kep_system", "explore", "Search", "concretise"]


@dataclass
class Exploration:
    """What one breadth-first search found."""

    states: int = 0
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    complete: bool = True
    budget: str = ""  # which budget ended the search
    found: dict = field(default_factory=dict)  # property name -> Trace (violation or witness)
    graph: object = None  # checks/vector/graph.StateGraph when requested
    action_counts: dict = field(default_factory=dict)
    deadlocks: int = 0


@dataclass
class TransitionSystem:
    """What the engine needs of a model: initial states, successors and the properties to judge.

    ``successors(state)`` yields ``(action, next_state)``; an action has ``.name`` and ``.label()``.
    State properties are ``(name, kind, predicate(state))``, step properties
    ``(name, kind, predicate(before, action, after))``. ``observers``: what the eventually-properties
    read, ``(state observers, step observers)`` as ``model.properties.eventually.liveness_observers`` gives
    them. ``session()`` is entered for the whole search (the model's caches).
    """

    initial: Callable[[], list]
    successors: Callable
    state_properties: list = field(default_factory=list)
    step_properties: list = field(default_factory=list)
    session: Callable = nullcontext
    observers: tuple = ((), ())


def kep_system(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES) -> TransitionSystem:
    """The KEP-5836 model of one scenario and variant as a transition system."""
    properties = list(properties)
    return TransitionSystem(
        initial=lambda: [initial_state(ctx)],
        successors=lambda state: next_steps(ctx, state),
        state_properties=[(p.name, p.kind, partial(PREDICATES[p.name], ctx)) for p in properties
                          if p.kind in (ALWAYS, SOMETIMES) and p.scope == "state"],
        step_properties=[(p.name, p.kind, partial(PREDICATES[p.name], ctx)) for p in properties
                         if p.kind in (ALWAYS, SOMETIMES) and p.scope == "step"],
        session=lambda: caching(ctx),
        observers=liveness_observers(ctx, properties),
    )


class _GraphRecord:
    """The graph as the interpreted search takes it: per edge its target and its action's index,
    per expanded state its number of edges (the states are expanded in id order)."""

    def __init__(self):
        self.targets, self.kinds, self.degrees = array("i"), array("i"), array("q")
        self.kind_of: dict = {}  # Action -> its index in ``actions``
        self.actions: list = []

    def edge(self, target: int, action) -> None:
        kind = self.kind_of.get(action)
        if kind is None:
            kind = self.kind_of[action] = len(self.actions)
            self.actions.append(action)
        self.targets.append(target)
        self.kinds.append(kind)

    def state_graph(self, system: TransitionSystem, states: list, depths: list) -> StateGraph:
        """The ``StateGraph`` of a complete search, its predicates evaluated on ``states``."""
        offsets = numpy.zeros(len(states) + 1, dtype=numpy.int64)
        numpy.cumsum(numpy.frombuffer(self.degrees, dtype=numpy.int64), out=offsets[1:])
        state_observers, step_observers = (dict(observers) for observers in system.observers)
        layer_starts = [0] + [i for i in range(1, len(depths)) if depths[i] != depths[i - 1]]
        graph = StateGraph(offsets, numpy.frombuffer(self.targets, dtype=numpy.int32),
                           numpy.frombuffer(self.kinds, dtype=numpy.int32), self.actions, layer_starts, None, None,
                           states)

        def state_values(key, where):
            predicate, values = state_observers[key], numpy.zeros(len(states), dtype=bool)
            chosen = numpy.flatnonzero(where)
            values[chosen] = [bool(predicate(states[n])) for n in chosen.tolist()]
            return values

        def step_values(key, edges):
            predicate, sources = step_observers[key], graph.source_of(edges).tolist()
            return numpy.array([bool(predicate(states[source], states[graph.targets[e]]))
                                for source, e in zip(sources, edges.tolist())], dtype=bool)

        graph.state_values, graph.step_values = state_values, step_values
        return graph


def _decides(always: bool, value) -> bool:
    """An always-property is decided by a false value (violated), a sometimes-property by a true one."""
    return (not value) if always else bool(value)


class Search:
    """One breadth-first search (``explore``; ``checks/search/hybrid.py`` drives one directly to hand it over)."""

    def __init__(self, system: TransitionSystem, max_states, timeout, keep_graph, symmetry, step_hook, progress):
        self.system, self.canonical = system, symmetry
        self.max_states, self.timeout = max_states, timeout
        self.step_hook, self.progress = step_hook, progress
        self.result = Exploration()
        self.index: dict = {}
        self.states: list = []
        self.parents: list = []  # per state id: (parent id, action) or (-1, None)
        self.actions: dict = {}  # every distinct action once: the parent links share them
        self.depths: list = []
        self.queue: deque = deque()
        # the properties not decided yet: (name, always?, predicate); a decided one is dropped
        self.open_state = [(name, kind == ALWAYS, predicate) for name, kind, predicate in system.state_properties]
        self.open_step = [(name, kind == ALWAYS, predicate) for name, kind, predicate in system.step_properties]
        self.expanded_depth, self.handed_over = -1, False
        self.graph = _GraphRecord() if keep_graph else None

    def run(self, hand_over_at: int | None = None) -> Exploration:
        """Search; with ``hand_over_at``, stop at the first layer boundary past that many states, the
        next layer's states in ``queue`` (``handed_over`` says so): the vector core goes on from there."""
        started = self.started = time.perf_counter()
        deadline = started + self.timeout if self.timeout else None
        for init in self.system.initial():
            self._add(self.canonical(init) if self.canonical else init, -1, None)
        while self.queue:
            if self._budget_hit(deadline):
                break
            if hand_over_at is not None and len(self.states) >= hand_over_at \
                    and self.depths[self.queue[0]] > self.expanded_depth:
                self.handed_over = True
                break
            self._expand(self.queue.popleft())
        result = self.result
        result.states, result.seconds = len(self.states), time.perf_counter() - started
        result.depth = max(self.depths) if self.depths else 0
        if self.graph is not None and result.complete and not self.handed_over:
            result.graph = self.graph.state_graph(self.system, self.states, self.depths)
        return result

    def _budget_hit(self, deadline) -> bool:
        if self.max_states is not None and len(self.states) >= self.max_states:
            self.result.complete, self.result.budget = False, f"state budget of {self.max_states} reached"
        elif deadline is not None and time.perf_counter() > deadline:
            self.result.complete, self.result.budget = False, f"time budget of {self.timeout:g} s reached"
        return not self.result.complete

    def _add(self, state, parent: int, action) -> int | None:
        """The id of ``state`` (a new one, queued and judged, if it was not seen); None when the
        state budget forbids a new state."""
        known = self.index.get(state)
        if known is not None:
            return known
        if self.max_states is not None and len(self.states) >= self.max_states:
            self.result.complete, self.result.budget = False, f"state budget of {self.max_states} reached"
            self.queue.clear()
            return None
        state_id = len(self.states)
        self.index[state] = state_id
        self.states.append(state)
        self.parents.append((parent, self.actions.setdefault(action, action)))
        self.depths.append(self.depths[parent] + 1 if parent >= 0 else 0)
        self.queue.append(state_id)
        self._judge_state(state_id)
        if self.progress is not None and state_id and state_id % 4_096 == 0:  # as often as the vector core's slices
            self.progress(Progress(len(self.states), self.result.transitions, self.depths[state_id], len(self.queue),
                                   time.perf_counter() - self.started))
        return state_id

    def _expand(self, current: int) -> None:
        self.expanded_depth = self.depths[current]
        before = self.states[current]
        enabled = 0
        for action, after in self.system.successors(before):
            enabled += 1
            self.result.transitions += 1
            self.result.action_counts[action.name] = self.result.action_counts.get(action.name, 0) + 1
            if self.step_hook is not None:
                self.step_hook(before, action, after)
            self._judge_step(current, action, after)
            target = self._add(self.canonical(after) if self.canonical else after, current, action)
            if target is None:
                return
            if self.graph is not None:
                self.graph.edge(target, action)
        if self.graph is not None:
            self.graph.degrees.append(enabled)
        if enabled == 0:
            self.result.deadlocks += 1

    def _judge_state(self, state_id: int) -> None:
        state = self.states[state_id]
        for name, always, predicate in self.open_state:
            if _decides(always, predicate(state)):
                self.result.found[name] = self._trace(state_id, check=(always, lambda b, a, s, p=predicate: p(s)))
        self.open_state = [p for p in self.open_state if p[0] not in self.result.found]

    def _judge_step(self, current: int, action, after) -> None:
        before = self.states[current]
        for name, always, predicate in self.open_step:
            if _decides(always, predicate(before, action, after)):
                self.result.found[name] = self._trace(current, (action, after), (always, predicate))
        self.open_step = [p for p in self.open_step if p[0] not in self.result.found]

    def _path(self, index: int) -> list:
        steps = []
        while index >= 0:
            parent, action = self.parents[index]
            steps.append((action, self.states[index]))
            index = parent
        return steps[::-1]

    def _trace(self, index: int, last: tuple | None = None, check: tuple | None = None) -> Trace:
        """The trace to state ``index`` (then ``last``, a step from it). Under symmetry the path of
        representatives is re-executed concretely; ``check`` = (always?, predicate(before,
        action, after)) picks a last step that decides the property."""
        path = self._path(index) + ([last] if last is not None else [])
        if self.canonical is None:
            return Trace(tuple(path))
        return Trace(tuple(self._concretise(path, check)))

    def _concretise(self, path: list, check: tuple) -> list:
        return concretise(self.system, self.canonical, path, check)


def concretise(system: TransitionSystem, canonical: Callable, path: list, check: tuple) -> list:
    """A path of representatives ``[(action, state), ...]`` as a path of the model: from the concrete
    initial state, steps whose successors have the path's representatives as their own, the last
    one also deciding the property (``check`` = (always?, predicate(before, action, after))).

    Depth first with backtracking over every matching successor: the reduced search breaks the age
    tie between interchangeable pods by the canonical order (``model/symmetry.py``), so the first
    matching concrete successor may lead where the next representative cannot follow while another
    one (the same pods in the other roles) can. ``EngineError`` when no concrete path follows."""
    always, predicate = check
    targets = [canonical(representative) for _, representative in path]
    last = len(path) - 1
    seen: set = set()

    def follow(number: int, state) -> list | None:
        if number == last:
            return []
        if (number, state) in seen:
            return None
        seen.add((number, state))
        for action, after in system.successors(state):
            if canonical(after) != targets[number + 1]:
                continue
            if number + 1 == last and not _decides(always, predicate(state, action, after)):
                continue
            rest = follow(number + 1, after)
            if rest is not None:
                return [(action, after)] + rest
        return None

    initial = system.initial()[0]
    steps = follow(0, initial)
    if steps is None:
        raise EngineError("symmetry: no concrete run of the model follows the representatives' path "
                          f"({last} steps)")
    return [(None, initial)] + steps


def explore(system: TransitionSystem, *, max_states: int | None = None, timeout: float | None = None,
            keep_graph: bool = False, symmetry: Callable | None = None, step_hook: Callable | None = None,
            progress: Callable | None = None) -> Exploration:
    """Explore every state reachable from the system's initial states, breadth first.

    ``symmetry`` maps a state to its canonical representative (``model/symmetry.py``): the search
    stores representatives; step properties are judged on each transition as taken, state
    properties on the representatives (symmetry preserves them).
    ``step_hook(before, action, after)`` is called on every transition (the step-conformance check
    of the tests, the lifecycle record of the review).
    ``progress(Progress)`` is called every 50,000 new states.
    """
    with system.session():
        return Search(system, max_states, timeout, keep_graph, symmetry, step_hook, progress).run()
