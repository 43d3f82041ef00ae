"""The explicit-state engine: breadth-first search over every reachable state of a scenario.

Breadth-first order makes every counterexample and witness a shortest one. All ``always`` and
``sometimes`` properties of the catalog are judged in one search: state properties on every
state, step properties on every transition. The first violation of each property is kept (its
trace is rebuilt from parent links); the search goes on until every state is explored or the
budget (states or seconds) runs out. A budget hit makes every verdict that is not already
decided ``inconclusive`` (never ``holds``).

Optionally the reachable graph is kept as a networkx ``MultiDiGraph`` (state ids as nodes, one
edge per action label) for the liveness checker.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable

from kepcheck.spec.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES, PropertySpec

from kepcheck.checks.result import HOLDS, INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult, Trace
from kepcheck.model.actions import next_steps
from kepcheck.model.context import Context, initial_state
from kepcheck.model.properties import PREDICATES

__all__ = ["Exploration", "TransitionSystem", "kep_system", "explore", "check_explicit"]


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
    graph: object = None  # networkx.MultiDiGraph when requested
    action_counts: dict = field(default_factory=dict)
    deadlocks: int = 0


def _trace(parents: list, states: list, index: int, last: tuple | None = None) -> Trace:
    steps = []
    while index >= 0:
        parent, label = parents[index]
        steps.append((label, states[index]))
        index = parent
    steps.reverse()
    if last is not None:
        steps.append(last)
    return Trace(tuple(steps))


@dataclass
class TransitionSystem:
    """What the engine needs of a model: initial states, successors and the properties to judge.

    ``successors(state)`` yields ``(action, next_state)``; an action has ``.name`` and ``.label()``.
    State properties are ``(name, kind, predicate(state))``, step properties
    ``(name, kind, predicate(before, action, after))``.
    """

    initial: Callable[[], list]
    successors: Callable
    state_properties: list = field(default_factory=list)
    step_properties: list = field(default_factory=list)


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
    )


def explore(system: TransitionSystem, *, max_states: int | None = None, timeout: float | None = None,
            keep_graph: bool = False, symmetry: Callable | None = None, step_hook: Callable | None = None,
            progress: Callable | None = None) -> Exploration:
    """Explore every state reachable from the system's initial states, breadth first.

    ``symmetry`` maps a state to its canonical representative (``model/symmetry.py``); properties
    are judged on the states as reached, before canonicalisation.
    ``step_hook(before, action, after)`` is called on every transition (the tests use it for the
    step-conformance check against the transition table).
    ``progress(states, transitions, depth)`` is called every 50,000 new states.
    """
    started = time.perf_counter()
    canonical = symmetry
    result = Exploration()
    found = result.found
    counts = result.action_counts
    graph = None
    if keep_graph:
        import networkx

        graph = networkx.MultiDiGraph()
    index: dict = {}
    states: list = []
    parents: list = []
    depths: list = []
    queue: deque = deque()
    # the properties not decided yet, each with whether a true value (sometimes) or a false one
    # (always) decides it; a decided property is dropped from its list
    open_state = [(name, kind == ALWAYS, predicate) for name, kind, predicate in system.state_properties]
    open_step = [(name, kind == ALWAYS, predicate) for name, kind, predicate in system.step_properties]

    def check_state(state_id: int) -> None:
        nonlocal open_state
        state = states[state_id]
        for name, always, predicate in open_state:
            value = predicate(state)
            if (not value) if always else value:
                if name not in found:
                    found[name] = _trace(parents, states, state_id)
                open_state = [p for p in open_state if p[0] not in found]

    for init in system.initial():
        if canonical is not None:
            init = canonical(init)
        if init in index:
            continue
        index[init] = len(states)
        states.append(init)
        parents.append((-1, None))
        depths.append(0)
        queue.append(len(states) - 1)
        if graph is not None:
            graph.add_node(len(states) - 1)
        check_state(len(states) - 1)

    deadline = started + timeout if timeout else None
    successors = system.successors
    while queue:
        if max_states is not None and len(states) >= max_states:
            result.complete, result.budget = False, f"state budget of {max_states} reached"
            break
        if deadline is not None and time.perf_counter() > deadline:
            result.complete, result.budget = False, f"time budget of {timeout:g} s reached"
            break
        current = queue.popleft()
        before = states[current]
        enabled = 0
        for action, after in successors(before):
            enabled += 1
            result.transitions += 1
            name = action.name
            counts[name] = counts.get(name, 0) + 1
            if step_hook is not None:
                step_hook(before, action, after)
            for name, always, predicate in open_step:
                value = predicate(before, action, after)
                if (not value) if always else value:
                    if name not in found:
                        found[name] = _trace(parents, states, current, (action.label(), after))
                    open_step = [p for p in open_step if p[0] not in found]
            if canonical is not None:
                after = canonical(after)
            target = index.get(after)
            if target is None:
                if max_states is not None and len(states) >= max_states:
                    result.complete, result.budget = False, f"state budget of {max_states} reached"
                    queue.clear()
                    break
                target = len(states)
                index[after] = target
                states.append(after)
                parents.append((current, action.label()))
                depths.append(depths[current] + 1)
                queue.append(target)
                check_state(target)
                if progress is not None and target % 50_000 == 0:
                    progress(len(states), result.transitions, depths[current] + 1)
            if graph is not None:
                graph.add_edge(current, target, key=action.label())
        if enabled == 0:
            result.deadlocks += 1
    result.states = len(states)
    result.depth = max(depths) if depths else 0
    result.seconds = time.perf_counter() - started
    result.graph = graph
    if graph is not None:
        graph.graph["states"] = states
    return result


def check_explicit(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, *, scenario_name: str = "",
                   max_states: int | None = None, timeout: float | None = None, symmetry: Callable | None = None,
                   progress: Callable | None = None, fairness=None) -> list[CheckResult]:
    """One ``CheckResult`` per property, from one exploration.

    ``eventually`` properties are judged by the liveness checker on the state graph; when any is
    selected the graph is kept and symmetry reduction is not applied (the premises and goals name
    pods individually). ``fairness`` overrides the fairness groups each property assumes.
    """
    from kepcheck.checks.liveness import check_liveness

    properties = list(properties)
    liveness = [p for p in properties if p.kind == EVENTUALLY]
    exploration = explore(kep_system(ctx, properties), max_states=max_states, timeout=timeout,
                          symmetry=None if liveness else symmetry, progress=progress, keep_graph=bool(liveness))
    judged = {r.property: r for r in check_liveness(ctx, exploration, liveness, fairness=fairness,
                                                    scenario_name=scenario_name)} if liveness else {}
    results = []
    for spec in properties:
        if spec.name in judged:
            results.append(judged[spec.name])
            continue
        record = CheckResult(
            scenario=scenario_name or ctx.scenario.name, variant=ctx.variant.name, property=spec.name,
            kind=spec.kind, engine="explicit", verdict=NOT_CHECKED, states=exploration.states,
            transitions=exploration.transitions, depth=exploration.depth, seconds=exploration.seconds,
            ref=spec.ref, mutants=tuple(sorted(ctx.mutants)),
        )
        trace = exploration.found.get(spec.name)
        if spec.kind == ALWAYS:
            if trace is not None:
                record.verdict, record.trace = VIOLATED, trace
            elif exploration.complete:
                record.verdict = HOLDS
            else:
                record.verdict, record.reason = INCONCLUSIVE, exploration.budget
        else:  # sometimes: holds when a witness is reachable
            if trace is not None:
                record.verdict, record.trace = HOLDS, trace
            elif exploration.complete:
                record.verdict = VIOLATED
                record.reason = "no reachable witness"
            else:
                record.verdict, record.reason = INCONCLUSIVE, exploration.budget
        results.append(record)
    return results
