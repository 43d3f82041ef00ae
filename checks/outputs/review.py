"""The design review report: what ``make check`` writes under ``reports/`` for a KEP pull request.

``write_review(outcome, out_dir)`` writes a report built for where it is read, a GitHub page or
comment (at most 65,536 characters, about 890 px of content):

- ``index.md``, kept under ``INDEX_LIMIT`` characters: the headline, the verdicts that differ
  from the manifest, a summary matrix (per property and variant, the scenarios that violate it),
  the scenarios and variants, and the findings (each violation, grouped by property and reason,
  with its shortest trace);
- ``scenarios/<scenario>.md``: that scenario's variant × property matrix, the manifest's
  expectations beside its violations and its trace reports (``checks/outputs/review_pages.py``);
- ``lifecycle.md`` and ``lifecycle.dot``: the resize lifecycle, one diagram per phase, and the
  action coverage, from the explorations of this run (``outcome_lifecycle``);
- ``traces/``: one trace report (``checks/outputs/trace_report.py``) with its ITF file per ✗.

``variant_diff(outcome, a, b)`` lists the verdicts that change between two designs, with the trace
that explains each change.

The input is the run's outcome (``checks/run.py``: per scenario × variant the context, its
results and, for the lifecycle variant, the record of its exploration). The reporter never
searches. Output is deterministic: with ``include_times=False`` the same run gives byte-identical
files.
"""

from __future__ import annotations

from pathlib import Path

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.language.loader import default_scenarios

from kepcheck.checks.outputs.files import REPORT_HEADING, atomic_directory, check_output_dir
from kepcheck.checks.outputs.lifecycle import LifecycleGraph, lifecycle_dot, lifecycle_graph
from kepcheck.checks.outputs.report import counted, replay_command
from kepcheck.checks.outputs.review_pages import (
    LIFECYCLE_PAGE, has_report, lifecycle_page, linkify_upstream, scenario_page, scenario_page_name, variant_groups,
)
from kepcheck.checks.outputs.trace_report import kind_suffix, markdown_cell, trace_file_name, trace_markdown, write_itf
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, SYMBOLS, VIOLATED, CheckResult
from kepcheck.model.actions.next import ACTION_NAMES

__all__ = ["write_review", "variant_diff", "outcome_lifecycle", "LIFECYCLE_VARIANT", "INDEX_LIMIT"]

LIFECYCLE_VARIANT = "alpha-1.37"  # the variant whose lifecycle the review draws, when the run has it
INDEX_LIMIT = 60_000  # characters of index.md: a GitHub comment holds at most 65,536
_SPECS = {p.name: p for p in PROPERTIES}
_DESCRIPTIONS = {v.name: v.description for v in VARIANTS}
_TRACE_KINDS = (ALWAYS, EVENTUALLY)
_EXPLORING_ENGINES = ("explicit", "liveness")  # the engines that call the lifecycle recorder on every transition


def outcome_lifecycle(outcome) -> LifecycleGraph | None:
    """The lifecycle of the run's lifecycle variant (``LIFECYCLE_VARIANT`` when the run has it, else
    its first variant) from the records of this run's own explorations; None when nothing was
    recorded (no record asked for, or an engine that does not explore states)."""
    variants = list(dict.fromkeys(run.ctx.variant.name for run in outcome))
    if not variants:
        return None
    variant = LIFECYCLE_VARIANT if LIFECYCLE_VARIANT in variants else variants[0]
    records = [(run.lifecycle, max((r.states for r in run.results), default=0))
               for run in outcome if run.ctx.variant.name == variant and run.lifecycle is not None
               and any(r.engine in _EXPLORING_ENGINES for r in run.results)]
    return lifecycle_graph(variant, records) if records else None


def _default_run(graph: LifecycleGraph) -> bool:
    """The lifecycle covers exactly the shipped scenarios (unchanged)."""
    return graph.scenarios == [s.name for s in default_scenarios()]


# --- the review report -----------------------------------------------------------------------------

def write_review(outcome, out_dir, *, include_times: bool = True) -> Path:
    """Write the review of ``outcome`` (the ``ContextRun`` values of ``checks.run.run_checks``) into
    ``out_dir``: ``index.md``, ``scenarios/*.md``, ``lifecycle.md``, ``lifecycle.dot`` and
    ``traces/*.md|*.itf.json``. Returns the path of ``index.md``. The lifecycle and the action
    coverage are those of this run's explorations of its lifecycle variant (``outcome_lifecycle``).

    The report is built in a staging directory beside ``out_dir`` and renamed into place
    (``checks/outputs/files.py``): an existing report there is replaced whole, an error or interrupt leaves
    it as it was. A path that cannot take a report raises ``OutputError`` (one line)."""
    outcome = list(outcome)
    target = check_output_dir(out_dir)
    with atomic_directory(target, shown=out_dir) as staging:
        _write_review_files(outcome, staging, include_times)
    return Path(out_dir) / "index.md"


def _group(outcome) -> dict:
    """{scenario: [(ctx, {property: result})]}, in outcome order."""
    grouped: dict = {}
    for run in outcome:
        grouped.setdefault(run.ctx.scenario.name, []).append((run.ctx, {r.property: r for r in run.results}))
    return grouped


def _write_trace_reports(outcome, traces_dir: Path) -> list[Path]:
    written = []
    for run in outcome:
        for result in run.results:
            if has_report(result):
                path = traces_dir / trace_file_name(result)
                path.write_text(trace_markdown(run.ctx, result), encoding="utf-8")
                write_itf(run.ctx, result, path)
                written.append(path)
    return written


def _write_review_files(outcome: list, out: Path, include_times: bool) -> None:
    (out / "traces").mkdir(parents=True, exist_ok=True)
    (out / "scenarios").mkdir()
    grouped = _group(outcome)
    property_order = [p.name for p in PROPERTIES]
    present = {r.property for run in outcome for r in run.results}
    properties = [name for name in property_order if name in present] + sorted(present - set(property_order))
    written = _write_trace_reports(outcome, out / "traces")
    graph = outcome_lifecycle(outcome)
    for number, (scenario, rows) in enumerate(grouped.items(), 1):
        page = scenario_page(number, rows, properties, include_times, graph is not None)
        (out / scenario_page_name(scenario)).write_text(page, encoding="utf-8")
    lines = _headline(outcome, grouped, properties, len(written), include_times, graph is not None)
    lines += _summary_section(grouped, properties)
    lines += _scenarios_section(grouped)
    lines += _variants_section(outcome)
    if graph is not None:
        (out / "lifecycle.dot").write_text(lifecycle_dot(graph), encoding="utf-8")
        (out / LIFECYCLE_PAGE).write_text(lifecycle_page(graph, _default_run(graph)), encoding="utf-8")
        lines += _lifecycle_summary(graph)
    lines += _findings_section(outcome)
    (out / "index.md").write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")


def _headline(outcome, grouped: dict, properties: list, written: int, include_times: bool,
              lifecycle: bool) -> list[str]:
    all_results = [r for run in outcome for r in run.results]
    variants = list(dict.fromkeys(run.ctx.variant.name for run in outcome))
    differs = [r for r in all_results if not r.matches and r.verdict != INCONCLUSIVE]
    inconclusive = [r for r in all_results if r.verdict == INCONCLUSIVE]
    engines = ", ".join(dict.fromkeys(r.engine for r in all_results)) or "no"
    lines = [f"{REPORT_HEADING}: scheduler preemption for in-place pod resize", ""]
    lines.append(f"{len(all_results)} checks: {counted(len(grouped), 'scenario')} × {counted(len(variants), 'variant')} × "
                 f"{counted(len(properties), 'property', 'properties')} ({engines} engine). "
                 f"{sum(1 for r in all_results if r.expected is not None and r.matches)} as the manifest expects, "
                 f"{len(differs)} differ, {len(inconclusive)} inconclusive; {written} trace reports.")
    if include_times:
        total = sum(max((r.seconds for r in run.results), default=0) for run in outcome)
        lines[-1] += f" Total engine time {total:.1f} s."
    lines += ["", "This page summarises; each scenario has its own page (its full matrix, the manifest's expectations, "
              "its trace reports). Links between the files of this report are relative: keep the report directory "
              "together (commit it, or attach it whole) — pasted alone, this page keeps only its links to upstream "
              "issues and pull requests, which are absolute.", ""]
    contents = ["[summary](#summary-matrix)", "[scenarios](#scenarios)", "[variants](#variants)"]
    if lifecycle:
        contents.append(f"[lifecycle and action coverage]({LIFECYCLE_PAGE})")
    lines += ["Contents: " + " · ".join(contents + ["[findings](#findings)"]), ""]
    if differs:
        lines += ["## ⚠ Verdicts that differ from the manifest", ""]
        for r in differs:
            lines.append(f"- {r.property} in [`{r.scenario}`]({scenario_page_name(r.scenario)}) under `{r.variant}`: "
                         f"{r.verdict}, expected {r.expected}")
        lines.append("")
    return lines


def _summary_cell(results: list[tuple[int, CheckResult]]) -> str:
    """The scenarios (by number) where the property is violated (✗) or inconclusive (≈), or the one
    verdict of every scenario; bold when a verdict differs from the manifest."""
    parts = []
    for symbol, verdict in (("✗", VIOLATED), ("≈", INCONCLUSIVE)):
        numbers = [str(number) for number, r in results if r.verdict == verdict]
        if numbers:
            parts.append(f"{symbol} {', '.join(numbers)}")
    if not parts:
        verdicts = {r.verdict for _, r in results}
        parts.append(SYMBOLS.get(verdicts.pop(), "?") if len(verdicts) == 1 else "✓")
    cell = " ".join(parts)
    return f"**{cell}**" if any(not r.matches for _, r in results) else cell


def _summary_section(grouped: dict, properties: list) -> list[str]:
    numbered = [(number, {ctx.variant.name: results for ctx, results in rows})
                for number, rows in enumerate(grouped.values(), 1)]
    variants = list(dict.fromkeys(name for _, by_variant in numbered for name in by_variant))
    shown = [p for p in properties if _SPECS.get(p) is None or _SPECS[p].kind != SOMETIMES]
    lines = ["## Summary matrix", "",
             "Per always- and eventually-property and variant: ✓ where it holds on every scenario, else the numbers "
             "of the scenarios (see [Scenarios](#scenarios)) where it is violated (✗) or inconclusive (≈); **bold** "
             "where a verdict differs from the manifest. Each scenario's page has the full matrix with the trace "
             "reports.", ""]
    for group in variant_groups(variants):
        lines += ["| property | " + " | ".join(group) + " |", "|---|" + ":---:|" * len(group)]
        for prop in shown:
            cells = [[(number, by_variant[name][prop]) for number, by_variant in numbered
                      if prop in by_variant.get(name, {})] for name in group]
            if any(cells):
                kind = _SPECS[prop].kind if prop in _SPECS else ""
                lines.append(f"| {prop}{kind_suffix(kind)} | " + " | ".join(_summary_cell(c) if c else "" for c in cells)
                             + " |")
        lines.append("")
    witnesses = [r for _, by_variant in numbered for results in by_variant.values() for r in results.values()
                 if r.kind == SOMETIMES]
    if witnesses:
        reached = sum(r.verdict == HOLDS for r in witnesses)
        lines += [f"Sometimes-properties (witnesses, so that no pass is vacuous): {reached} of {len(witnesses)} "
                  "reached; of the ones never reached, "
                  f"{sum(r.verdict != HOLDS and r.matches for r in witnesses)} are unreachable by design as the "
                  f"manifest records (the scenario pages say why) and "
                  f"{sum(r.verdict != HOLDS and not r.matches for r in witnesses)} differ.", ""]
    return lines


def _scenarios_section(grouped: dict) -> list[str]:
    lines = ["## Scenarios", "", "| # | scenario | what it sets up | ✗ |", "|---:|---|---|---:|"]
    for number, (scenario, rows) in enumerate(grouped.items(), 1):
        violations = sum(has_report(r) for _, results in rows for r in results.values())
        lines.append(f"| {number} | [{scenario}]({scenario_page_name(scenario)}) | "
                     f"{markdown_cell(linkify_upstream(rows[0][0].scenario.description))} | {violations} |")
    return lines + ["", "✗: violations of always- and eventually-properties over all variants, each with its trace "
                    "report (on the scenario's page).", ""]


def _variants_section(outcome) -> list[str]:
    lines = ["## Variants", "", "| variant | design |", "|---|---|"]
    for name in dict.fromkeys(run.ctx.variant.name for run in outcome):
        lines.append(f"| {name} | {markdown_cell(linkify_upstream(_DESCRIPTIONS.get(name, '')))} |")
    return lines + [""]


def _lifecycle_summary(graph: LifecycleGraph) -> list[str]:
    never = [name for name in ACTION_NAMES if not graph.action_counts.get(name)]
    fired = len(ACTION_NAMES) - len(never)
    return ["## Resize lifecycle and action coverage", "",
            f"[{LIFECYCLE_PAGE}]({LIFECYCLE_PAGE}): the lifecycle every pod goes through under `{graph.variant}`, "
            f"derived from this run's explored states ({counted(len(graph.scenarios), 'scenario')}, {graph.states} "
            f"states, {graph.transitions} transitions; {len(graph.statuses)} statuses reached, {len(graph.edges)} "
            f"kinds of status change), drawn per phase, and how often each action fired ({fired} actions fired"
            + (f"; never: {', '.join(never)}" if never else "") + ").", ""]


def _findings_section(outcome) -> list[str]:
    """Each violation of an always/eventually property, grouped by property and by reason: where
    (scenario pages, with the variants) and the shortest trace."""
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
            groups.setdefault(result.property, {}).setdefault(key, []).append((run.ctx, result))
    lines = ["## Findings", ""]
    if not groups:
        return lines + ["No always- or eventually-property is violated.", ""]
    lines += ["Every violation of a safety (always) or liveness (eventually) property, grouped by property and by "
              "the reason the manifest records: the scenarios (their pages link every trace) with the variants, and "
              "the shortest counterexample.", ""]
    run_variants = list(dict.fromkeys(run.ctx.variant.name for run in outcome))
    first_told: dict = {}  # (reason, ref) -> the number of the finding that first gave it
    number = 0
    for prop in [p.name for p in PROPERTIES if p.name in groups] + sorted(set(groups) - set(_SPECS)):
        spec = _SPECS.get(prop)
        lines += [f"### {prop}{kind_suffix(spec.kind) if spec else ''}", ""]
        if spec:
            lines += [f"*Requires:* {spec.meaning}.", ""]
        for (reason, ref), found in groups[prop].items():
            number += 1
            told = first_told.setdefault((reason, ref), number)
            if told != number:  # one manifest entry for several properties: its reason is told once
                reason, ref = f"The reason of {told}.", ""
            lines += _finding(number, reason, ref, found, run_variants)
        lines.append("")
    return lines


def _finding(number: int, reason: str, ref: str, found: list, run_variants: list) -> list[str]:
    where: dict = {}
    for ctx, result in found:
        where.setdefault(result.scenario, []).append(result.variant)
    lines = [f"{number}. {linkify_upstream(reason)}" + (f" *({linkify_upstream(ref)})*" if ref else "")]
    by_variants: dict = {}  # scenarios with the same variants share a line
    for scenario, variants in where.items():
        by_variants.setdefault(tuple(variants), []).append(scenario)
    for variants, scenarios in by_variants.items():
        links = ", ".join(f"[`{scenario}`]({scenario_page_name(scenario)})" for scenario in scenarios)
        lines.append(f"   - {links}: {_variant_list(list(variants), run_variants)}")
    traced = [(ctx, r) for ctx, r in found if r.trace is not None]
    if traced:
        ctx, shortest = min(traced, key=lambda item: len(item[1].trace))
        lines.append(f"   - shortest ([trace report](traces/{trace_file_name(shortest)})): "
                     f"`{replay_command(ctx, shortest.trace)}`")
    return lines


def _variant_list(variants: list, run_variants: list) -> str:
    """The variants of a finding, or, when they are most of the run's, "every variant but" the others
    (the index stays within a GitHub comment as variants are added)."""
    missing = [v for v in run_variants if v not in variants]
    if len(run_variants) > 2 and len(missing) < len(variants) and not set(variants) - set(run_variants):
        return "every variant" + (f" but {', '.join(missing)}" if missing else "")
    return ", ".join(variants)


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
                        if trace_links is not None and has_report(r) else "")
                body.append(f"  - {what} under `{r.variant}` ({counted(len(r.trace), 'step')}){link}:")
                body.append(f"    `{replay_command(ctx, r.trace)}`")
        body.append("")
    lines.append(f"{changes} verdicts change on {compared} scenarios compared"
                 + (" (no scenario has both variants)." if not compared else "."))
    lines.append("")
    return "\n".join(lines + body).rstrip("\n") + "\n"


def _diff_cell(result: CheckResult) -> str:
    if result.kind == SOMETIMES:
        return {HOLDS: "seen", VIOLATED: "never"}.get(result.verdict, SYMBOLS.get(result.verdict, "?"))
    return SYMBOLS.get(result.verdict, "?")
