"""Run the real command line in a child process within resource limits, and measure what it used.

A small launcher sits between pytest and ``kepcheck``: a process's peak RSS (``ru_maxrss``) counts
the pages it inherited at fork, so the command line is forked from this ~10 MB interpreter, not
from pytest. It caps the address space (``RLIMIT_AS``: a regression fails fast instead of
swapping), execs the command, and reports what ``os.wait4`` measured: CPU time (user + system, the
whole process from interpreter start, so robust to a busy machine) and peak resident memory. A
wall-clock timeout is the last guard against a hang. Used by the hostile-input catalogues
(``tests/test_hostile_inputs.py``, ``tests/test_hostile_surfaces.py``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

CPU_BUDGET_S = 2.0
RSS_BUDGET_BYTES = 200 * 2**20
ADDRESS_SPACE_LIMIT = 2**30
WALL_TIMEOUT_S = 10.0

_LAUNCHER = textwrap.dedent("""\
    import os, resource, sys
    report, command = sys.argv[1], sys.argv[2:]
    pid = os.fork()
    if pid == 0:
        resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
        os.execv(command[0], command)
    _, status, usage = os.wait4(pid, 0)
    with open(report, "w") as out:
        out.write(f"{{os.waitstatus_to_exitcode(status)}} {{usage.ru_utime + usage.ru_stime}} {{usage.ru_maxrss}}")
""").format(limit=ADDRESS_SPACE_LIMIT)


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str
    cpu_seconds: float
    max_rss_bytes: int


def run_limited(arguments: list[str], cwd: Path | None = None) -> Run:
    """``python -m kepcheck ARGUMENTS`` in a subprocess; its exit code, output and resource use."""
    command = [sys.executable, "-m", "kepcheck", *arguments]
    with tempfile.TemporaryDirectory() as scratch:
        report, out, err = (Path(scratch) / name for name in ("report", "out", "err"))
        with out.open("wb") as stdout, err.open("wb") as stderr:
            launcher = subprocess.Popen([sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report), *command],
                                        stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, cwd=cwd,
                                        start_new_session=True)
            try:
                launcher.wait(timeout=WALL_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(launcher.pid, signal.SIGKILL)
                launcher.wait()
                pytest.fail(f"no answer within {WALL_TIMEOUT_S} s: a hang")
        code, cpu, rss = report.read_text().split()
        return Run(int(code), out.read_text("utf-8", "replace"), err.read_text("utf-8", "replace"),
                   float(cpu), int(rss) * 1024)
