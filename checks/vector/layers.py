"""The vector core of the explicit engine: breadth-first search one layer at a time, over packed states.

The model is traced once into a graph (``checks/vector/traced_system.py``); each layer of the search is
then a handful of array operations: unpack the frontier into columns, evaluate every action
instance's guard, successor and step properties over all of it (``NumpyExpander``, the vector
interpretation of ``checks/vector/dag.py``, or the compiled one of ``checks/vector/compiled.py``), pack the
successors (``checks/vector/layout.py``), drop those already seen (``checks/vector/visited.py``) and keep the
first occurrence of each new one. Transitions are taken in the order the interpreted search takes
them (by source state, then by action instance in ``NEXT`` order), so states get the same ids,
every count is the same, and the first violation or witness of a property is the same one: its
trace is rebuilt by replaying the actions along the parent links through the model.

Budgets are checked before every slice of a layer (``SLICE`` frontier states); a state budget keeps exactly the first
``max_states`` states, as the interpreted search does. ``progress(Progress)`` (``checks/result.py``) is
called after every slice.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Iterator
import numpy

from kepcheck.checks.result import EngineError, Progress
from kepcheck.checks.vector.dag import evaluate, needed, value_of
from kepcheck.checks.vector.graph import EdgeChunks
from kepcheck.checks.vector.layout import Layout
from kepcheck.checks.vector.traced_system import TracedSystem
from kepcheck.checks.vector.visited import NativeVisited, Visited

__all__ = ["MAX_STATES", "SLICE", "Expansion", "NumpyExpander", "VectorExploration", "explore_vector"]

MAX_STATES = 2**31 - 1  # state ids are 32-bit in the parent links
SLICE = 4096  # frontier states expanded at once: budgets are checked and progress shown between slices


@dataclass
class Expansion:
    """The transitions of one frontier, ordered by source row, then instance."""

    parents: numpy.ndarray  # source row in the frontier
    instances: numpy.ndarray  # action instance index
    packed: numpy.ndarray  # (transitions, words) successor states
    decides: dict  # step property name -> bool per transition (a violation, or a witness)
    observed: dict = field(default_factory=dict)  # step observation key -> bool per transition


class NumpyExpander:
    """Evaluates a traced system over a frontier with numpy (the vector interpretation)."""

    name = "numpy"

    def __init__(self, system: TracedSystem, layout: Layout):
        self.system, self.layout = system, layout
        self.names = [leaf.name for leaf in system.leaves]
        self._nodes = {}

    def _needed(self, properties: list, successors: bool = True) -> list:
        """The nodes to evaluate: with ``successors`` every guard and successor, and the properties'
        (or observations') values (computed once per set of open properties)."""
        key = (successors, tuple(getattr(p, "name", None) or p.key for p in properties))
        if key not in self._nodes:
            roots = [v for p in properties for v in p.values]
            if successors:
                roots += [i.guard for i in self.system.instances] + [v for i in self.system.instances for v in i.successor]
            self._nodes[key] = needed(roots)
        return self._nodes[key]

    def _columns(self, packed: numpy.ndarray) -> dict:
        return dict(zip(self.names, self.layout.unpack(packed)))

    def expand(self, frontier: numpy.ndarray, open_steps: set) -> Expansion:
        size = len(frontier)
        steps = [p for p in self.system.step_properties if p.name in open_steps]
        observations = self.system.step_observations
        values = evaluate(self._needed(steps + observations), self._columns(frontier))
        parents, instances, packed, decides = [], [], [], {p.name: [] for p in steps}
        observed = {o.key: [] for o in observations}
        for k, instance in enumerate(self.system.instances):
            rows = numpy.flatnonzero(value_of(instance.guard, values, size))
            if not len(rows):
                continue
            parents.append(rows)
            instances.append(numpy.full(len(rows), k, dtype=numpy.int32))
            packed.append(self.layout.pack([value_of(v, values, size)[rows] for v in instance.successor]))
            for p in steps:
                holds = value_of(p.values[k], values, size)[rows]
                decides[p.name].append(~holds if p.always else holds)
            for o in observations:
                observed[o.key].append(numpy.asarray(value_of(o.values[k], values, size)[rows], dtype=bool))
        if not parents:
            empty = numpy.zeros(0, dtype=numpy.int64)
            return Expansion(empty, empty.astype(numpy.int32), numpy.zeros((0, self.layout.words), numpy.uint64),
                             {name: numpy.zeros(0, dtype=bool) for name in decides},
                             {key: numpy.zeros(0, dtype=bool) for key in observed})
        parents = numpy.concatenate(parents)
        order = numpy.argsort(parents, kind="stable")  # by source, instance order kept within a source
        return Expansion(parents[order], numpy.concatenate(instances)[order], numpy.concatenate(packed)[order],
                         {name: numpy.concatenate(parts)[order] for name, parts in decides.items()},
                         {key: numpy.concatenate(parts)[order] for key, parts in observed.items()})

    def expand_slices(self, frontier: numpy.ndarray, size: int, open_steps: set) -> Iterator[Expansion]:
        """The expansions of consecutive slices of ``size`` states of ``frontier``, in order."""
        for start in range(0, len(frontier), size):
            yield self.expand(frontier[start:start + size], open_steps)

    def observe(self, packed: numpy.ndarray) -> numpy.ndarray:
        """The state observations of ``packed`` as bits (``CompiledExpander.observe``'s form)."""
        observations = self.system.state_observations
        bits = numpy.zeros((len(packed), max(1, -(-len(observations) // 64))), dtype=numpy.uint64)
        if not observations or not len(packed):
            return bits
        values = evaluate(self._needed(observations, successors=False), self._columns(packed))
        for j, o in enumerate(observations):
            column = numpy.asarray(value_of(o.values[0], values, len(packed)), dtype=bool)
            bits[:, j // 64] |= column.astype(numpy.uint64) << numpy.uint64(j % 64)
        return bits

    def judge(self, packed: numpy.ndarray, open_states: set) -> dict:
        """State property name -> bool per state (a violation, or a witness)."""
        properties = [p for p in self.system.state_properties if p.name in open_states]
        if not properties or not len(packed):
            return {p.name: numpy.zeros(len(packed), dtype=bool) for p in properties}
        values = evaluate(self._needed(properties, successors=False), self._columns(packed))
        result = {}
        for p in properties:
            holds = value_of(p.values[0], values, len(packed))
            result[p.name] = ~holds if p.always else holds
        return result


@dataclass
class VectorExploration:
    """What one vector search found; ``found`` maps a property to ``("state", id)`` or
    ``("step", source id, instance)``; ``parents``/``instances`` give every state's parent link."""

    states: int = 0
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    complete: bool = True
    budget: str = ""
    found: dict = field(default_factory=dict)
    action_counts: dict = field(default_factory=dict)
    deadlocks: int = 0
    parents: list = field(default_factory=list)  # per slice: parent id of each new state (int32)
    instances: list = field(default_factory=list)  # per slice: action instance of each new state (int16)
    words: int = 0
    graph: object = None  # checks/vector/graph.StateGraph of a complete search that kept it

    def path(self, state_id: int) -> list:
        """The action instances from the initial state to ``state_id``."""
        parents = numpy.concatenate(self.parents)
        instances = numpy.concatenate(self.instances)
        path = []
        while state_id > 0:
            path.append(int(instances[state_id]))
            state_id = int(parents[state_id])
        return path[::-1]


class Layers:
    """One vector search (``explore_vector``), from the initial state or from where an interpreted
    search stopped (``resume``)."""

    def __init__(self, system: TracedSystem, expander, max_states, timeout, progress, visited=None,
                 keep_graph: bool = False):
        self.system, self.expander, self.layout = system, expander, expander.layout
        self.max_states, self.progress = max_states, progress
        self.started = time.perf_counter()
        self.deadline = self.started + timeout if timeout else None
        self.timeout = timeout
        self.result = VectorExploration(words=self.layout.words)
        native = getattr(expander, "native", False)
        self.visited = visited if visited is not None else (NativeVisited if native else Visited)(self.layout.words)
        self.instance_type = numpy.int16 if len(system.instances) < 2**15 else numpy.int32  # parent links: 6 bytes
        self.open_states = {p.name for p in system.state_properties}
        self.open_steps = {p.name for p in system.step_properties}
        self.graph = EdgeChunks([o.key for o in system.step_observations]) if keep_graph else None
        self.layer_starts = [0]  # the first id of each breadth-first layer

    def start(self):
        """The initial state as the first frontier."""
        frontier = self.layout.pack([numpy.array([value]) for value in self.system.initial])
        self.visited.insert(frontier)
        return frontier, self._record(frontier, 0, numpy.array([-1]), numpy.array([-1], dtype=numpy.int32))

    def run(self, frontier, frontier_ids) -> VectorExploration:
        while len(frontier) and self.result.complete:
            if int(frontier_ids[0]) != self.layer_starts[-1]:
                self.layer_starts.append(int(frontier_ids[0]))
            parts = []
            slices = self.expander.expand_slices(frontier, SLICE, self.open_steps)
            for start, expansion in zip(range(0, len(frontier), SLICE), slices):
                if self.deadline is not None and time.perf_counter() > self.deadline:  # budgets per slice
                    self.result.complete, self.result.budget = False, f"time budget of {self.timeout:g} s reached"
                    break
                parts.append(self._slice(expansion, min(SLICE, len(frontier) - start), frontier_ids[start:start + SLICE]))
                if self.progress is not None:
                    waiting = max(0, len(frontier) - start - SLICE) + sum(len(ids) for _, ids in parts)
                    self.progress(Progress(len(self.visited), self.result.transitions, self.result.depth + 1, waiting,
                                           time.perf_counter() - self.started))
                if not self.result.complete:
                    break
            slices.close()
            if not parts:
                break
            frontier = numpy.concatenate([packed for packed, _ in parts])
            frontier_ids = numpy.concatenate([ids for _, ids in parts])
            if len(frontier):
                self.result.depth += 1
        self.result.states = len(self.visited)
        if self.graph is not None and self.result.complete:
            self.result.graph = self.graph.state_graph(self.system, self.visited, self.expander, self.layer_starts)
        self.result.seconds = time.perf_counter() - self.started
        return self.result

    def _slice(self, expansion: Expansion, size: int, frontier_ids):
        """Take in the expansion of part of a layer (``size`` states, in order): the new states and their ids."""
        result = self.result
        result.transitions += len(expansion.parents)
        result.deadlocks += int(numpy.count_nonzero(numpy.bincount(expansion.parents, minlength=size) == 0))
        for k, count in enumerate(numpy.bincount(expansion.instances, minlength=len(self.system.instances))):
            if count:
                name = self.system.instances[k].action.name
                result.action_counts[name] = result.action_counts.get(name, 0) + int(count)
        for name, decides in expansion.decides.items():
            hits = numpy.flatnonzero(decides)
            if len(hits) and name in self.open_steps:  # (a slice expanded ahead may decide a closed one)
                first = hits[0]
                result.found[name] = ("step", int(frontier_ids[expansion.parents[first]]), int(expansion.instances[first]))
                self.open_steps.discard(name)
        first_id = len(self.visited)
        if self.graph is None:
            marks = self.visited.insert(expansion.packed, self.max_states)
        else:
            marks, targets = self.visited.insert(expansion.packed, self.max_states, ids=True)
            self.graph.add(targets, numpy.asarray(expansion.instances, dtype=self.instance_type),
                           numpy.bincount(expansion.parents, minlength=size), expansion.observed)
        if (marks == 2).any():
            result.complete, result.budget = False, f"state budget of {self.max_states} reached"
        new = numpy.flatnonzero(marks == 1)  # in transition order
        packed = expansion.packed[new]
        ids = self._record(packed, first_id, frontier_ids[expansion.parents[new]], expansion.instances[new])
        return packed, ids

    def _record(self, packed, first_id: int, parent_ids, instances):
        """Record the new states (ids from ``first_id``) and judge the state properties on them; their ids."""
        if first_id + len(packed) > MAX_STATES:
            raise EngineError(f"the vector core numbers at most {MAX_STATES:,} states: give a state budget")
        self.result.parents.append(numpy.asarray(parent_ids, dtype=numpy.int32))
        self.result.instances.append(numpy.asarray(instances, dtype=self.instance_type))
        for name, decides in self.expander.judge(packed, self.open_states).items():
            hits = numpy.flatnonzero(decides)
            if len(hits):
                self.result.found[name] = ("state", first_id + int(hits[0]))
                self.open_states.discard(name)
        return numpy.arange(first_id, first_id + len(packed), dtype=numpy.int64)


def explore_vector(system: TracedSystem, expander, *, max_states: int | None = None, timeout: float | None = None,
                   progress: Callable | None = None, keep_graph: bool = False) -> VectorExploration:
    """Explore every state reachable from the system's initial state, one layer at a time; with
    ``keep_graph`` the explored graph as arrays for the liveness checker."""
    layers = Layers(system, expander, max_states, timeout, progress, keep_graph=keep_graph)
    return layers.run(*layers.start())
