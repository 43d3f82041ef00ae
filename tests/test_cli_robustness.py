"""The command line ends every way it can in a documented exit code and at most one line on stderr
(issue 13): budgets and flags validated, output paths checked before any checking, reports written
atomically (no partial report on an interrupt, no stale file after a re-run), SIGINT/SIGTERM as
130/143, a closed pipe as a quiet exit, a non-UTF-8 terminal, an internal error as exit 4.

Most cases run ``python -m kepcheck`` as a process, as a user would; the two that need a fault
inside a run (a report that fails after the checks, an internal error) call ``cli.main``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from kepcheck.checks.cli import main as cli
from kepcheck.checks.outputs.files import OutputError
from kepcheck.spec.kep.properties import PROPERTIES

SMALL = ["--scenario", "deferred-upsize-one-victim", "--variant", "alpha-1.37"]
# every scenario under the variants with the most violations: quick to check, many trace reports to write
WRITE_HEAVY = ["--variant", "alpha-1.37", "--variant", "allocated-only", "--variant", "allocated-only-assume",
               "--variant", "kubelet-aligned"]


def kepcheck(*argv, cwd, env=None, timeout=120):
    done = subprocess.run([sys.executable, "-m", "kepcheck", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env={**os.environ, **(env or {})})
    assert "Traceback" not in done.stderr, done.stderr
    return done


def one_line_error(done, *fragments) -> str:
    """The one error line on stderr (a run longer than 5 s also writes its progress lines there)."""
    lines = [line for line in done.stderr.strip().splitlines() if not line.startswith("kepcheck: progress: ")]
    assert len(lines) == 1, done.stderr
    assert all(fragment in lines[0] for fragment in fragments), lines[0]
    return lines[0]


@pytest.mark.parametrize("argv, fragment", [
    (["--timeout", "nan"], "--timeout must be a positive finite number"),
    (["--timeout", "inf"], "--timeout must be a positive finite number"),
    (["--timeout", "-1"], "--timeout must be a positive finite number"),
    (["--max-states", "0"], "--max-states must be a positive finite number"),
    (["--depth", "0"], "--depth must be a positive finite number"),
    (["--timeout", "soon"], "invalid float value"),
    (["--fairness", ""], "empty group name"),
    (["--fairness", ",,"], "empty group name"),
    (["--fairness", "scheduler-retries,"], "empty group name"),
    (["--engine", "bmc", "--max-states", "10"], "--max-states bounds the states"),
    (["--engine", "warp"], "unknown engine"),
])
def test_bad_flags_are_refused_with_one_line(argv, fragment, tmp_path):
    done = kepcheck("check", *SMALL, *argv, cwd=tmp_path)
    assert done.returncode == 2
    one_line_error(done, fragment)
    assert done.stdout == ""


def test_an_unknown_subcommand_is_one_line(tmp_path):
    done = kepcheck("frobnicate", cwd=tmp_path)
    assert done.returncode == 2
    one_line_error(done, "invalid choice", "--help")


@pytest.mark.parametrize("where, fragment", [
    ("", "an empty path"),
    ("a-file", "exists and is a file"),
    ("/dev/null", "character device"),
    ("a-file/below", "is not a directory"),
    pytest.param("x" * 300, "a name is too long", id="name-too-long"),
    ("holder", "is not a kepcheck report"),
    (".", "not a kepcheck report"),
])
def test_an_output_path_that_cannot_take_a_report_is_refused_before_checking(where, fragment, tmp_path):
    (tmp_path / "a-file").write_text("mine\n")
    (tmp_path / "holder").mkdir()
    (tmp_path / "holder" / "notes.txt").write_text("mine\n")
    before = sorted(p.name for p in tmp_path.rglob("*"))
    started = time.perf_counter()
    for argv in (["check", *SMALL, "--report", where], ["report", *SMALL, "--out", where]):
        done = kepcheck(*argv, cwd=tmp_path)
        assert done.returncode == 2, argv
        one_line_error(done, fragment)
    assert time.perf_counter() - started < 10  # refused before any checking
    assert sorted(p.name for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "a-file").read_text() == "mine\n"


def test_a_rerun_into_a_used_report_leaves_exactly_the_new_report(tmp_path):
    assert kepcheck("report", "--scenario", "deferred-upsize-one-victim", "--out", "out", cwd=tmp_path).returncode == 0
    (tmp_path / "out" / "traces" / "stale--trace.md").write_text("old\n")
    (tmp_path / "out" / "stray.txt").write_text("old\n")
    done = kepcheck("report", *SMALL, "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = {p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")}
    assert "traces/stale--trace.md" not in written and "stray.txt" not in written
    assert all("alpha-1.37" in name for name in written if name.startswith("traces/") and name != "traces")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging directory left


def _interrupt_when(argv, ready, signum, cwd) -> subprocess.CompletedProcess:
    """Start kepcheck, send ``signum`` once ``ready()`` holds, and wait for it to end."""
    process = subprocess.Popen([sys.executable, "-m", "kepcheck", *argv], cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not ready() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert process.poll() is None, "kepcheck ended before it could be interrupted"
    process.send_signal(signum)
    out, err = process.communicate(timeout=30)
    return subprocess.CompletedProcess(argv, process.returncode, out, err)


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_during_the_checks_is_one_line_and_leaves_no_report(signum, code, tmp_path):
    started = time.monotonic()
    done = _interrupt_when(["check", "--report", "out"], lambda: time.monotonic() - started > 2.5, signum, tmp_path)
    assert done.returncode == code
    assert "Traceback" not in done.stderr
    one_line_error(done, "interrupted", signal.Signals(signum).name)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_while_the_report_is_written_leaves_the_old_report_whole(signum, code, tmp_path):
    assert kepcheck("report", *SMALL, "--out", "out", "--no-times", cwd=tmp_path).returncode == 0
    old = {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()}

    def staging() -> bool:
        return any(p.name.startswith(".out.tmp-") for p in tmp_path.iterdir())

    done = _interrupt_when(["report", "--out", "out", *WRITE_HEAVY], staging, signum, tmp_path)
    assert done.returncode == code
    one_line_error(done, "interrupted")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert {p: p.read_bytes() for p in (tmp_path / "out").rglob("*") if p.is_file()} == old


def test_a_closed_pipe_ends_quietly(tmp_path):
    for argv in (["list"], ["list", "--json"], ["check", *SMALL, "--json"]):
        process = subprocess.Popen([sys.executable, "-m", "kepcheck", *argv], cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE)
        process.stdout.readline()
        process.stdout.close()  # as `head -1` does
        err = process.stderr.read().decode()
        assert process.wait(timeout=60) == 0, (argv, err)
        assert err == "", (argv, err)


def test_a_terminal_that_is_not_utf8_gets_ascii(tmp_path):
    for argv in (["list"], ["check", *SMALL, "--traces"], ["check", *SMALL, "--json"]):
        done = kepcheck(*argv, cwd=tmp_path, env={"PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0, (argv, done.stderr)
        assert done.stdout.isascii() and done.stdout.strip()
    assert json.loads(done.stdout)  # the JSON escapes what ASCII cannot carry, exactly


def test_json_records_are_printed_when_only_the_report_fails(monkeypatch, capsys, tmp_path):
    def failing(*_args, **_kwargs):
        raise OutputError(tmp_path / "out", "cannot write the report: No space left on device")

    monkeypatch.setattr(cli, "write_review", failing)
    code = cli.main(["check", *SMALL, "--json", "--report", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert code == 2
    assert len(json.loads(captured.out)) == len(PROPERTIES)  # one record per property of the one run
    assert captured.err.strip().splitlines() == [captured.err.strip()]
    assert "No space left on device" in captured.err


def test_an_internal_error_is_exit_4_with_one_line_and_debug_shows_the_traceback(monkeypatch, capsys):
    def broken(*_args, **_kwargs):
        raise RuntimeError("a bug\nsecond line")

    monkeypatch.setattr(cli, "run_checks", broken)
    assert cli.main(["check", *SMALL]) == 4
    err = capsys.readouterr().err
    assert err.strip() == "kepcheck: internal error: RuntimeError: a bug (rerun with --debug for the traceback)"
    assert cli.main(["--debug", "check", *SMALL]) == 4
    assert "Traceback" in capsys.readouterr().err
    assert cli.main(["check", "--debug", *SMALL]) == 4
    assert "Traceback" in capsys.readouterr().err
