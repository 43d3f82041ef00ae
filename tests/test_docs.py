"""The documentation site builds strictly, and every citation in the repository points inside it.

``mkdocs build --strict`` (MkDocs with the Material theme, the ``docs`` extra that ``make test``
installs) fails on a broken link, a page missing from ``nav`` or any other warning. The citations
of code, docstrings, the manifest, tests, golden files and pages name ``docs/reference.md §n``,
``docs/design.md §n`` or ``docs/style.md Rn``, each of which must be a heading (or, for the style
page, a recommendation) of that page; none may point at a file outside the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
SKIPPED_FOLDERS = {".venv", ".git", ".cache", "reports", "site", "node_modules", "__pycache__", ".pytest_cache",
                   ".hypothesis", "build", "dist"}  # build/, dist/: a plain `pip install .`'s copies, not sources
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".json", ".toml", ".c", ".mmd", ".txt", ".sh"}

# What a citation of a file outside the repository looks like: the design folder's reference, design and
# style files, and the upstream KEP copies kept beside the checkout. Built from parts so that this file
# does not match itself.
OUTSIDE = re.compile("|".join([
    r"(?<![\w/.])[Rr]eference" + r" §",            # "reference §2.3" without docs/ in front
    r"DESIGN" + r"\.md", r"STYLE" + r"\.md",
    r"\.\./" + r"shared", r"reference/" + r"upstream", r"reference/" + r"kubernetes\.md",
    r"BETA-" + r"CHANGES", r"kep-5836-README-" + r"beta",
]))
CITATION = re.compile(r"docs/(reference|design)\.md\s+§(\d+(?:\.\d+)?)")
STYLE_CITATION = re.compile(r"docs/style\.md\s+(R\d+)((?:,\s*R\d+)*)")


def _files():
    for folder, subfolders, names in os.walk(ROOT):
        subfolders[:] = sorted(name for name in subfolders
                               if name not in SKIPPED_FOLDERS and not name.endswith(".egg-info"))
        for name in sorted(names):
            path = Path(folder) / name
            if path.suffix in SUFFIXES or name == "Makefile":
                yield path


def _headings(page: str) -> set[str]:
    """The section numbers of a page's headings: '## 2. Kubelet …' is 2, '### 2.3 Retry …' is 2.3."""
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", (DOCS / page).read_text(), re.M))


def test_the_site_builds_strictly(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    if mkdocs is None:
        pytest.skip("mkdocs is not installed (make test installs the docs extra)")
    run = subprocess.run([mkdocs, "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                          "--site-dir", str(tmp_path / "site")],
                         capture_output=True, text=True, env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert "WARNING" not in run.stderr, run.stderr
    assert (tmp_path / "site" / "findings" / "index.html").exists()


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    assert [page.name for page in sorted(DOCS.glob("*.md")) if page.name not in nav] == []


def test_no_citation_points_outside_the_repository():
    outside = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
               for path in _files() if path != Path(__file__)
               for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
               if OUTSIDE.search(line)]
    assert outside == [], "\n".join(outside)
    # the same citation broken over two lines (of a docstring, a comment or a paragraph)
    split = re.compile(r"(?<![\w/.])[Rr]eference" + r"[ \t]*\n[ \t#]*§")
    assert [str(path.relative_to(ROOT)) for path in _files() if split.search(path.read_text(errors="replace"))] == []


def test_every_section_cited_exists():
    sections = {"reference": _headings("reference.md"), "design": _headings("design.md")}
    recommendations = set(re.findall(r"^\*\*(R\d+)\.", (DOCS / "style.md").read_text(), re.M))
    missing, cited = [], 0
    for path in _files():
        text = path.read_text(errors="replace")
        for page, section in CITATION.findall(text):
            cited += 1
            if section not in sections[page]:
                missing.append(f"{path.relative_to(ROOT)}: docs/{page}.md §{section}")
        for first, more in STYLE_CITATION.findall(text):
            for name in [first, *re.findall(r"R\d+", more)]:
                if name not in recommendations:
                    missing.append(f"{path.relative_to(ROOT)}: docs/style.md {name}")
    assert cited > 200
    assert missing == [], missing


def test_the_reference_keeps_its_numbering():
    """Sections 0 to 8 with the sub-sections the model cites, so that a citation maps one to one."""
    headings = _headings("reference.md")
    assert {str(n) for n in range(9)} <= headings
    assert {"1.1", "1.8", "2.1", "2.8", "3.1", "3.5", "4.1", "4.9", "7.1", "7.4"} <= headings
    assert {str(n) for n in range(1, 10)} <= _headings("design.md")
