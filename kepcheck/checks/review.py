"""Design review artifacts: trace reports, the review report, the lifecycle diagram, variant diffs.

Everything here is Markdown for a KEP pull request (GitHub renders the Mermaid blocks) plus the
machine forms beside it (ITF JSON, Graphviz DOT):

* ``trace_markdown(ctx, result)`` — one counterexample as a numbered table (``report.trace_rows``),
  a Mermaid sequence diagram between the user, kube-apiserver, kube-scheduler and each node's
  kubelet (messages in Kubernetes words, derived from the step's action and what changed), a
  narrative paragraph, the lasso's loop for liveness traces and the replay line.
* ``write_itf(ctx, result, path)`` — the ITF JSON (``report.trace_to_itf``) as ``*.itf.json``.
* ``write_review(outcome, out_dir)`` — ``index.md``: per scenario the variant × property matrix,
  the expectations of the manifest beside the violations, the resize lifecycle diagram (Mermaid and
  ``lifecycle.dot``), action coverage, the findings; one trace report per ✗.
* ``variant_diff(outcome, a, b)`` — the verdicts that change between two designs, with the trace
  that explains each change.

Output is deterministic: with ``include_times=False`` the same run gives byte-identical files.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kepcheck.spec.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.quantities import format_quantity
from kepcheck.spec.vocabulary import LIFECYCLE_STATUSES, Phase, Queue, ResizeReason

from kepcheck.checks.report import counted, replay_line, trace_rows, trace_to_itf
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult, Trace
from kepcheck.model.context import Context
from kepcheck.model.state import NO_NODE, NO_POD, State

__all__ = ["trace_markdown", "write_itf", "write_review", "variant_diff", "trace_file_name", "lifecycle_graph",
           "LifecycleGraph", "lifecycle_mermaid", "lifecycle_dot", "sequence_diagram", "narrative",
           "PROVED", "ITF_SCHEMA_PATH"]

PROVED = "proved"  # reserved for a future proving engine (∎)
ITF_SCHEMA_PATH = Path(__file__).parent / "itf_schema.json"
SYMBOL = {HOLDS: "✓", VIOLATED: "✗", INCONCLUSIVE: "≈", PROVED: "∎", NOT_CHECKED: "–"}
_SPECS = {p.name: p for p in PROPERTIES}
_TRACE_KINDS = (ALWAYS, EVENTUALLY)


# --- small helpers ---------------------------------------------------------------------------------

def trace_file_name(result: CheckResult) -> str:
    """``<scenario>--<variant>--<property>.md`` (relative to the review's ``traces/`` folder)."""
    return f"{result.scenario}--{result.variant}--{result.property}.md"


_MANIFEST = None


def manifest_reason(result: CheckResult) -> tuple[str, str]:
    """(reason, ref) the manifest records for this cell, when the run has an expectation and the
    manifest lists it as an exception; else the result's own (the engine's explanation)."""
    global _MANIFEST
    if result.expected is not None:
        if _MANIFEST is None:
            from kepcheck.spec.manifest import load_manifest
            from kepcheck.spec.scenarios import default_scenarios

            _MANIFEST = load_manifest([s.name for s in default_scenarios()])
        expectation = _MANIFEST.expected(result.scenario, result.variant, result.property)
        if expectation is not None and expectation.reason:
            return expectation.reason, expectation.ref
    return result.reason, result.ref


def _has_report(result: CheckResult) -> bool:
    """A trace report is written for every violation of an always/eventually property with a trace."""
    return result.verdict == VIOLATED and result.kind in _TRACE_KINDS and result.trace is not None


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", "<br>")


def _parameters(label: str) -> tuple[str, dict[str, str]]:
    """``"BindPod(pod=late, node=n1)"`` -> ``("BindPod", {"pod": "late", "node": "n1"})``."""
    name, _, rest = label.partition("(")
    return name, dict(re.findall(r"(\w+)=(\[[^\]]*\]|[^,)]+)", rest))


def _delta(ctx: Context, old: tuple, new: tuple) -> str:
    """``cpu 2→3`` for the resources that changed (every resource if none did)."""
    parts = []
    for name, before, after, unit in zip(ctx.scenario.resources, old, new, ctx.scenario.units):
        if before != after:
            parts.append(f"{name} {format_quantity(before * unit, name)}→{format_quantity(after * unit, name)}")
    return ", ".join(parts) or ctx.format(new)


def _out_of(ctx: Context) -> str:
    return "/".join(f"OutOf{name}" for name in ctx.scenario.resources)


def _kind_suffix(kind: str) -> str:
    return {SOMETIMES: " (sometimes)", EVENTUALLY: " (eventually)"}.get(kind, "")


# --- Mermaid sequence diagram ----------------------------------------------------------------------

_MERMAID_BAD = str.maketrans({";": ",", "#": "No.", '"': "'", "%": " percent", "<": "‹", ">": "›", "{": "(",
                              "}": ")", "\n": " "})


def mermaid_text(text: str) -> str:
    """A message or note text that cannot break Mermaid (no ``;`` ``#`` ``"`` ``%`` ``<>`` ``{}``)."""
    return text.translate(_MERMAID_BAD).strip()


def _ident(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def _kubelet(ctx: Context, node: int) -> str:
    return "K_" + _ident(ctx.node_names[node])


def _pod_node(before, after) -> int:
    return after.node if after.node != NO_NODE else before.node


def step_messages(ctx: Context, label: str, before: State, after: State) -> list[tuple[str, str, str]]:
    """The step as sequence-diagram lines ``(source, target, text)``; ``target == "note"`` makes a
    note over ``source``. Source/target are participant ids: U, API, S, K_<node>."""
    name, params = _parameters(label)
    lines: list[tuple[str, str, str]] = []
    pods = list(zip(ctx.names, before.pods, after.pods))
    actor_pod = ctx.names.index(params["pod"]) if params.get("pod") in ctx.names else None

    def kubelet_of(i):
        node = _pod_node(before.pods[i], after.pods[i])
        return _kubelet(ctx, node if node != NO_NODE else 0)

    if name == "RequestResize":
        i = actor_pod
        lines.append(("U", "API", f"PATCH {ctx.names[i]}/resize {_delta(ctx, before.pods[i].desired, after.pods[i].desired)}"))
    elif name == "CreatePod":
        i = actor_pod
        lines.append(("U", "API", f"POST pod {ctx.names[i]} (priority {ctx.priorities[i]}, {ctx.format(after.pods[i].desired)})"))
    elif name == "DeletePod":
        lines.append(("U", "API", f"DELETE pod {params.get('pod', '')}"))
    elif name == "RestartScheduler":
        lines.append(("S", "note", "restart: queue and in-memory state lost, Deferred pods re-enqueued"))
    elif name == "BindPod":
        lines.append(("S", "API", f"bind {params['pod']} → {params['node']}"))
    elif name in ("PreemptForPod", "PreemptForResize"):
        for_what = f"{params['pod']} resize" if name == "PreemptForResize" else params["pod"]
        for victim, old, new in pods:
            if new.phase == Phase.TERMINATING and old.phase != Phase.TERMINATING:
                lines.append(("S", "API", f"evict {victim} (DisruptionTarget) for {for_what}"))
        for pod, old, new in pods:
            if old.nominated != new.nominated:
                text = (f"{pod} nominatedNodeName={ctx.node_names[new.nominated]}" if new.nominated != NO_NODE
                        else f"clear {pod} nominatedNodeName")
                lines.append(("S", "API", text))
        if not lines:
            lines.append(("S", "note", f"preemption for {for_what}: no victim evicted"))
    elif name == "PodUnschedulable":
        lines.append(("S", "note", f"{params['pod']} does not fit → unschedulable pool"))
    elif name == "ResizeUnschedulable":
        lines.append(("S", "note", f"{params['pod']} resize: no victims can make room → unschedulable pool"))
    elif name == "ParkDeferredPod":
        lines.append(("S", "note", f"{params['pod']} resize fits in the scheduler's view → parked"))
    elif name == "FlushUnschedulablePod":
        lines.append(("S", "note", f"periodic flush: {params['pod']} → activeQ"))
    elif name == "AdmitPod":
        i = actor_pod
        lines.append((kubelet_of(i), "API", f"admit {ctx.names[i]} (Running)"))
    elif name == "RejectPod":
        i = actor_pod
        lines.append((kubelet_of(i), "API", f"reject {ctx.names[i]}: {_out_of(ctx)} (phase Failed)"))
    elif name in ("RetryPendingResizes", "PeriodicRetryPendingResizes"):
        kubelet = _kubelet(ctx, ctx.node_names.index(params["node"]))
        for pod, old, new in pods:
            if old.allocated != new.allocated:
                lines.append((kubelet, "API", f"{pod} allocated {_delta(ctx, old.allocated, new.allocated)}"
                              + (" (PodResizeInProgress)" if new.in_progress else "")))
            if old.resize != new.resize:
                if new.resize == ResizeReason.DEFERRED:
                    lines.append((kubelet, "API", f"{pod} PodResizePending=Deferred"))
                elif new.resize == ResizeReason.INFEASIBLE:
                    lines.append((kubelet, "API", f"{pod} PodResizePending=Infeasible"))
                elif old.allocated == new.allocated:
                    lines.append((kubelet, "API", f"{pod} PodResizePending cleared"))
            elif old.observed != new.observed and old.allocated == new.allocated and new.resize != ResizeReason.NONE:
                reason = "Deferred" if new.resize == ResizeReason.DEFERRED else "Infeasible"
                lines.append((kubelet, "API", f"{pod} still PodResizePending={reason} (new spec observed)"))
        if not lines:
            what = "periodic retry" if name.startswith("Periodic") else "retry"
            lines.append((kubelet, "note", f"{what} of pending resizes: nothing fits, no change"))
    elif name == "ActuateResize":
        i = actor_pod
        old, new = before.pods[i], after.pods[i]
        lines.append((kubelet_of(i), "API", f"{ctx.names[i]} resized: actual {_delta(ctx, old.actual, new.actual)}"
                      + (", PodResizeInProgress cleared" if old.in_progress and not new.in_progress else "")))
    elif name == "FinishTermination":
        i = actor_pod
        lines.append((kubelet_of(i), "API", f"{ctx.names[i]} terminated and removed"))
    # What the scheduler learns from the watch (requeues caused by others) and its own memory.
    scheduler_action = name in ("RestartScheduler", "BindPod", "PreemptForPod", "PreemptForResize",
                                "PodUnschedulable", "ResizeUnschedulable", "ParkDeferredPod", "FlushUnschedulablePod")
    for pod, old, new in pods:
        if old.queue != new.queue and new.queue == Queue.ACTIVE and not scheduler_action:
            lines.append(("API", "S", f"watch: {pod} requeued to activeQ"))
        if old.assumed != new.assumed:
            text = f"assume {pod} at {ctx.format(new.assumed)}" if any(new.assumed) else f"forget assume of {pod}"
            lines.append(("S", "note", text))
        if old.tracking != new.tracking:
            lines.append(("S", "note", f"{'track' if new.tracking else 'forget'} victims in flight for {pod}"))
    if not lines:
        lines.append(("S", "note", label))
    return lines


def _participants(ctx: Context) -> list[str]:
    lines = ["    participant U as user/controllers", "    participant API as kube-apiserver",
             "    participant S as kube-scheduler"]
    for node in ctx.node_range:
        lines.append(f"    participant {_kubelet(ctx, node)} as kubelet {mermaid_text(ctx.node_names[node])}")
    return lines


def sequence_diagram(ctx: Context, trace: Trace) -> str:
    """The trace as a Mermaid ``sequenceDiagram`` (without the code fence). Each step's first line
    carries its number ``(n)``; a lasso's repeating steps are in a ``loop`` block."""
    lines = ["sequenceDiagram"] + _participants(ctx)
    everyone = f"U,{_kubelet(ctx, ctx.node_range[-1])}"
    last = len(trace.steps) - 1
    for number in range(1, len(trace.steps)):
        if trace.loop is not None and number == trace.loop + 1 and trace.loop < last:
            lines.append(f"    loop step {last} repeats forever" if trace.loop + 1 == last
                         else f"    loop steps {trace.loop + 1} to {last} repeat forever")
        indent = "        " if trace.loop is not None and trace.loop < number else "    "
        label, state = trace.steps[number]
        before = trace.steps[number - 1][1]
        for k, (source, target, text) in enumerate(step_messages(ctx, label, before, state)):
            text = mermaid_text((f"({number}) " if k == 0 else "") + text)
            if target == "note":
                lines.append(f"{indent}Note over {source}: {text}")
            else:
                arrow = "-->>" if source == "API" else "->>"
                lines.append(f"{indent}{source}{arrow}{target}: {text}")
    if trace.loop is not None:
        if trace.loop < last:
            lines.append("    end")
        else:
            lines.append(f"    Note over {everyone}: stays in the state of step {last} forever")
    return "\n".join(lines)


# --- narrative -------------------------------------------------------------------------------------

def _clause(ctx: Context, label: str, before: State, after: State) -> str:
    """One step in plain words."""
    name, params = _parameters(label)
    pods = list(zip(ctx.names, before.pods, after.pods))
    pod = params.get("pod", "")
    i = ctx.names.index(pod) if pod in ctx.names else None
    victims = [p for p, old, new in pods if new.phase == Phase.TERMINATING and old.phase != Phase.TERMINATING]
    if name == "RequestResize":
        return f"the user asks to resize {pod} ({_delta(ctx, before.pods[i].desired, after.pods[i].desired)})"
    if name == "CreatePod":
        return f"{pod} (priority {ctx.priorities[i]}, {ctx.format(after.pods[i].desired)}) is created"
    if name == "DeletePod":
        return f"the user deletes {pod}"
    if name == "RestartScheduler":
        return "the scheduler restarts and loses its in-memory state"
    if name == "BindPod":
        return f"the scheduler binds {pod} to {params['node']}"
    if name == "PreemptForResize":
        return (f"the scheduler evicts {_and(victims)} to make room for {pod}'s Deferred resize" if victims
                else f"the scheduler runs preemption for {pod}'s resize")
    if name == "PreemptForPod":
        return (f"the scheduler evicts {_and(victims)} for the pending {pod} and nominates "
                f"{ctx.node_names[after.pods[i].nominated] if after.pods[i].nominated != NO_NODE else 'a node'}")
    if name == "PodUnschedulable":
        return f"the scheduler finds no room for {pod} and parks it"
    if name == "ResizeUnschedulable":
        return f"the scheduler finds no victims for {pod}'s resize and parks it"
    if name == "ParkDeferredPod":
        return f"the scheduler sees {pod}'s resize as fitting and parks it"
    if name == "FlushUnschedulablePod":
        return f"the periodic flush moves {pod} back to the active queue"
    if name == "AdmitPod":
        return f"the kubelet admits {pod}"
    if name == "RejectPod":
        return f"the kubelet rejects {pod} with {_out_of(ctx)}"
    if name in ("RetryPendingResizes", "PeriodicRetryPendingResizes"):
        kind = "periodic retry" if name.startswith("Periodic") else "retry"
        done = []
        for p, old, new in pods:
            if old.allocated != new.allocated:
                done.append(f"grants {p}'s resize ({_delta(ctx, old.allocated, new.allocated)})")
            elif old.resize != new.resize and new.resize == ResizeReason.DEFERRED:
                done.append(f"marks {p} Deferred")
            elif old.resize != new.resize and new.resize == ResizeReason.INFEASIBLE:
                done.append(f"marks {p} Infeasible")
        return f"the kubelet on {params['node']} runs a {kind} and " + (_and(done) if done else "changes nothing")
    if name == "ActuateResize":
        return f"the kubelet actuates {pod}'s resize ({_delta(ctx, before.pods[i].actual, after.pods[i].actual)})"
    if name == "FinishTermination":
        return f"{pod} finishes terminating and leaves the node"
    return label


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def narrative(ctx: Context, result: CheckResult) -> str:
    """One paragraph that tells the trace in plain words."""
    trace = result.trace
    spec = _SPECS.get(result.property)
    clauses = []
    for number in range(1, len(trace.steps)):
        label, state = trace.steps[number]
        clauses.append(f"({number}) {_clause(ctx, label, trace.steps[number - 1][1], state)}")
    first = trace.steps[0][1]
    deferred = [n for n, p in zip(ctx.names, first.pods) if p.resize == ResizeReason.DEFERRED]
    start = f"In `{ctx.scenario.name}` under `{ctx.variant.name}`"
    if deferred:
        start += f", with {_and(deferred)} Deferred at the start"
    text = start + ": " + ("; ".join(clauses) if clauses else "already the initial state") + "."
    meaning = spec.meaning if spec else result.property
    if trace.loop is not None:
        last = len(trace.steps) - 1
        if trace.loop == last:
            text += (f" From step {last} on nothing the fair actions can do changes the state, so the run stays "
                     f"there forever")
        else:
            steps = f"step {last}" if trace.loop + 1 == last else f"steps {trace.loop + 1}–{last}"
            text += (f" From step {trace.loop} the run can repeat {steps} forever while "
                     f"taking every action that fairness requires")
        text += f"; so {result.property} fails on this run. It requires: {meaning}."
    else:
        text += f" After step {len(trace.steps) - 1}, {result.property} is violated. It requires: {meaning}."
    return text


# --- trace report ----------------------------------------------------------------------------------

def _action_refs() -> dict[str, str]:
    from kepcheck.spec.transitions import TRANSITIONS

    refs: dict[str, str] = {}
    for row in TRANSITIONS:
        if row.role == "self" or row.action not in refs:
            refs.setdefault(row.action, row.ref)
    return refs


def trace_markdown(ctx: Context, result: CheckResult) -> str:
    """A counterexample (or witness) as a Markdown report."""
    from kepcheck.spec.variants import variant_by_name

    if result.trace is None:
        raise ValueError(f"{result.property} in {result.scenario}/{result.variant} has no trace")
    trace = result.trace
    spec = _SPECS.get(result.property)
    kind = spec.kind if spec else result.kind
    try:
        variant_description = variant_by_name(ctx.variant.name).description
    except KeyError:
        variant_description = ""
    lines = [f"# {result.property} {result.verdict} — `{ctx.scenario.name}` / `{ctx.variant.name}`", ""]
    lines.append(f"- **Property:** {result.property} ({kind}): {spec.meaning if spec else ''}"
                 + (f" — {spec.ref}" if spec and spec.ref else ""))
    verdict = f"- **Verdict:** {SYMBOL.get(result.verdict, '?')} {result.verdict}"
    if result.expected is not None:
        verdict += f"; expected: {result.expected}" + ("" if result.matches else " — **differs from the manifest**")
    else:
        verdict += "; no expectation in the manifest for this run"
    lines.append(verdict)
    reason, ref = manifest_reason(result)
    from_manifest = result.expected is not None and bool(reason) and (reason != result.reason or result.expected == VIOLATED)
    if from_manifest:
        lines.append(f"- **Why (manifest):** {reason}")
    if result.reason and (result.reason != reason or not from_manifest):
        lines.append(f"- **Engine's explanation:** {result.reason}")
    if ref or result.ref:
        lines.append(f"- **Reference:** {ref or result.ref}")
    lines.append(f"- **Scenario:** `{ctx.scenario.name}` — {ctx.scenario.description}")
    lines.append(f"- **Variant:** `{ctx.variant.name}`" + (f" — {variant_description}" if variant_description else ""))
    if ctx.mutants:
        lines.append(f"- **Mutants:** {', '.join(sorted(ctx.mutants))}")
    if kind == EVENTUALLY:
        lines.append(f"- **Fairness assumed:** {', '.join(result.fairness) or 'none'}")
    lines.append(f"- **Length:** {counted(len(trace), 'step')}" + (f", a lasso looping back to step {trace.loop}"
                                                        if trace.loop is not None else ""))
    lines += ["", "## What happens", "", narrative(ctx, result), "", "## Steps", ""]
    if trace.loop is not None:
        lines += ["Rows marked ⟲ repeat forever (the lasso's loop); ⟲ start is the state the loop returns to.", ""]
    refs = _action_refs()
    lines.append("| step | actor | action | what changed | free: scheduler / kubelet | ref |")
    lines.append("|---:|---|---|---|---|---|")
    for row in trace_rows(ctx, trace):
        step = str(row["step"])
        if trace.loop is not None:
            if row["step"] == trace.loop:
                step += " ⟲ start"
            elif row["step"] > trace.loop:
                step += " ⟲"
        action = f"`{row['action']}`" if row["step"] else "initial state"
        changes = "<br>".join(_cell(c) for c in row["changes"]) or "(no visible change)"
        free = "<br>".join(_cell(part.replace(": scheduler ", ": ").replace(" / kubelet ", " / "))
                           for part in row["free"].split("; "))
        ref = refs.get(row["action"].split("(")[0], "") if row["step"] else ""
        lines.append(f"| {step} | {row['actor']} | {_cell(action)} | {changes} | {free} | {_cell(ref)} |")
    if trace.loop is not None:
        last = len(trace.steps) - 1
        lines.append("")
        lines.append(f"⟲ The run stays in the state of step {last} forever." if trace.loop == last else
                     f"⟲ Step {last} is back in the state of step {trace.loop}: "
                     + (f"step {last} repeats forever." if trace.loop + 1 == last
                        else f"steps {trace.loop + 1}–{last} repeat forever."))
    lines += ["", "## Sequence diagram", "", "```mermaid", sequence_diagram(ctx, trace), "```", "",
              "## Replay", "", "```", replay_line(ctx, trace), "```", "",
              f"Machine form (ITF, Apalache ADR-015): [{_itf_name(trace_file_name(result))}]"
              f"({_itf_name(trace_file_name(result))})", ""]
    return "\n".join(lines)


def _itf_name(markdown_name: str) -> str:
    return markdown_name[:-3] + ".itf.json" if markdown_name.endswith(".md") else markdown_name + ".itf.json"


def write_itf(ctx: Context, result: CheckResult, path) -> Path:
    """Write the ITF JSON of the result's trace. ``path`` is the ``.itf.json`` file or the trace
    report's ``.md`` file (the ITF goes beside it). Returns the path written."""
    path = Path(path)
    if not path.name.endswith(".itf.json"):
        path = path.with_name(_itf_name(path.name))
    document = trace_to_itf(ctx, result.trace, f"{result.property} {result.verdict} in {result.scenario} "
                                               f"under {result.variant}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


# --- the lifecycle diagram and action coverage -----------------------------------------------------

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


def lifecycle_graph(variant: str = "alpha-1.37", scenarios=None) -> LifecycleGraph:
    """Explore each scenario (default: the shipped ones) under ``variant`` without symmetry and
    project every edge on each pod's ``lifecycle_status``."""
    from kepcheck.spec.scenarios import default_scenarios
    from kepcheck.spec.variants import variant_by_name

    from kepcheck.checks.explicit import explore, kep_system
    from kepcheck.model.actions import ACTOR_OF
    from kepcheck.model.lifecycle import lifecycle_status

    scenarios = default_scenarios() if scenarios is None else scenarios
    graph = LifecycleGraph(variant=variant, scenarios=[s.name for s in scenarios])
    reached: set = set()
    initial: set = set()
    edges: dict = {}
    for scenario in scenarios:
        ctx = Context.build(scenario, variant_by_name(variant))
        exploration = explore(kep_system(ctx, []), keep_graph=True)
        graph.states += exploration.states
        graph.transitions += exploration.transitions
        for name, count in exploration.action_counts.items():
            graph.action_counts[name] += count
            graph.action_scenarios.setdefault(name, []).append(scenario.name)
        states = exploration.graph.graph["states"]
        status = [tuple(lifecycle_status(p) for p in s.pods) for s in states]
        for pod_status in status[0]:
            initial.add(pod_status)
        for row in status:
            reached.update(row)
        for u, v, label in exploration.graph.edges(keys=True):
            action = label.split("(", 1)[0]
            for old, new in zip(status[u], status[v]):
                if old != new:
                    edges.setdefault((old, new), {}).setdefault(ACTOR_OF.get(action, "?"), set()).add(action)
    order = {name: i for i, name in enumerate(LIFECYCLE_STATUSES)}
    graph.statuses = sorted(reached, key=lambda s: order.get(s, len(order)))
    graph.initial = sorted(initial, key=lambda s: order.get(s, len(order)))
    graph.edges = {key: {actor: sorted(actions) for actor, actions in sorted(value.items())}
                   for key, value in sorted(edges.items(), key=lambda kv: (order.get(kv[0][0], 99),
                                                                          order.get(kv[0][1], 99)))}
    return graph


def _edge_label(actors: dict) -> str:
    return " / ".join(f"{actor} · {', '.join(actions)}" for actor, actions in actors.items())


def lifecycle_mermaid(graph: LifecycleGraph) -> str:
    """The lifecycle as a Mermaid ``stateDiagram-v2`` (without the code fence)."""
    lines = ["stateDiagram-v2", "    direction LR"]
    for status in graph.initial:
        lines.append(f"    [*] --> {status}")
    for (source, target), actors in graph.edges.items():
        lines.append(f"    {source} --> {target} : {mermaid_text(_edge_label(actors))}")
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
    "PreemptForPod": "no pending pod needs victims in the default scenarios",
    "PodUnschedulable": "every pending pod fits or finds victims",
    "ResizeUnschedulable": "every Deferred resize finds victims or fits",
    "RejectPod": "under this variant the kubelet never has to reject a bound pod (no OutOfcpu)",
    "FlushUnschedulablePod": "no pod waits in the unschedulable pool",
}


# --- the review report -----------------------------------------------------------------------------

def _group(outcome):
    """{scenario: [(ctx, {property: result})]}, in outcome order."""
    grouped: dict = {}
    for ctx, results in outcome:
        grouped.setdefault(ctx.scenario.name, []).append((ctx, {r.property: r for r in results}))
    return grouped


def _matrix_cell(result: CheckResult | None, link_prefix: str) -> str:
    if result is None:
        return ""
    if result.kind == SOMETIMES:
        cell = {HOLDS: "seen", VIOLATED: "never", INCONCLUSIVE: "≈"}.get(result.verdict, SYMBOL.get(result.verdict, "?"))
    else:
        cell = SYMBOL.get(result.verdict, "?")
        if _has_report(result):
            cell = f"[✗]({link_prefix}{trace_file_name(result)})"
    if not result.matches:
        cell = f"**{cell} (expected {result.expected})**"
    return cell


def write_review(outcome, out_dir, *, include_times: bool = True, lifecycle_variant: str = "alpha-1.37",
                 lifecycle_scenarios=None, lifecycle: LifecycleGraph | None = None) -> Path:
    """Write ``out_dir/index.md``, ``out_dir/lifecycle.dot`` and ``out_dir/traces/*.md|*.itf.json``
    for ``outcome`` (the ``(ctx, [CheckResult])`` pairs of ``checks.cli.run_checks``). Returns the
    path of ``index.md``. The lifecycle diagram and the action coverage come from a separate
    exploration of ``lifecycle_variant`` over ``lifecycle_scenarios`` (default: the shipped
    scenarios, about 2 s), or from ``lifecycle`` when given (``lifecycle_graph()``)."""
    outcome = list(outcome)
    out = Path(out_dir)
    traces_dir = out / "traces"
    traces_dir.mkdir(parents=True, exist_ok=True)
    grouped = _group(outcome)
    all_results = [r for _, rs in outcome for r in rs]
    property_order = [p.name for p in PROPERTIES]
    present = {r.property for r in all_results}
    properties = [name for name in property_order if name in present] + sorted(present - set(property_order))
    variants = list(dict.fromkeys(ctx.variant.name for ctx, _ in outcome))

    # trace reports
    written = []
    for ctx, results in outcome:
        for result in results:
            if _has_report(result):
                path = traces_dir / trace_file_name(result)
                path.write_text(trace_markdown(ctx, result), encoding="utf-8")
                write_itf(ctx, result, path)
                written.append(path)

    differs = [r for r in all_results if not r.matches and r.verdict != INCONCLUSIVE]
    inconclusive = [r for r in all_results if r.verdict == INCONCLUSIVE]
    lines = ["# KEP-5836 design review: scheduler preemption for in-place pod resize", ""]
    lines.append(f"{len(all_results)} checks: {counted(len(grouped), 'scenario')} × {counted(len(variants), 'variant')} × "
                 f"{counted(len(properties), 'property', 'properties')} (explicit-state engine). "
                 f"{sum(1 for r in all_results if r.expected is not None and r.matches)} as the manifest expects, "
                 f"{len(differs)} differ, {len(inconclusive)} inconclusive; {len(written)} trace reports.")
    if include_times:
        lines[-1] += f" Total engine time {sum(max((r.seconds for r in rs), default=0) for _, rs in outcome):.1f} s."
    lines += ["", "Legend: ✓ holds · ✗ violated (links to the trace report) · ≈ inconclusive within the budget · "
              "∎ proved · for sometimes-properties (reachability witnesses) *seen* / *never*; "
              "**bold** = differs from the expected verdict in `spec/manifest.yaml`.", ""]
    lines += ["Contents: [matrix](#variant--property-matrix) · [lifecycle](#resize-lifecycle) · "
              "[coverage](#action-coverage) · [findings](#findings)", ""]
    if differs:
        lines += ["## ⚠ Verdicts that differ from the manifest", ""]
        for r in differs:
            lines.append(f"- {r.property} in `{r.scenario}` under `{r.variant}`: {r.verdict}, expected {r.expected}")
        lines.append("")

    lines += ["## Variant × property matrix", ""]
    for scenario, rows in grouped.items():
        ctx0 = rows[0][0]
        lines += [f"### `{scenario}`", "", ctx0.scenario.description, ""]
        names = [ctx.variant.name for ctx, _ in rows]
        lines.append("| property | " + " | ".join(f"`{n}`" for n in names) + " |")
        lines.append("|---|" + ":---:|" * len(names))
        for prop in properties:
            cells = [_matrix_cell(results.get(prop), "traces/") for _, results in rows]
            if not any(cells):
                continue
            kind = next((results[prop].kind for _, results in rows if prop in results), "")
            lines.append(f"| {prop}{_kind_suffix(kind)} | " + " | ".join(cells) + " |")
        lines.append("| *distinct states* | " + " | ".join(
            str(max((r.states for r in results.values()), default=0)) for _, results in rows) + " |")
        if include_times:
            lines.append("| *seconds* | " + " | ".join(
                f"{max((r.seconds for r in results.values()), default=0):.2f}" for _, results in rows) + " |")
        notes = _expectation_notes(rows)
        if notes:
            lines += ["", "Expected verdicts beside the violations:", ""] + notes
        lines.append("")

    graph = lifecycle if lifecycle is not None else lifecycle_graph(lifecycle_variant, lifecycle_scenarios)
    (out / "lifecycle.dot").write_text(lifecycle_dot(graph), encoding="utf-8")
    lines += _lifecycle_section(graph)
    lines += _coverage_section(graph)
    lines += _findings_section(outcome)
    text = "\n".join(lines).rstrip("\n") + "\n"
    index = out / "index.md"
    index.write_text(text, encoding="utf-8")
    return index


def _expectation_notes(rows) -> list[str]:
    """Each non-holding or unexpected cell, grouped by (property, verdict, expected, reason)."""
    groups: dict = {}
    for ctx, results in rows:
        for result in results.values():
            if result.verdict == HOLDS and result.matches:
                continue
            key = (result.property, result.verdict, result.expected) + manifest_reason(result)
            groups.setdefault(key, []).append(ctx.variant.name)
    notes = []
    for (prop, verdict, expected, reason, ref), variant_names in groups.items():
        spec = _SPECS.get(prop)
        shown = {HOLDS: "seen", VIOLATED: "never reached"}.get(verdict, verdict) if spec and spec.kind == SOMETIMES \
            else verdict
        line = f"- {prop} {shown} under {', '.join(f'`{v}`' for v in variant_names)}"
        line += f" — expected {expected}" if expected is not None else " — no expectation"
        if expected is not None and expected != verdict:
            line += " **(differs)**"
        if reason:
            line += f". {reason}"
        if ref:
            line += f" ({ref})"
        notes.append(line)
    return notes


def _lifecycle_section(graph: LifecycleGraph) -> list[str]:
    lines = ["## Resize lifecycle", ""]
    lines.append(f"Derived from the explored state graph of `{graph.variant}` over {len(graph.scenarios)} default "
                 f"scenarios ({graph.states} states, {graph.transitions} transitions): each pod's status "
                 "(`model/lifecycle.py`) along every edge; each arrow names the actor that moves the pod and the "
                 "actions. Only reachable statuses appear. Graphviz form: [lifecycle.dot](lifecycle.dot).")
    lines.append("")
    missing = [s for s in LIFECYCLE_STATUSES if s not in graph.statuses]
    if "Infeasible" in missing:
        lines.append("**Infeasible is never reached** on these scenarios, so it is not drawn: since v1.36 the API "
                     "server rejects a resize above the node's allocatable, and the kubelet's other Infeasible "
                     "reasons (static pods, swap, static CPU/memory managers; reference §2.2) are not modelled.")
        lines.append("")
    others = [s for s in missing if s != "Infeasible"]
    if others:
        lines.append(f"Also never reached: {', '.join(others)}.")
        lines.append("")
    lines += ["```mermaid", lifecycle_mermaid(graph), "```", ""]
    lines += ["| from | to | actor · actions |", "|---|---|---|"]
    for (source, target), actors in graph.edges.items():
        lines.append(f"| {source} | {target} | {_cell(_edge_label(actors))} |")
    lines.append("")
    return lines


def _coverage_section(graph: LifecycleGraph) -> list[str]:
    from kepcheck.model.actions import ACTION_NAMES, ACTOR_OF

    lines = ["## Action coverage", "",
             f"How often each action fired (explored transitions) under `{graph.variant}` over the default "
             "scenarios, and in how many scenarios.", "",
             "| action | actor | transitions | scenarios | note |", "|---|---|---:|---:|---|"]
    never = []
    for name in ACTION_NAMES:
        count = graph.action_counts.get(name, 0)
        note = ""
        if count == 0:
            never.append(name)
            note = "⚠ never fired: " + NEVER_FIRED_EXPLANATIONS.get(name, "no explanation recorded — add a scenario")
        lines.append(f"| {name} | {ACTOR_OF.get(name, '')} | {count} | "
                     f"{len(graph.action_scenarios.get(name, []))} | {note} |")
    lines.append("")
    lines.append("Every action fired at least once." if not never else
                 f"{len(never)} actions never fired: {', '.join(never)} (see the notes).")
    lines.append("")
    return lines


def _findings_section(outcome) -> list[str]:
    """Each violation of an always/eventually property, grouped by property and by reason."""
    groups: dict = {}
    for ctx, results in outcome:
        for result in results:
            if result.verdict != VIOLATED or result.kind not in _TRACE_KINDS:
                continue
            if result.expected == VIOLATED:
                key = manifest_reason(result)
            elif result.expected is None:
                key = ("Not in the manifest (a run without expectations).", "")
            else:
                key = (f"**Not expected by the manifest** (expected {result.expected}).", "")
            groups.setdefault(result.property, {}).setdefault(key, []).append(result)
    lines = ["## Findings", ""]
    if not groups:
        return lines + ["No always- or eventually-property is violated.", ""]
    lines += ["Every violation of a safety (always) or liveness (eventually) property, grouped by property and by "
              "the reason the manifest records. Each link is the shortest counterexample.", ""]
    number = 0
    for prop in [p.name for p in PROPERTIES if p.name in groups] + sorted(set(groups) - set(_SPECS)):
        spec = _SPECS.get(prop)
        lines.append(f"### {prop}{_kind_suffix(spec.kind) if spec else ''}")
        lines.append("")
        if spec:
            lines += [f"*Requires:* {spec.meaning}.", ""]
        for (reason, ref), results in groups[prop].items():
            number += 1
            where: dict = {}
            for r in results:
                where.setdefault(r.scenario, []).append(f"[{r.variant}](traces/{trace_file_name(r)})"
                                                        if r.trace is not None else r.variant)
            lines.append(f"{number}. {reason}" + (f" *({ref})*" if ref else ""))
            for scenario, links in where.items():
                lines.append(f"   - `{scenario}`: {', '.join(links)}")
            first = results[0]
            ctx = next(c for c, rs in outcome if c.scenario.name == first.scenario and c.variant.name == first.variant)
            if first.trace is not None:
                lines.append(f"   - shortest: `{replay_line(ctx, first.trace)[len('replay: '):]}`")
        lines.append("")
    return lines


# --- variant diff ----------------------------------------------------------------------------------

def variant_diff(outcome, variant_a: str, variant_b: str, *, trace_links: str | None = "traces/") -> str:
    """Markdown: every (scenario, property) whose verdict differs between ``variant_a`` and
    ``variant_b`` in ``outcome`` (``run_checks`` pairs covering both variants), with the trace that
    explains the change (the counterexample where an always/eventually property fails, the witness
    where a sometimes property is reached): its replay line, and a link into a review's ``traces/``
    folder when ``trace_links`` is set (``None``: no links)."""
    outcome = list(outcome)
    by_key = {(ctx.scenario.name, ctx.variant.name): (ctx, {r.property: r for r in results})
              for ctx, results in outcome}
    scenarios = list(dict.fromkeys(ctx.scenario.name for ctx, _ in outcome))
    lines = [f"# Verdict changes: `{variant_a}` → `{variant_b}`", ""]
    changes = 0
    compared = 0
    body = []
    for scenario in scenarios:
        if (scenario, variant_a) not in by_key or (scenario, variant_b) not in by_key:
            continue
        compared += 1
        ctx_a, results_a = by_key[(scenario, variant_a)]
        ctx_b, results_b = by_key[(scenario, variant_b)]
        rows = []
        for prop in [p.name for p in PROPERTIES if p.name in results_a and p.name in results_b]:
            ra, rb = results_a[prop], results_b[prop]
            if ra.verdict == rb.verdict:
                continue
            rows.append((prop, ra, rb))
        if not rows:
            continue
        body += [f"## `{scenario}`", "", f"| property | `{variant_a}` | `{variant_b}` |", "|---|:---:|:---:|"]
        for prop, ra, rb in rows:
            body.append(f"| {prop}{_kind_suffix(ra.kind)} | {_diff_cell(ra)} | {_diff_cell(rb)} |")
        body.append("")
        for prop, ra, rb in rows:
            changes += 1
            body.append(f"- **{prop}**: {ra.verdict} under `{variant_a}`, {rb.verdict} under `{variant_b}`.")
            for ctx, r in ((ctx_a, ra), (ctx_b, rb)):
                reason, ref = manifest_reason(r)
                if r.verdict == VIOLATED and reason:
                    body.append(f"  - why under `{r.variant}`: {reason}" + (f" ({ref})" if ref else ""))
                if r.trace is None:
                    continue
                what = "witness" if r.kind == SOMETIMES else ("lasso" if r.trace.loop is not None else "counterexample")
                link = (f" — [trace report]({trace_links}{trace_file_name(r)})"
                        if trace_links is not None and _has_report(r) else "")
                body.append(f"  - {what} under `{r.variant}` ({counted(len(r.trace), 'step')}){link}:")
                body.append(f"    `{replay_line(ctx, r.trace)[len('replay: '):]}`")
        body.append("")
    lines.append(f"{changes} verdicts change on {compared} scenarios compared"
                 + (" (no scenario has both variants)." if not compared else "."))
    lines.append("")
    return "\n".join(lines + body).rstrip("\n") + "\n"


def _diff_cell(result: CheckResult) -> str:
    if result.kind == SOMETIMES:
        return {HOLDS: "seen", VIOLATED: "never"}.get(result.verdict, SYMBOL.get(result.verdict, "?"))
    return SYMBOL.get(result.verdict, "?")
