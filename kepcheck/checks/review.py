"""The design review report: what ``make check`` writes under ``reports/`` for a KEP pull request.

``write_review(outcome, out_dir)`` writes ``index.md`` — per scenario the variant × property
matrix, the expectations of the manifest beside the violations, the resize lifecycle diagram
(Mermaid and ``lifecycle.dot``), action coverage and the findings — and one trace report
(``checks/trace_report.py``) with its ITF file per ✗. ``variant_diff(outcome, a, b)`` lists the
verdicts that change between two designs, with the trace that explains each change.

The input is the run's outcome (``checks/run.py``: per scenario × variant the context, its
results and, for the lifecycle variant, the record of its exploration). The reporter never
searches. Output is deterministic: with ``include_times=False`` the same run gives byte-identical
files.
"""

from __future__ import annotations

from pathlib import Path

from kepcheck.spec.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.vocabulary import LIFECYCLE_STATUSES

from kepcheck.checks.lifecycle import (
    NEVER_FIRED_EXPLANATIONS, LifecycleGraph, edge_label, lifecycle_dot, lifecycle_graph, lifecycle_mermaid,
)
from kepcheck.checks.output import REPORT_HEADING, atomic_directory, check_output_dir
from kepcheck.checks.report import counted, replay_line
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, SYMBOLS, VIOLATED, CheckResult
from kepcheck.checks.trace_report import kind_suffix, markdown_cell, trace_file_name, trace_markdown, write_itf
from kepcheck.model.actions import ACTION_NAMES, ACTOR_OF

__all__ = ["write_review", "variant_diff", "outcome_lifecycle", "LIFECYCLE_VARIANT"]

LIFECYCLE_VARIANT = "alpha-1.37"  # the variant whose lifecycle the review draws, when the run has it
_SPECS = {p.name: p for p in PROPERTIES}
_TRACE_KINDS = (ALWAYS, EVENTUALLY)


def _has_report(result: CheckResult) -> bool:
    """A trace report is written for every violation of an always/eventually property with a trace."""
    return result.verdict == VIOLATED and result.kind in _TRACE_KINDS and result.trace is not None


def outcome_lifecycle(outcome) -> LifecycleGraph | None:
    """The lifecycle of the run's lifecycle variant (``LIFECYCLE_VARIANT`` when the run has it, else
    its first variant) from the records of its explorations; None when nothing was recorded."""
    variants = list(dict.fromkeys(run.ctx.variant.name for run in outcome))
    if not variants:
        return None
    variant = LIFECYCLE_VARIANT if LIFECYCLE_VARIANT in variants else variants[0]
    records = [(run.lifecycle, max((r.states for r in run.results), default=0))
               for run in outcome if run.ctx.variant.name == variant and run.lifecycle is not None]
    return lifecycle_graph(variant, records) if records else None


# --- the review report -----------------------------------------------------------------------------

def _group(outcome):
    """{scenario: [(ctx, {property: result})]}, in outcome order."""
    grouped: dict = {}
    for run in outcome:
        grouped.setdefault(run.ctx.scenario.name, []).append((run.ctx, {r.property: r for r in run.results}))
    return grouped


def _matrix_cell(result: CheckResult | None, link_prefix: str) -> str:
    if result is None:
        return ""
    if result.kind == SOMETIMES:
        cell = {HOLDS: "seen", VIOLATED: "never", INCONCLUSIVE: "≈"}.get(result.verdict, SYMBOLS.get(result.verdict, "?"))
    else:
        cell = SYMBOLS.get(result.verdict, "?")
        if _has_report(result):
            cell = f"[✗]({link_prefix}{trace_file_name(result)})"
    if not result.matches:
        cell = f"**{cell} (expected {result.expected})**"
    return cell


def _write_trace_reports(outcome, traces_dir: Path) -> list[Path]:
    written = []
    for run in outcome:
        for result in run.results:
            if _has_report(result):
                path = traces_dir / trace_file_name(result)
                path.write_text(trace_markdown(run.ctx, result), encoding="utf-8")
                write_itf(run.ctx, result, path)
                written.append(path)
    return written


def _headline(outcome, grouped: dict, properties: list, written: int, include_times: bool) -> list[str]:
    all_results = [r for run in outcome for r in run.results]
    variants = list(dict.fromkeys(run.ctx.variant.name for run in outcome))
    differs = [r for r in all_results if not r.matches and r.verdict != INCONCLUSIVE]
    inconclusive = [r for r in all_results if r.verdict == INCONCLUSIVE]
    lines = [f"{REPORT_HEADING}: scheduler preemption for in-place pod resize", ""]
    lines.append(f"{len(all_results)} checks: {counted(len(grouped), 'scenario')} × {counted(len(variants), 'variant')} × "
                 f"{counted(len(properties), 'property', 'properties')} (explicit-state engine). "
                 f"{sum(1 for r in all_results if r.expected is not None and r.matches)} as the manifest expects, "
                 f"{len(differs)} differ, {len(inconclusive)} inconclusive; {written} trace reports.")
    if include_times:
        total = sum(max((r.seconds for r in run.results), default=0) for run in outcome)
        lines[-1] += f" Total engine time {total:.1f} s."
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
    return lines


def _matrix_section(grouped: dict, properties: list, include_times: bool) -> list[str]:
    lines = ["## Variant × property matrix", ""]
    for scenario, rows in grouped.items():
        lines += [f"### `{scenario}`", "", rows[0][0].scenario.description, ""]
        names = [ctx.variant.name for ctx, _ in rows]
        lines.append("| property | " + " | ".join(f"`{n}`" for n in names) + " |")
        lines.append("|---|" + ":---:|" * len(names))
        for prop in properties:
            cells = [_matrix_cell(results.get(prop), "traces/") for _, results in rows]
            if not any(cells):
                continue
            kind = next((results[prop].kind for _, results in rows if prop in results), "")
            lines.append(f"| {prop}{kind_suffix(kind)} | " + " | ".join(cells) + " |")
        lines.append("| *distinct states* | " + " | ".join(
            str(max((r.states for r in results.values()), default=0)) for _, results in rows) + " |")
        if include_times:
            lines.append("| *seconds* | " + " | ".join(
                f"{max((r.seconds for r in results.values()), default=0):.2f}" for _, results in rows) + " |")
        notes = _expectation_notes(rows)
        if notes:
            lines += ["", "Expected verdicts beside the violations:", ""] + notes
        lines.append("")
    return lines


def write_review(outcome, out_dir, *, include_times: bool = True, lifecycle: LifecycleGraph | None = None) -> Path:
    """Write ``out_dir/index.md``, ``out_dir/lifecycle.dot`` and ``out_dir/traces/*.md|*.itf.json``
    for ``outcome`` (the ``ContextRun`` values of ``checks.run.run_checks``). Returns the path of
    ``index.md``. The lifecycle diagram and the action coverage are those of the run's lifecycle
    variant (``outcome_lifecycle``), or ``lifecycle`` when given.

    The report is built in a staging directory beside ``out_dir`` and renamed into place
    (``checks/output.py``): an existing report there is replaced whole, an error or interrupt leaves
    it as it was. A path that cannot take a report raises ``OutputError`` (one line)."""
    outcome = list(outcome)
    target = check_output_dir(out_dir)
    with atomic_directory(target, shown=out_dir) as staging:
        _write_review_files(outcome, staging, include_times, lifecycle)
    return Path(out_dir) / "index.md"


def _write_review_files(outcome: list, out: Path, include_times: bool, lifecycle: LifecycleGraph | None) -> None:
    traces_dir = out / "traces"
    traces_dir.mkdir(parents=True, exist_ok=True)
    grouped = _group(outcome)
    property_order = [p.name for p in PROPERTIES]
    present = {r.property for run in outcome for r in run.results}
    properties = [name for name in property_order if name in present] + sorted(present - set(property_order))
    written = _write_trace_reports(outcome, traces_dir)
    lines = _headline(outcome, grouped, properties, len(written), include_times)
    lines += _matrix_section(grouped, properties, include_times)
    graph = lifecycle if lifecycle is not None else outcome_lifecycle(outcome)
    if graph is not None:
        (out / "lifecycle.dot").write_text(lifecycle_dot(graph), encoding="utf-8")
        lines += _lifecycle_section(graph)
        lines += _coverage_section(graph)
    lines += _findings_section(outcome)
    (out / "index.md").write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")


def _expectation_notes(rows) -> list[str]:
    """Each non-holding or unexpected cell, grouped by (property, verdict, expected, reason)."""
    groups: dict = {}
    for ctx, results in rows:
        for result in results.values():
            if result.verdict == HOLDS and result.matches:
                continue
            key = (result.property, result.verdict, result.expected) + result.explanation()
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
        lines.append(f"| {source} | {target} | {markdown_cell(edge_label(actors))} |")
    lines.append("")
    return lines


def _coverage_section(graph: LifecycleGraph) -> list[str]:
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
    for run in outcome:
        for result in run.results:
            if result.verdict != VIOLATED or result.kind not in _TRACE_KINDS:
                continue
            if result.expected == VIOLATED:
                key = result.explanation()
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
        lines.append(f"### {prop}{kind_suffix(spec.kind) if spec else ''}")
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
            ctx = next(run.ctx for run in outcome
                       if run.ctx.scenario.name == first.scenario and run.ctx.variant.name == first.variant)
            if first.trace is not None:
                lines.append(f"   - shortest: `{replay_line(ctx, first.trace)[len('replay: '):]}`")
        lines.append("")
    return lines


# --- variant diff ----------------------------------------------------------------------------------

def variant_diff(outcome, variant_a: str, variant_b: str, *, trace_links: str | None = "traces/") -> str:
    """Markdown: every (scenario, property) whose verdict differs between ``variant_a`` and
    ``variant_b`` in ``outcome`` (``run_checks`` runs covering both variants), with the trace that
    explains the change (the counterexample where an always/eventually property fails, the witness
    where a sometimes property is reached): its replay line, and a link into a review's ``traces/``
    folder when ``trace_links`` is set (``None``: no links)."""
    outcome = list(outcome)
    by_key = {(run.ctx.scenario.name, run.ctx.variant.name): (run.ctx, {r.property: r for r in run.results})
              for run in outcome}
    scenarios = list(dict.fromkeys(run.ctx.scenario.name for run in outcome))
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
            body.append(f"| {prop}{kind_suffix(ra.kind)} | {_diff_cell(ra)} | {_diff_cell(rb)} |")
        body.append("")
        for prop, ra, rb in rows:
            changes += 1
            body.append(f"- **{prop}**: {ra.verdict} under `{variant_a}`, {rb.verdict} under `{variant_b}`.")
            for ctx, r in ((ctx_a, ra), (ctx_b, rb)):
                reason, ref = r.explanation()
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
        return {HOLDS: "seen", VIOLATED: "never"}.get(result.verdict, SYMBOLS.get(result.verdict, "?"))
    return SYMBOLS.get(result.verdict, "?")
