"""The trace report: one counterexample (or witness) as Markdown for a KEP pull request.

``trace_markdown(ctx, result)`` gives a narrative paragraph, the breach (the step where the property
fails and its own arithmetic there, or the goal a lasso never reaches: ``checks/outputs/breach.py``), a
numbered table (the step-describer's rows, ``checks/outputs/describe.py``, with each node's used /
allocatable as the scheduler and the kubelet count it, and the failing step marked ✗), a Mermaid
sequence diagram between the user, kube-apiserver,
kube-scheduler and each node's kubelet, the lasso's loop for liveness traces and the replay
line; ``write_itf`` writes the ITF JSON beside it. Output is deterministic.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kepcheck.spec.kep.properties import EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.kep.transitions import TRANSITIONS
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.kep.vocabulary import ResizeReason

from kepcheck.checks.outputs.breach import Breach, allocatable_text, find_breach, load_text, node_loads
from kepcheck.checks.outputs.describe import StepDescription, describe_trace, kubelet_participant
from kepcheck.checks.outputs.itf import trace_to_itf
from kepcheck.checks.outputs.report import counted, replay_line
from kepcheck.checks.result import SYMBOLS, CheckResult, Trace
from kepcheck.model.context import Context

__all__ = ["trace_markdown", "write_itf", "trace_file_name", "itf_file_name", "sequence_diagram", "narrative",
           "mermaid_text", "markdown_cell", "kind_suffix", "linkify_upstream", "UPSTREAM", "ITF_SCHEMA_PATH"]

ITF_SCHEMA_PATH = Path(__file__).parent / "itf_schema.json"
_SPECS = {p.name: p for p in PROPERTIES}
_DESCRIPTIONS = {v.name: v.description for v in VARIANTS}


def trace_file_name(result: CheckResult) -> str:
    """``<scenario>--<variant>--<property>.md`` (relative to the review's ``traces/`` folder)."""
    return f"{result.scenario}--{result.variant}--{result.property}.md"


def itf_file_name(markdown_name: str) -> str:
    return markdown_name[:-3] + ".itf.json" if markdown_name.endswith(".md") else markdown_name + ".itf.json"


def markdown_cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", "<br>")


def kind_suffix(kind: str) -> str:
    return {SOMETIMES: " (sometimes)", EVENTUALLY: " (eventually)"}.get(kind, "")


# --- Mermaid sequence diagram ----------------------------------------------------------------------

_MERMAID_BAD = str.maketrans({";": ",", "#": "No.", '"': "'", "%": " percent", "<": "‹", ">": "›", "{": "(",
                              "}": ")", "\n": " "})


def mermaid_text(text: str) -> str:
    """A message or note text that cannot break Mermaid (no ``;`` ``#`` ``"`` ``%`` ``<>`` ``{}``)."""
    return text.translate(_MERMAID_BAD).strip()


def _participants(ctx: Context) -> list[str]:
    lines = ["    participant U as user/controllers", "    participant API as kube-apiserver",
             "    participant S as kube-scheduler"]
    for node in ctx.node_range:
        lines.append(f"    participant {kubelet_participant(ctx, node)} as kubelet {mermaid_text(ctx.node_names[node])}")
    return lines


def _diagram_lines(step: StepDescription, indent: str) -> list[str]:
    lines = []
    for k, (source, target, text) in enumerate(step.messages):
        text = mermaid_text((f"({step.number}) " if k == 0 else "") + text)
        if target == "note":
            lines.append(f"{indent}Note over {source}: {text}")
        else:
            arrow = "-->>" if source == "API" else "->>"
            lines.append(f"{indent}{source}{arrow}{target}: {text}")
    return lines


def sequence_diagram(ctx: Context, trace: Trace, steps: list[StepDescription] | None = None,
                     failure: tuple[int, str] | None = None) -> str:
    """The trace as a Mermaid ``sequenceDiagram`` (without the code fence). Each step's first line
    carries its number ``(n)``; a lasso's repeating steps are in a ``loop`` block; ``failure``
    (step, property) adds a note after the step where the property fails."""
    steps = steps if steps is not None else describe_trace(ctx, trace)
    # Wrapped messages and narrower actors keep the text legible at GitHub's width (tests/test_rendering.py).
    lines = ['%%{init: {"sequence": {"wrap": true, "width": 120, "actorMargin": 30}}}%%', "sequenceDiagram"]
    lines += _participants(ctx)
    everyone = f"U,{kubelet_participant(ctx, ctx.node_range[-1])}"
    last = len(trace.steps) - 1
    for step in steps[1:]:
        number = step.number
        if trace.loop is not None and number == trace.loop + 1 and trace.loop < last:
            lines.append(f"    loop step {last} repeats forever" if trace.loop + 1 == last
                         else f"    loop steps {trace.loop + 1} to {last} repeat forever")
        lines += _diagram_lines(step, "        " if trace.loop is not None and trace.loop < number else "    ")
        if failure is not None and failure[0] == number:
            lines.append(f"    Note over {everyone}: ✗ {mermaid_text(failure[1])} fails here")
    if trace.loop is not None:
        if trace.loop < last:
            lines.append("    end")
        else:
            lines.append(f"    Note over {everyone}: stays in the state of step {last} forever")
    return "\n".join(lines)


# --- narrative -------------------------------------------------------------------------------------

def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def narrative(ctx: Context, result: CheckResult, steps: list[StepDescription] | None = None,
              breach: Breach | None = None) -> str:
    """One paragraph that tells the trace in plain words, from the same step descriptions as the table."""
    trace = result.trace
    steps = steps if steps is not None else describe_trace(ctx, trace)
    spec = _SPECS.get(result.property)
    clauses = [f"({step.number}) {step.clause}" for step in steps[1:]]
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
            repeated = f"step {last}" if trace.loop + 1 == last else f"steps {trace.loop + 1}–{last}"
            text += (f" From step {trace.loop} the run can repeat {repeated} forever while "
                     f"taking every action that fairness requires")
        text += f"; so {result.property} fails on this run. It requires: {meaning}."
    else:
        at = breach.step if breach is not None and breach.step is not None else len(trace.steps) - 1
        text += f" At step {at}, {result.property} is violated. It requires: {meaning}."
    return text


# --- the report ------------------------------------------------------------------------------------

def _action_refs() -> dict[str, str]:
    """Per action, the reference of its row in the transition table (its own row first)."""
    refs: dict[str, str] = {}
    for row in TRANSITIONS:
        if row.role == "self" or row.action not in refs:
            refs.setdefault(row.action, row.ref)
    return refs


_REFS = _action_refs()


UPSTREAM = "https://github.com"
# --- upstream links (also used by the review's pages) --------------------------------------------------------------------------------

_UPSTREAM_REF = re.compile(r"(?<![\w/#\[-])(?:(?P<repo>kubernetes/(?:kubernetes|enhancements)) "
                           r"(?P<repo_pr>PR )?#(?P<repo_n>\d+)|(?P<pr>PR )?#(?P<n>\d{3,})|KEP-(?P<kep>\d+))(?!\w)")


def _upstream_link(match: re.Match) -> str:
    if match.group("kep"):
        number = match.group("kep")
        return f"[KEP-{number}]({UPSTREAM}/kubernetes/enhancements/issues/{number})"
    repo = match.group("repo") or "kubernetes/kubernetes"
    number = match.group("repo_n") or match.group("n")
    kind = "pull" if (match.group("repo_pr") or match.group("pr")) else "issues"
    return f"[{repo}#{number}]({UPSTREAM}/{repo}/{kind}/{number})"


def linkify_upstream(text: str) -> str:
    """Upstream references as absolute links: ``kubernetes/kubernetes #N`` and a bare ``#N`` (every
    issue or pull request this project cites is in kubernetes/kubernetes) to its issue (GitHub
    redirects an issue number to the pull request of that number), ``PR #N`` to the pull request,
    ``KEP-N`` to its tracking issue in kubernetes/enhancements. A bare ``#N`` would link to the
    repository the text is pasted in."""
    return _UPSTREAM_REF.sub(_upstream_link, text)


def _header(ctx: Context, result: CheckResult) -> list[str]:
    trace = result.trace
    spec = _SPECS.get(result.property)
    kind = spec.kind if spec else result.kind
    lines = [f"# {result.property} {result.verdict} — `{ctx.scenario.name}` / `{ctx.variant.name}`", ""]
    lines.append(f"- **Property:** {result.property} ({kind}): {spec.meaning if spec else ''}"
                 + (f" — {spec.ref}" if spec and spec.ref else ""))
    verdict = f"- **Verdict:** {SYMBOLS.get(result.verdict, '?')} {result.verdict}"
    if result.expected is not None:
        verdict += f"; expected: {result.expected}" + ("" if result.matches else " — **differs from the manifest**")
    else:
        verdict += "; no expectation in the manifest for this run"
    lines.append(verdict)
    reason, ref = result.explanation()
    from_manifest = result.expected is not None and bool(reason) and (reason != result.reason or result.expected == "violated")
    if from_manifest:
        lines.append(f"- **Why (manifest):** {reason}")
    if result.reason and (result.reason != reason or not from_manifest):
        lines.append(f"- **Engine's explanation:** {result.reason}")
    if ref or result.ref:
        lines.append(f"- **Reference:** {ref or result.ref}")
    lines.append(f"- **Scenario:** `{ctx.scenario.name}` — {ctx.scenario.description}")
    lines.append(f"- **Nodes:** {allocatable_text(ctx)}")
    description = _DESCRIPTIONS.get(ctx.variant.name, "")
    lines.append(f"- **Variant:** `{ctx.variant.name}`" + (f" — {description}" if description else ""))
    if ctx.mutants:
        lines.append(f"- **Mutants:** {', '.join(sorted(ctx.mutants))}")
    if kind == EVENTUALLY:
        lines.append(f"- **Fairness assumed:** {', '.join(result.fairness) or 'none'}")
    lines.append(f"- **Length:** {counted(len(trace), 'step')}" + (f", a lasso looping back to step {trace.loop}"
                                                                 if trace.loop is not None else ""))
    return lines[:2] + [linkify_upstream(line) for line in lines[2:]]


def _action_cell(label: str) -> str:
    """An action label as code that can wrap at GitHub's width: the action's name, then its
    parameters, as two code spans (``PeriodicRetryPendingResizes`` ``(node=n1)``)."""
    name, opening, parameters = label.partition("(")
    return f"`{name}`" + (f" `({parameters}`" if opening else "")


def _table(ctx: Context, trace: Trace, steps: list[StepDescription], breach: Breach | None = None) -> list[str]:
    lines = ["| step | actor | action (reference) | what changed | used / allocatable |",
             "|---:|---|---|---|---|"]
    for step in steps:
        number = str(step.number) + (" ✗" if breach is not None and breach.step == step.number else "")
        if trace.loop is not None:
            if step.number == trace.loop:
                number += " ⟲ start"
            elif step.number > trace.loop:
                number += " ⟲"
        action = _action_cell(step.label) if step.number else "initial state"
        changes = "<br>".join(markdown_cell(c) for c in step.changes) or "(no visible change)"
        used = "<br>".join(markdown_cell(line) for load in node_loads(ctx, trace.steps[step.number][1])
                           for line in load_text(ctx, load))
        ref = _REFS.get(step.action.name, "") if step.action is not None else ""
        action = markdown_cell(action) + (f"<br><sub>{markdown_cell(ref)}</sub>" if ref else "")
        lines.append(f"| {number} | {step.actor} | {action} | {changes} | {used} |")
    if trace.loop is not None:
        last = len(trace.steps) - 1
        lines.append("")
        lines.append(f"⟲ The run stays in the state of step {last} forever." if trace.loop == last else
                     f"⟲ Step {last} is back in the state of step {trace.loop}: "
                     + (f"step {last} repeats forever." if trace.loop + 1 == last
                        else f"steps {trace.loop + 1}–{last} repeat forever."))
    lines += ["", linkify_upstream(_LEGEND) + (f" ✗ marks step {breach.step}, where the property fails (see \"The breach\")."
                             if breach is not None and breach.step is not None else "")]
    return lines


_LEGEND = ("Used / allocatable per node after each step: *scheduler* is what the scheduler's NodeInfo counts "
           "(Requested: max(desired, allocated, actual) per assigned pod, or what the variant counts); *kubelet* is "
           "max(allocated, actual) of the pods the kubelet admitted, as KubeletNeverOvercommits counts them. "
           "⚠ marks a total over allocatable: on the scheduler's side that is expected while a resize waits, since "
           "it counts the resize's desired size (kubernetes/kubernetes #135107); on the kubelet's side it is an "
           "overcommit.")


def _failure(result: CheckResult, breach: Breach | None) -> tuple[int, str] | None:
    return (breach.step, result.property) if breach is not None and breach.step is not None else None


def _breach_section(ctx: Context, result: CheckResult, breach: Breach | None) -> list[str]:
    """The failing step and the property's own arithmetic there, or the goal a lasso never reaches."""
    if breach is None or not breach.lines and breach.step is None:
        return []
    trace = result.trace
    if breach.step is not None:
        action = trace.steps[breach.step][0]
        where = f"step {breach.step} (`{action.label()}`)" if action is not None else "the initial state"
        head = f"{result.property} fails at {where}:"
    else:
        head = f"{result.property} fails on this run:"
    return ["## The breach", "", head, ""] + [f"- {markdown_cell(line)}" for line in breach.lines] + [""]


def trace_markdown(ctx: Context, result: CheckResult) -> str:
    """A counterexample (or witness) as a Markdown report."""
    if result.trace is None:
        raise ValueError(f"{result.property} in {result.scenario}/{result.variant} has no trace")
    trace = result.trace
    steps = describe_trace(ctx, trace)
    breach = find_breach(ctx, result)
    lines = _header(ctx, result)
    lines += ["", "## What happens", "", narrative(ctx, result, steps, breach), ""]
    lines += _breach_section(ctx, result, breach) + ["## Steps", ""]
    if trace.loop is not None:
        lines += ["Rows marked ⟲ repeat forever (the lasso's loop); ⟲ start is the state the loop returns to.", ""]
    lines += _table(ctx, trace, steps, breach)
    itf = itf_file_name(trace_file_name(result))
    diagram = sequence_diagram(ctx, trace, steps, _failure(result, breach))
    lines += ["", "## Sequence diagram", "", "```mermaid", diagram, "```", "",
              "## Replay", "", "```", replay_line(ctx, trace), "```", "",
              f"Machine form (ITF, Apalache ADR-015): [{itf}]({itf})", ""]
    return "\n".join(lines)


def write_itf(ctx: Context, result: CheckResult, path) -> Path:
    """Write the ITF JSON of the result's trace. ``path`` is the ``.itf.json`` file or the trace
    report's ``.md`` file (the ITF goes beside it). Returns the path written."""
    path = Path(path)
    if not path.name.endswith(".itf.json"):
        path = path.with_name(itf_file_name(path.name))
    document = trace_to_itf(ctx, result.trace, f"{result.property} {result.verdict} in {result.scenario} "
                                               f"under {result.variant}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path
