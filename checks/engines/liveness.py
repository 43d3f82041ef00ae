"""The liveness checker: ``eventually`` properties on the reachable state graph, under weak fairness.

Input: the graph the breadth-first search keeps (``checks/search/breadth_first.py``; networkx ``MultiDiGraph``:
state ids as nodes, one edge per action, keyed by the ``Action``) with symmetry off. For each property of ``model.properties.catalog.LIVENESS``:

* ``Response`` (per pod: if the premise holds again and again, the goal is eventually reached;
  in LTL ``[]<>premise => <>goal``): the "bad" states are those where the goal does not hold. A
  violation is a *fair* strongly connected component of the bad subgraph (or a bad state with no
  successor at all) in which the premise holds somewhere: a fair run can stay there forever,
  coming back to the premise, without ever reaching the goal.
* ``EventuallyNever`` (<>[] no such step): a violation is a fair strongly connected component of
  the whole graph that contains such a step.

Fairness is weak fairness per action instance (e.g. ``FinishTermination(pod=batch)``) for the
action groups assumed fair
(``spec/kep/fairness.py``): a component is fair iff every fair action instance that is enabled in all
of its states is taken on some edge inside it. Checking the maximal components suffices (a
sub-cycle of an unfair component is unfair too).

A violation is a lasso in the common trace type: the shortest prefix (breadth-first) to the
first premise state of the component, and a loop inside the component that is itself a fair run:
it takes every fair action the component keeps enabled, and every fair action instance enabled
in all the states it passes is taken in it (otherwise the loop is routed through a state of the
component where that action is disabled); ``Trace.loop`` is the index of the state the loop
returns to (the last state repeats it). A bad state with no successor is a loop of length
zero: the run stays there forever.

What the check cannot see: real time. A resize that is resolved only after the 5-minute flush or
the kubelet's 3-minute periodic retry counts as resolved; "eventually" may be minutes.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from functools import partial
import networkx

from kepcheck.spec.kep.fairness import fair_action_names, groups_of_variant
from kepcheck.spec.kep.properties import EVENTUALLY

from kepcheck.checks.engine import Budget, Deadline, EngineOptions
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult, Trace
from kepcheck.checks.search.breadth_first import Exploration, explore, kep_system
from kepcheck.model.context import Context
from kepcheck.model.memo import caching
from kepcheck.model.properties.eventually import LIVENESS, EventuallyNever

__all__ = ["check_liveness", "LivenessFinding", "ENGINE"]


@dataclass
class LivenessFinding:
    trace: Trace
    pod: str | None
    explanation: str


def _enabled(graph, node) -> set:
    return {action for _, _, action in graph.out_edges(node, keys=True)}


def _out_edges(graph, node) -> list:
    """The edges leaving ``node`` in a fixed order (by action label, then target)."""
    return sorted(graph.out_edges(node, keys=True), key=lambda e: (e[2].label(), e[1]))


def _labels(actions) -> str:
    return ", ".join(sorted(action.label() for action in actions))


def _fair_component(graph, component: set, fair: frozenset) -> tuple[bool, set[str]]:
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


def _components(graph, nodes: set):
    """Maximal strongly connected components of the subgraph on ``nodes`` that can hold a run
    forever: more than one state, a self-loop, or a state with no successor in the whole graph."""
    sub = graph.subgraph(nodes)
    for component in networkx.strongly_connected_components(sub):
        node = next(iter(component))
        if len(component) > 1 or sub.has_edge(node, node) or graph.out_degree(node) == 0:
            yield component


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


def _loop(graph, component: set, entry, required: set, fair: frozenset, edges: tuple = ()) -> list:
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


def _bfs_tree(graph, start=0):
    return _bfs_tree_within(graph, start, None)


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


def _lasso(graph, states, tree, entry, component: set, required: set, fair: frozenset, edges: tuple = ()) -> Trace:
    """Shortest prefix to ``entry``, then a fair loop inside ``component`` back to ``entry`` (``_loop``)."""
    parents, _ = tree
    prefix = []
    node = entry
    while node is not None:
        parent, action = parents[node]
        prefix.append((action, node))
        node = parent
    prefix.reverse()
    loop_steps = [] if graph.out_degree(entry) == 0 else _loop(graph, component, entry, required, fair, edges)
    return Trace(tuple((action, states[n]) for action, n in prefix + loop_steps), loop=len(prefix) - 1)


def _explain(ctx: Context, graph, component: set, fair: frozenset, always: set) -> str:
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
                     + _labels(always))
    unfair_always = [action for action in leaving if action.name not in fair
                     and all(action in _enabled(graph, s) for s in component)]
    if unfair_always:
        parts.append("enabled throughout the loop but never taken, because not assumed fair: " + _labels(unfair_always))
    intermittent = [action for action in leaving if action.name in fair and action not in always]
    if intermittent:
        parts.append("fair but not continuously enabled in the loop (weak fairness does not force them): "
                     + _labels(intermittent))
    return "; ".join(parts) or "the loop keeps every fair action it enables"


class _OutOfTime(Exception):
    """The run's deadline passed while a property was being judged."""


def check_liveness(ctx: Context, exploration: Exploration, properties, *, fairness=None,
                   deadline: Deadline | None = None) -> list[CheckResult]:
    """One CheckResult per eventually-property, judged on ``exploration.graph``.

    ``fairness``: names of the fairness groups to assume (default: each property's own);
    ``deadline``: the run's time budget — a property whose judgement it cuts short is ``inconclusive``."""
    with caching(ctx):
        return _judge_all(ctx, exploration, properties, fairness, deadline)


def _judge_all(ctx: Context, exploration: Exploration, properties, fairness, deadline) -> list[CheckResult]:
    graph = exploration.graph
    states = graph.graph["states"]
    tree = _bfs_tree(graph)
    results = []
    for spec in properties:
        if spec.kind != EVENTUALLY:
            continue
        started = time.perf_counter()
        groups = tuple(fairness) if fairness is not None else spec.fairness
        fair = fair_action_names(groups)
        record = CheckResult(
            scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name,
            kind=spec.kind, engine="explicit", verdict=HOLDS, states=exploration.states,
            transitions=exploration.transitions, depth=exploration.depth, ref=spec.ref,
            mutants=tuple(sorted(ctx.mutants)),
        )
        if not exploration.complete:
            record.verdict, record.reason = INCONCLUSIVE, exploration.budget
            results.append(record)
            continue
        try:
            finding = _check_one(ctx, graph, states, tree, LIVENESS[spec.name], fair, deadline)
        except _OutOfTime:
            record.verdict, record.reason = INCONCLUSIVE, f"{deadline.reason} (judging the eventually-properties)"
            results.append(record)
            continue
        if finding is not None:
            record.verdict, record.trace = VIOLATED, finding.trace
            record.reason = (f"{finding.pod}: " if finding.pod else "") + finding.explanation
        record.fairness = groups if fairness is not None else groups_of_variant(groups, ctx.variant)
        record.seconds = exploration.seconds + (time.perf_counter() - started)
        results.append(record)
    return results


def _check_one(ctx, graph, states, tree, liveness, fair, deadline=None) -> LivenessFinding | None:
    _, depth = tree

    def in_time() -> None:
        if deadline is not None and deadline.passed():
            raise _OutOfTime()

    if isinstance(liveness, EventuallyNever):
        for component in sorted(_components(graph, set(graph.nodes)), key=lambda c: min(depth[n] for n in c)):
            in_time()
            steps = [(u, v, key) for u, v, key in graph.edges(component, keys=True)
                     if v in component and liveness.step(ctx, states[u], states[v])]
            if not steps:
                continue
            is_fair, always = _fair_component(graph, component, fair)
            if not is_fair:
                continue
            entry = min(component, key=lambda n: depth[n])
            trace = _lasso(graph, states, tree, entry, component, set(always), fair, edges=(steps[0],))
            return LivenessFinding(trace, None, "a fair loop keeps evicting: "
                                   + _explain(ctx, graph, component, fair, always))
        return None
    best = None
    for pod in ctx.pod_range:
        in_time()
        bad = {n for n in graph.nodes if not liveness.goal(ctx, states[n], pod)}
        for component in _components(graph, bad):
            in_time()
            premise = [n for n in component if liveness.premise(ctx, states[n], pod)]
            if not premise:
                continue
            is_fair, always = _fair_component(graph, component, fair)
            if not is_fair:
                continue
            start = min(premise, key=lambda n: (depth[n], n))
            if best is not None and depth[start] >= best[0]:
                continue
            trace = _lasso(graph, states, tree, start, component, always, fair)
            best = (depth[start], LivenessFinding(trace, ctx.names[pod], _explain(ctx, graph, component, fair, always)))
    return best[1] if best else None


class LivenessEngine:
    """The liveness engine (``Engine`` protocol): the breadth-first search of ``checks/search/breadth_first.py``
    with the graph kept and no symmetry, then every eventually-property judged on it; the other
    property kinds are ``not-checked`` (the explicit engine judges them on the same search)."""

    name = "liveness"

    def check(self, ctx: Context, properties, *, budget: Budget, options: EngineOptions) -> list[CheckResult]:
        properties = list(properties)
        deadline = budget.deadline()
        progress = None if options.progress is None else partial(options.progress, ctx)
        exploration = explore(kep_system(ctx, []), max_states=budget.max_states, timeout=budget.timeout,
                              keep_graph=True, step_hook=options.on_step, progress=progress)
        judged = {r.property: r for r in check_liveness(ctx, exploration, properties, fairness=options.fairness,
                                                       deadline=deadline)}
        for result in judged.values():
            result.engine = self.name
        return [judged.get(spec.name) or CheckResult(
            scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name, kind=spec.kind,
            engine=self.name, verdict=NOT_CHECKED, reason="the liveness engine judges only eventually-properties",
            ref=spec.ref, mutants=tuple(sorted(ctx.mutants))) for spec in properties]


ENGINE = LivenessEngine()
