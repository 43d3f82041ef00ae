"""The design review artifacts (checks/review.py, trace_report.py, lifecycle.py): trace reports, ITF
files, the review report, the lifecycle diagram, action coverage and variant diffs.

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

from kepcheck.spec.properties import ALWAYS, EVENTUALLY, PROPERTIES
from kepcheck.spec.scenarios import default_scenarios
from kepcheck.spec.transitions import TRANSITIONS
from kepcheck.spec.variants import VARIANTS, variant_by_name
from kepcheck.spec.vocabulary import LIFECYCLE_STATUSES

from kepcheck.checks.lifecycle import NEVER_FIRED_EXPLANATIONS, lifecycle_dot, lifecycle_mermaid
from kepcheck.checks.result import VIOLATED
from kepcheck.checks.review import outcome_lifecycle, variant_diff, write_review
from kepcheck.checks.run import run_checks
from kepcheck.checks.trace_report import ITF_SCHEMA_PATH, trace_file_name, trace_markdown, write_itf
from kepcheck.model.actions import ACTION_NAMES

GOLDEN = Path(__file__).parent / "golden"
SMALL_SCENARIOS = ("competing-resizes", "later-competing-resize")
SMALL_VARIANTS = ("alpha-1.37", "kubelet-aligned")
MERMAID_DIR = Path(os.environ.get("KEPCHECK_MERMAID_DIR", Path(__file__).parent.parent / ".cache" / "mermaid"))


# --- fixtures --------------------------------------------------------------------------------------

def _run(scenarios=None, variants=None):
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
    for ctx, results, _ in outcome:
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
            if line == "direction LR":
                continue
            if m := re.fullmatch(rf"\[\*\] --> ({_ID})", line):
                states = [m.group(1)]
            elif m := re.fullmatch(rf"({_ID}) --> ({_ID}) : {_TEXT}", line):
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
    """The JSON Schema subset checks/itf_schema.json uses (type, required, properties,
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
    assert mermaid_problems("sequenceDiagram\n    participant A as a\n    A->>A: bad; text\n")
    assert mermaid_problems("sequenceDiagram\n    participant A as a\n    loop x\n    A->>B: x\n")
    assert mermaid_problems("stateDiagram-v2\n    Running --> Nowhere : x\n")


# --- the full review -------------------------------------------------------------------------------

def test_review_has_the_full_matrix(full):
    outcome, out, index = full
    text = index.read_text()
    for scenario in default_scenarios():
        assert f"### `{scenario.name}`" in text
    header = "| property | " + " | ".join(f"`{v.name}`" for v in VARIANTS) + " |"
    assert text.count(header) == len(default_scenarios())
    for prop in PROPERTIES:
        assert f"| {prop.name}" in text
    assert "seconds" not in text  # include_times=False
    for _, results, _ in outcome:
        for result in results:
            if result.verdict == VIOLATED and result.kind in (ALWAYS, EVENTUALLY):
                link = f"traces/{trace_file_name(result)}"
                assert f"[✗]({link})" in text, link
                assert (out / link).exists()


def test_every_trace_report_is_complete_and_its_itf_validates(full):
    outcome, out, _ = full
    reports = sorted((out / "traces").glob("*.md"))
    expected = {trace_file_name(r) for _, rs, _ in outcome for r in rs
                if r.verdict == VIOLATED and r.kind in (ALWAYS, EVENTUALLY)}
    assert {p.name for p in reports} == expected
    for report in reports:
        text = report.read_text()
        assert "| step | actor | action | what changed | free: scheduler / kubelet | ref |" in text, report.name
        assert "```mermaid\nsequenceDiagram" in text, report.name
        assert "## What happens" in text and "\nreplay: kepcheck replay --scenario " in text, report.name
        itf = report.with_name(report.name[:-3] + ".itf.json")
        document = json.loads(itf.read_text())
        assert itf_problems(document) == [], itf.name
        if "⟲" in text:
            assert "loop" in document and ("\n    loop " in text or "forever" in text)


def test_every_mermaid_block_is_well_formed(full):
    _, out, index = full
    files = [index] + sorted((out / "traces").glob("*.md"))
    count = 0
    for path in files:
        for block in mermaid_blocks(path.read_text()):
            count += 1
            assert mermaid_problems(block) == [], (path.name, block)
    assert count == len(files)  # one diagram per trace report, the lifecycle in the index


def test_every_mermaid_block_parses_with_mermaid(request, tmp_path):
    missing = _mermaid_parser_missing()
    if missing:
        pytest.skip(f"real Mermaid parser unavailable: {missing}")
    _, out, index = request.getfixturevalue("full")
    # ESM imports resolve from the script's folder upwards: link the packages beside the script.
    script = tmp_path / "parse.mjs"
    script.write_text(_PARSE_SCRIPT)
    (tmp_path / "node_modules").symlink_to(MERMAID_DIR / "node_modules", target_is_directory=True)
    files = [str(index)] + [str(p) for p in sorted((out / "traces").glob("*.md"))]
    done = subprocess.run(["node", str(script), *files], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_review_is_deterministic(full, tmp_path):
    outcome, out, index = full
    again = write_review(outcome, tmp_path / "again", include_times=False, lifecycle=alpha_lifecycle())
    assert again.read_bytes() == index.read_bytes()
    for report in sorted((out / "traces").iterdir()):
        assert (tmp_path / "again" / "traces" / report.name).read_bytes() == report.read_bytes()
    assert (tmp_path / "again" / "lifecycle.dot").read_bytes() == (out / "lifecycle.dot").read_bytes()


def test_two_runs_give_identical_reports(tmp_path):
    first = write_review(small_outcome(), tmp_path / "a", include_times=False, lifecycle=alpha_lifecycle())
    second = write_review(_run(SMALL_SCENARIOS, SMALL_VARIANTS), tmp_path / "b", include_times=False,
                          lifecycle=alpha_lifecycle())
    assert first.read_bytes() == second.read_bytes()
    with_times = write_review(small_outcome(), tmp_path / "c", lifecycle=alpha_lifecycle()).read_text()
    assert "| *seconds* |" in with_times


def test_findings_summarise_every_violation(full):
    outcome, _, index = full
    text = index.read_text()
    findings = text[text.index("## Findings"):]
    for _, results, _ in outcome:
        for result in results:
            if result.verdict == VIOLATED and result.kind in (ALWAYS, EVENTUALLY):
                assert f"(traces/{trace_file_name(result)})" in findings
    assert "Deferred resize's desired size" in findings  # a manifest reason, in plain words


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
    diagram = lifecycle_mermaid(graph)
    assert mermaid_problems(diagram) == []
    if "Infeasible" not in graph.statuses:
        assert "Infeasible" not in diagram


def test_lifecycle_edges_follow_the_transition_table():
    allowed = {(row.actor, row.action, row.source, row.target) for row in TRANSITIONS}
    for (source, target), actors in alpha_lifecycle().edges.items():
        for actor, actions in actors.items():
            for action in actions:
                assert (actor, action, source, target) in allowed, (actor, action, source, target)


def test_review_explains_infeasible_and_writes_dot(full):
    _, out, index = full
    text = index.read_text()
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
    _, _, index = full
    text = index.read_text()
    coverage = text[text.index("## Action coverage"):text.index("## Findings")]
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
    verdicts = {(ctx.scenario.name, ctx.variant.name, r.property): r.verdict for ctx, rs, _ in outcome for r in rs}
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


def test_lifecycle_golden():
    _golden("lifecycle-alpha-1.37.mmd", lifecycle_mermaid(alpha_lifecycle()))
