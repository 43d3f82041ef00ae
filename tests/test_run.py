"""The run pipeline (``checks/run.py``): one exploration per scenario × variant, whatever the
properties, symmetry and outputs asked for; traces replayed; the reporter never searches."""

from __future__ import annotations

import shlex

import pytest

from kepcheck.checks.cli import main as cli
from kepcheck.checks.search import breadth_first as search

SYMMETRIC = ("--scenario", "additional-preemption", "--variant", "alpha-1.37")  # interchangeable pods


@pytest.fixture
def explorations(monkeypatch):
    """Counts the breadth-first searches started (``checks/search/breadth_first.py``)."""
    count = []
    original = search.Search.run

    def counted(self, *args, **kwargs):
        count.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(search.Search, "run", counted)
    return count


@pytest.mark.parametrize("extra", [
    ("--property", "NoExcessVictims"),  # symmetry on, a violation whose trace is rebuilt
    ("--property", "NoExcessVictims", "--property", "ResizePreempted", "--no-symmetry"),
    (),  # every property, the liveness ones included (the graph is kept)
    ("--property", "VictimEvicted", "--property", "NoDoublePreemption"),  # a witness and a violation, symmetric
], ids=["symmetry", "no-symmetry", "all-properties", "witness"])
def test_check_explores_once(capsys, explorations, extra):
    assert cli.main(["check", *SYMMETRIC, *extra, "--json"]) in (0, 1)
    capsys.readouterr()
    assert len(explorations) == 1


def test_check_with_a_report_explores_once(capsys, explorations, tmp_path):
    assert cli.main(["check", *SYMMETRIC, "--report", str(tmp_path / "review")]) == 0
    capsys.readouterr()
    assert len(explorations) == 1
    assert "## Resize lifecycle" in (tmp_path / "review" / "index.md").read_text()


def test_the_symmetric_trace_replays_and_ends_in_the_violation(capsys):
    """The trace of a symmetry-reduced search is re-executed concretely: its replay line replays."""
    assert cli.main(["check", *SYMMETRIC, "--property", "NoExcessVictims", "--traces"]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("replay: "))
    assert line.endswith('"PreemptForResize(pod=pod1)"')
    assert cli.main(shlex.split(line)[2:]) == 0
    assert "pod2: Running → Terminating" in capsys.readouterr().out
