"""The liveness checker: ``eventually`` properties on the reachable state graph, under weak fairness.

Input: the graph the breadth-first search keeps, as arrays (``checks/vector/graph.StateGraph``,
the same from the interpreted search and from the vector core), with symmetry off. For each
property of ``model.properties.eventually.LIVENESS``:

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
sub-cycle of an unfair component is unfair too). The components come from Tarjan's algorithm in C
on the compressed rows (``checks/vector/components.c``), with scipy's ``connected_components`` as
the fallback where there is no C compiler; weak fairness is judged per component in C too (numpy
array operations over the action ids of its edges as the fallback); networkx only rebuilds the
lasso inside a violating component (``checks/engines/lasso.py``); only the bad states that lie on a
cycle of the whole graph (or have no successor) are looked at for a pod's premise and goal.

A violation is a lasso in the common trace type: the shortest prefix (breadth-first) to the
first premise state of the component, and a loop inside the component that is itself a fair run:
it takes every fair action the component keeps enabled, and every fair action instance enabled
in all the states it passes is taken in it (otherwise the loop is routed through a state of the
component where that action is disabled: ``checks/engines/lasso.py``, on the component alone);
``Trace.loop`` is the index of the state the loop
returns to (the last state repeats it). A bad state with no successor is a loop of length
zero: the run stays there forever.

What the check cannot see: real time. A resize that is resolved only after the 5-minute flush or
the kubelet's 3-minute periodic retry counts as resolved; "eventually" may be minutes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

import numpy

from kepcheck.spec.kep.fairness import fair_action_names, groups_of_variant
from kepcheck.spec.kep.properties import EVENTUALLY

from kepcheck.checks.engine import Budget, Deadline, EngineOptions
from kepcheck.checks.engines.lasso import component_graph, explain, fair_component, fair_loop, prefix_to
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult, Trace, replay
from kepcheck.checks.search.hybrid import HAND_OVER_AT, explore_kep
from kepcheck.checks.vector.graph import Components, StateGraph, strongly_connected, unfair_native
from kepcheck.model.context import Context
from kepcheck.model.memo import caching
from kepcheck.model.properties.eventually import LIVENESS, EventuallyNever

__all__ = ["check_liveness", "LivenessFinding", "ENGINE"]


@dataclass
class LivenessFinding:
    trace: Trace
    pod: str | None
    explanation: str


class _OutOfTime(Exception):
    """The run's deadline passed while a property was being judged."""


def check_liveness(ctx: Context, exploration, properties, *, fairness=None,
                   deadline: Deadline | None = None) -> list[CheckResult]:
    """One CheckResult per eventually-property, judged on ``exploration.graph`` (a ``StateGraph``).

    ``fairness``: names of the fairness groups to assume (default: each property's own);
    ``deadline``: the run's time budget — a property whose judgement it cuts short is ``inconclusive``."""
    with caching(ctx):
        judge = _Judge(ctx, exploration.graph, deadline) if exploration.complete else None
        return [_judged(ctx, exploration, spec, judge, fairness, deadline) for spec in properties
                if spec.kind == EVENTUALLY]


def _judged(ctx, exploration, spec, judge, fairness, deadline) -> CheckResult:
    started = time.perf_counter()
    groups = tuple(fairness) if fairness is not None else spec.fairness
    record = CheckResult(
        scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name,
        kind=spec.kind, engine="explicit", verdict=HOLDS, states=exploration.states,
        transitions=exploration.transitions, depth=exploration.depth, ref=spec.ref,
        mutants=tuple(sorted(ctx.mutants)),
    )
    if judge is None:
        record.verdict, record.reason = INCONCLUSIVE, exploration.budget
        return record
    try:
        finding = judge.check(spec.name, LIVENESS[spec.name], fair_action_names(groups))
    except _OutOfTime:
        record.verdict, record.reason = INCONCLUSIVE, f"{deadline.reason} (judging the eventually-properties)"
        return record
    if finding is not None:
        record.verdict, record.trace = VIOLATED, finding.trace
        record.reason = (f"{finding.pod}: " if finding.pod else "") + finding.explanation
    record.fairness = groups if fairness is not None else groups_of_variant(groups, ctx.variant)
    record.seconds = exploration.seconds + (time.perf_counter() - started)
    return record


_KEEP_PARTS = 1  # components of bad sets kept for the next property (each costs a label per state and its edges)


class _Judge:
    """The eventually-properties of one context on one explored graph; what several properties
    share (the whole graph's components, a bad set's components, which actions are fair) is
    computed once."""

    def __init__(self, ctx: Context, graph: StateGraph, deadline: Deadline | None):
        self.ctx, self.graph, self.deadline = ctx, graph, deadline
        self._whole: Components | None = None
        self._parts: dict = {}  # bad set (bytes) -> its Components, the last _KEEP_PARTS only (memory)

    def in_time(self) -> None:
        if self.deadline is not None and self.deadline.passed():
            raise _OutOfTime()

    def whole(self) -> Components:
        if self._whole is None:
            self._whole = strongly_connected(self.graph)
        return self._whole

    def lasting(self) -> numpy.ndarray:
        """The states a run can stay among forever: on a cycle of the whole graph, or without a successor."""
        whole = self.whole()
        return whole.lasting[whole.label]

    def parts(self, bad: numpy.ndarray) -> Components:
        key = numpy.packbits(bad).tobytes()
        if key not in self._parts:
            while len(self._parts) >= _KEEP_PARTS:
                del self._parts[next(iter(self._parts))]
            self._parts[key] = strongly_connected(self.graph, bad)
        return self._parts[key]

    def unfair(self, comps: Components, fair: frozenset) -> numpy.ndarray:
        """Per component: some fair action instance is enabled in every one of its states and taken on
        no edge inside it (weak fairness rules such a component out as a run); kept with ``comps``."""
        if fair not in comps.unfair:
            comps.unfair[fair] = _unfair_components(self.graph, comps, fair)
        return comps.unfair[fair]

    def check(self, name: str, liveness, fair: frozenset) -> LivenessFinding | None:
        if isinstance(liveness, EventuallyNever):
            return self._never(name, fair)
        return self._response(name, fair)

    def _never(self, name: str, fair: frozenset) -> LivenessFinding | None:
        """``<>[] no such step``: the first fair lasting component of the whole graph (by its earliest
        state) that has such a step inside it."""
        self.in_time()
        whole, graph = self.whole(), self.graph
        inside = whole.inside[whole.lasting[whole.label[graph.source_of(whole.inside)]]]
        stepping = inside[graph.step_values(name, inside)]
        if not len(stepping):
            return None
        unfair = self.unfair(whole, fair)
        sources = graph.source_of(stepping)
        earliest = numpy.full(len(whole.size), graph.states, dtype=numpy.int64)  # per component, its first state
        numpy.minimum.at(earliest, whole.label, numpy.arange(graph.states))
        order = numpy.argsort(earliest[whole.label[sources]], kind="stable")
        for edge, source in zip(stepping[order].tolist(), sources[order].tolist()):
            component = int(whole.label[source])  # the components by their earliest state, each one's steps by source
            if unfair[component]:
                continue
            nodes = whole.members(component)
            small, members = component_graph(graph, nodes), set(nodes.tolist())
            _, always = fair_component(small, members, fair)
            step = (source, int(graph.targets[edge]), graph.actions[int(graph.kinds[edge])])
            trace = self._lasso(small, int(nodes[0]), members, set(always), fair, (step,))
            return LivenessFinding(trace, None, "a fair loop keeps evicting: "
                                   + explain(self.ctx, small, members, fair, always))
        return None

    def _response(self, name: str, fair: frozenset) -> LivenessFinding | None:
        """``premise ~> goal`` per pod: the fair lasting component of the bad states (goal false)
        that holds a premise state, reached earliest (the first pod of the earliest)."""
        graph, lasting = self.graph, self.lasting()
        best = None
        if not lasting.any():
            return None
        for pod in self.ctx.pod_range:  # masks over the states (a byte each), no index arrays
            self.in_time()
            bad = lasting & ~graph.state_values((name, pod, "goal"), lasting)
            if not bad.any():
                continue
            comps = self.parts(bad)
            inside = (comps.label >= 0) & comps.lasting[comps.label]
            if not inside.any():
                continue
            premise = graph.state_values((name, pod, "premise"), inside)
            if not premise.any():
                continue
            unfair = self.unfair(comps, fair)
            fair_starts = premise & ~unfair[comps.label]  # label -1 reads the last flag, under a False premise
            if not fair_starts.any():
                continue
            start = int(numpy.argmax(fair_starts))  # ids are breadth-first: the earliest premise state of a fair component
            if best is not None and graph.depth(start) >= graph.depth(best[0]):
                continue
            best = (start, pod, int(comps.label[start]), comps)
        if best is None:
            return None
        start, pod, component, comps = best
        nodes = comps.members(component)
        small, members = component_graph(graph, nodes), set(nodes.tolist())
        _, always = fair_component(small, members, fair)
        trace = self._lasso(small, start, members, always, fair)
        return LivenessFinding(trace, self.ctx.names[pod], explain(self.ctx, small, members, fair, always))

    def _lasso(self, small, entry: int, members: set, required: set, fair: frozenset, edges: tuple = ()) -> Trace:
        """The shortest prefix to ``entry``, then a fair loop inside the component back to it, replayed."""
        prefix = prefix_to(self.graph, entry)
        loop = [] if self.graph.out_degrees()[entry] == 0 else fair_loop(small, members, entry, required, fair, edges)
        replayed = replay(self.ctx, [action for action, _ in prefix + loop])
        return Trace(replayed.steps, loop=len(prefix))


def _unfair_components(graph: StateGraph, comps: Components, fair: frozenset) -> numpy.ndarray:
    """Per component of ``comps``: a fair action instance enabled in every state of it (an edge of that
    action leaves each state; a state has at most one edge per action instance) is taken on no edge
    inside it. Judged for the lasting components only (no run stays in another; the flag of another
    is False and never read)."""
    count, kinds = len(comps.size), len(graph.actions)
    fair_kind = numpy.array([action.name in fair for action in graph.actions], dtype=bool)
    native = unfair_native(graph, comps, fair_kind)
    if native is not None:
        return native
    unfair = numpy.zeros(count, dtype=bool)
    sources = graph.sources()
    lasting = numpy.append(comps.lasting, False)  # label -1 (outside the set) reads the appended False
    leaving = numpy.flatnonzero(lasting[comps.label[sources]] & fair_kind[graph.kinds])  # only lasting ones matter
    if not len(leaving):
        return unfair
    keys = comps.label[sources[leaving]].astype(numpy.int64) * kinds + graph.kinds[leaving]
    keys, states = numpy.unique(keys, return_counts=True)
    always = keys[states == comps.size[keys // kinds]]
    inner = comps.inside[fair_kind[graph.kinds[comps.inside]]]
    taken = numpy.unique(comps.label[sources[inner]].astype(numpy.int64) * kinds + graph.kinds[inner])
    missing = always[~numpy.isin(always, taken)]
    unfair[missing // kinds] = True
    return unfair


class LivenessEngine:
    """The liveness engine (``Engine`` protocol): the explicit engine's breadth-first search (either
    core, ``options.core``) with the graph kept and no symmetry, then every eventually-property
    judged on it; the other property kinds are ``not-checked`` (the explicit engine judges them on
    the same search)."""

    name = "liveness"

    def check(self, ctx: Context, properties, *, budget: Budget, options: EngineOptions) -> list[CheckResult]:
        properties = list(properties)
        deadline = budget.deadline()
        progress = None if options.progress is None else partial(options.progress, ctx)
        liveness = [spec for spec in properties if spec.kind == EVENTUALLY]
        hand_over = None if options.core == "interpreted" or options.on_step is not None else \
            0 if options.core == "vector" else HAND_OVER_AT
        exploration = explore_kep(ctx, liveness, max_states=budget.max_states, timeout=budget.timeout,
                                  keep_graph=True, step_hook=options.on_step, progress=progress, hand_over_at=hand_over,
                                  workers=options.workers)
        judged = {r.property: r for r in check_liveness(ctx, exploration, properties, fairness=options.fairness,
                                                       deadline=deadline)}
        for result in judged.values():
            result.engine = self.name
        return [judged.get(spec.name) or CheckResult(
            scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name, kind=spec.kind,
            engine=self.name, verdict=NOT_CHECKED, reason="the liveness engine judges only eventually-properties",
            ref=spec.ref, mutants=tuple(sorted(ctx.mutants))) for spec in properties]


ENGINE = LivenessEngine()
