"""The README shows the current results: its summary table is the manifest's, and every replay
line it quotes replays and ends in the violation it describes."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kepcheck.spec.language.loader import load_scenario
from kepcheck.checks.cli import main as cli
from kepcheck.checks.outputs.report import summary_markdown

from conftest import SCENARIOS, manifest

README = (Path(__file__).parent.parent / "README.md").read_text()


def test_summary_table_is_current():
    assert summary_markdown(manifest(), list(SCENARIOS)) in README


def test_readme_starts_with_the_two_commands():
    head = README[:600]
    assert "make check" in head and "make test" in head


# the replay lines of traces (a usage example such as `kepcheck replay --itf FILE` names no scenario)
REPLAYS = [line for line in re.findall(r"`(kepcheck replay [^`]+)`", README) if "--scenario " in line]


def test_readme_quotes_replay_lines():
    assert len(REPLAYS) >= 8


@pytest.mark.parametrize("line", REPLAYS, ids=range(len(REPLAYS)))
def test_replay_lines_in_readme_replay(line, capsys):
    argv = shlex.split(line)[1:]
    assert cli.main(argv) == 0, capsys.readouterr().err


def test_the_example_scenario_loads_and_checks(tmp_path, capsys):
    """The YAML block of "Scenario files" is a scenario the loader accepts, and a run checks it."""
    section = README[README.index("## Scenario files"):]
    block = re.search(r"```yaml\n(.*?)```", section, re.S)
    assert block, "no YAML example under 'Scenario files'"
    path = tmp_path / "example.yaml"
    path.write_text(block.group(1))
    scenario = load_scenario(path)
    assert scenario.nodes and scenario.pods
    assert cli.main(["check", "--scenario", str(path), "--variant", "alpha-1.37", "--json"]) == 0, capsys.readouterr().err


def test_layout_names_every_module():
    """The README's layout section lists every module of the package by its file name."""
    layout = README[README.index("## Layout"):README.index("## Performance")]
    package = Path(__file__).parent.parent / "kepcheck"
    missing = [str(path.relative_to(package)) for path in sorted(package.rglob("*.py"))
               if path.name not in ("__init__.py", "__main__.py") and path.name not in layout]
    assert not missing, missing
