"""Hostile scenario inputs: every one is refused by the real command line with exit code 2 and one
line ``kepcheck: error: FILE: FIELD: problem`` (no traceback), within 2 s of CPU and 200 MB.

The cases come from two places:

- ``tests/hostile/*.yaml``: small files, each opening with three comment lines — what it is,
  ``# field: ...`` (the field the message must name; ``line N`` for a problem of the YAML text)
  and ``# problem: ...`` (a fragment of the message);
- ``GENERATED`` below: inputs that are too big to commit (deep nesting, 5,000-digit integers,
  files at and over the size limit) or are not ordinary files (``/dev/zero``, a FIFO, a
  directory, symbolic-link loops, bytes that are not UTF-8, a file name with a newline), built in
  ``tmp_path`` at test time. Their field is ``""`` when the problem is the file itself.

Each case runs ``python -m kepcheck check --scenario FILE --variant alpha-1.37`` in a subprocess
within resource limits (``tests/limited_run.py``: address space capped, CPU time under
``CPU_BUDGET_S`` and peak resident memory under ``RSS_BUDGET_BYTES`` as ``os.wait4`` measures
them, a wall-clock timeout as the last guard against a hang). The same input then goes through ``load_scenario`` in-process, which must raise the very
message the command line printed.

Also here: merge keys (``<<``) are ordinary YAML and load to the same scenario as the expanded
file, and values at the edge of Kubernetes' rules load.
"""

from __future__ import annotations

import dataclasses
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from kepcheck.spec.limits import MAX_FILE_BYTES, one_line
from kepcheck.spec.language.loader import ScenarioError, load_scenario

from limited_run import CPU_BUDGET_S, RSS_BUDGET_BYTES, Run, run_limited

HOSTILE_DIR = Path(__file__).parent / "hostile"
BASE = 'name: hostile\nnodes:\n  - {name: n1, allocatable: {cpu: "4"}}\npods:\n'
POD = '  - {name: a, node: n1, requests: {cpu: "1"}}\n'


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Path], Path]  # makes the input under a temporary directory; returns --scenario's path
    field: str  # "" when the problem is the file itself
    problem: str


def _file_case(path: Path) -> Case:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[1].startswith("# field: ") and lines[2].startswith("# problem: "), path
    return Case(path.stem, lambda _: path, lines[1].removeprefix("# field: "), lines[2].removeprefix("# problem: "))


def _text(name: str, text: str | bytes) -> Callable[[Path], Path]:
    def build(directory: Path) -> Path:
        path = directory / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return path
    return build


def _symlink_loop(directory: Path) -> Path:
    (directory / "a.yaml").symlink_to(directory / "b.yaml")
    (directory / "b.yaml").symlink_to(directory / "a.yaml")
    return directory / "a.yaml"


def _self_symlink(directory: Path) -> Path:
    (directory / "self.yaml").symlink_to(directory / "self.yaml")
    return directory / "self.yaml"


def _fifo(directory: Path) -> Path:
    os.mkfifo(directory / "fifo.yaml")
    return directory / "fifo.yaml"


def _directory(directory: Path) -> Path:
    (directory / "dir.yaml").mkdir()
    return directory / "dir.yaml"


_NINES = "9" * 5000
GENERATED = [
    Case("gen-deep-flow-nesting-100k", _text("deep.yaml", "name: x\npods: " + "[" * 100_000 + "]" * 100_000 + "\n"),
         "line 2", "collections nested deeper than 64 levels"),
    Case("gen-deep-block-sequences-600", _text("deep.yaml", "- " * 600 + "x\n"),
         "line 1", "collections nested deeper than 64 levels"),
    Case("gen-integer-5000-digits", _text("int.yaml", BASE + "  - {name: a, requests: {cpu: " + _NINES + "}}\n"),
         "line 5", "an integer of 5000 digits is out of range"),
    Case("gen-negative-priority-5000-digits",
         _text("int.yaml", BASE + "  - {name: a, priority: -" + _NINES + ', requests: {cpu: "1"}}\n'),
         "line 5", "an integer of 5000 digits is out of range"),
    Case("gen-hex-integer-5000-digits", _text("hex.yaml", BASE + "  - {name: a, requests: {cpu: 0x" + "f" * 5000 + "}}\n"),
         "line 5", "an integer of 5000 digits is out of range"),
    Case("gen-float-5000-digits", _text("float.yaml", BASE + "  - {name: a, requests: {cpu: " + _NINES + ".0}}\n"),
         "line 5", "is out of range"),
    Case("gen-symlink-loop", _symlink_loop, "", "symbolic link loop"),
    Case("gen-symlink-to-itself", _self_symlink, "", "symbolic link loop"),
    Case("gen-dev-zero", lambda _: Path("/dev/zero"), "", "not a regular file (a character device)"),
    Case("gen-dev-null", lambda _: Path("/dev/null"), "", "not a regular file (a character device)"),
    Case("gen-fifo", _fifo, "", "not a regular file (a FIFO)"),
    Case("gen-directory", _directory, "", "not a regular file (a directory)"),
    Case("gen-missing-file", lambda directory: directory / "absent.yaml", "", "cannot read file (No such file"),
    Case("gen-file-name-too-long", lambda directory: directory / ("a" * 5000 + ".yaml"), "", "cannot read file"),
    Case("gen-over-the-size-limit", _text("big.yaml", BASE + POD + "#" + "x" * MAX_FILE_BYTES + "\n"),
         "", f"larger than {MAX_FILE_BYTES // 1024} KiB"),
    Case("gen-flow-list-of-500k-nodes", _text("wide.yaml", "name: x\ndescription: [" + "1," * 500_000 + "1]\n"),
         "line 2", "more than 50000 YAML nodes"),
    Case("gen-nul-byte", _text("nul.yaml", BASE + '  - {name: a, requests: {cpu: "1\x00"}}\n'),
         "line 5", "control characters are not allowed"),
    Case("gen-latin-1", _text("latin1.yaml", "name: caf\xe9\n".encode("latin-1")), "", "not UTF-8 text (byte 9)"),
    Case("gen-utf-16", _text("utf16.yaml", (BASE + POD).encode("utf-16")), "", "not UTF-8 text (byte 0)"),
    Case("gen-empty-file", _text("empty.yaml", ""), "", "the file is empty"),
    Case("gen-newline-in-file-name", _text("bad\nname.yaml", BASE + POD + "maxPods: 3\n"), "maxPods", "unknown field"),
    Case("gen-unknown-key-100k-characters", _text("key.yaml", BASE + POD + "? " + "k" * 100_000 + "\n: 1\n"),
         "k" * 40 + "…", "unknown field"),
    Case("gen-pod-name-100k-characters", _text("name.yaml", BASE + "  - {name: " + "p" * 100_000 + ', requests: {cpu: "1"}}\n'),
         "pods[0].name", "must be no more than 253 characters (has 100000)"),
    Case("gen-alias-name-100k-characters", _text("alias.yaml", BASE + "  - *" + "a" * 100_000 + "\n"),
         "line 5", "has no anchor before it"),
]
CASES = [_file_case(path) for path in sorted(HOSTILE_DIR.glob("*.yaml"))] + GENERATED


def run_cli(path: Path) -> Run:
    """``kepcheck check --scenario path`` in a subprocess within resource limits (``tests/limited_run.py``)."""
    return run_limited(["check", "--scenario", str(path), "--variant", "alpha-1.37"])


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_hostile_input_is_refused_with_one_line(tmp_path, case):
    path = case.build(tmp_path)
    run = run_cli(path)
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert run.code == 2, (run.code, run.stderr[-500:])
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, lines[:5]
    prefix = f"kepcheck: error: {one_line(str(path))}: "
    assert lines[0].startswith(prefix), lines[0][:300]
    detail = lines[0][len(prefix):]
    if case.field:
        assert detail.startswith(f"{case.field}: "), detail[:300]
    assert case.problem in detail, detail[:300]
    assert len(detail) < 400, detail  # a short prefix of any offending value, never the value
    assert run.cpu_seconds < CPU_BUDGET_S, run.cpu_seconds
    assert run.max_rss_bytes < RSS_BUDGET_BYTES, run.max_rss_bytes
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert f"kepcheck: error: {caught.value}" == lines[0]


def test_there_are_enough_hostile_cases_in_every_class():
    classes = {}
    for case in CASES:
        classes.setdefault(case.name.split("-")[0], []).append(case)
    assert len(CASES) >= 60
    assert {"yaml", "k8s", "dup", "gen"} <= set(classes)


# --- what must still load ----------------------------------------------------------------------------

MERGED = """\
    name: merge-keys
    nodes:
      - &node {name: n1, allocatable: {cpu: "4"}}
      - {<<: *node, name: n2}
    pods:
      - &web {name: a, node: n1, priority: 10, requests: &small {cpu: "1"}}
      - <<: *web
        name: b
        priority: 20
      - {<<: [*web], name: c, node: n2, requests: *small}
    environment:
      resizes: [{pod: a, requests: {cpu: "2"}}]
    """
EXPANDED = """\
    name: merge-keys
    nodes:
      - {name: n1, allocatable: {cpu: "4"}}
      - {name: n2, allocatable: {cpu: "4"}}
    pods:
      - {name: a, node: n1, priority: 10, requests: {cpu: "1"}}
      - {name: b, node: n1, priority: 20, requests: {cpu: "1"}}
      - {name: c, node: n2, priority: 10, requests: {cpu: "1"}}
    environment:
      resizes: [{pod: a, requests: {cpu: "2"}}]
    """


def test_merge_keys_load_as_the_expanded_file(tmp_path):
    merged, expanded = tmp_path / "merged.yaml", tmp_path / "expanded.yaml"
    merged.write_text(textwrap.dedent(MERGED))
    expanded.write_text(textwrap.dedent(EXPANDED))
    assert load_scenario(merged) == dataclasses.replace(load_scenario(expanded), source=str(merged))
    run = run_cli(merged)
    assert (run.code, run.stderr) == (0, ""), run.stderr[-500:]


def test_values_at_the_edge_of_kubernetes_rules_load(tmp_path):
    """The limits are Kubernetes' own, not narrower: int32's minimum, the highest user-definable
    priority and both system classes, a 253-character pod name with dots, 20 distinct owners
    with DNS prefixes, a hex integer, a quoted quantity with surrounding spaces."""
    long_name = ".".join(["a" * 63] * 4)[:253].rstrip(".")
    long_name += "b" * (253 - len(long_name))
    owners = ", ".join(f"example.com/owner-{i}" for i in range(20))
    path = tmp_path / "edge.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: edge.values-1
        nodes:
          - {{name: node-1.example.com, allocatable: {{cpu: 0x10}}, disableResizePreemption: [{owners}]}}
        pods:
          - {{name: {long_name}, priority: -2147483648, requests: {{cpu: " 1 "}}}}
          - {{name: b, priority: 1000000000, requests: {{cpu: "1"}}}}
          - {{name: c, priority: 2000000000, requests: {{cpu: "1"}}}}
          - {{name: d, priority: 2000001000, requests: {{cpu: "1"}}}}
        """))
    scenario = load_scenario(path)
    assert len(long_name) == 253 and scenario.pods[0].name == long_name
    assert [pod.priority for pod in scenario.pods] == [-2**31, 10**9, 2 * 10**9, 2 * 10**9 + 1000]
    assert scenario.nodes[0].disable_resize_preemption and scenario.nodes[0].allocatable == (16,)
