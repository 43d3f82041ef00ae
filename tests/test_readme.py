"""The README and the documentation site show the current results: the findings page's verdict
matrix is the manifest's, every replay line they quote replays, the example scenario loads, and the
layout page names every module."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kepcheck.spec.language.loader import load_scenario
from kepcheck.checks.cli import main as cli
from kepcheck.checks.outputs.report import summary_markdown

from conftest import SCENARIOS, manifest

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
PAGES = {path.name: path.read_text() for path in sorted((ROOT / "docs").glob("*.md"))}
MAX_README_LINES = 250


def test_summary_table_is_current():
    assert summary_markdown(manifest(), list(SCENARIOS)) in PAGES["findings.md"]


def test_readme_starts_with_the_two_commands():
    head = README[:600]
    assert "make check" in head and "make test" in head and "make test-quick" in head


def test_readme_is_a_front_page():
    assert len(README.splitlines()) <= MAX_README_LINES
    header = "| finding | variant | property | scenario | replay line | sweep scope |"
    assert header in README, "the README's findings summary table"


def test_readme_links_resolve():
    targets = re.findall(r"\]\(((?!https?:)[^)#]+)\)", README)
    assert targets and [target for target in targets if not (ROOT / target).exists()] == []


# the replay lines of traces in the README and on every page (a usage example such as
# `kepcheck replay --itf FILE` names no scenario), each once
REPLAYS = sorted({line for text in [README, *PAGES.values()]
                  for line in re.findall(r"`(kepcheck replay [^`]+)`", text) if "--scenario " in line})


def test_readme_quotes_replay_lines():
    readme = {line for line in re.findall(r"`(kepcheck replay [^`]+)`", README) if "--scenario " in line}
    findings = {line for line in re.findall(r"`(kepcheck replay [^`]+)`", PAGES["findings.md"])
                if "--scenario " in line}
    assert len(readme) >= 8 and len(findings) >= 20
    assert readme <= findings, "every replay line of the README's table is on the findings page"


@pytest.mark.parametrize("line", REPLAYS, ids=range(len(REPLAYS)))
def test_replay_lines_in_readme_replay(line, capsys):
    argv = shlex.split(line)[1:]
    assert cli.main(argv) == 0, capsys.readouterr().err


def test_the_example_scenario_loads_and_checks(tmp_path, capsys):
    """The first YAML block of the scenario page is a scenario the loader accepts, and a run checks it."""
    block = re.search(r"```yaml\n(.*?)```", PAGES["scenarios.md"], re.S)
    assert block, "no YAML example on docs/scenarios.md"
    path = tmp_path / "example.yaml"
    path.write_text(block.group(1))
    scenario = load_scenario(path)
    assert scenario.nodes and scenario.pods
    assert cli.main(["check", "--scenario", str(path), "--variant", "alpha-1.37", "--json"]) == 0, capsys.readouterr().err


def _blocks(lines: list[str], indent: int) -> dict[str, str]:
    """The lines of a layout tree under each folder line at this indentation ('model/' → its lines)."""
    blocks, current = {}, None
    for line in lines:
        stripped = line[indent:] if line.startswith(" " * indent) else None
        if stripped and not stripped.startswith(" ") and stripped.split(" ")[0].endswith("/"):
            current = stripped.split(" ")[0].rstrip("/")
            blocks[current] = ""
        elif current is not None and line.strip() and len(line) - len(line.lstrip()) < indent:
            current = None
        if current is not None:
            blocks[current] += line + "\n"
    return blocks


def test_layout_names_every_module():
    """The layout page lists every module of spec/, model/ and checks/ under its folder."""
    tree = re.search(r"```\n(.*?)```", PAGES["layout.md"], re.S).group(1).splitlines()
    tops = _blocks(tree, 0)
    missing = []
    for top in ("spec", "model", "checks"):
        folders = _blocks(tops[top].splitlines(), 2)
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name == "__init__.py":
                continue
            parts = path.relative_to(ROOT / top).parts
            block = folders.get(parts[0], "") if len(parts) > 1 else tops[top]
            if path.name not in block:
                missing.append(str(path.relative_to(ROOT)))
    assert not missing, missing
