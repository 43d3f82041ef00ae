"""Budgets hold for every engine and every phase (issues 13 and 29): on a scenario with interchangeable pods
(``bench-two-nodes-busy``: batch-1 … batch-4), ``--timeout 5`` returns within 7 s and ``--max-states
N`` stops at N, for the explicit engine on its symmetric path (safety properties: symmetry reduced,
interpreted then vector) and its asymmetric one (with eventually-properties: the graph kept, then
the liveness judgement), the liveness, bmc and random engines. A run that hits its budget says
``inconclusive`` with the budget in ``reason`` and exits 3; never ``holds`` for an always-property.
Each run is a whole ``kepcheck check`` process (start-up included).

``--timeout S`` bounds the whole command (issue 29): over the whole default matrix (every shipped
scenario × variant) each engine returns within a few seconds of S, whatever the matrix's size, and
what it did not reach is ``inconclusive`` naming the budget; ``--timeout-per-check S`` bounds each
scenario × variant. The bounds asserted have generous slack for a busy machine: they check that the
budget is honoured, they are not benchmarks."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kepcheck.spec.kep.properties import PROPERTIES

SCENARIO = str(Path(__file__).resolve().parent.parent / "bench" / "scenarios" / "bench-two-nodes-busy.yaml")
SAFETY = [arg for p in PROPERTIES if p.kind != "eventually" for arg in ("--property", p.name)]
PATHS = {
    "explicit-symmetric": ["--engine", "explicit", *SAFETY],
    "explicit-with-liveness": ["--engine", "explicit"],
    "liveness": ["--engine", "liveness"],
    "bmc": ["--engine", "bmc", "--depth", "40"],
    "random": ["--engine", "random", "--profile", "deep"],
}


def _check(arguments: list[str], tmp_path) -> tuple[int, list[dict], float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kepcheck", "check", "--scenario", SCENARIO, "--variant", "alpha-1.37",
                           "--json", *arguments], capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={"KEPCHECK_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"})
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout or "[]"), time.perf_counter() - started


@pytest.mark.parametrize("path", list(PATHS))
def test_a_time_budget_of_5_s_returns_within_7_s(path, tmp_path):
    code, records, seconds = _check([*PATHS[path], "--timeout", "5"], tmp_path)
    assert seconds < 7, f"{path}: {seconds:.1f} s"
    assert code == 3, (path, code)
    undecided = [r for r in records if r["verdict"] == "inconclusive"]
    assert undecided and all("time budget of 5 s reached" in r["reason"] for r in undecided), path
    assert not [r for r in records if r["kind"] == "always" and r["verdict"] in ("holds", "proved")], path


@pytest.mark.parametrize("path", ["explicit-symmetric", "explicit-with-liveness", "liveness", "random"])
def test_a_state_budget_stops_at_n_states(path, tmp_path):
    code, records, _ = _check([*PATHS[path], "--max-states", "300"], tmp_path)
    assert code == 3, (path, code)
    judged = [r for r in records if r["verdict"] != "not-checked"]
    assert judged and {r["states"] for r in judged} == {300}, path
    undecided = [r for r in judged if r["verdict"] == "inconclusive"]
    assert undecided and all("state budget of 300 reached" in r["reason"] for r in undecided), path
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 400 * 1024  # KiB: memory bounded too


def test_the_symbolic_engines_refuse_a_state_budget(tmp_path):
    """BMC and induction unroll depths, not states: ``--max-states`` is a usage error there, not
    silently ignored."""
    for engine in ("bmc", "induction"):
        done = subprocess.run([sys.executable, "-m", "kepcheck", "check", "--scenario", SCENARIO, "--engine", engine,
                               "--max-states", "300"], capture_output=True, text=True, cwd=tmp_path, timeout=60)
        assert done.returncode == 2, engine
        assert len(done.stderr.strip().splitlines()) == 1 and "--max-states" in done.stderr, done.stderr


# --- --timeout bounds the whole command (issue 29) ------------------------------------------------------

WHOLE_MATRIX = {
    "explicit": [], "explicit-vector": ["--core", "vector"], "liveness": ["--engine", "liveness"],
    "bmc": ["--engine", "bmc"], "induction": ["--engine", "induction"], "random": ["--engine", "random"],
}
COMMAND_SLACK_S = 3.0  # start-up, the last check's overrun and the output, on a loaded 2-core machine


def _whole_matrix(arguments: list[str], tmp_path) -> tuple[int, list[dict], float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "kepcheck", "check", "--json", *arguments], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120,
                          env={"KEPCHECK_CACHE": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"})
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout or "[]"), time.perf_counter() - started, done.stderr


@pytest.mark.parametrize("path", list(WHOLE_MATRIX))
def test_a_time_budget_of_3_s_bounds_the_whole_default_matrix(path, tmp_path):
    code, records, seconds, _ = _whole_matrix([*WHOLE_MATRIX[path], "--timeout", "3"], tmp_path)
    assert seconds < 3 + COMMAND_SLACK_S, f"{path}: {seconds:.1f} s"
    assert code == 3, (path, code)
    contexts = {(r["scenario"], r["variant"]) for r in records}
    assert len(contexts) > 100  # every scenario × variant has its records, reached or not
    undecided = [r for r in records if r["verdict"] == "inconclusive"]
    assert undecided and all("time budget of 3 s reached" in r["reason"] for r in undecided), path
    not_started = [r for r in undecided if r["reason"].endswith("before this scenario × variant was started")]
    assert not_started and all(r["states"] == 0 and r.get("trace") is None for r in not_started), path


def test_not_reached_is_never_holds(tmp_path):
    """A scenario × variant the deadline left no time for is inconclusive for every kind the engine
    judges and not-checked for the others, as the engine would say; none holds."""
    code, records, _, _ = _whole_matrix(["--engine", "liveness", "--timeout", "0.5"], tmp_path)
    assert code == 3
    assert {r["verdict"] for r in records} == {"inconclusive", "not-checked"}
    assert all(r["verdict"] == "inconclusive" for r in records if r["kind"] == "eventually")
    assert all(r["verdict"] == "not-checked" for r in records if r["kind"] != "eventually")


def test_a_per_check_budget_bounds_each_scenario_and_variant(tmp_path):
    """``--timeout-per-check 2`` on two variants whose searches take longer (under gate-off the bench
    scenario's space is small enough to finish in time): each one runs for its own 2 s (about 4 s in
    all), both inconclusive with that budget; with ``--timeout 2`` as well, the nearer deadline counts."""
    two = ["--variant", "alpha-1.37", "--variant", "kubelet-aligned", *PATHS["explicit-symmetric"][2:]]
    code, records, seconds = _check([*two, "--timeout-per-check", "2"], tmp_path)
    assert code == 3 and 3.5 < seconds < 12, seconds
    assert {r["variant"] for r in records if "time budget of 2 s reached" in (r["reason"] or "")} == \
        {"alpha-1.37", "kubelet-aligned"}
    code, records, seconds = _check([*two, "--timeout-per-check", "2", "--timeout", "2"], tmp_path)
    assert code == 3 and seconds < 2 + COMMAND_SLACK_S, seconds
    assert any((r["reason"] or "").endswith("before this scenario × variant was started") for r in records)


def test_a_time_budget_bounds_the_whole_sweep_and_a_rerun_continues(tmp_path):
    """``sweep --timeout 4`` of 2,853 scenarios: the count is printed before the checks start, the
    command ends within the slack of its budget, the scenarios it did not reach are inconclusive and
    not stored (nor is any record cut short by the deadline), and a re-run with the same ``-o``
    continues from the store."""
    bounds = str(Path(__file__).resolve().parent.parent / "bench" / "sweeps" / "accounting-variants.yaml")
    argv = [sys.executable, "-m", "kepcheck", "sweep", bounds, "-o", "out", "--workers", "2", "--timeout", "4"]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    seconds = time.perf_counter() - started
    assert "Traceback" not in done.stderr, done.stderr
    assert seconds < 4 + COMMAND_SLACK_S, seconds
    lines = done.stdout.splitlines()
    assert lines[1] == "2,853 scenarios"
    assert done.returncode in (1, 3), done.stderr  # 1 when a violation was found in what was reached
    assert any("not reached within the time budget" in line for line in lines), lines
    store = (tmp_path / "out" / "sweep-results.jsonl").read_text(encoding="utf-8").splitlines()
    records = [record for line in store[1:] for record in json.loads(line)["records"]]
    assert len(store) - 1 < 2853 and all(r["verdict"] != "inconclusive" for r in records)
    again = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert again.returncode in (1, 3), again.stderr
    assert len((tmp_path / "out" / "sweep-results.jsonl").read_text(encoding="utf-8").splitlines()) >= len(store)
