"""The code's structure: three layers with imports pointing one way and no cycle, small modules and
functions, no mutant switch in the production model, no path of a particular machine."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import networkx
import pytest

from kepcheck.model.mutants import MUTANTS

ROOT = Path(__file__).parent.parent
LAYERS = {"spec": 0, "model": 1, "checks": 2}  # a module may import its own layer and those below
MODULES = sorted([*(ROOT / "kepcheck").glob("*.py"), *(path for layer in LAYERS for path in (ROOT / layer).rglob("*.py"))])
MAX_MODULE_LINES = 410  # "about 400"
MAX_MODEL_MODULE_LINES = 250  # the model is read more than anything else: every file of it fits a screenful or four
MAX_FOLDER_FILES = 15  # no flat folder: past this a folder wants wings
MAX_FUNCTION_LINES = 60


def _name(path: Path) -> str:
    """The import name of a module: ``spec/``, ``model/`` and ``checks/`` install as ``kepcheck.*``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] != "kepcheck":
        parts.insert(0, "kepcheck")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """Every kepcheck module this module imports, at module level or inside a function (so that no
    function-level import hides a cycle)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    known = {_name(p) for p in MODULES}
    return {name for name in names if name in known}


def _graph() -> networkx.DiGraph:
    graph = networkx.DiGraph()
    for path in MODULES:
        graph.add_node(_name(path))
        for target in _imports(path):
            graph.add_edge(_name(path), target)
    return graph


def _layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 else None


def test_the_import_walk_sees_the_layers():
    graph = _graph()
    assert graph.has_edge("kepcheck.checks.run", "kepcheck.model.context")
    assert graph.has_edge("kepcheck.model.accounting.views", "kepcheck.spec.kep.vocabulary")
    assert len(graph) >= 40


def test_no_import_cycle():
    graph = _graph()
    for package in [n for n in graph if any(_name(p) == n and p.name == "__init__.py" for p in MODULES)]:
        graph.remove_edges_from([(package, child) for child in list(graph.successors(package))
                                 if child.startswith(package + ".")])  # a package re-exporting its modules
    cycles = list(networkx.simple_cycles(graph))
    assert not cycles, cycles[:5]


def test_imports_point_down_the_layers():
    back = [(source, target) for source, target in _graph().edges
            if _layer(source) is not None and _layer(target) is not None and _layer(target) > _layer(source)]
    assert not back, back


@pytest.mark.parametrize("path", [p for p in MODULES if _layer(_name(p)) in (1, 2)], ids=_name)
def test_modules_are_small(path):
    assert len(path.read_text().splitlines()) <= MAX_MODULE_LINES


def test_functions_are_short():
    long = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{_name(path)}.{node.name}: {length} lines")
    assert not long, long


def test_no_mutant_name_in_the_production_model():
    """Mutants replace named functions (model/mutants.py); the model never asks for one by name."""
    names = {m.name for m in MUTANTS}
    found = []
    for path in MODULES:
        if path.name == "mutants.py":
            continue
        text = path.read_text()
        found += [f"{_name(path)}: {name}" for name in names if name in text]
    assert not found, found


_MACHINE_PATH = re.compile(r"(?<![\w.])/(?:work|root|home|check)/|/tmp/perf")


def test_no_machine_path_in_any_tracked_file():
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    found = []
    for name in listed.stdout.splitlines():
        if name == "tests/test_structure.py":  # this file names the patterns it looks for
            continue
        path = ROOT / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        found += [f"{name}:{number}" for number, line in enumerate(text.splitlines(), 1) if _MACHINE_PATH.search(line)]
    assert not found, found


def test_the_top_level_is_the_cards_layout():
    """``spec/ model/ checks/ tests/ README.md`` at the root, installed under ``kepcheck.*`` only."""
    for name in ("spec", "model", "checks", "tests", "README.md"):
        assert (ROOT / name).exists(), name
    import tomllib

    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert all(package == "kepcheck" or package.startswith("kepcheck.") for package in setup["packages"])
    listed = set(setup["packages"])
    packages = {_name(path) for path in MODULES if path.name == "__init__.py"}
    assert packages == listed, (packages - listed, listed - packages)


@pytest.mark.parametrize("path", [p for p in MODULES if _layer(_name(p)) == 1], ids=_name)
def test_model_modules_fit_a_reading(path):
    assert len(path.read_text().splitlines()) <= MAX_MODEL_MODULE_LINES


def test_no_flat_folder():
    folders = {path.parent for path in MODULES}
    crowded = {str(folder.relative_to(ROOT)): n for folder in folders
               if (n := len([p for p in folder.iterdir() if p.suffix in (".py", ".c")])) > MAX_FOLDER_FILES}
    assert not crowded, crowded


def _rooms_of(folder: Path) -> networkx.DiGraph:
    """The imports between the rooms of one folder (its files and its sub-folders, each sub-folder one
    room), as ``farm-studio look`` draws them."""
    graph = networkx.DiGraph()
    prefix = _name(folder / "__init__.py")

    def room(module: str) -> str | None:
        if not module.startswith(prefix + "."):
            return None
        return module[len(prefix) + 1:].split(".")[0]

    for path in MODULES:
        source = room(_name(path))
        if source is None or path.name == "__init__.py" and path.parent == folder:
            continue
        graph.add_node(source)
        for target in _imports(path):
            target_room = room(target)
            if target_room is not None and target_room != source:
                graph.add_edge(source, target_room)
    return graph


@pytest.mark.parametrize("folder", sorted({p.parent for p in MODULES if p.name == "__init__.py"}),
                         ids=lambda folder: str(folder.relative_to(ROOT)))
def test_no_circle_between_the_rooms_of_a_folder(folder):
    """Within every folder, its files and wings import each other one way: no circle of wings."""
    cycles = list(networkx.simple_cycles(_rooms_of(folder)))
    assert not cycles, cycles[:5]
