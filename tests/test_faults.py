"""Faults while a command runs (issue 29): a child ``kepcheck`` process signalled by its pid in each
phase, killed with ``kill -9`` and re-run, writing to a full disk or a read-only directory, and two
runs on one output directory. (SIGINT/SIGTERM during the checks and while a report is written:
``tests/test_cli_robustness.py``.)

The documented outcome (``checks/exits.py``): SIGINT → 130, SIGTERM → 143, one line on stderr
(``kepcheck: interrupted (SIG…)``), the previous report or sweep store intact; after ``kill -9`` a
re-run leaves exactly the new report, and a resumed sweep neither loses nor duplicates a scenario;
a write that fails is one line and exit 2; a second run on an output directory another run is
writing is refused with one line, exit 2.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kepcheck.checks.sweep.bounds import load_bounds
from kepcheck.checks.sweep.command import RESULT_DIR, sweep_points
from kepcheck.checks.sweep.store import STORE_NAME

ROOT = Path(__file__).resolve().parent
TINY = ROOT / "sweeps" / "tiny.yaml"
SMALL = ["--scenario", "deferred-upsize-one-victim", "--variant", "alpha-1.37"]


def _start(argv: list[str], cwd: Path, **more) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "kepcheck", *argv], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **more)


def _when(process: subprocess.Popen, ready, within: float = 60.0) -> None:
    deadline = time.monotonic() + within
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert process.poll() is None, "kepcheck ended before the fault: " + process.stderr.read()[-500:]


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.strip().splitlines() if not line.startswith("kepcheck: progress: ")]


def _files(directory: Path) -> dict:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _store_lines(directory: Path) -> list[str]:
    return (directory / STORE_NAME).read_text(encoding="utf-8").splitlines(keepends=True)


# --- signals in each phase --------------------------------------------------------------------------------

PHASES = {
    # the liveness engine's search and judgement over the whole matrix (tens of seconds)
    "liveness": (["check", "--engine", "liveness"], 2.0),
    # the random engine's walks
    "random": (["check", "--engine", "random"], 2.0),
    # bounded model checking with Z3
    "bmc": (["check", "--engine", "bmc", "--depth", "30", *SMALL], 2.5),
}


@pytest.mark.parametrize("phase", list(PHASES))
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_in_each_phase_is_one_line_and_its_code(phase, signum, code, tmp_path):
    argv, after = PHASES[phase]
    process = _start(argv, tmp_path)
    started = time.monotonic()
    _when(process, lambda: time.monotonic() - started > after)
    os.kill(process.pid, signum)
    out, err = process.communicate(timeout=30)
    assert "Traceback" not in err, err[-2000:]
    assert process.returncode == code, (phase, process.returncode, err[-500:])
    assert _errors(err) == [f"kepcheck: interrupted ({signal.Signals(signum).name})"], err[-500:]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The tiny sweep, uninterrupted."""
    out = tmp_path_factory.mktemp("reference") / "out"
    done = subprocess.run([sys.executable, "-m", "kepcheck", "sweep", str(TINY), "-o", str(out)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    return out


def _interrupted_sweep(tmp_path: Path, signum: int) -> tuple[subprocess.Popen, str, Path]:
    out = tmp_path / "out"
    process = _start(["sweep", str(TINY), "-o", str(out)], tmp_path)
    _when(process, lambda: (out / STORE_NAME).exists() and len(_store_lines(out)) > 20)
    os.kill(process.pid, signum)
    _, err = process.communicate(timeout=60)
    return process, err, out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_a_sweep_stopped_by_a_signal_resumes_without_losing_or_duplicating(signum, tmp_path, reference):
    process, err, out = _interrupted_sweep(tmp_path, signum)
    if signum == signal.SIGKILL:
        assert process.returncode == -signal.SIGKILL
    else:
        assert process.returncode == 128 + signum
        assert _errors(err) == [f"kepcheck: interrupted ({signal.Signals(signum).name})"], err[-500:]
        assert all(line.endswith("\n") for line in _store_lines(out))  # every line written whole
        assert not (out / RESULT_DIR).exists()
    kept = len(_store_lines(out))
    done = subprocess.run([sys.executable, "-m", "kepcheck", "sweep", str(TINY), "-o", str(out)], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-500:]
    keys = [json.loads(line)["key"] for line in _store_lines(out)[1:]]
    points, _ = sweep_points(load_bounds(TINY))
    assert len(keys) == len(set(keys)) == len(points)  # none lost, none twice
    assert kept - 1 <= len(keys)
    assert _files(out / RESULT_DIR) == _files(reference / RESULT_DIR)


# --- kill -9 while a report is written ------------------------------------------------------------------

def test_a_report_killed_while_written_is_rewritten_whole_by_a_rerun(tmp_path):
    assert subprocess.run([sys.executable, "-m", "kepcheck", "report", *SMALL, "--out", "out", "--no-times"],
                          cwd=tmp_path, capture_output=True, timeout=120).returncode == 0
    old = _files(tmp_path / "out")
    process = _start(["report", "--out", "out", "--no-times", "--variant", "alpha-1.37", "--variant", "allocated-only"],
                     tmp_path)
    _when(process, lambda: any(p.name.startswith(".out.tmp-") for p in tmp_path.iterdir()))
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)
    assert _files(tmp_path / "out") == old  # the previous report, whole
    done = subprocess.run([sys.executable, "-m", "kepcheck", "report", *SMALL, "--out", "out", "--no-times"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # the killed run's staging directory is gone
    assert _files(tmp_path / "out") == old  # the same report again: nothing of the killed run mixed in


# --- a full disk, a read-only directory ----------------------------------------------------------------

def _file_size_limit(limit: int):
    def limited() -> None:  # a write past ``limit`` bytes fails with EFBIG, as on a full disk
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limited


@pytest.mark.parametrize("argv", [["check", *SMALL, "--report", "out"], ["report", *SMALL, "--out", "out"],
                                  ["sweep", str(TINY), "-o", "out"]], ids=["check", "report", "sweep"])
def test_a_full_disk_is_one_line_and_exit_2(argv, tmp_path):
    process = _start(argv, tmp_path, preexec_fn=_file_size_limit(2000))
    _, err = process.communicate(timeout=300)
    assert "Traceback" not in err, err[-2000:]
    assert process.returncode == 2, (process.returncode, err[-500:])
    lines = _errors(err)
    assert len(lines) == 1 and lines[0].startswith("kepcheck: error: ") and "File too large" in lines[0], lines
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]


def _read_only_directory(tmp_path: Path) -> Path:
    if os.geteuid() != 0:
        directory = tmp_path / "read-only"
        directory.mkdir()
        directory.chmod(0o555)
        return directory
    if Path("/sys/kernel").is_dir():  # root writes anywhere a mode allows; not in sysfs
        return Path("/sys/kernel")
    pytest.skip("no read-only directory for root here")


@pytest.mark.parametrize("command", ["check", "report", "sweep", "import", "export"])
def test_a_read_only_output_directory_is_one_line_and_exit_2(command, tmp_path):
    target = str(_read_only_directory(tmp_path) / "kepcheck-out")
    argv = {"check": ["check", *SMALL, "--report", target], "report": ["report", *SMALL, "--out", target],
            "sweep": ["sweep", str(TINY), "-o", target],
            "import": ["import", str(ROOT / "fixtures" / "kubectl-snapshot.yaml"), "-o", target + ".yaml"],
            "export": ["export", str(ROOT / "golden" / "later-competing-resize--alpha-1.37--KubeletHonorsReservation"
                                            ".itf.json"), "-o", target]}[command]
    done = subprocess.run([sys.executable, "-m", "kepcheck", *argv], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert done.returncode == 2, (done.returncode, done.stderr[-500:])
    lines = _errors(done.stderr)
    assert len(lines) == 1 and lines[0].startswith("kepcheck: error: ") and "kepcheck-out" in lines[0], lines


# --- two runs on one output directory -------------------------------------------------------------------

@pytest.mark.parametrize("argv", [["check", "--engine", "liveness", "--report", "out"],
                                  ["sweep", str(TINY), "-o", "out"]], ids=["report", "sweep"])
def test_a_second_run_on_a_directory_being_written_is_refused(argv, tmp_path):
    first = _start(argv, tmp_path)
    try:
        time.sleep(2.0)  # the first run holds the directory's lock from its start
        assert first.poll() is None
        second = subprocess.run([sys.executable, "-m", "kepcheck", *argv], cwd=tmp_path, capture_output=True,
                                text=True, timeout=60)
        assert second.returncode == 2, second.stderr[-500:]
        lines = _errors(second.stderr)
        assert len(lines) == 1 and f"is being written by another kepcheck (pid {first.pid})" in lines[0], lines
    finally:
        first.send_signal(signal.SIGINT)
        first.communicate(timeout=60)
    assert first.returncode == 130
    again = subprocess.run([sys.executable, "-m", "kepcheck", *argv[:1], *SMALL, *argv[-2:]]
                           if argv[0] == "check" else [sys.executable, "-m", "kepcheck", *argv],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert again.returncode in (0, 1), again.stderr[-500:]  # the lock went with the first process
