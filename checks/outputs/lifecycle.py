"""The resize lifecycle diagram and action coverage, from the explorations a run made.

While the explicit engine explores a context, a ``LifecycleRecorder`` (``model/lifecycle.py``; the run passes it
as the engine's ``on_step``) projects every transition on each pod's lifecycle status
(``model/lifecycle.py``) and counts the actions; ``lifecycle_graph`` merges the records of the
contexts of one variant into the diagram the review report draws (Graphviz DOT of the whole graph,
and one Mermaid diagram per phase of ``LIFECYCLE_PHASES``, so that each stays legible at the width
of a GitHub page) and the action-coverage table. Nothing here searches: it reads what the run
explored.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from kepcheck.spec.kep.vocabulary import LIFECYCLE_STATUSES

from kepcheck.checks.outputs.trace_report import mermaid_text
from kepcheck.model.lifecycle import LifecycleRecorder

__all__ = ["LifecycleGraph", "LifecyclePhase", "LIFECYCLE_PHASES", "lifecycle_graph",
           "lifecycle_mermaid", "lifecycle_dot", "phase_edges", "phase_initial", "edge_label", "never_fired_note",
           "NEVER_FIRED_EXPLANATIONS"]




@dataclass
class LifecycleGraph:
    """The per-pod lifecycle projection of every explored edge, over a set of scenarios."""

    variant: str
    scenarios: list = field(default_factory=list)
    statuses: list = field(default_factory=list)  # reachable statuses, in LIFECYCLE_STATUSES order
    initial: list = field(default_factory=list)  # statuses of pods in initial states
    edges: dict = field(default_factory=dict)  # (source, target) -> {actor: sorted [action names]}
    action_counts: Counter = field(default_factory=Counter)
    action_scenarios: dict = field(default_factory=dict)  # action -> [scenario names where it fired]
    states: int = 0
    transitions: int = 0


def lifecycle_graph(variant: str, records: list[tuple[LifecycleRecorder, int]]) -> LifecycleGraph:
    """The lifecycle of ``variant`` over the recorded explorations: ``(recorder, distinct states)``
    per scenario, in run order."""
    graph = LifecycleGraph(variant=variant, scenarios=[recorder.scenario for recorder, _ in records])
    reached: set = set()
    initial: set = set()
    edges: dict = {}
    for recorder, states in records:
        graph.states += states
        graph.transitions += recorder.transitions
        for name, count in recorder.action_counts.items():
            graph.action_counts[name] += count
            graph.action_scenarios.setdefault(name, []).append(recorder.scenario)
        initial |= recorder.initial
        reached |= recorder.reached
        for key, actors in recorder.edges.items():
            for actor, actions in actors.items():
                edges.setdefault(key, {}).setdefault(actor, set()).update(actions)
    order = {name: i for i, name in enumerate(LIFECYCLE_STATUSES)}
    graph.statuses = sorted(reached, key=lambda s: order.get(s, len(order)))
    graph.initial = sorted(initial, key=lambda s: order.get(s, len(order)))
    graph.edges = {key: {actor: sorted(actions) for actor, actions in sorted(value.items())}
                   for key, value in sorted(edges.items(), key=lambda kv: (order.get(kv[0][0], 99),
                                                                          order.get(kv[0][1], 99)))}
    return graph


def edge_label(actors: dict) -> str:
    return " / ".join(f"{actor} · {', '.join(actions)}" for actor, actions in actors.items())


@dataclass(frozen=True)
class LifecyclePhase:
    """One diagram of the lifecycle: the statuses it draws and the direction Mermaid lays it out in.
    An edge belongs to the first phase that has both its ends, else to the phase of its target; an
    initial status is drawn in the first phase that has it."""

    name: str
    title: str
    statuses: tuple
    direction: str = "TB"


LIFECYCLE_PHASES = (
    LifecyclePhase("admission", "Scheduling and admission", ("Absent", "Pending", "Nominated", "Bound", "Running",
                                                             "Rejected")),
    LifecyclePhase("resize", "Resize decided by the kubelet", ("Running", "ResizeRequested", "Deferred", "InProgress")),
    LifecyclePhase("deferred", "Deferred resize, preemption and superseding resizes",
                   ("Deferred", "Preempting", "Superseded", "Infeasible", "InProgress", "Running")),
    LifecyclePhase("termination", "Eviction, deletion and termination", ("Terminating", "Gone"), "LR"),
)


def _edge_phase(source: str, target: str) -> str:
    for phase in LIFECYCLE_PHASES:
        if source in phase.statuses and target in phase.statuses:
            return phase.name
    return next((phase.name for phase in LIFECYCLE_PHASES if target in phase.statuses), LIFECYCLE_PHASES[-1].name)


def phase_edges(graph: LifecycleGraph, phase: LifecyclePhase) -> dict:
    """The edges of ``graph`` drawn in ``phase``: (source, target) -> {actor: [actions]}."""
    return {key: actors for key, actors in graph.edges.items() if _edge_phase(*key) == phase.name}


def phase_initial(graph: LifecycleGraph, phase: LifecyclePhase) -> list[str]:
    """The initial statuses drawn in ``phase`` (each in the first phase that has it)."""
    return [status for status in graph.initial
            if next((p.name for p in LIFECYCLE_PHASES if status in p.statuses), None) == phase.name]


def lifecycle_mermaid(graph: LifecycleGraph, phase: LifecyclePhase) -> str:
    """One phase of the lifecycle as a Mermaid ``stateDiagram-v2`` (without the code fence): each
    arrow names the actor and its actions, one per line (``<br>``)."""
    lines = ["stateDiagram-v2", f"    direction {phase.direction}"]
    for status in phase_initial(graph, phase):
        lines.append(f"    [*] --> {status}")
    for (source, target), actors in phase_edges(graph, phase).items():
        label = "<br>".join(f"{mermaid_text(actor)}: " + "<br>".join(mermaid_text(action) for action in actions)
                            for actor, actions in actors.items())
        lines.append(f"    {source} --> {target} : {label}")
    return "\n".join(lines)


def lifecycle_dot(graph: LifecycleGraph) -> str:
    """The lifecycle as Graphviz DOT."""
    def quote(text: str) -> str:
        return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["digraph lifecycle {", "    rankdir=LR;", '    node [shape=box, style=rounded, fontname="Helvetica"];',
             '    edge [fontname="Helvetica", fontsize=10];', "    start [shape=point];"]
    for status in graph.statuses:
        lines.append(f"    {quote(status)};")
    for status in graph.initial:
        lines.append(f"    start -> {quote(status)};")
    for (source, target), actors in graph.edges.items():
        label = "\\n".join(f"{actor}: {', '.join(actions)}" for actor, actions in actors.items())
        lines.append(f"    {quote(source)} -> {quote(target)} [label=\"{label}\"];")
    lines.append("}")
    return "\n".join(lines) + "\n"


# Why an action may legitimately never fire on the default scenarios (shown only if it does not).
NEVER_FIRED_EXPLANATIONS = {
    "RequestResize": "no default scenario schedules a resize request as an environment event",
    "CreatePod": "no default scenario has a pod arrival",
    "DeletePod": "no default scenario deletes a pod",
    "RestartScheduler": "no default scenario allows a scheduler restart",
    "RecreatePod": "no default scenario has a controller that recreates a pod that is gone",
    "PreemptForPod": "no pending pod needs victims in the default scenarios",
    "PodUnschedulable": "every pending pod fits or finds victims",
    "ResizeUnschedulable": "every Deferred resize finds victims or fits",
    "RejectPod": "under this variant the kubelet never has to reject a bound pod (no OutOfcpu)",
    "FlushUnschedulablePod": "no pod waits in the unschedulable pool",
    "BindDeferredPod": "the diagram's variant parks a fitted resize (`fitted_resize: park`); the beta variants bind it",
    "AbortDeferredCycle": "only the beta's refresh with a stale view aborts a cycle (`beta-1.38-stale`)",
    "DeliverPodUpdate": "the diagram's variant sees every update at once; only the stale variants deliver late",
    "UpdatePodInCache": "the diagram's variant sees every update at once; only the stale variants deliver late",
    "UpdatePodInSchedulingQueue": "the diagram's variant sees every update at once; only the stale variants deliver late",
    "EvictVictim": "the diagram's variant completes the preemption's calls in the cycle; only the stale variants "
                   "run them after it",
}


def never_fired_note(action: str, default_run: bool) -> str:
    """Why ``action`` never fired: the recorded explanation when the run checked the default
    scenarios (the explanations speak of them), else that the run's own scenarios never enable it."""
    if not default_run:
        return "⚠ never fired: the scenarios of this run never enable it"
    return "⚠ never fired: " + NEVER_FIRED_EXPLANATIONS.get(action, "no explanation recorded — add a scenario")
