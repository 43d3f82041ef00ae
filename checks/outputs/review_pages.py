"""The pages of the design review report besides its index: one per scenario and the lifecycle.

``scenario_page`` gives a scenario's variant × property matrix, the expectations of the manifest
beside its violations and links to its trace reports; ``lifecycle_page`` the resize lifecycle,
one Mermaid diagram per phase (``checks/outputs/lifecycle.py``), and the action coverage. Both are built
for where a review is read, a GitHub page (about 890 px of content): a matrix shows at most
``VARIANTS_PER_TABLE`` variants side by side, variant names are plain text so that they wrap at
their hyphens, and references to upstream issues and pull requests become absolute links
(``trace_report.linkify_upstream``), which keep working when the text is pasted into a comment. Links between
the report's own files are relative: the report directory is read as a whole.
"""

from __future__ import annotations


from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.kep.vocabulary import LIFECYCLE_STATUSES

from kepcheck.checks.outputs.lifecycle import (
    LIFECYCLE_PHASES, LifecycleGraph, edge_label, lifecycle_mermaid, never_fired_note, phase_edges, phase_initial,
)
from kepcheck.checks.outputs.trace_report import kind_suffix, linkify_upstream, markdown_cell, trace_file_name
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, SYMBOLS, VIOLATED, CheckResult
from kepcheck.model.actions.next import ACTION_NAMES, ACTOR_OF

__all__ = ["scenario_page", "scenario_page_name", "lifecycle_page", "linkify_upstream", "variant_groups",
           "has_report", "VARIANTS_PER_TABLE", "LIFECYCLE_PAGE"]

VARIANTS_PER_TABLE = 5  # variant columns side by side: more overflow GitHub's 890 px content (tests/test_rendering.py)
LIFECYCLE_PAGE = "lifecycle.md"
_SPECS = {p.name: p for p in PROPERTIES}
_TRACE_KINDS = (ALWAYS, EVENTUALLY)


def has_report(result: CheckResult) -> bool:
    """A trace report is written for every violation of an always/eventually property with a trace."""
    return result.verdict == VIOLATED and result.kind in _TRACE_KINDS and result.trace is not None


def scenario_page_name(scenario: str) -> str:
    """``scenarios/<scenario>.md``, relative to the report directory."""
    return f"scenarios/{scenario}.md"


def variant_groups(names: list[str]) -> list[list[str]]:
    """The variants in tables of at most ``VARIANTS_PER_TABLE``, as evenly filled as possible."""
    if not names:
        return []
    count = -(-len(names) // VARIANTS_PER_TABLE)
    size = -(-len(names) // count)
    return [names[i:i + size] for i in range(0, len(names), size)]


# --- scenario pages --------------------------------------------------------------------------------

def _matrix_cell(result: CheckResult | None, link_prefix: str) -> str:
    if result is None:
        return ""
    if result.kind == SOMETIMES:
        cell = {HOLDS: "seen", VIOLATED: "never", INCONCLUSIVE: "≈"}.get(result.verdict,
                                                                        SYMBOLS.get(result.verdict, "?"))
    else:
        cell = SYMBOLS.get(result.verdict, "?")
        if has_report(result):
            cell = f"[✗]({link_prefix}{trace_file_name(result)})"
    if not result.matches:
        cell = f"**{cell} (expected {result.expected})**"
    return cell


def _matrix_tables(rows, properties: list, include_times: bool) -> list[str]:
    """The scenario's variant × property matrix, ``VARIANTS_PER_TABLE`` variants per table."""
    by_variant = {ctx.variant.name: results for ctx, results in rows}
    lines = []
    for group in variant_groups(list(by_variant)):
        lines.append("| property | " + " | ".join(group) + " |")
        lines.append("|---|" + ":---:|" * len(group))
        for prop in properties:
            cells = [_matrix_cell(by_variant[name].get(prop), "../traces/") for name in group]
            if not any(cells):
                continue
            kind = next((by_variant[name][prop].kind for name in group if prop in by_variant[name]), "")
            lines.append(f"| {prop}{kind_suffix(kind)} | " + " | ".join(cells) + " |")
        lines.append("| *distinct states* | " + " | ".join(
            str(max((r.states for r in by_variant[name].values()), default=0)) for name in group) + " |")
        if include_times:
            lines.append("| *seconds* | " + " | ".join(
                f"{max((r.seconds for r in by_variant[name].values()), default=0):.2f}" for name in group) + " |")
        lines.append("")
    return lines


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
            line += f". {linkify_upstream(reason)}"
        if ref:
            line += f" ({linkify_upstream(ref)})"
        notes.append(line)
    return notes


def _trace_list(rows) -> list[str]:
    lines = []
    for ctx, results in rows:
        links = [f"[{r.property}](../traces/{trace_file_name(r)})" for r in results.values() if has_report(r)]
        if links:
            lines.append(f"- `{ctx.variant.name}`: {', '.join(links)}")
    return lines


def scenario_page(number: int, rows, properties: list, include_times: bool, lifecycle: bool) -> str:
    """The page of one scenario: ``rows`` are its ``(ctx, {property: result})`` per variant;
    ``lifecycle``: the report has a lifecycle page to link to."""
    scenario = rows[0][0].scenario
    links = "[← review index](../index.md)" + (f" · [resize lifecycle](../{LIFECYCLE_PAGE})" if lifecycle else "")
    lines = [f"# {number}. `{scenario.name}`", "", links, "", linkify_upstream(scenario.description), "",
             "Legend: ✓ holds · ✗ violated (links to the trace report) · ≈ inconclusive within the budget · "
             "∎ proved · for sometimes-properties (reachability witnesses) *seen* / *never*; **bold** = differs "
             "from the expected verdict in `spec/kep/manifest.yaml`.", "", "## Variant × property matrix", ""]
    lines += _matrix_tables(rows, properties, include_times)
    notes = _expectation_notes(rows)
    if notes:
        lines += ["## Expected verdicts beside the violations", ""] + notes + [""]
    traces = _trace_list(rows)
    if traces:
        lines += ["## Trace reports", "", "Each is the shortest counterexample (a lasso for an eventually-property).",
                  ""] + traces + [""]
    return "\n".join(lines).rstrip("\n") + "\n"


# --- the lifecycle page ----------------------------------------------------------------------------

def _lifecycle_intro(graph: LifecycleGraph, default_run: bool) -> list[str]:
    which = f"the {len(graph.scenarios)} default scenarios" if default_run else \
        "the scenarios of this run (" + ", ".join(f"`{s}`" for s in graph.scenarios) + ")"
    lines = [f"# Resize lifecycle under `{graph.variant}`", "", "[← review index](index.md)", "",
             f"Derived from the explored state graph of `{graph.variant}` over {which}: {graph.states} states, "
             f"{graph.transitions} transitions, each projected on every pod's status (`model/lifecycle.py`). Each "
             "arrow names the actor that moves the pod and its actions, as does the table under each diagram. Only "
             "reachable statuses appear. The lifecycle is drawn in phases so that each diagram stays legible at a "
             "page's width; the whole graph in Graphviz form: [lifecycle.dot](lifecycle.dot).", ""]
    missing = [s for s in LIFECYCLE_STATUSES if s not in graph.statuses]
    if "Infeasible" in missing:
        lines += ["**Infeasible is never reached** on these scenarios, so it is not drawn: since v1.36 the API "
                  "server rejects a resize above the node's allocatable, the kubelet marks a resize Infeasible here "
                  "only for a Guaranteed pod beside a node's static CPU or memory manager, and its other reasons "
                  "(static pods, swap, pod-level resizes; docs/reference.md §2.2) are not modelled.", ""]
    others = [s for s in missing if s != "Infeasible"]
    if others:
        lines += [f"Also never reached: {', '.join(others)}.", ""]
    return lines


def _phase_sections(graph: LifecycleGraph) -> list[str]:
    lines = []
    for phase in LIFECYCLE_PHASES:
        edges = phase_edges(graph, phase)
        if not edges and not phase_initial(graph, phase):
            continue
        lines += [f"## {phase.title}", "", "```mermaid", lifecycle_mermaid(graph, phase), "```", ""]
        if edges:
            lines += ["| from | to | actor · actions |", "|---|---|---|"]
            lines += [f"| {source} | {target} | {markdown_cell(edge_label(actors))} |"
                      for (source, target), actors in edges.items()]
            lines.append("")
    return lines


def _coverage_section(graph: LifecycleGraph, default_run: bool) -> list[str]:
    lines = ["## Action coverage", "",
             f"How often each action fired (explored transitions) under `{graph.variant}` over the scenarios above, "
             "and in how many scenarios.", "",
             "| action | actor | transitions | scenarios | note |", "|---|---|---:|---:|---|"]
    never = []
    for name in ACTION_NAMES:
        count = graph.action_counts.get(name, 0)
        note = ""
        if count == 0:
            never.append(name)
            note = never_fired_note(name, default_run)
        lines.append(f"| {name} | {ACTOR_OF.get(name, '')} | {count} | "
                     f"{len(graph.action_scenarios.get(name, []))} | {note} |")
    lines.append("")
    lines.append("Every action fired at least once." if not never else
                 f"{len(never)} actions never fired: {', '.join(never)} (see the notes).")
    lines.append("")
    return lines


def lifecycle_page(graph: LifecycleGraph, default_run: bool) -> str:
    """The lifecycle page: one diagram and edge table per phase, then the action coverage.
    ``default_run``: the run checked exactly the default scenarios (the never-fired notes speak
    of them)."""
    lines = _lifecycle_intro(graph, default_run) + _phase_sections(graph) + _coverage_section(graph, default_run)
    return "\n".join(lines).rstrip("\n") + "\n"
