"""The lasso of a liveness violation: a shortest prefix to the component, then a fair loop in it.

The liveness checker (``checks/engines/liveness.py``) finds a fair strongly connected component on
the arrays of the explored graph (``checks/vector/graph.py``); only then is the component, with
every edge leaving its states, made a networkx ``MultiDiGraph`` (``component_graph``: state ids as
nodes, one edge per action, keyed by the ``Action``), on which the loop is built, and the prefix is
read off the breadth-first tree of the whole graph (``prefix_to``).

The prefix is the one a breadth-first search from the initial state finds when it tries the edges
of each state in the order of their labels, then targets; the loop (``fair_loop``) starts and ends
at the entry state, takes every required edge and is itself fair: a fair action instance that
would stay enabled on the whole printed loop without being taken gets a state of the component
where it is disabled added to the tour (the component is fair, so one exists), until none is left.
"""

from __future__ import annotations

from collections import deque

import networkx
import numpy

from kepcheck.checks.vector.graph import StateGraph
from kepcheck.model.context import Context

__all__ = ["component_graph", "prefix_to", "fair_component", "fair_loop", "explain", "labels_text"]


def component_graph(graph: StateGraph, nodes) -> networkx.MultiDiGraph:
    """The states ``nodes`` with every edge that leaves them (their targets as nodes too)."""
    small = networkx.MultiDiGraph()
    actions, targets, kinds = graph.actions, graph.targets, graph.kinds
    for node in (int(n) for n in nodes):
        small.add_node(node)
        for edge in graph.out_edges(node):
            small.add_edge(node, int(targets[edge]), key=actions[int(kinds[edge])])
    return small


def prefix_to(graph: StateGraph, entry: int) -> list:
    """The steps ``[(Action, node), ...]`` from the initial state (id 0) to ``entry`` on the
    breadth-first tree that tries each state's edges by label, then target (the tree of a networkx
    search over ``component_graph``'s edge order), built layer by layer with array operations."""
    labels = [action.label() for action in graph.actions]
    rank = numpy.empty(len(labels), dtype=numpy.int64)
    rank[sorted(range(len(labels)), key=labels.__getitem__)] = numpy.arange(len(labels))
    depth, starts = graph.depth(entry), list(graph.layer_starts) + [graph.states]
    parent_edge = {}
    layer = numpy.array([0], dtype=numpy.int64)
    for d in range(depth):
        degrees = graph.offsets[layer + 1] - graph.offsets[layer]
        first = numpy.repeat(graph.offsets[layer], degrees)
        edges = first + (numpy.arange(int(degrees.sum())) - numpy.repeat(numpy.cumsum(degrees) - degrees, degrees))
        position = numpy.repeat(numpy.arange(len(layer)), degrees)
        reached = graph.targets[edges].astype(numpy.int64)
        keep = (reached >= starts[d + 1]) & (reached < starts[d + 2])
        edges, position, reached = edges[keep], position[keep], reached[keep]
        order = numpy.lexsort((reached, rank[graph.kinds[edges]], position))
        edges, reached = edges[order], reached[order]
        _, first_seen = numpy.unique(reached, return_index=True)
        first_seen.sort()
        layer = reached[first_seen]
        parent_edge.update(zip(layer.tolist(), edges[first_seen].tolist()))
    steps, node = [], entry
    while node != 0:
        edge = parent_edge[node]
        steps.append((graph.actions[int(graph.kinds[edge])], node))
        node = int(graph.source_of([edge])[0])
    return steps[::-1]


def _enabled(graph, node) -> set:
    return {action for _, _, action in graph.out_edges(node, keys=True)}


def _out_edges(graph, node) -> list:
    """The edges leaving ``node`` in a fixed order (by action label, then target)."""
    return sorted(graph.out_edges(node, keys=True), key=lambda e: (e[2].label(), e[1]))


def labels_text(actions) -> str:
    return ", ".join(sorted(action.label() for action in actions))


def fair_component(graph, component: set, fair: frozenset) -> tuple[bool, set[str]]:
    """(fair?, the fair labels enabled in every state of the component)."""
    always = None
    for node in component:
        enabled = {action for action in _enabled(graph, node) if action.name in fair}
        always = enabled if always is None else always & enabled
        if not always:
            break
    always = always or set()
    taken = {key for u, v, key in graph.edges(component, keys=True) if v in component}
    return always <= taken, always




def _path(graph, sources: set, targets: set, allowed: set):
    """Shortest path (list of (label, node)) inside ``allowed`` from some source to some target,
    breadth first; returns (start, steps)."""
    parents = {source: None for source in sources}
    queue = deque(sorted(sources))
    while queue:
        node = queue.popleft()
        if node in targets:
            steps = []
            while parents[node] is not None:
                previous, label = parents[node]
                steps.append((label, node))
                node = previous
            return node, steps[::-1]
        for _, target, action in _out_edges(graph, node):
            if target in allowed and target not in parents:
                parents[target] = (node, action)
                queue.append(target)
    return None, None


def _inside_edges(graph, component: set) -> list:
    """The edges between states of ``component``, in a fixed order (source, target, action label)."""
    return sorted(((u, v, key) for u, v, key in graph.edges(component, keys=True) if v in component),
                  key=lambda e: (e[0], e[1], e[2].label()))


def _tour(graph, component: set, entry, edges: list, visits: list) -> list:
    """Steps (action, node) of a cycle from ``entry`` back to ``entry`` inside ``component`` that
    takes each edge of ``edges`` and passes each state of ``visits`` (in that order, by shortest
    paths); at least one step."""
    steps, current = [], entry
    for u, v, action in edges:
        _, to_u = _path(graph, {current}, {u}, component)
        steps += to_u + [(action, v)]
        current = v
    for node in visits:
        _, to_node = _path(graph, {current}, {node}, component)
        steps += to_node
        current = node
    if current == entry and not steps:  # a loop must take at least one step: the shortest cycle through entry
        candidates = [(key, v) for _, v, key in graph.out_edges(entry, keys=True) if v in component]
        action, current = sorted(candidates, key=lambda c: (c[1] != entry, c[0].label()))[0]
        steps.append((action, current))
    if current != entry:
        steps += _path(graph, {current}, {entry}, component)[1]
    return steps


def _unfair_on(graph, entry, steps: list, fair: frozenset) -> set:
    """The fair action instances enabled in every state of the loop ``steps`` (from ``entry``) and
    taken on none of its steps: what weak fairness forbids a printed loop to leave out."""
    nodes = [entry] + [node for _, node in steps]
    always = set.intersection(*({a for a in _enabled(graph, n) if a.name in fair} for n in nodes))
    return always - {action for action, _ in steps}


def fair_loop(graph, component: set, entry, required: set, fair: frozenset, edges: tuple = ()) -> list:
    """A cycle from ``entry`` back to ``entry`` inside the component that takes ``edges`` and an
    edge of every required action, and is itself fair: a fair action instance that would stay
    enabled on the whole printed loop without being taken gets a state of the component where it
    is disabled added to the tour (the component is fair, so one exists), until none is left. Each
    round adds a state for an action that no later tour can keep enabled throughout, so it ends."""
    inside = _inside_edges(graph, component)
    tour_edges = list(edges) + [next(e for e in inside if e[2] == action)
                                for action in sorted(required - {e[2] for e in edges}, key=lambda a: a.label())]
    _, distance = _bfs_tree_within(graph, entry, component)
    visits: list = []
    while True:
        steps = _tour(graph, component, entry, tour_edges, visits)
        missing = _unfair_on(graph, entry, steps, fair)
        if not missing:
            return steps
        for action in sorted(missing, key=lambda a: a.label()):
            disabled = [n for n in component if action not in _enabled(graph, n)]
            visits.append(min(disabled, key=lambda n: (distance.get(n, len(component)), n)))




def _bfs_tree_within(graph, start, allowed: set | None):
    """Breadth-first parents and depths from ``start`` (inside ``allowed`` when given)."""
    parents = {start: (None, None)}
    depth = {start: 0}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for _, target, action in _out_edges(graph, node):
            if target not in parents and (allowed is None or target in allowed):
                parents[target] = (node, action)
                depth[target] = depth[node] + 1
                queue.append(target)
    return parents, depth




def explain(ctx: Context, graph, component: set, fair: frozenset, always: set) -> str:
    node = next(iter(component))
    if graph.out_degree(node) == 0:
        return "no action is enabled: the run stays in the last state forever"
    enabled = set()
    for state in component:
        enabled |= _enabled(graph, state)
    taken = {key for u, v, key in graph.edges(component, keys=True) if v in component}
    leaving = [action for action in enabled if action not in taken]
    parts = []
    if always:
        parts.append("fair actions enabled throughout the loop, taken in it without reaching the goal: "
                     + labels_text(always))
    unfair_always = [action for action in leaving if action.name not in fair
                     and all(action in _enabled(graph, s) for s in component)]
    if unfair_always:
        parts.append("enabled throughout the loop but never taken, because not assumed fair: " + labels_text(unfair_always))
    intermittent = [action for action in leaving if action.name in fair and action not in always]
    if intermittent:
        parts.append("fair but not continuously enabled in the loop (weak fairness does not force them): "
                     + labels_text(intermittent))
    return "; ".join(parts) or "the loop keeps every fair action it enables"
