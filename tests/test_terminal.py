"""What the command line prints for people (issue 14): tables that fit the width without cutting a
name, the replay command on a line of its own, progress on stderr for a long run, the statistics,
whether a mutant was caught, the replay's marks, ``--version``, the output streams, the random
engine's differential checks as rows of their own, and the packaging that installs quietly."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from kepcheck.checks.cli import main as cli
from kepcheck.checks.engine import Budget
from kepcheck.checks.outputs.files import console
from kepcheck.checks.outputs.progress import Reporter
from kepcheck.checks.result import Progress
from kepcheck.spec.kep.properties import PROPERTIES

ROOT = Path(__file__).parent.parent
BENCH = ROOT / "bench" / "scenarios" / "bench-two-nodes-busy.yaml"
SMALL = ["--scenario", "deferred-upsize-one-victim", "--variant", "alpha-1.37"]
LOWERED = ["--scenario", "resize-lowered-while-victims-terminate", "RequestResize(pod=web, requests=[cpu 5])",
           "PreemptForResize(pod=web)", "RequestResize(pod=web, requests=[cpu 4])", "PreemptForResize(pod=web)"]


def kepcheck(*argv, env=None, timeout=120, cwd=None) -> subprocess.CompletedProcess:
    """``python -m kepcheck`` with stdout and stderr piped (neither is a terminal)."""
    environment = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "NO_COLOR")}
    done = subprocess.run([sys.executable, "-m", "kepcheck", *argv], capture_output=True, text=True, timeout=timeout,
                          env={**environment, **(env or {})}, cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def run(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def listed() -> dict:
    return json.loads(kepcheck("list", "--json").stdout)


@pytest.fixture(scope="module")
def narrow() -> subprocess.CompletedProcess:
    return kepcheck("check", "--scenario", "deferred-upsize-one-victim", "--traces", env={"COLUMNS": "100"})


# --- the table fits the width ------------------------------------------------------------------------

def test_at_100_columns_every_variant_and_property_name_is_shown_whole(narrow, listed):
    assert narrow.returncode == 0, narrow.stderr
    out = narrow.stdout
    table_lines = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 100
    assert not any("…" in line for line in table_lines)
    matrix = out[:out.rindex(table_lines[-1])]  # the legend and the tables
    for name in [v["name"] for v in listed["variants"]] + [p["name"] for p in listed["properties"]]:
        assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", matrix), name


def test_the_replay_command_is_one_line_that_replays(narrow, capsys):
    lines = narrow.stdout.splitlines()
    commands = [line[len("replay: "):] for line in lines if line.startswith("replay: ")]
    assert commands and all(command.startswith("kepcheck replay --scenario ") for command in commands)
    assert all(command.endswith('"') for command in commands)  # not cut: the last label is whole
    assert all(len(command) > 100 for command in commands)  # longer than the width, and not wrapped
    assert cli.main(shlex.split(commands[0])[1:]) == 0, capsys.readouterr().err


def test_piped_output_without_columns_is_200_wide_and_has_no_colour():
    done = kepcheck("check", "--scenario", "deferred-upsize-one-victim", "--variant", "alpha-1.37",
                    "--variant", "allocated-only")
    assert "\x1b[" not in done.stdout
    table_lines = [line for line in done.stdout.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and max(len(line) for line in table_lines) <= 200


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_no_color_turns_colour_off_on_a_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    coloured = _Terminal()
    console(coloured).print("[red]x[/]")
    monkeypatch.setenv("NO_COLOR", "1")
    plain = _Terminal()
    console(plain).print("[red]x[/]")
    assert "\x1b[31m" in coloured.getvalue() and "\x1b[31m" not in plain.getvalue()


def test_list_never_cuts_a_word_at_60_columns(monkeypatch, capsys, listed):
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run(capsys, "list")
    assert code == 0 and "…" not in out
    for name in [v["name"] for v in listed["variants"]] + [m["name"] for m in listed["mutants"]]:
        assert name in out


# --- progress and statistics ---------------------------------------------------------------------------

def test_a_long_run_prints_progress_lines_on_stderr_when_it_is_a_file(tmp_path):
    started = time.perf_counter()
    with open(tmp_path / "err", "w") as err:
        done = subprocess.run([sys.executable, "-m", "kepcheck", "check", "--scenario", str(BENCH), "--variant",
                               "alpha-1.37", "--core", "interpreted", "--timeout", "7"], stdout=subprocess.PIPE,
                              stderr=err, text=True, timeout=120)
    assert time.perf_counter() - started > 5
    assert done.returncode == 3  # the time budget is hit: inconclusive
    lines = (tmp_path / "err").read_text().splitlines()
    progress = [line for line in lines if line.startswith("kepcheck: progress: ")]
    assert progress, lines
    assert all("bench-two-nodes-busy × alpha-1.37" in line and "explicit" in line and "budget left" in line
               and "peak memory" in line for line in progress)
    assert "\r" not in "".join(lines)
    assert any(line.startswith("statistics: explicit: 1 scenario × variant run; ") for line in done.stdout.splitlines())


def test_a_quick_run_leaves_stderr_empty():
    done = kepcheck("check", *SMALL)
    assert done.returncode == 0 and done.stderr == ""
    assert "statistics: explicit: 1 scenario × variant run; 31 distinct states" in done.stdout


def test_reporter_lines_name_states_rate_depth_frontier_and_budget(capsys):
    from kepcheck.checks.run import select_scenarios, select_variants
    from kepcheck.model.context import Context

    ctx = Context.build(select_scenarios(["two-nodes"])[0], select_variants(["alpha-1.37"])[0], [])
    stream = io.StringIO()
    with Reporter(stream, 3, "explicit", Budget(max_states=100_000, timeout=60), live=False, interval=0.05) as reporter:
        reporter.starting(ctx)
        reporter.update(ctx, Progress(45_000, 160_000, 7, 12_000, 10.0))
        deadline = time.monotonic() + 10
        while not stream.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
    line = stream.getvalue().splitlines()[-1]
    assert line.startswith("kepcheck: progress: ")
    for part in ("1/3 two-nodes × alpha-1.37", "explicit: 45,000 states (4,500/s)", "160,000 transitions",
                 "depth 7", "frontier 12,000", "budget left: ", "55,000 states", "peak memory"):
        assert part in line, (part, line)


def test_with_json_stdout_stays_json(capsys):
    code, out, _ = run(capsys, "check", *SMALL, "--json", "--mutant", "no-reprieve")
    assert code == 0 and json.loads(out)


# --- mutants, replay, version, streams ----------------------------------------------------------------

def test_a_mutant_run_says_whether_the_mutant_was_caught(capsys):
    argv = ["check", "--mutant", "no-reprieve", "--variant", "alpha-1.37", "--property", "NoVictimWithoutNeed"]
    _, out, _ = run(capsys, *argv, "--scenario", "resize-superseded")
    assert "mutant no-reprieve: caught — NoVictimWithoutNeed violated in resize-superseded under alpha-1.37" in out
    _, out, _ = run(capsys, *argv, "--scenario", "deferred-upsize-one-victim")
    assert "mutant no-reprieve: NOT caught — NoVictimWithoutNeed is not violated in 1 check run" in out
    _, out, err = run(capsys, *argv[:-2], "--property", "ConditionsTruthful", "--scenario", "resize-superseded", "--json")
    assert json.loads(out)
    assert "kepcheck: mutant no-reprieve: not judged — its property NoVictimWithoutNeed was not checked" in err


def test_replay_marks_the_step_that_violates_a_property(capsys):
    code, out, _ = run(capsys, "replay", *LOWERED)
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "4 steps replayed; violated: NoExcessVictims at step 4, NoDoublePreemption at step 4"
    step4 = lines.index("  4. PreemptForResize(pod=web)  [scheduler]")
    mark = lines.index("       ✗ NoExcessVictims violated here", step4)
    assert lines[mark + 1].startswith("         ") and "allocatable" in lines[mark + 1]  # the property's arithmetic
    assert "✗" not in "\n".join(lines[:step4])


def test_replay_marks_a_lasso_loop(capsys):
    code, out, _ = run(capsys, "replay", "--scenario", "deferred-upsize-one-victim", "--variant", "gate-off",
                       "PeriodicRetryPendingResizes(node=n1)")
    assert code == 0
    assert "the last step returns to the state of step 0" in out.splitlines()[0]
    assert "  0. initial state  ← the loop starts from this state" in out
    assert "  ⟲ step 1 is back in the state of step 0: step 1 repeats forever" in out


def test_replay_itf_replays_the_file_written_by_check(capsys, tmp_path):
    _, out, _ = run(capsys, "check", "--scenario", "resize-lowered-while-victims-terminate", "--variant", "alpha-1.37",
                    "--property", "NoExcessVictims", "--json")
    (record,) = json.loads(out)
    path = tmp_path / "trace.itf.json"
    path.write_text(json.dumps(record["trace"]))
    code, from_file, _ = run(capsys, "replay", "--itf", str(path))
    assert code == 0
    _, from_labels, _ = run(capsys, "replay", *LOWERED)
    assert from_file == from_labels  # the same trace, marks and replay command as the labels give
    code, err_out, err = run(capsys, "replay", "--itf", str(path), "--variant", "gate-off")
    assert code == 2 and err_out == "" and len(err.strip().splitlines()) == 1 and "contradicts" in err


def test_replay_without_a_scenario_is_one_line(capsys):
    code, out, err = run(capsys, "replay", "BindPod(pod=x)")
    assert code == 2 and out == "" and err.strip() == "kepcheck: error: replay needs --scenario NAME|FILE (or --itf FILE)"


def test_version_is_the_installed_package_version(capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["--version"])
    assert caught.value.code == 0
    assert capsys.readouterr().out.strip() == f"kepcheck {version('kepcheck')}"


def test_report_and_check_report_say_wrote_on_stderr(tmp_path):
    for argv in (["report", *SMALL, "--out", "a"], ["check", *SMALL, "--report", "b"]):
        done = kepcheck(*argv, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "wrote" not in done.stdout
        assert done.stderr.startswith("kepcheck: wrote the design review report ")


# --- the random engine's differential checks -----------------------------------------------------------

RANDOM = ["check", "--engine", "random", "--examples", "3", "--steps", "3", *SMALL]


def test_random_runs_show_the_differential_checks_as_rows(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    _, out, _ = run(capsys, *RANDOM)
    assert "SchedulerConservative (differential)" in out and "AccountingAgrees (differential)" in out
    assert f"{len(PROPERTIES) + 2} checks on 1 scenario × 1 variant" in out  # the catalog and the two differentials


def test_property_selects_differential_checks_too(capsys):
    _, out, _ = run(capsys, *RANDOM, "--property", "NoDoubleReservation", "--json")
    assert [r["property"] for r in json.loads(out)] == ["NoDoubleReservation"]
    _, out, _ = run(capsys, *RANDOM, "--property", "SchedulerConservative", "--json")
    assert [r["property"] for r in json.loads(out)] == ["SchedulerConservative"]
    code, _, err = run(capsys, "check", *SMALL, "--property", "SchedulerConservative")
    assert code == 2 and "differential check of the random engine" in err


# --- packaging -----------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_plain_install_carries_every_module_and_data_file(tmp_path):
    """``pip install .`` (here: the wheel it installs) holds every module and data file of ``spec/``,
    ``model/`` and ``checks/`` under ``kepcheck/``, and installs no top-level ``spec``, ``model`` or
    ``checks``: no module missing from an installed copy, no generic name taken."""
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(ROOT)],
                           capture_output=True, text=True)
    if built.returncode != 0 and "Could not find a version" in built.stderr:
        pytest.skip("the package index is not reachable for the build backend")
    assert built.returncode == 0, built.stderr[-2000:]
    import zipfile

    (wheel,) = tmp_path.glob("kepcheck-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert not {name.split("/")[0] for name in names} & {"spec", "model", "checks"}
    wanted = {f"kepcheck/{path.relative_to(ROOT)}" for layer in ("spec", "model", "checks")
              for path in (ROOT / layer).rglob("*") if path.is_file() and "__pycache__" not in path.parts}
    wanted |= {f"kepcheck/{path.name}" for path in (ROOT / "kepcheck").glob("*.py")}
    assert wanted <= names, sorted(wanted - names)[:10]

# --- the matrix's layout without rich measuring every trial table (issue 29) ------------------------------

def test_the_computed_natural_width_is_what_rich_measures_and_the_matrix_is_unchanged():
    """``terminal.natural_width`` (the layout's trial tables, computed from their cells) equals rich's
    own measurement of every table of a matrix with marks, sometimes-cells and state counts, and the
    matrix printed with widths set (``_measured``) is the one rich lays out itself."""
    from rich.console import Console

    from kepcheck.checks.cli import terminal
    from kepcheck.checks.run import run_checks, select_properties, select_scenarios, select_variants

    outcome = list(run_checks(select_scenarios(["deferred-upsize-one-victim", "two-nodes"]),
                              select_variants(["alpha-1.37", "allocated-only", "gate-off"]), select_properties(None)))
    rows = terminal.check_rows(outcome)
    wide = Console(file=io.StringIO(), width=100_000)
    runs = outcome[:3]
    tables = [terminal._wide_table(runs, rows)] + [terminal._keyed_table(runs, rows, list(range(1, k + 1)))
                                                    for k in range(1, len(rows) + 1)]
    for table in tables:
        assert terminal.natural_width(table) == wide.measure(table).maximum
    printed = []
    for measured in (terminal._measured, lambda table: table):
        out = Console(file=io.StringIO(), width=90, color_system=None)
        original, terminal._measured = terminal._measured, measured
        try:
            terminal.print_matrix(out, outcome)
        finally:
            terminal._measured = original
        printed.append(out.file.getvalue())
    assert printed[0] == printed[1] and "two-nodes" in printed[0]
