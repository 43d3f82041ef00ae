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
states. ``strongly_connected`` finds the components of the whole graph or of the
subgraph of some states: Tarjan's algorithm in C (``checks/vector/components.c``) where the machine has a
C compiler, else scipy's.
"""

from __future__ import annotations

import ctypes
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from kepcheck.checks.vector.native import available, load, pointer as _pointer

__all__ = ["StateGraph", "Components", "strongly_connected", "unfair_native"]


@dataclass
class StateGraph:
    """The reachable states and transitions of one exploration (see the module's docstring).

    ``state_values(key, where)``: a predicate of the liveness catalog (``key``: property, pod index,
    ``"premise"`` or ``"goal"``) on the states where the bool mask ``where`` is True, as a bool mask
    over every state (False elsewhere). ``step_values(key, edges)``: a step predicate (``key``: the property's name) on the
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
        """The source state of every edge (computed once, 4 bytes per edge: where many edges are asked
        about; ``source_of`` for a few)."""
        if self._sources is None:
            degrees = numpy.diff(self.offsets)
            self._sources = numpy.repeat(numpy.arange(self.states, dtype=numpy.int32), degrees)
        return self._sources

    def source_of(self, edges) -> numpy.ndarray:
        """The source state of each of ``edges`` (an index array), read off the offsets: no array per edge."""
        return numpy.searchsorted(self.offsets, numpy.asarray(edges, dtype=numpy.int64), side="right") - 1

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
    unfair: dict = field(default_factory=dict)  # fair action names -> per component, its weak-fairness flag

    def members(self, component: int) -> numpy.ndarray:
        return numpy.flatnonzero(self.label == component)


def strongly_connected(graph: StateGraph, within: numpy.ndarray | None = None) -> Components:
    """The strongly connected components of the subgraph on the states where ``within`` is True
    (every state when None): Tarjan's algorithm in C (``checks/vector/components.c``, no copy of the
    edges) where the machine has a C compiler, else scipy's ``connected_components``."""
    n = graph.states
    native = _native() if graph.edges < 2**31 else None
    if native is not None:
        label = numpy.empty(n, dtype=numpy.int32)
        mask = None if within is None else numpy.ascontiguousarray(within, dtype=numpy.uint8)
        count = native.strong_components(n, _pointer(graph.offsets, ctypes.c_int64),
                                         _pointer(graph.targets, ctypes.c_int32),
                                         None if mask is None else _pointer(mask, ctypes.c_uint8),
                                         _pointer(label, ctypes.c_int32))
        if count < 0:
            raise MemoryError("no memory for the strongly connected components")
        del mask
        looping = numpy.zeros(count, dtype=numpy.uint8)
        inside = _inside_native(native, graph, label, looping)
    else:
        label = _scipy_components(graph, within)
        count = int(label.max()) + 1 if len(label) else 0
        sources = graph.sources()
        inside = numpy.flatnonzero((label[sources] >= 0) & (label[sources] == label[graph.targets]))
        looping = numpy.zeros(count, dtype=numpy.uint8)
        looping[label[graph.targets[inside[sources[inside] == graph.targets[inside]]]]] = 1
    size = numpy.bincount(label[label >= 0], minlength=count).astype(numpy.int32)
    lasting = (size > 1) | looping.astype(bool)
    ends = numpy.flatnonzero((graph.out_degrees() == 0) & (label >= 0))
    lasting[label[ends]] = True
    return Components(label, size, lasting, inside)


def _scipy_components(graph: StateGraph, within: numpy.ndarray | None) -> numpy.ndarray:
    """The component labels by ``scipy.sparse.csgraph`` (-1 outside ``within``)."""
    n, targets = graph.states, graph.targets
    if within is None:
        matrix = csr_matrix((numpy.ones(graph.edges, dtype=numpy.int8), targets, graph.offsets), shape=(n, n))
    else:
        sources = graph.sources()
        kept = within[sources] & within[targets]
        counts = numpy.bincount(sources[kept], minlength=n)
        offsets = numpy.zeros(n + 1, dtype=numpy.int64)
        numpy.cumsum(counts, out=offsets[1:])
        matrix = csr_matrix((numpy.ones(int(offsets[-1]), dtype=numpy.int8), targets[kept], offsets), shape=(n, n))
    _, label = connected_components(matrix, directed=True, connection="strong")
    label = label.astype(numpy.int32)
    if within is not None:
        label[~within] = -1
    return label


def _inside_native(native, graph: StateGraph, label: numpy.ndarray, looping: numpy.ndarray) -> numpy.ndarray:
    """The edges inside a component (ascending, int32), counted first so only they are stored;
    ``looping[c]`` set for a component with a self-loop."""
    arguments = (graph.states, _pointer(graph.offsets, ctypes.c_int64), _pointer(graph.targets, ctypes.c_int32),
                 _pointer(label, ctypes.c_int32))
    inside = numpy.empty(native.inside_edges(*arguments, None, None), dtype=numpy.int32)
    native.inside_edges(*arguments, _pointer(inside, ctypes.c_int32), _pointer(looping, ctypes.c_uint8))
    return inside


def unfair_native(graph: StateGraph, comps: Components, fair_kind: numpy.ndarray) -> numpy.ndarray | None:
    """Per component of ``comps``: the weak-fairness flag of ``checks/engines/liveness._unfair_components``
    computed in C (``checks/vector/components.c``), or None without a C compiler."""
    native = _native() if graph.edges < 2**31 else None
    if native is None:
        return None
    count = len(comps.size)
    unfair = numpy.zeros(count, dtype=numpy.uint8)
    lasting = numpy.ascontiguousarray(comps.lasting, dtype=numpy.uint8)
    size = numpy.ascontiguousarray(comps.size, dtype=numpy.int32)
    fair = numpy.ascontiguousarray(fair_kind, dtype=numpy.uint8)
    kinds = numpy.ascontiguousarray(graph.kinds)
    if native.unfair_components(graph.states, _pointer(graph.offsets, ctypes.c_int64),
                                _pointer(graph.targets, ctypes.c_int32), kinds.ctypes.data_as(ctypes.c_void_p),
                                kinds.itemsize, _pointer(comps.label, ctypes.c_int32), count,
                                _pointer(lasting, ctypes.c_uint8), _pointer(size, ctypes.c_int64),
                                _pointer(fair, ctypes.c_uint8), len(fair), _pointer(unfair, ctypes.c_uint8)) < 0:
        raise MemoryError("no memory for the fairness judgement")
    return unfair.astype(bool)


_LIBRARY: list = []


def _native():
    """``checks/vector/components.c`` loaded (built once per machine), or None without a C compiler."""
    if not _LIBRARY:
        library = None
        if available():
            library = load(Path(__file__).with_name("components.c").read_text(), "components")
            library.strong_components.restype = library.inside_edges.restype = ctypes.c_int64
            library.strong_components.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 4
            library.inside_edges.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 5
            library.unfair_components.restype = ctypes.c_int64
            library.unfair_components.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                                  ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p,
                                                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
        _LIBRARY.append(library)
    return _LIBRARY[0]


def bit_column(bits: numpy.ndarray, j: int) -> numpy.ndarray:
    """Observation ``j`` of each row of an observation bit matrix (``CompiledExpander.observe``): read
    through a byte view where the words are little-endian (a byte per row of temporaries)."""
    if sys.byteorder == "little":
        return ((bits.view(numpy.uint8)[:, j // 8] >> numpy.uint8(j % 8)) & numpy.uint8(1)).astype(bool)
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
        """The ``StateGraph`` of a complete exploration: the chunks joined (and let go), the state
        observations read at once from the packed states of ``visited`` through ``expander``."""
        targets = _joined(self.targets, numpy.int32)
        kinds = _joined(self.kinds, numpy.int16 if len(system.instances) < 2**15 else numpy.int32)
        degrees = _joined(self.degrees, numpy.int64)
        offsets = numpy.zeros(len(degrees) + 1, dtype=numpy.int64)
        numpy.cumsum(degrees, out=offsets[1:])
        del degrees
        flags = {key: _BitChunks(parts, self.targets_per_chunk) for key, parts in self.observed.items()}
        columns = {observation.key: j for j, observation in enumerate(system.state_observations)}
        # every state's observations now, a few bytes per state, so the visited set (its packed
        # states and hash table) is not kept alive for the liveness judgement
        bits = _observed(visited, expander, numpy.arange(len(offsets) - 1))

        def state_values(key, where):
            return bit_column(bits, columns[key]) & where

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


def _observed(visited, expander, nodes: numpy.ndarray, chunk: int = 1 << 18) -> numpy.ndarray:
    """The observation bits of the states ``nodes`` (ascending ids), a chunk of packed states at a time."""
    parts = [expander.observe(visited.words_of(nodes[start:start + chunk])) for start in range(0, len(nodes), chunk)]
    return numpy.concatenate(parts) if parts else expander.observe(visited.words_of(nodes[:0]))
