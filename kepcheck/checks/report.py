"""Every human- and machine-readable output: result tables, trace text, ITF JSON, records.

Traces are told in Kubernetes words: each step shows the action label with its parameters, only
the fields that changed (``web: desired cpu 2 → 3``, ``batch: Running → Terminating
(DisruptionTarget: preempted for web)``) and, per node, the free capacity as the scheduler and as
the kubelet see it. The machine form is ITF (Apalache ADR-015 / Quint): ``#meta``, ``vars``,
``states`` each with ``#meta.action``, and ``loop`` for lassos.
"""

from __future__ import annotations

import json
from typing import Iterable

from kepcheck.spec.vocabulary import Phase, Queue, ResizeReason

from kepcheck.checks.result import CheckResult, Trace
from kepcheck.model.context import Context
from kepcheck.model.state import NO_NODE, NO_POD, PodState, State
from kepcheck.model.views import admitted, kubelet_free, scheduler_free

__all__ = ["describe_pod_changes", "format_trace", "trace_to_itf", "result_record", "replay_line", "free_capacity",
           "counted"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 step``, ``2 steps``: a count with its noun in the right number."""
    return f"{count} {noun}" if count == 1 else f"{count} {plural or noun + 's'}"


_PHASES = {Phase.ABSENT: "Absent", Phase.PENDING: "Pending", Phase.BOUND: "Bound", Phase.RUNNING: "Running",
           Phase.TERMINATING: "Terminating", Phase.GONE: "Gone", Phase.REJECTED: "Failed (OutOfcpu/OutOfmemory)"}
_REASONS = {ResizeReason.NONE: "none", ResizeReason.DEFERRED: "Deferred", ResizeReason.INFEASIBLE: "Infeasible"}
_QUEUES = {Queue.NOT_QUEUED: "not queued", Queue.ACTIVE: "activeQ", Queue.UNSCHEDULABLE: "unschedulable pool"}


def _node(ctx: Context, index: int) -> str:
    return ctx.node_names[index] if index != NO_NODE else "none"


def describe_pod(ctx: Context, index: int, pod: PodState) -> str:
    """A one-line description of a pod, for the initial state."""
    parts = [f"{ctx.names[index]} (priority {ctx.priorities[index]}): {_PHASES[pod.phase]}"]
    if pod.node != NO_NODE:
        parts.append(f"on {ctx.node_names[pod.node]}")
    parts.append(f"desired {ctx.format(pod.desired)}")
    if admitted(pod):
        parts.append(f"allocated {ctx.format(pod.allocated)}")
        parts.append(f"actual {ctx.format(pod.actual)}")
    if pod.resize != ResizeReason.NONE:
        parts.append(f"PodResizePending={_REASONS[pod.resize]}")
    if pod.in_progress:
        parts.append("PodResizeInProgress")
    if pod.queue != Queue.NOT_QUEUED:
        parts.append(f"scheduler: {_QUEUES[pod.queue]}")
    if pod.nominated != NO_NODE:
        parts.append(f"nominatedNodeName={ctx.node_names[pod.nominated]}")
    return ", ".join(parts)


def describe_pod_changes(ctx: Context, index: int, old: PodState, new: PodState) -> list[str]:
    """What changed for one pod, in Kubernetes words."""
    name = ctx.names[index]
    changes = []
    if old.phase != new.phase:
        text = f"{name}: {_PHASES[old.phase]} → {_PHASES[new.phase]}"
        if new.phase == Phase.TERMINATING and new.preempted_by != NO_POD and old.preempted_by == NO_POD:
            text += f" (DisruptionTarget: preempted for {ctx.names[new.preempted_by]})"
        if new.phase == Phase.BOUND:
            text += f" to {ctx.node_names[new.node]}"
        changes.append(text)
    for field, title in (("desired", "desired"), ("allocated", "allocated"), ("actual", "actual")):
        before, after = getattr(old, field), getattr(new, field)
        if before != after and (field == "desired" or admitted(new)):
            changes.append(f"{name}: {title} {ctx.format(before)} → {ctx.format(after)}")
    if old.resize != new.resize:
        changes.append(f"{name}: PodResizePending {_REASONS[old.resize]} → {_REASONS[new.resize]}")
    if old.in_progress != new.in_progress:
        changes.append(f"{name}: PodResizeInProgress {'set' if new.in_progress else 'cleared'}")
    if old.queue != new.queue:
        changes.append(f"{name}: scheduler {_QUEUES[old.queue]} → {_QUEUES[new.queue]}")
    if old.nominated != new.nominated:
        changes.append(f"{name}: nominatedNodeName {_node(ctx, old.nominated)} → {_node(ctx, new.nominated)}")
    if old.assumed != new.assumed:
        changes.append(f"{name}: scheduler assumes {ctx.format(new.assumed) if any(new.assumed) else 'nothing'}")
    if old.tracking != new.tracking:
        changes.append(f"{name}: scheduler {'tracks' if new.tracking else 'forgets'} its victims in flight")
    return changes


def free_capacity(ctx: Context, state: State) -> str:
    """Per node: free capacity as the scheduler sees it / as the kubelet sees it."""
    parts = []
    for node in ctx.node_range:
        parts.append(f"{ctx.node_names[node]}: scheduler {ctx.format(scheduler_free(ctx, state, node))}"
                     f" / kubelet {ctx.format(kubelet_free(ctx, state, node))}")
    return "; ".join(parts)


def trace_rows(ctx: Context, trace: Trace) -> list[dict]:
    """One row per step: number, actor, label, changes, free capacity."""
    from kepcheck.model.actions import ACTOR_OF

    rows = []
    previous = None
    for number, (label, state) in enumerate(trace.steps):
        if previous is None:
            changes = [describe_pod(ctx, i, pod) for i, pod in enumerate(state.pods) if pod.phase != Phase.ABSENT]
            actor = ""
        else:
            changes = []
            for i, (old, new) in enumerate(zip(previous.pods, state.pods)):
                changes += describe_pod_changes(ctx, i, old, new)
            for node in ctx.node_range:
                if previous.retry_due[node] != state.retry_due[node] and state.retry_due[node]:
                    changes.append(f"kubelet on {ctx.node_names[node]}: a retry of pending resizes is due")
            actor = ACTOR_OF.get(label.split("(")[0], "")
        rows.append({"step": number, "actor": actor, "action": label or "initial state", "changes": changes,
                     "free": free_capacity(ctx, state), "loop": trace.loop == number})
        previous = state
    return rows


def format_trace(ctx: Context, trace: Trace) -> str:
    """Plain text for terminals."""
    lines = []
    for row in trace_rows(ctx, trace):
        marker = "  ← the loop starts from this state" if row["loop"] else ""
        head = f"{row['step']:>3}. {row['action']}" + (f"  [{row['actor']}]" if row["actor"] else "") + marker
        lines.append(head)
        for change in row["changes"] or ["(no visible change)"]:
            lines.append(f"       {change}")
        lines.append(f"       free: {row['free']}")
    if trace.loop is not None:
        last = len(trace.steps) - 1
        if last == trace.loop:
            lines.append(f"  ⟲ stays in the state of step {trace.loop} forever")
        else:
            lines.append(f"  ⟲ step {last} is back in the state of step {trace.loop}: steps {trace.loop + 1}-{last} repeat forever")
    lines.append(replay_line(ctx, trace))
    return "\n".join(lines)


def _scenario_argument(ctx: Context) -> str:
    """The shipped scenario's name, or the file a scenario was loaded from."""
    source = ctx.scenario.source
    if not source or source.startswith("spec/scenarios/"):
        return ctx.scenario.name
    return source


def replay_line(ctx: Context, trace: Trace) -> str:
    mutants = "".join(f" --mutant {name}" for name in sorted(ctx.mutants))
    return (f"replay: kepcheck replay --scenario {_scenario_argument(ctx)} --variant {ctx.variant.name}{mutants} "
            + " ".join(json.dumps(label) for label in trace.labels))


def _itf_value(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return {"#bigint": str(value)}
    if isinstance(value, tuple):
        return {"#tup": [_itf_value(v) for v in value]}
    return value


def _itf_state(ctx: Context, state: State, label: str | None, index: int) -> dict:
    pods = {}
    for i, pod in enumerate(state.pods):
        pods[ctx.names[i]] = {
            "phase": _PHASES[pod.phase],
            "node": _node(ctx, pod.node),
            "desired": _itf_value(pod.desired),
            "allocated": _itf_value(pod.allocated),
            "actual": _itf_value(pod.actual),
            "podResizePending": _REASONS[pod.resize],
            "podResizeInProgress": pod.in_progress,
            "queue": _QUEUES[pod.queue],
            "nominatedNodeName": _node(ctx, pod.nominated),
            "preemptedFor": ctx.names[pod.preempted_by] if pod.preempted_by != NO_POD else "",
        }
    return {
        "#meta": {"index": index, "action": label or "init"},
        "pods": pods,
        "kubeletRetryDue": {ctx.node_names[n]: state.retry_due[n] for n in ctx.node_range},
    }


def trace_to_itf(ctx: Context, trace: Trace, description: str = "") -> dict:
    """The trace in ITF form (Apalache ADR-015); resource vectors are tuples in ``#meta.resources``
    order and model units of ``#meta.units``."""
    document = {
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "source": ctx.scenario.source or ctx.scenario.name,
            "description": description,
            "scenario": ctx.scenario.name,
            "variant": ctx.variant.name,
            "resources": list(ctx.scenario.resources),
            "units": list(ctx.scenario.units),
        },
        "vars": ["pods", "kubeletRetryDue"],
        "states": [_itf_state(ctx, state, label, i) for i, (label, state) in enumerate(trace.steps)],
    }
    if trace.loop is not None:
        document["loop"] = trace.loop
    return document


def result_record(ctx: Context | None, result: CheckResult) -> dict:
    """The JSON record of one check (schema in the README)."""
    return {
        "scenario": result.scenario,
        "variant": result.variant,
        "property": result.property,
        "kind": result.kind,
        "engine": result.engine,
        "verdict": result.verdict,
        "expected": result.expected,
        "states": result.states,
        "transitions": result.transitions,
        "depth": result.depth,
        "seconds": round(result.seconds, 3),
        "reason": result.reason or None,
        "trace": trace_to_itf(ctx, result.trace, f"{result.property} {result.verdict}")
        if (result.trace is not None and ctx is not None) else None,
    }


def summary_markdown(manifest, scenario_names: list[str]) -> str:
    """The variant × property matrix of the manifest as a Markdown table: ✓ where the property holds
    on every default scenario, ✗ with the scenarios where it is violated. ``tests/test_readme.py``
    checks that the README shows exactly this table."""
    from kepcheck.spec.properties import ALWAYS, EVENTUALLY, PROPERTIES
    from kepcheck.spec.variants import VARIANTS

    short = {name: str(i + 1) for i, name in enumerate(scenario_names)}
    lines = ["| property | " + " | ".join(v.name for v in VARIANTS) + " |",
             "|---|" + "---|" * len(VARIANTS)]
    for spec in PROPERTIES:
        if spec.kind not in (ALWAYS, EVENTUALLY):
            continue
        cells = []
        for variant in VARIANTS:
            failing = [short[s] for s in scenario_names
                       if manifest.expected(s, variant.name, spec.name).verdict == "violated"]
            cells.append("✓" if not failing else "✗ " + ",".join(failing))
        name = spec.name + (" (eventually)" if spec.kind == EVENTUALLY else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Scenarios: " + "; ".join(f"{short[name]} `{name}`" for name in scenario_names) + ".")
    return "\n".join(lines)
