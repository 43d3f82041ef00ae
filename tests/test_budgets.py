"""Budgets hold for every engine and every phase (issue 13): on a scenario with interchangeable pods
(``bench-two-nodes-busy``: batch-1 … batch-4), ``--timeout 5`` returns within 7 s and ``--max-states
N`` stops at N, for the explicit engine on its symmetric path (safety properties: symmetry reduced,
interpreted then vector) and its asymmetric one (with eventually-properties: the graph kept, then
the liveness judgement), the liveness, bmc and random engines. A run that hits its budget says
``inconclusive`` with the budget in ``reason`` and exits 3; never ``holds`` for an always-property.
Each run is a whole ``kepcheck check`` process (start-up included)."""

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
