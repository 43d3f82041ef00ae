"""``kepcheck export``: every counterexample of the default matrix exports; the manifests pass the
Kubernetes v1.37 OpenAPI schema (kubernetes-validate, offline); the Go files pass gofmt; a generated
pytest regression runs and passes; the initial objects imported back (``checks/kube/snapshot.py``)
give the same initial state; the command line's errors are one line, exit 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from kepcheck.checks.cli.main import main
from kepcheck.checks.outputs.itf import trace_to_itf
from kepcheck.checks.kube.export import exported_files, write_export
from kepcheck.checks.kube.snapshot import read_objects, scenario_from_objects
from kepcheck.checks.kube.manifests import initial_objects, load_export
from kepcheck.checks.outputs.breach import witness_step
from kepcheck.checks.result import HOLDS, VIOLATED
from kepcheck.checks.run import run_checks, select_scenarios, select_variants
from kepcheck.spec.kep.properties import PROPERTIES
from kepcheck.spec.language.loader import load_scenario

from conftest import default_matrix

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def trace_files(tmp_path_factory):
    """Every violation of the default matrix with its trace, as the ITF file the report writes."""
    folder = tmp_path_factory.mktemp("traces")
    files = []
    for run in default_matrix():
        for result in run.results:
            if result.verdict != VIOLATED or result.trace is None:
                continue
            document = trace_to_itf(run.ctx, result.trace, f"{result.property} {result.verdict}")
            path = folder / f"{result.scenario}--{result.variant}--{result.property}.itf.json"
            path.write_text(json.dumps(document), encoding="utf-8")
            files.append(path)
    assert len(files) > 100  # the matrix has 177 violations with traces
    return files


@pytest.fixture(scope="module")
def exports(trace_files):
    return {path.name: load_export(path) for path in trace_files}


@pytest.fixture(scope="module")
def files(exports):
    return {name: exported_files(export) for name, export in exports.items()}


def _documents(text: str) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(text) if doc is not None]


@pytest.mark.slow
def test_every_counterexample_exports_and_validates(exports, files):
    objects = {}
    for name, export in exports.items():
        assert set(files[name]) == {"README.md", "manifests.yaml", "steps.sh", f"{export.name}_test.go",
                                    f"test_regression_{export.name}.py"}, name
        assert export.breach is not None, f"{name}: the property's breach is not found on the replayed trace"
        assert f"# ✗ {export.property} violated" in files[name]["steps.sh"], name
        for obj in _documents(files[name]["manifests.yaml"]):
            objects[json.dumps(obj, sort_keys=True)] = obj
    for obj in objects.values():  # each distinct object once: the schema check is the slow part
        kubernetes_validate.validate(obj, "1.37.0", strict=True)
    assert {obj["kind"] for obj in objects.values()} == {"Node", "PriorityClass", "PodDisruptionBudget", "Pod"}


COMMANDS = {"RequestResize": "--subresource resize --patch", "CreatePod": "kubectl create -f - <<'EOF'",
            "DeletePod": "kubectl delete pod", "RestartScheduler": "kubectl -n kube-system delete pod -l component="}


@pytest.mark.slow
def test_user_steps_become_kubectl_commands(exports, files):
    used = set()
    for name, export in exports.items():
        for label in export.labels:
            action = label.split("(", 1)[0]
            if action in COMMANDS:
                used.add(action)
                assert COMMANDS[action] in files[name]["steps.sh"].split("# --- the trace", 1)[1], (name, label)
    assert {"RequestResize", "CreatePod"} <= used
    steps = files["additional-preemption--alpha-1.37--NoExcessVictims.itf.json"]["steps.sh"]
    assert "# step 1: PreemptForResize(pod=pod1) [scheduler] — expected" in steps
    assert "# ✗ NoExcessVictims violated at step 1:" in steps


@pytest.mark.slow
def test_go_files_pass_gofmt(exports, files, tmp_path):
    gofmt = shutil.which("gofmt")
    if gofmt is None:
        pytest.skip("gofmt is not installed (Debian package golang-go; `make test` installs it as root)")
    for name, export in exports.items():
        go_file = f"{export.name}_test.go"
        (tmp_path / go_file).write_text(files[name][go_file], encoding="utf-8")
    found = subprocess.run([gofmt, "-l", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert found.returncode == 0, found.stderr
    assert found.stdout == "", f"gofmt would reformat: {found.stdout}"


@pytest.mark.slow
def test_generated_regression_runs_and_passes(exports, tmp_path):
    export = exports["resize-superseded--alpha-1.37--NoDoublePreemption.itf.json"]
    ran = _run_regression(write_export(export, tmp_path / "out"))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "1 passed" in ran.stdout


def _initial(scenario):
    """Nodes and the initial pods of a scenario in absolute quantities (model units × unit)."""
    def absolute(vector):
        return tuple(v * u for v, u in zip(vector, scenario.units))

    nodes = [(n.name, absolute(n.allocatable), n.disable_resize_preemption) for n in scenario.nodes]
    pods = []
    for p in scenario.pods:
        if not p.arrival:
            allocated = p.allocated if p.allocated is not None else p.requests  # the loader's defaults
            actual = p.actual if p.actual is not None else allocated
            pods.append((p.name, p.priority, p.preemption_policy, p.node, absolute(p.requests), absolute(allocated),
                         absolute(actual), p.resize, p.nominated_node))
    budgets = [(b.name, b.pods, b.min_available) for b in scenario.budgets]
    return scenario.resources, nodes, pods, budgets


@pytest.mark.slow
def test_round_trip_through_import(exports, files, tmp_path):
    checked = set()
    for name, export in exports.items():
        scenario = export.ctx.scenario
        if scenario.name in checked:
            continue
        checked.add(scenario.name)
        objects = initial_objects(export.ctx, export.trace)
        manifests = tmp_path / f"{scenario.name}.yaml"
        manifests.write_text(files[name]["manifests.yaml"], encoding="utf-8")
        assert read_objects(manifests) == objects
        document, _ = scenario_from_objects(objects, name=scenario.name)
        path = tmp_path / f"{scenario.name}.scenario.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        assert _initial(load_scenario(path)) == _initial(scenario), scenario.name
    assert len(checked) >= 14


def _witness_file(folder: Path) -> Path:
    scenario, variant = select_scenarios(["resize-superseded"])[0], select_variants(["alpha-1.37"])[0]
    spec = next(p for p in PROPERTIES if p.name == "ResizeAllocatedAfterPreemption")
    run = next(iter(run_checks([scenario], [variant], [spec])))
    result = run.results[0]
    assert result.verdict == HOLDS and result.trace is not None
    path = folder / "witness.itf.json"
    path.write_text(json.dumps(trace_to_itf(run.ctx, result.trace, f"{result.property} {result.verdict}")),
                    encoding="utf-8")
    return path


def _run_regression(target: Path) -> subprocess.CompletedProcess:
    test_file = next(target.glob("test_regression_*.py"))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
                           "-n", "0", str(test_file)], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_a_witness_exports_with_the_step_it_holds_at(tmp_path):
    export = load_export(_witness_file(tmp_path))
    assert export.kind == "sometimes" and export.breach is None
    assert export.step == witness_step(export.ctx, export.property, export.trace) == len(export.trace)
    files = exported_files(export)
    assert f"# ResizeAllocatedAfterPreemption (a witness) holds at step {export.step}" in files["steps.sh"]
    ran = _run_regression(write_export(export, tmp_path / "out"))
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr


def test_a_trace_that_names_no_property_is_judged_by_every_always_property(trace_files, tmp_path):
    source = next(p for p in trace_files if p.name == "resize-superseded--alpha-1.37--NoDoublePreemption.itf.json")
    document = json.loads(source.read_text(encoding="utf-8"))
    document["#meta"]["description"] = ""
    path = tmp_path / "unnamed.itf.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    export = load_export(path)
    assert (export.property, export.step) == ("NoDoublePreemption", 3)  # the first breach, as replay marks it


def test_command_line_writes_and_replaces_an_export(trace_files, tmp_path, capsys):
    trace = next(p for p in trace_files if p.name.startswith("higher-priority-arrival--"))
    out = tmp_path / "export"
    assert main(["export", str(trace), "-o", str(out)]) == 0
    assert main(["export", str(trace), "-o", str(out)]) == 0  # a previous export is replaced
    names = sorted(os.listdir(out))
    assert "manifests.yaml" in names and "steps.sh" in names and len(names) == 5
    assert os.access(out / "steps.sh", os.X_OK)
    assert (out / "README.md").read_text(encoding="utf-8").startswith("# kepcheck export")


@pytest.mark.parametrize("content, expected", [
    ("not json", "not JSON"),
    ('{"vars": [], "states": []}', "states"),
    (None, "unknown scenario"),
    ("disabled", "not enabled"),
])
def test_bad_traces_exit_2_with_one_line(trace_files, tmp_path, capsys, content, expected):
    path = tmp_path / "bad.itf.json"
    if content in (None, "disabled"):
        source = next(p for p in trace_files if p.name == "resize-superseded--alpha-1.37--NoDoublePreemption.itf.json")
        document = json.loads(source.read_text(encoding="utf-8"))
        if content is None:
            document["#meta"]["scenario"] = "no-such-scenario"
        else:  # a step the model does not take there: the first action taken again at the end
            document["states"].append({**document["states"][1], "#meta": {"index": len(document["states"]),
                                       "action": document["states"][1]["#meta"]["action"]}})
        content = json.dumps(document)
    path.write_text(content, encoding="utf-8")
    assert main(["export", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err


def test_output_directory_problems_exit_2(trace_files, tmp_path, capsys):
    occupied = tmp_path / "occupied"
    occupied.mkdir()
    (occupied / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["export", str(trace_files[0]), "-o", str(occupied)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a kepcheck export" in err, err
    assert (occupied / "notes.txt").read_text(encoding="utf-8") == "mine"
    report = tmp_path / "report"  # a review report is not an export's to replace
    report.mkdir()
    (report / "index.md").write_text("# KEP-5836 design review\n", encoding="utf-8")
    assert main(["export", str(trace_files[0]), "-o", str(report)]) == 2
    assert "not a kepcheck export" in capsys.readouterr().err
    assert main(["export", str(trace_files[0]), "-o", str(tmp_path / "a-file")]) == 0
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    assert main(["export", str(trace_files[0]), "-o", str(tmp_path / "plain")]) == 2
    assert "is a file" in capsys.readouterr().err
