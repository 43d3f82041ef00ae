"""The plain outputs: a trace as terminal text, a trace as an ITF document, the JSON record of a
check, the replay line, and the verdict matrix of docs/findings.md.

Traces are told in Kubernetes words by the step-describer (``checks/outputs/describe.py``): each step
shows the action label with its parameters, only the fields that changed and, per node, what the
scheduler and the kubelet count against the node's allocatable (``checks/outputs/breach.py: used_text``). The machine form is ITF (Apalache ADR-015 /
Quint), written by ``checks/outputs/itf.py``.
"""

from __future__ import annotations

import json
import shlex

from kepcheck.spec.kep.manifest import Manifest
from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES
from kepcheck.spec.kep.variants import VARIANTS

from kepcheck.checks.outputs.breach import used_text
from kepcheck.checks.outputs.describe import describe_trace
from kepcheck.checks.outputs.itf import trace_to_itf
from kepcheck.checks.result import CheckResult, Trace
from kepcheck.model.context import Context

__all__ = ["format_trace", "trace_to_itf", "result_record", "replay_line", "replay_command", "counted",
           "summary_markdown", "scenario_argument"]


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 step``, ``2 steps``: a count with its noun in the right number."""
    return f"{count} {noun}" if count == 1 else f"{count} {plural or noun + 's'}"


def format_trace(ctx: Context, trace: Trace, marks: dict | None = None) -> str:
    """Plain text for terminals; ``marks`` maps a step's number to lines shown under it (e.g. "✗
    NoExcessVictims violated here"). The last line is the replay line (``replay_line``), to be
    printed unwrapped."""
    lines = []
    for step in describe_trace(ctx, trace):
        marker = "  ← the loop starts from this state" if step.loop_start else ""
        lines.append(f"{step.number:>3}. {step.label}" + (f"  [{step.actor}]" if step.actor else "") + marker)
        for change in step.changes or ("(no visible change)",):
            lines.append(f"       {change}")
        lines.append(f"       used / allocatable: {used_text(ctx, trace.steps[step.number][1])}")
        lines.extend(f"       {mark}" for mark in (marks or {}).get(step.number, ()))
    if trace.loop is not None:
        last = len(trace.steps) - 1
        if last == trace.loop:
            lines.append(f"  ⟲ stays in the state of step {trace.loop} forever")
        else:
            again = f"step {last} repeats" if last == trace.loop + 1 else f"steps {trace.loop + 1}-{last} repeat"
            lines.append(f"  ⟲ step {last} is back in the state of step {trace.loop}: {again} forever")
    lines.append(replay_line(ctx, trace))
    return "\n".join(lines)


def scenario_argument(ctx: Context) -> str:
    """The shipped scenario's name, or the file a scenario was loaded from."""
    source = ctx.scenario.source
    if not source or source.startswith("spec/scenarios/"):
        return ctx.scenario.name
    return source


def replay_command(ctx: Context, trace: Trace) -> str:
    """The command that replays ``trace`` (a scenario file's path quoted for the shell)."""
    mutants = "".join(f" --mutant {name}" for name in sorted(ctx.mutants))
    return (f"kepcheck replay --scenario {shlex.quote(scenario_argument(ctx))} --variant {ctx.variant.name}{mutants} "
            + " ".join(json.dumps(label) for label in trace.labels))


def replay_line(ctx: Context, trace: Trace) -> str:
    """``replay: `` and the replay command (the Markdown reports' form)."""
    return "replay: " + replay_command(ctx, trace)


def result_record(ctx: Context | None, result: CheckResult) -> dict:
    """The JSON record of one check (schema in docs/using.md)."""
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


def summary_markdown(manifest: Manifest, scenario_names: list[str]) -> str:
    """The variant × property matrix of the manifest as a Markdown table: ✓ where the property holds
    on every default scenario, ✗ with the scenarios where it is violated. ``tests/test_readme.py``
    checks that docs/findings.md shows exactly this table."""
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
