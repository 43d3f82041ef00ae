"""Hostile inputs of every surface other than scenario files (issue 29; scenario files are
``tests/test_hostile_inputs.py``): kubectl snapshots for ``kepcheck import``, ITF trace files for
``kepcheck replay --itf`` and ``kepcheck export``, sweep bounds files, sweep results stores and
``--cluster`` addresses. Each is refused by the real command line with exit code 2 and exactly one
line ``kepcheck: error: FILE: FIELD: problem`` on stderr (the flag instead of a file for
``--cluster``), nothing on stdout, no traceback, within 2 s of CPU and 200 MB
(``tests/limited_run.py``).

A case builds its input under ``tmp_path`` and returns the command's arguments; ``names`` are the
fragments the one line must hold, in order (the file, the field, the problem).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from kepcheck.spec.limits import SNAPSHOT_MAX_NODES, one_line
from kepcheck.checks.sweep.store import STORE_NAME, store_header

from limited_run import CPU_BUDGET_S, RSS_BUDGET_BYTES, run_limited

ROOT = Path(__file__).resolve().parent
ITF = ROOT / "golden" / "later-competing-resize--alpha-1.37--KubeletHonorsReservation.itf.json"
TINY = ROOT / "sweeps" / "tiny.yaml"


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], list[str]]  # makes the input under tmp_path; returns the command's arguments
    names: tuple[str, ...]  # what the one line must name, in order ("{file}" is the input's path)


# --- kubectl snapshots (kepcheck import) ---------------------------------------------------------------

NODE = "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: '4', memory: 8Gi}}}\n"
LIST = "apiVersion: v1\nkind: List\nitems:\n"


def _pod(name: str, cpu: str = "1") -> str:
    return (f"- {{apiVersion: v1, kind: Pod, metadata: {{name: {name}, namespace: default}}, spec: {{nodeName: n1, "
            f"containers: [{{name: c, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}, status: {{phase: Running}}}}\n")


def _snapshot(text: str | bytes, name: str = "snapshot.yaml") -> Callable[[Path], list[str]]:
    def build(directory: Path) -> list[str]:
        path = directory / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return ["import", str(path)]
    return build


_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{c}: &{c} [{', '.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
_QUANTITY = "items[1].spec.containers[0].resources.requests.cpu"
IMPORT_CASES = [
    Case("import-a-deployment", _snapshot("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n"),
         ("{file}", "no Node in the snapshot")),
    Case("import-a-list-of-deployments", _snapshot(LIST + "- {apiVersion: apps/v1, kind: Deployment, metadata: {}}\n"),
         ("{file}", "no Node in the snapshot")),
    Case("import-a-scalar", _snapshot("42\n"), ("{file}", "expected a Kubernetes object or List")),
    Case("import-items-not-a-list", _snapshot(LIST.replace("items:\n", "items: {a: 1}\n")),
         ("{file}", "items", "expected a list")),
    Case("import-empty", _snapshot(""), ("{file}", "no Kubernetes objects")),
    Case("import-pod-without-metadata",
         _snapshot(LIST + NODE + "- {apiVersion: v1, kind: Pod, spec: {nodeName: n1, containers: []}}\n"),
         ("{file}", "items[1].metadata", "missing")),
    Case("import-pod-without-containers",
         _snapshot(LIST + NODE + "- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {nodeName: n1}}\n"),
         ("{file}", "items[1].spec.containers", "at least one container")),
    Case("import-node-without-allocatable",
         _snapshot(LIST + "- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {}}\n" + _pod("a")),
         ("{file}", "items[0].status.allocatable", "no cpu or memory")),
    Case("import-latin-1", _snapshot((LIST + NODE + _pod("caf\xe9")).encode("latin-1")), ("{file}", "not UTF-8")),
    Case("import-alias-bomb", _snapshot(_BOMB), ("{file}", "line ", f"more than {SNAPSHOT_MAX_NODES} YAML nodes")),
    Case("import-10000-pods", _snapshot(LIST + NODE + "".join(_pod(f"p{i}") for i in range(10_000))),
         ("{file}", "line ", f"more than {SNAPSHOT_MAX_NODES} YAML nodes")),
    Case("import-negative-quantity", _snapshot(LIST + NODE + _pod("a", "-1")), ("{file}", _QUANTITY, "negative")),
    Case("import-not-a-quantity", _snapshot(LIST + NODE + _pod("a", "1.5.5")),
         ("{file}", _QUANTITY, "is not a Kubernetes quantity")),
    Case("import-quantity-out-of-range", _snapshot(LIST + NODE + _pod("a", "1e400")),
         ("{file}", _QUANTITY, "out of range")),
    Case("import-allocatable-out-of-range", _snapshot(LIST + NODE.replace("8Gi", "99999999999999999999Ei") + _pod("a")),
         ("{file}", "items[0].status.allocatable.memory", "out of range")),
    Case("import-a-pod-twice", _snapshot(LIST + NODE + _pod("a") + _pod("a")),
         ("{file}", "items[2].metadata.name", "already used")),
]


# --- ITF trace files (kepcheck replay --itf, kepcheck export) -----------------------------------------

def _itf(change: Callable[[dict], object] | str | bytes, command: str) -> Callable[[Path], list[str]]:
    def build(directory: Path) -> list[str]:
        path = directory / "trace.itf.json"
        if isinstance(change, (str, bytes)):
            path.write_bytes(change if isinstance(change, bytes) else change.encode("utf-8"))
        else:
            document = copy.deepcopy(json.loads(ITF.read_text(encoding="utf-8")))
            change(document)
            path.write_text(json.dumps(document), encoding="utf-8")
        if command == "replay":
            return ["replay", "--itf", str(path)]
        return ["export", str(path), "-o", str(directory / "exported")]
    return build


def _set(path: tuple, value) -> Callable[[dict], None]:
    def change(document: dict) -> None:
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


def _huge(document: dict) -> None:
    document["#meta"]["description"] = "x" * (9 * 2**20)


ITF_INPUTS = [
    ("meta-scenario-parent-path", _set(("#meta", "scenario"), "../../etc/passwd"),
     ("#meta.scenario", "not a shipped scenario")),
    ("meta-scenario-absolute-path", _set(("#meta", "scenario"), "/etc/hostname"),
     ("#meta.scenario", "not a shipped scenario")),
    ("meta-scenario-with-separators", _set(("#meta", "scenario"), "sub/dir/name.yaml"),
     ("#meta.scenario", "not a shipped scenario")),
    ("meta-source-not-a-scenario-file", _set(("#meta", "source"), "/etc/passwd"),
     ("#meta.source", "not a scenario file")),
    ("meta-source-missing-file", _set(("#meta", "source"), "../nowhere/gone.yaml"),
     ("#meta.source", "does not load", "cannot read file")),
    ("meta-variant-unknown", _set(("#meta", "variant"), "no-such-variant"), ("#meta.variant", "unknown variant")),
    ("meta-mutant-unknown", _set(("#meta", "mutants"), ["rm -rf /"]), ("#meta.mutants", "unknown mutant")),
    ("meta-scenario-not-a-string", _set(("#meta", "scenario"), 42), ("#meta.scenario", "missing")),
    ("label-the-model-does-not-take", _set(("states", 1, "mbt::actionTaken"), "FormatDisk"),
     ("states[1]", "FormatDisk")),
    ("label-with-a-path-as-parameter", _set(("states", 1, "mbt::actionTaken"), "RequestResize(pod=../../x)"),
     ("states[1]", "RequestResize")),
    ("loop-past-the-states", _set(("loop",), 999), ("loop", "not the index of a state")),
    ("nested-100k-deep", "[" * 100_000 + "]" * 100_000, ("nested too deeply",)),
    ("over-8-MiB", _huge, ("larger than 8192 KiB",)),
    ("not-json", '{"vars": ', ("line 1", "not JSON")),
    ("latin-1", '{"#meta": {"scenario": "caf\xe9"}}'.encode("latin-1"), ("not UTF-8",)),
]
ITF_CASES = [Case(f"{command}-{name}", _itf(change, command), ("{file}", *names))
             for command in ("replay", "export") for name, change, names in ITF_INPUTS]


# --- sweep bounds, sweep stores, --cluster -------------------------------------------------------------

def _bounds(text: str) -> Callable[[Path], list[str]]:
    def build(directory: Path) -> list[str]:
        path = directory / "bounds.yaml"
        path.write_text(text, encoding="utf-8")
        return ["sweep", str(path), "-o", str(directory / "out")]
    return build


EXPLODING = """\
name: exploding
nodes: 1..4
podsPerNode: 0..8
pods: 1..16
resources: {cpu: {allocatable: 1..16, sizes: 1..16}}
priorities: [0, 1, 2]
environment: {events: [resize, arrival], maxEvents: 3}
variants: [alpha-1.37]
properties: [always]
"""


def _store(lines: list[str]) -> Callable[[Path], list[str]]:
    """A sweep directory whose results store holds ``lines`` (``{header}`` is this kepcheck's header)."""
    def build(directory: Path) -> list[str]:
        out = directory / "out"
        out.mkdir()
        header = json.dumps(store_header(), sort_keys=True)
        (out / STORE_NAME).write_text("".join(line.replace("{header}", header) + "\n" for line in lines),
                                      encoding="utf-8")
        return ["sweep", str(TINY), "-o", str(out)]
    return build


def _store_file(directory: Path) -> str:
    return str(directory / "out" / STORE_NAME)


RECORD = json.dumps({"key": "k", "records": [{"variant": "alpha-1.37", "property": "NoDoubleReservation",
                                              "verdict": "holds", "states": 1, "transitions": 0, "depth": 0}]})
OTHER_HEADER = json.dumps({**store_header(), "kepcheck": "0.0.1"})
OTHER_BUDGET = json.dumps({**store_header((100, None))})


def _cluster(address: str) -> Callable[[Path], list[str]]:
    return lambda directory: ["sweep", str(TINY), "-o", str(directory / "out"), "--cluster", address]


SWEEP_CASES = [
    Case("bounds-that-explode", _bounds(EXPLODING), ("{file}", "podsPerNode", "admit up to", "scenarios")),
    Case("store-a-format-1-store", _store([RECORD]), ("{store}", "line 1", "not a kepcheck sweep store")),
    Case("store-another-kepcheck", _store([OTHER_HEADER, RECORD]), ("{store}", "line 1", "kepcheck 0.0.1")),
    Case("store-another-budget", _store([OTHER_BUDGET, RECORD]), ("{store}", "line 1", "budget")),
    Case("store-a-corrupted-line", _store(["{header}", RECORD, '{"key": "k", "rec', RECORD]),
         ("{store}", "line 3", "corrupted")),
    Case("store-a-record-of-another-shape", _store(["{header}", '{"key": "k", "records": [{"verdict": 1}]}', RECORD]),
         ("{store}", "line 2", "corrupted")),
    Case("store-binary-garbage", _store(["\x00\x01\x02"]), ("{store}", "line 1", "not a kepcheck sweep store")),
    Case("cluster-not-an-address", _cluster("scheduler"), ("--cluster", "local:N or a scheduler address")),
    Case("cluster-local-0", _cluster("local:0"), ("--cluster local:0", "between 1 and 256")),
    Case("cluster-another-scheme", _cluster("http://127.0.0.1:8786"), ("--cluster", "tcp://HOST:PORT")),
    Case("cluster-no-port", _cluster("tcp://127.0.0.1"), ("--cluster", "HOST:PORT")),
    Case("cluster-port-out-of-range", _cluster("tcp://127.0.0.1:70000"), ("--cluster", "between 1 and 65535")),
    Case("cluster-nothing-listens", _cluster("tcp://127.0.0.1:1"), ("--cluster", "cannot reach the Dask scheduler")),
]

CASES = IMPORT_CASES + ITF_CASES + SWEEP_CASES


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_a_hostile_input_is_refused_with_one_line(tmp_path, case):
    arguments = case.build(tmp_path)
    run = run_limited(arguments, cwd=tmp_path)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert (run.code, run.stdout) == (2, ""), (run.code, run.stdout[-300:], run.stderr[-500:])
    lines = run.stderr.splitlines()
    assert len(lines) == 1, lines[:5]
    line = lines[0]
    assert line.startswith("kepcheck: error: "), line[:300]
    position = 0
    files = {"{file}": one_line(arguments[2] if arguments[:2] == ["replay", "--itf"] else arguments[1]),
             "{store}": _store_file(tmp_path)}
    for name in case.names:
        name = files.get(name, name)
        found = line.find(name, position)
        assert found >= 0, f"{name!r} not in order in: {line[:400]}"
        position = found + len(name)
    assert len(line) < 600, line
    assert run.cpu_seconds < CPU_BUDGET_S, run.cpu_seconds
    assert run.max_rss_bytes < RSS_BUDGET_BYTES, run.max_rss_bytes


def test_every_surface_has_its_cases():
    surfaces = {case.name.split("-")[0] for case in CASES}
    assert {"import", "replay", "export", "bounds", "store", "cluster"} <= surfaces
    assert len(CASES) >= 50
