"""The design review artifacts (checks/outputs/review.py, review_pages.py, trace_report.py, lifecycle.py): trace
reports, ITF files, the review report (index, scenario pages, lifecycle page), the lifecycle
diagrams, action coverage and variant diffs. How the report renders at GitHub's width is
tests/test_rendering.py.

One full ``run_checks`` over every default scenario × variant × property is made per session
(module fixture ``full``); everything else uses a two-scenario run. Mermaid blocks get a structural
check in Python always, and a real parse with mermaid (``mermaid.parse``, Node + jsdom) when Node
and the npm packages are installed (``KEPCHECK_MERMAID_DIR``, default ``.cache/mermaid`` of the
checkout, where ``make test`` installs them); otherwise that test is skipped with the reason. ITF files are
validated with ``jsonschema`` when it is installed, else with the small validator below.

Golden files (tests/golden/) are rewritten with ``KEPCHECK_UPDATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import pytest

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES
from kepcheck.spec.language.loader import default_scenarios
from kepcheck.spec.kep.transitions import TRANSITIONS
from kepcheck.spec.kep.variants import VARIANTS, variant_by_name
from kepcheck.spec.kep.vocabulary import LIFECYCLE_STATUSES

from kepcheck.checks.engine import EngineOptions
from kepcheck.checks.outputs.lifecycle import (
    LIFECYCLE_PHASES, NEVER_FIRED_EXPLANATIONS, lifecycle_dot, lifecycle_mermaid, phase_edges, phase_initial,
)
from kepcheck.checks.result import VIOLATED
from kepcheck.checks.outputs.review import INDEX_LIMIT, outcome_lifecycle, variant_diff, write_review
from kepcheck.checks.outputs.review_pages import LIFECYCLE_PAGE, linkify_upstream, scenario_page_name, variant_groups
from kepcheck.checks.run import run_checks
from kepcheck.checks.outputs.trace_report import ITF_SCHEMA_PATH, trace_file_name, trace_markdown, write_itf
from kepcheck.model.actions.next import ACTION_NAMES

from conftest import default_matrix

GOLDEN = Path(__file__).parent / "golden"
SMALL_SCENARIOS = ("competing-resizes", "later-competing-resize")
SMALL_VARIANTS = ("alpha-1.37", "kubelet-aligned")
MERMAID_DIR = Path(os.environ.get("KEPCHECK_MERMAID_DIR", Path(__file__).parent.parent / ".cache" / "mermaid"))


# --- fixtures --------------------------------------------------------------------------------------

def _run(scenarios=None, variants=None):
    if scenarios is None and variants is None:
        return list(default_matrix())
    chosen = [s for s in default_scenarios() if scenarios is None or s.name in scenarios]
    return list(run_checks(chosen, [variant_by_name(v) for v in variants] if variants else list(VARIANTS),
                           list(PROPERTIES), record_lifecycle=True))


@lru_cache(maxsize=None)
def small_outcome():
    return _run(SMALL_SCENARIOS, SMALL_VARIANTS)


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    """The whole default matrix, checked once, and its review written once."""
    outcome = _run()
    out = tmp_path_factory.mktemp("review")
    index = write_review(outcome, out, include_times=False)
    return outcome, out, index


def _result(outcome, scenario, variant, prop):
    for ctx, results in ((run.ctx, run.results) for run in outcome):
        if ctx.scenario.name == scenario and ctx.variant.name == variant:
            for result in results:
                if result.property == prop:
                    return ctx, result
    raise KeyError((scenario, variant, prop))


# --- Mermaid checks --------------------------------------------------------------------------------

_MERMAID_BLOCK = re.compile(r"```mermaid\n(.*?)```", re.S)
_TEXT = r"[^;#\"%{}<>\n]+"
_ID = r"[A-Za-z_][A-Za-z0-9_]*"


def mermaid_blocks(text: str) -> list[str]:
    return _MERMAID_BLOCK.findall(text)


def mermaid_problems(block: str) -> list[str]:
    """A structural check of the Mermaid this project writes: every line is a known statement,
    loop/end balance, every participant/state used is declared or known, no character that breaks
    Mermaid in a message (``;`` ``#`` ``"`` ``%`` ``{}`` ``<>``)."""
    lines = [line.strip() for line in block.strip("\n").split("\n")]
    if re.fullmatch(r"%%\{init: \{.*\}\}%%", lines[0]):
        try:
            json.loads(lines[0][len("%%{init: "):-len("}%%")])
        except ValueError as error:
            return [f"init directive is not JSON: {error}"]
        lines = lines[1:]
    problems = []
    if lines[0] == "sequenceDiagram":
        declared, depth = set(), 0
        for line in lines[1:]:
            if m := re.fullmatch(rf"participant ({_ID}) as {_TEXT}", line):
                declared.add(m.group(1))
            elif m := re.fullmatch(rf"({_ID})(->>|-->>)({_ID}): {_TEXT}", line):
                problems += [f"undeclared participant {p}: {line}" for p in (m.group(1), m.group(3)) if p not in declared]
            elif m := re.fullmatch(rf"Note over ({_ID})(?:,({_ID}))?: {_TEXT}", line):
                problems += [f"undeclared participant {p}: {line}" for p in m.groups() if p and p not in declared]
            elif re.fullmatch(rf"loop {_TEXT}", line):
                depth += 1
            elif line == "end":
                depth -= 1
                if depth < 0:
                    problems.append("end without loop")
            else:
                problems.append(f"not a known statement: {line!r}")
        if depth:
            problems.append("unbalanced loop/end")
    elif lines[0] == "stateDiagram-v2":
        for line in lines[1:]:
            if line in ("direction LR", "direction TB"):
                continue
            if m := re.fullmatch(rf"\[\*\] --> ({_ID})", line):
                states = [m.group(1)]
            elif m := re.fullmatch(rf"({_ID}) --> ({_ID}) : {_TEXT}(?:<br>{_TEXT})*", line):
                states = [m.group(1), m.group(2)]
            else:
                problems.append(f"not a known statement: {line!r}")
                continue
            problems += [f"unknown status {s}" for s in states if s not in LIFECYCLE_STATUSES]
    else:
        problems.append(f"unknown diagram type {lines[0]!r}")
    return problems


_PARSE_SCRIPT = r"""
import { readFileSync } from 'node:fs';
import { JSDOM } from 'jsdom';
const dom = new JSDOM('<!DOCTYPE html><html><body></body></html>', { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const key of ['DOMParser', 'Element', 'HTMLElement', 'Node', 'SVGElement']) {
  if (!(key in globalThis)) globalThis[key] = dom.window[key];
}
const mermaid = (await import('mermaid')).default;
mermaid.initialize({ startOnLoad: false });
let failed = 0;
for (const file of process.argv.slice(2)) {
  const text = readFileSync(file, 'utf8');
  const blocks = [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map(m => m[1]);
  for (const [index, block] of blocks.entries()) {
    try { await mermaid.parse(block); }
    catch (error) { failed += 1; console.log(JSON.stringify({ file, index, error: String(error?.message ?? error) })); }
  }
}
process.exit(failed ? 1 : 0);
"""


def _mermaid_parser_missing() -> str:
    if shutil.which("node") is None:
        return "node is not installed"
    for package in ("mermaid", "jsdom"):
        if not (MERMAID_DIR / "node_modules" / package / "package.json").exists():
            return (f"npm package {package} not found under {MERMAID_DIR}/node_modules (install: npm install --prefix "
                    f"{MERMAID_DIR} mermaid@11 jsdom, or set KEPCHECK_MERMAID_DIR)")
    return ""


# --- ITF validation --------------------------------------------------------------------------------

def _mini_validate(value, schema, root, path="$") -> list[str]:
    """The JSON Schema subset checks/outputs/itf_schema.json uses (type, required, properties,
    patternProperties, additionalProperties, items, min/maxItems, minimum, pattern, anyOf, $ref)."""
    if "$ref" in schema:
        target = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            target = target[part]
        return _mini_validate(value, target, root, path)
    if "anyOf" in schema:
        if any(not _mini_validate(value, option, root, path) for option in schema["anyOf"]):
            return []
        return [f"{path}: matches none of anyOf"]
    errors = []
    kind = schema.get("type")
    checks = {"object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
              "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
              "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)}
    if kind and not checks[kind](value):
        return [f"{path}: not {kind}"]
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}: missing {name}")
        for name, item in value.items():
            sub = schema.get("properties", {}).get(name)
            if sub is None:
                sub = next((s for pattern, s in schema.get("patternProperties", {}).items() if re.search(pattern, name)),
                           None)
            if sub is None:
                extra = schema.get("additionalProperties", True)
                if extra is False:
                    errors.append(f"{path}: unexpected field {name}")
                    continue
                sub = extra if isinstance(extra, dict) else {}
            errors += _mini_validate(item, sub, root, f"{path}.{name}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0) or len(value) > schema.get("maxItems", len(value)):
            errors.append(f"{path}: wrong number of items")
        if "items" in schema:
            for i, item in enumerate(value):
                errors += _mini_validate(item, schema["items"], root, f"{path}[{i}]")
    if isinstance(value, int) and "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: below minimum")
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        errors.append(f"{path}: does not match {schema['pattern']}")
    return errors


def itf_problems(document: dict) -> list[str]:
    schema = json.loads(ITF_SCHEMA_PATH.read_text())
    try:
        import jsonschema
    except ImportError:
        problems = _mini_validate(document, schema, schema)
    else:
        problems = [error.message for error in jsonschema.Draft202012Validator(schema).iter_errors(document)]
    if "loop" in document and not document["loop"] < len(document["states"]):
        problems.append("loop is not an index into states")
    for state in document.get("states", []):
        missing = set(document.get("vars", [])) - set(state)
        if missing:
            problems.append(f"state without vars {sorted(missing)}")
    return problems


def test_itf_validator_rejects_bad_documents():
    assert itf_problems({"vars": ["x"], "states": [{"#meta": {}, "x": {"#bigint": "1a"}}]})
    assert itf_problems({"vars": ["x"], "states": [{"x": 1}]})
    assert itf_problems({"vars": ["x"], "states": [{"#meta": {}, "x": 1}], "loop": 1})
    record = {"m": {"#map": [[{"#tup": [1, "a"]}, True]]}, "r": {"#set": []}, "n": {"#bigint": "-3"}}
    assert not itf_problems({"vars": ["x"], "states": [{"#meta": {}, "x": record}], "loop": 0})
    assert itf_problems({"vars": ["x"], "states": [{"#meta": {}, "x": {"#map": [], "r": 1}}]})


def test_structural_mermaid_check_catches_breakage():
    assert mermaid_problems("sequenceDiagram\n    participant A as a\n    A->>A: fine\n") == []
    assert mermaid_problems('%%{init: {"sequence": {"wrap": true}}}%%\nsequenceDiagram\n    participant A as a\n') == []
    assert mermaid_problems('%%{init: {"sequence": {wrap}}}%%\nsequenceDiagram\n')
    assert mermaid_problems("stateDiagram-v2\n    Running --> Deferred : kubelet: A<br>B\n") == []
    assert mermaid_problems("stateDiagram-v2\n    Running --> Deferred : kubelet: A<br>\n")
    assert mermaid_problems("sequenceDiagram\n    participant A as a\n    A->>A: bad; text\n")
    assert mermaid_problems("sequenceDiagram\n    participant A as a\n    loop x\n    A->>B: x\n")
    assert mermaid_problems("stateDiagram-v2\n    Running --> Nowhere : x\n")


# --- the full review -------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _report_files(out: Path) -> list[Path]:
    return sorted(p for p in out.rglob("*") if p.is_file())


def test_index_fits_a_github_comment(full):
    _, _, index = full
    assert len(index.read_text(encoding="utf-8")) < INDEX_LIMIT < 65_536


def test_every_scenario_page_has_its_full_matrix(full):
    outcome, out, index = full
    text = index.read_text()
    groups = variant_groups([v.name for v in VARIANTS])
    assert all(len(group) <= 5 for group in groups) and sum(groups, []) == [v.name for v in VARIANTS]
    for number, scenario in enumerate(default_scenarios(), 1):
        assert f"| {number} | [{scenario.name}]({scenario_page_name(scenario.name)}) |" in text
        page = (out / scenario_page_name(scenario.name)).read_text()
        assert page.startswith(f"# {number}. `{scenario.name}`")
        for group in groups:
            assert page.count("| property | " + " | ".join(group) + " |") == 1
        for prop in PROPERTIES:
            assert page.count(f"| {prop.name}") == len(groups), (scenario.name, prop.name)
    assert "seconds" not in text  # include_times=False
    for results in (run.results for run in outcome):
        for result in results:
            if result.verdict == VIOLATED and result.kind in (ALWAYS, EVENTUALLY):
                page = (out / scenario_page_name(result.scenario)).read_text()
                assert f"[✗](../traces/{trace_file_name(result)})" in page
                assert (out / "traces" / trace_file_name(result)).exists()


def test_summary_matrix_counts_every_violation(full):
    outcome, _, index = full
    text = index.read_text()
    summary = text[text.index("## Summary matrix"):text.index("## Scenarios")]
    numbers = {s.name: n for n, s in enumerate(default_scenarios(), 1)}
    for group in variant_groups([v.name for v in VARIANTS]):
        table = summary[summary.index("| property | " + " | ".join(group) + " |"):]
        for prop in PROPERTIES:
            if prop.kind == "sometimes":
                continue
            row = next(line for line in table.splitlines() if line.startswith(f"| {prop.name} "))
            for name, cell in zip(group, row.strip("|").split(" | ")[1:]):
                violated = [str(numbers[run.ctx.scenario.name]) for run in outcome for r in run.results
                            if run.ctx.variant.name == name and r.property == prop.name and r.verdict == VIOLATED]
                assert cell.strip() == (f"✗ {', '.join(violated)}" if violated else "✓"), (prop.name, name, cell)


def _link_problems(out: Path) -> list[str]:
    """Relative links of the index, scenario and lifecycle pages that name no file of the report,
    upstream links that are not absolute GitHub links, and bare ``#N`` outside links."""
    problems = []
    for path in _report_files(out):
        if path.suffix != ".md" or path.parent.name == "traces":
            continue
        text = path.read_text()
        for target in _LINK.findall(text):
            if target.startswith("https://"):
                if not re.fullmatch(r"https://github\.com/kubernetes/(kubernetes|enhancements)/(issues|pull)/\d+", target):
                    problems.append(f"{path.name}: {target}")
            elif not target.startswith("#") and not (path.parent / target).resolve().is_file():
                problems.append(f"{path.name}: {target} is missing")
        # a bare #N links to the repository the text is pasted in
        problems += [f"{path.name}: bare {n}" for n in re.findall(r"(?<![\[/\w#])#\d{3,}", _LINK.sub("", text))]
    return problems


def test_links_inside_the_report_resolve_and_upstream_links_are_absolute(full):
    _, out, _ = full
    assert _link_problems(out) == []
    assert "https://github.com/kubernetes/kubernetes/issues/117765" in (out / "index.md").read_text()


def test_upstream_references_become_absolute_links():
    assert linkify_upstream("the #129532 shape") == \
        "the [kubernetes/kubernetes#129532](https://github.com/kubernetes/kubernetes/issues/129532) shape"
    assert linkify_upstream("kubernetes/kubernetes #126891; KEP-1287 Risks") == (
        "[kubernetes/kubernetes#126891](https://github.com/kubernetes/kubernetes/issues/126891); "
        "[KEP-1287](https://github.com/kubernetes/enhancements/issues/1287) Risks")
    assert linkify_upstream("(PR #140000)") == \
        "([kubernetes/kubernetes#140000](https://github.com/kubernetes/kubernetes/pull/140000))"
    assert linkify_upstream("step #12, §4.5, No. 3, a#1234") == "step #12, §4.5, No. 3, a#1234"


@pytest.mark.slow
def test_every_trace_report_is_complete_and_its_itf_validates(full):
    outcome, out, _ = full
    reports = sorted((out / "traces").glob("*.md"))
    expected = {trace_file_name(r) for rs in (run.results for run in outcome) for r in rs
                if r.verdict == VIOLATED and r.kind in (ALWAYS, EVENTUALLY)}
    assert {p.name for p in reports} == expected
    for report in reports:
        text = report.read_text()
        assert "| step | actor | action (reference) |" in text, report.name
        assert "```mermaid\n%%{init: " in text and "\nsequenceDiagram\n" in text, report.name
        assert "## What happens" in text and "\nreplay: kepcheck replay --scenario " in text, report.name
        itf = report.with_name(report.name[:-3] + ".itf.json")
        document = json.loads(itf.read_text())
        assert itf_problems(document) == [], itf.name
        if "⟲" in text:
            assert "loop" in document and ("\n    loop " in text or "forever" in text)


def _diagram_files(out: Path) -> list[Path]:
    return [out / "index.md", out / LIFECYCLE_PAGE] + sorted((out / "scenarios").glob("*.md")) + \
        sorted((out / "traces").glob("*.md"))


def test_every_mermaid_block_is_well_formed(full):
    _, out, _ = full
    counts = {}
    for path in _diagram_files(out):
        blocks = mermaid_blocks(path.read_text())
        counts[path.relative_to(out).parts[0]] = counts.get(path.relative_to(out).parts[0], 0) + len(blocks)
        for block in blocks:
            assert mermaid_problems(block) == [], (path.name, block)
    graph = alpha_lifecycle()
    drawn = [phase for phase in LIFECYCLE_PHASES if phase_edges(graph, phase) or phase_initial(graph, phase)]
    assert counts["index.md"] == 0 and counts[LIFECYCLE_PAGE] == len(drawn) >= 3
    assert counts["traces"] == len(list((out / "traces").glob("*.md")))  # one sequence diagram per trace report


def test_every_mermaid_block_parses_with_mermaid(request, tmp_path):
    missing = _mermaid_parser_missing()
    if missing:
        pytest.skip(f"real Mermaid parser unavailable: {missing}")
    _, out, _ = request.getfixturevalue("full")
    # ESM imports resolve from the script's folder upwards: link the packages beside the script.
    script = tmp_path / "parse.mjs"
    script.write_text(_PARSE_SCRIPT)
    (tmp_path / "node_modules").symlink_to(MERMAID_DIR / "node_modules", target_is_directory=True)
    files = [str(p) for p in _diagram_files(out)]
    done = subprocess.run(["node", str(script), *files], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_review_is_deterministic(full, tmp_path):
    outcome, out, _ = full
    write_review(outcome, tmp_path / "again", include_times=False)
    files = _report_files(out)
    assert [p.relative_to(out) for p in files] == [p.relative_to(tmp_path / "again")
                                                    for p in _report_files(tmp_path / "again")]
    for path in files:
        assert (tmp_path / "again" / path.relative_to(out)).read_bytes() == path.read_bytes(), path.name


def test_two_runs_give_identical_reports(tmp_path):
    first = write_review(small_outcome(), tmp_path / "a", include_times=False)
    second = write_review(_run(SMALL_SCENARIOS, SMALL_VARIANTS), tmp_path / "b", include_times=False)
    for path in _report_files(tmp_path / "a"):
        assert (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes() == path.read_bytes(), path.name
    assert first.read_bytes() == second.read_bytes()
    write_review(small_outcome(), tmp_path / "c")
    assert "| *seconds* |" in (tmp_path / "c" / scenario_page_name(SMALL_SCENARIOS[0])).read_text()


def test_findings_summarise_every_violation(full):
    outcome, out, index = full
    text = index.read_text()
    findings = text[text.index("## Findings"):]
    for results in (run.results for run in outcome):
        for result in results:
            if result.verdict == VIOLATED and result.kind in (ALWAYS, EVENTUALLY):
                assert f"[`{result.scenario}`]({scenario_page_name(result.scenario)})" in findings
    for link in re.findall(r"\(trace report\]\((traces/[^)]+)\)", findings):
        assert (out / link).exists(), link
    assert findings.count("   - shortest ([trace report](traces/") == len(re.findall(r"^\d+\. ", findings, re.M))
    assert "Deferred resize's desired size" in findings  # a manifest reason, in plain words


def test_lifecycle_and_coverage_come_from_the_scenarios_run(tmp_path):
    """A run of other scenarios (a user's own file) draws their lifecycle, not the shipped ones'."""
    outcome = small_outcome()
    write_review(outcome, tmp_path / "r", include_times=False)
    page = (tmp_path / "r" / LIFECYCLE_PAGE).read_text()
    records = [run.lifecycle for run in outcome if run.lifecycle is not None]
    assert {r.scenario for r in records} == set(SMALL_SCENARIOS)
    assert "the scenarios of this run (" + ", ".join(f"`{s}`" for s in SMALL_SCENARIOS) + ")" in page
    assert "default scenarios" not in page and "no default scenario" not in page
    for name in ACTION_NAMES:
        count = sum(r.action_counts.get(name, 0) for r in records)
        assert re.search(rf"^\| {name} \| \w+ \| {count} \|", page, re.M), name
    graph = outcome_lifecycle(outcome)
    assert graph.scenarios == list(SMALL_SCENARIOS) and graph.transitions == sum(r.transitions for r in records)
    assert f": {graph.states} states, {graph.transitions} transitions, " in page


def test_no_lifecycle_without_an_exploration(tmp_path):
    """An engine that explores no states (bmc) records no lifecycle: the report says nothing of one."""
    scenario = [s for s in default_scenarios() if s.name == SMALL_SCENARIOS[0]]
    prop = [p for p in PROPERTIES if p.name == "KubeletNeverOvercommits"]
    outcome = list(run_checks(scenario, [variant_by_name("alpha-1.37")], prop, engine_name="bmc",
                              options=EngineOptions(depth=2), record_lifecycle=True))
    assert outcome_lifecycle(outcome) is None
    index = write_review(outcome, tmp_path / "r", include_times=False)
    assert not (tmp_path / "r" / LIFECYCLE_PAGE).exists() and LIFECYCLE_PAGE not in index.read_text()
    assert _link_problems(tmp_path / "r") == []


# --- lifecycle and coverage ------------------------------------------------------------------------

@lru_cache(maxsize=None)
def alpha_lifecycle():
    """The lifecycle of alpha-1.37 over the default scenarios, as a run records it."""
    return outcome_lifecycle(list(run_checks(default_scenarios(), [variant_by_name("alpha-1.37")], list(PROPERTIES),
                                             record_lifecycle=True)))


def test_lifecycle_has_the_named_statuses_and_only_reachable_ones():
    graph = alpha_lifecycle()
    for status in ("Deferred", "Preempting", "InProgress", "Running", "Superseded"):
        assert status in graph.statuses
    assert set(graph.statuses) <= set(LIFECYCLE_STATUSES)
    drawn = {s for edge in graph.edges for s in edge} | set(graph.initial)
    assert drawn == set(graph.statuses)
    for status in graph.statuses:
        assert status in graph.initial or any(target == status for _, target in graph.edges), status
    diagrams = [lifecycle_mermaid(graph, phase) for phase in LIFECYCLE_PHASES]
    for diagram in diagrams:
        assert mermaid_problems(diagram) == [], diagram
    if "Infeasible" not in graph.statuses:
        assert not any("Infeasible" in diagram for diagram in diagrams)


def test_lifecycle_phases_draw_every_edge_and_initial_status_once():
    graph = alpha_lifecycle()
    edges = [key for phase in LIFECYCLE_PHASES for key in phase_edges(graph, phase)]
    assert sorted(edges) == sorted(graph.edges)
    initial = [status for phase in LIFECYCLE_PHASES for status in phase_initial(graph, phase)]
    assert sorted(initial) == sorted(graph.initial)
    for phase in LIFECYCLE_PHASES:
        for source, target in phase_edges(graph, phase):
            assert source in phase.statuses or target in phase.statuses, (phase.name, source, target)
        assert set(phase_initial(graph, phase)) <= set(phase.statuses)


def test_lifecycle_edges_follow_the_transition_table():
    allowed = {(row.actor, row.action, row.source, row.target) for row in TRANSITIONS}
    for (source, target), actors in alpha_lifecycle().edges.items():
        for actor, actions in actors.items():
            for action in actions:
                assert (actor, action, source, target) in allowed, (actor, action, source, target)


def test_review_explains_infeasible_and_writes_dot(full):
    _, out, _ = full
    text = (out / LIFECYCLE_PAGE).read_text()
    graph = alpha_lifecycle()
    if "Infeasible" not in graph.statuses:
        assert "Infeasible is never reached" in text
    dot = (out / "lifecycle.dot").read_text()
    assert dot == lifecycle_dot(graph)
    assert dot.startswith("digraph lifecycle {") and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    for status in graph.statuses:
        assert f'"{status}";' in dot
    if shutil.which("dot"):
        done = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr


def test_coverage_shows_every_action_or_explains_it(full):
    _, out, _ = full
    text = (out / LIFECYCLE_PAGE).read_text()
    assert f"the {len(default_scenarios())} default scenarios" in text
    coverage = text[text.index("## Action coverage"):]
    for name in ACTION_NAMES:
        assert f"| {name} |" in coverage
    for line in coverage.splitlines():
        if "never fired" in line and line.startswith("| "):
            name = line.split("|")[1].strip()
            assert NEVER_FIRED_EXPLANATIONS.get(name, "") in line and name in NEVER_FIRED_EXPLANATIONS, line
    graph = alpha_lifecycle()
    if all(graph.action_counts.get(name) for name in ACTION_NAMES):
        assert "Every action fired at least once." in coverage


# --- variant diff ----------------------------------------------------------------------------------

def _changed(outcome, a, b):
    verdicts = {(run.ctx.scenario.name, run.ctx.variant.name, r.property): r.verdict
                for run in outcome for r in run.results}
    return [(s, p) for (s, v, p), verdict in verdicts.items() if v == a and verdicts[(s, b, p)] != verdict]


@pytest.mark.parametrize("other", ["kubelet-aligned", "allocated-only"])
def test_variant_diff_lists_every_change_with_its_trace(full, other):
    outcome, out, _ = full
    text = variant_diff(outcome, "alpha-1.37", other)
    changes = _changed(outcome, "alpha-1.37", other)
    assert changes, "the two designs should differ somewhere"
    assert text.splitlines()[2].startswith(f"{len(changes)} verdicts change")
    for scenario, prop in changes:
        section = text[text.index(f"## `{scenario}`"):]
        section = section[:section.find("\n## ", 1)] if "\n## " in section[1:] else section
        assert f"- **{prop}**:" in section
    assert text.count("`kepcheck replay --scenario ") >= len(changes)
    for link in re.findall(r"\]\((traces/[^)]+)\)", text):
        assert (out / link).exists(), link


def test_variant_diff_names_the_known_changes(full):
    outcome, _, _ = full
    aligned = variant_diff(outcome, "alpha-1.37", "kubelet-aligned")
    assert "## `competing-resizes`" in aligned and "| NoDoubleReservation | ✓ | ✗ |" in aligned
    assert "| NoExcessVictims | ✗ | ✓ |" in aligned  # additional-preemption: fewer victims
    allocated = variant_diff(outcome, "alpha-1.37", "allocated-only")
    section = allocated[allocated.index("## `deferred-upsize-one-victim`"):]
    assert "| NoDoubleReservation | ✓ | ✗ |" in section


def test_variant_diff_without_both_variants():
    text = variant_diff(small_outcome(), "alpha-1.37", "gate-off")
    assert "0 verdicts change on 0 scenarios compared (no scenario has both variants)." in text


# --- golden files ----------------------------------------------------------------------------------

def _golden(name: str, text: str) -> None:
    path = GOLDEN / name
    normalised = "\n".join(line.rstrip() for line in text.splitlines()) + "\n"
    if os.environ.get("KEPCHECK_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(normalised, encoding="utf-8")
    assert path.exists(), f"missing golden file {path} (run with KEPCHECK_UPDATE_GOLDEN=1)"
    assert normalised == path.read_text(encoding="utf-8"), f"{name} differs from its golden file"


@pytest.mark.parametrize("prop", ["KubeletHonorsReservation", "EveryDeferredResizeResolved"])
def test_trace_report_golden(prop, tmp_path):
    ctx, result = _result(small_outcome(), "later-competing-resize", "alpha-1.37", prop)
    text = trace_markdown(ctx, result)
    _golden(f"later-competing-resize--alpha-1.37--{prop}.md", text)
    itf = write_itf(ctx, result, tmp_path / trace_file_name(result))
    assert itf.name.endswith(".itf.json")
    _golden(itf.name, itf.read_text())
    assert itf_problems(json.loads(itf.read_text())) == []


@pytest.mark.parametrize("phase", LIFECYCLE_PHASES, ids=lambda phase: phase.name)
def test_lifecycle_golden(phase):
    _golden(f"lifecycle-alpha-1.37-{phase.name}.mmd", lifecycle_mermaid(alpha_lifecycle(), phase))
