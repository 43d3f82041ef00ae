"""The explored state graph as arrays: what the liveness checker judges, whichever core explored it.

A breadth-first search numbers states in the order it first meets them, so ids are breadth-first:
the states of depth ``d`` are the ids from ``layer_starts[d]`` up to the next layer's first id, and
a state's depth is read off its id. Both cores store the graph the same way (compressed sparse
rows): the edges leaving state ``s`` are ``offsets[s]`` up to ``offsets[s + 1]``, in the order the
model tries its action instances; edge ``e`` goes to state ``targets[e]`` by the action
``actions[kinds[e]]``. That is 4 bytes per edge for the target, 2 or 4 for the action, 8 per state
for the offset: no Python object per state or edge.

What the eventually-properties read of states and steps comes from the core that explored them
(``values``): the interpreted search evaluates the model's predicates on its ``State`` objects,
only on the states (or edges) asked for; the vector core evaluates them, compiled, on its packed
states. ``strongly_connected`` is scipy's (``scipy.sparse.csgraph``), on the whole graph or on the
subgraph of some states.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

__all__ = ["StateGraph", "Components", "strongly_connected"]


@dataclass
class StateGraph:
    """The reachable states and transitions of one exploration (see the module's docstring).

    ``state_values(key, nodes)``: a predicate of the liveness catalog (``key``: property, pod index,
    ``"premise"`` or ``"goal"``) on the states ``nodes`` (an id array; None for every state), as a
    bool array. ``step_values(key, edges)``: a step predicate (``key``: the property's name) on the
    edges ``edges`` (an index array). ``actions``: the ``Action`` of each action kind."""

    offsets: numpy.ndarray  # int64, states + 1
    targets: numpy.ndarray  # int32, one per edge
    kinds: numpy.ndarray  # int16 or int32, one per edge: an index into ``actions``
    actions: list
    layer_starts: list  # the first id of each breadth-first layer
    state_values: Callable
    step_values: Callable
    explored: list | None = None  # the interpreted search's State objects, by id (None from the vector core)
    _sources: numpy.ndarray | None = field(default=None, repr=False)

    @property
    def states(self) -> int:
        return len(self.offsets) - 1

    @property
    def edges(self) -> int:
        return len(self.targets)

    def sources(self) -> numpy.ndarray:
        """The source state of every edge (computed once)."""
        if self._sources is None:
            degrees = numpy.diff(self.offsets)
            self._sources = numpy.repeat(numpy.arange(self.states, dtype=numpy.int32), degrees)
        return self._sources

    def out_degrees(self) -> numpy.ndarray:
        return numpy.diff(self.offsets)

    def depth(self, node: int) -> int:
        return int(numpy.searchsorted(self.layer_starts, node, side="right")) - 1

    def out_edges(self, node: int) -> range:
        return range(int(self.offsets[node]), int(self.offsets[node + 1]))

    def edge_triples(self):
        """Every edge as ``(source, target, Action)``, in order."""
        actions = self.actions
        for source, target, kind in zip(self.sources().tolist(), self.targets.tolist(), self.kinds.tolist()):
            yield source, target, actions[kind]


@dataclass
class Components:
    """Strongly connected components of a set of states: ``label[s]`` is the component of state
    ``s`` (-1 outside the set); ``size[c]`` its number of states; ``lasting[c]``: a run can stay in
    it forever (more than one state, a self-loop, or a state with no successor in the whole graph)."""

    label: numpy.ndarray
    size: numpy.ndarray
    lasting: numpy.ndarray
    inside: numpy.ndarray  # the edges whose source and target are in the same component

    def members(self, component: int) -> numpy.ndarray:
        return numpy.flatnonzero(self.label == component)


def strongly_connected(graph: StateGraph, within: numpy.ndarray | None = None) -> Components:
    """The strongly connected components of the subgraph on the states where ``within`` is True
    (every state when None)."""
    sources, targets = graph.sources(), graph.targets
    n = graph.states
    if within is None:
        kept, nodes = slice(None), None
        matrix = csr_matrix((numpy.ones(graph.edges, dtype=numpy.int8), targets, graph.offsets), shape=(n, n))
    else:
        kept = within[sources] & within[targets]
        counts = numpy.bincount(sources[kept], minlength=n)
        offsets = numpy.zeros(n + 1, dtype=numpy.int64)
        numpy.cumsum(counts, out=offsets[1:])
        matrix = csr_matrix((numpy.ones(int(offsets[-1]), dtype=numpy.int8), targets[kept], offsets), shape=(n, n))
        nodes = within
    _, label = connected_components(matrix, directed=True, connection="strong")
    label = label.astype(numpy.int32)
    if nodes is not None:
        label[~nodes] = -1
    count = int(label.max()) + 1 if len(label) else 0
    size = numpy.bincount(label[label >= 0], minlength=count)
    inside = numpy.flatnonzero((label[sources] >= 0) & (label[sources] == label[targets]))
    lasting = size > 1
    loops = inside[sources[inside] == targets[inside]]
    lasting[label[sources[loops]]] = True
    ends = numpy.flatnonzero((graph.out_degrees() == 0) & (label >= 0))
    lasting[label[ends]] = True
    del kept
    return Components(label, size, lasting, inside)


def bit_column(bits: numpy.ndarray, j: int) -> numpy.ndarray:
    """Observation ``j`` of each row of an observation bit matrix (``CompiledExpander.observe``)."""
    return ((bits[:, j // 64] >> numpy.uint64(j % 64)) & numpy.uint64(1)).astype(bool)


class EdgeChunks:
    """The graph as the vector core explores it: per slice of a layer, the target and the action
    instance of every transition, the number of transitions of each source state, and the step
    observations of every transition (the sources are expanded in id order)."""

    def __init__(self, step_keys):
        self.targets, self.kinds, self.degrees, self.targets_per_chunk = [], [], [], []
        self.observed = {key: [] for key in step_keys}

    def add(self, targets, kinds, degrees, observed: dict) -> None:
        self.targets_per_chunk.append(len(targets))
        self.targets.append(numpy.asarray(targets, dtype=numpy.int32))
        self.kinds.append(kinds)
        self.degrees.append(numpy.asarray(degrees, dtype=numpy.int64))
        for key, flags in observed.items():
            self.observed[key].append(numpy.packbits(flags))  # a bit per transition while exploring

    def state_graph(self, system, visited, expander, layer_starts: list) -> StateGraph:
        """The ``StateGraph`` of a complete exploration: the chunks joined (and let go), its
        observations read from the packed states of ``visited`` through ``expander``."""
        targets = _joined(self.targets, numpy.int32)
        kinds = _joined(self.kinds, numpy.int16 if len(system.instances) < 2**15 else numpy.int32)
        degrees = _joined(self.degrees, numpy.int64)
        offsets = numpy.zeros(len(degrees) + 1, dtype=numpy.int64)
        numpy.cumsum(degrees, out=offsets[1:])
        del degrees
        flags = {key: _BitChunks(parts, self.targets_per_chunk) for key, parts in self.observed.items()}
        columns = {observation.key: j for j, observation in enumerate(system.state_observations)}
        cache: dict = {}

        def state_values(key, nodes):
            chosen = numpy.arange(len(offsets) - 1) if nodes is None else numpy.asarray(nodes)
            known = cache.get("nodes")
            if known is None or not _covers(known, chosen):
                cache["nodes"], cache["bits"] = chosen, _observed(visited, expander, chosen)
                known = chosen
            rows = numpy.searchsorted(known, chosen)
            return bit_column(cache["bits"][rows], columns[key])

        def step_values(key, edges):
            return flags[key].at(numpy.asarray(edges, dtype=numpy.int64))

        return StateGraph(offsets, targets, kinds, [instance.action for instance in system.instances],
                          list(layer_starts), state_values, step_values)


def _joined(parts: list, dtype) -> numpy.ndarray:
    joined = numpy.concatenate(parts).astype(dtype, copy=False) if parts else numpy.zeros(0, dtype=dtype)
    parts.clear()
    return joined


class _BitChunks:
    """A bit per transition, kept as the chunks it was explored in (each bit-packed on its own)."""

    def __init__(self, parts: list, lengths: list):
        self.parts = parts
        self.starts = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(numpy.int64)

    def at(self, edges: numpy.ndarray) -> numpy.ndarray:
        result = numpy.zeros(len(edges), dtype=bool)
        chunk = numpy.searchsorted(self.starts, edges, side="right") - 1
        for index in numpy.unique(chunk):
            where = chunk == index
            local = edges[where] - self.starts[index]
            result[where] = (self.parts[index][local >> 3] >> (7 - (local & 7)).astype(numpy.uint8)) & 1
        return result


def _covers(known: numpy.ndarray, chosen: numpy.ndarray) -> bool:
    if len(chosen) == 0:
        return True
    at = numpy.searchsorted(known, chosen)
    return bool(numpy.all(at < len(known)) and numpy.array_equal(known[numpy.minimum(at, len(known) - 1)], chosen))


def _observed(visited, expander, nodes: numpy.ndarray, chunk: int = 1 << 18) -> numpy.ndarray:
    """The observation bits of the states ``nodes`` (ascending ids), a chunk of packed states at a time."""
    parts = [expander.observe(visited.words_of(nodes[start:start + chunk])) for start in range(0, len(nodes), chunk)]
    return numpy.concatenate(parts) if parts else expander.observe(visited.words_of(nodes[:0]))
