"""The review report rendered as GitHub renders it, in headless Chromium: tables fit GitHub's
content width, diagram text stays legible once the diagram is scaled to that width, and every
Mermaid diagram renders.

GitHub's Markdown body is 980 px wide with 45 px padding (the ``github-markdown-css`` readme,
sindresorhus/github-markdown-css: "GitHub uses 980px width and 45px padding"), so its content is
890 px wide; a comment in a pull request is narrower still (the avatar and the sidebar), so the
page here is the widest place the report is read. Markdown becomes HTML with markdown-it-py
(CommonMark with GFM tables), styled with ``github-markdown-css`` and its tables as GitHub draws
them (``display: block; max-width: 100%; overflow: auto``: a table wider than the content scrolls,
which is what is measured). Mermaid blocks are rendered by the ``mermaid`` package, which, like
GitHub, scales a diagram wider than its column down to the column (``useMaxWidth``): the text size
that counts is the font size times that scale.

Chromium comes from Debian (``make test`` installs it with apt-get when it is missing, as root);
mermaid and github-markdown-css from npm into ``KEPCHECK_MERMAID_DIR`` (``make test``). The
test skips, saying why, only when one of them is not there. Chromium runs headless on a new
profile, with no network use, loads one page holding every document rendered, and prints its
DOM once the page has measured itself (``--dump-dom``). Nothing is saved: no screenshots.
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from kepcheck.spec.kep.variants import VARIANTS

from kepcheck.checks.outputs.review import write_review
from kepcheck.checks.outputs.review_pages import LIFECYCLE_PAGE, has_report
from kepcheck.checks.outputs.trace_report import trace_file_name

from conftest import default_matrix

GITHUB_WIDTH = 980  # the Markdown body (github-markdown-css readme)
GITHUB_PADDING = 45
CONTENT_WIDTH = GITHUB_WIDTH - 2 * GITHUB_PADDING  # 890 px
MIN_TEXT_PX = 11  # the smallest diagram text, after scaling to the content width, that counts as legible
MERMAID_DIR = Path(os.environ.get("KEPCHECK_MERMAID_DIR", Path(__file__).parent.parent / ".cache" / "mermaid"))
CHROMIUM = os.environ.get("KEPCHECK_CHROMIUM", "/usr/bin/chromium")
MERMAID_JS = MERMAID_DIR / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
GITHUB_CSS = MERMAID_DIR / "node_modules" / "github-markdown-css" / "github-markdown-light.css"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-extensions", "--mute-audio", f"--window-size={GITHUB_WIDTH + 100},1000",
                  "--virtual-time-budget=120000")


def _missing() -> str:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (make test installs the Debian package chromium as root)"
    for path in (MERMAID_JS, GITHUB_CSS):
        if not path.exists():
            return f"{path} not found (make test installs mermaid and github-markdown-css with npm)"
    return ""


# --- Markdown to a page ----------------------------------------------------------------------------

def _markdown() -> MarkdownIt:
    """CommonMark with GFM tables; a ``mermaid`` fence becomes the block the page renders."""
    md = MarkdownIt("commonmark", {"html": True}).enable("table")
    fence = md.renderer.rules["fence"]

    def mermaid_fence(renderer, tokens, index, options, env):
        token = tokens[index]
        if token.info.strip() == "mermaid":
            return f'<pre class="mermaid-source">{html.escape(token.content)}</pre>\n'
        return fence(tokens, index, options, env)

    md.add_render_rule("fence", mermaid_fence)
    return md


_MEASURE = r"""
<script>
(async () => {
  const results = [];
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
  let counter = 0;
  for (const article of document.querySelectorAll('article.markdown-body')) {
    const style = getComputedStyle(article);
    const width = article.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const doc = { name: article.dataset.name, width, tables: [], diagrams: [] };
    for (const pre of article.querySelectorAll('pre.mermaid-source')) {
      const box = document.createElement('div');
      pre.replaceWith(box);
      const diagram = { first: pre.textContent.split('\n').find(l => l.trim() && !l.startsWith('%%')) };
      try {
        const { svg } = await mermaid.render('diagram' + (counter++), pre.textContent);
        box.innerHTML = svg;
        const element = box.querySelector('svg');
        const shown = element.getBoundingClientRect().width;
        const natural = element.viewBox.baseVal.width || shown;
        const scale = shown / natural;
        let smallest = Infinity;
        for (const node of element.querySelectorAll('text, tspan, foreignObject *')) {
          if (![...node.childNodes].some(c => c.nodeType === 3 && c.textContent.trim())) continue;
          smallest = Math.min(smallest, parseFloat(getComputedStyle(node).fontSize) * scale);
        }
        Object.assign(diagram, { shown, natural, scale, smallest });
      } catch (error) {
        diagram.error = String(error && error.message || error);
      }
      doc.diagrams.push(diagram);
    }
    for (const table of article.querySelectorAll('table')) {
      const head = table.querySelector('tr');
      doc.tables.push({ head: head ? head.textContent.trim().slice(0, 80) : '',
                        scroll: table.scrollWidth, client: table.clientWidth });
    }
    results.push(doc);
  }
  document.getElementById('result').textContent = JSON.stringify(results);
})();
</script>
"""


def render_page(documents: dict[str, str], page: Path) -> Path:
    """One HTML page with every Markdown document (name → text) as a GitHub Markdown body."""
    md = _markdown()
    articles = "\n".join(f'<article class="markdown-body" data-name="{html.escape(name)}">\n{md.render(text)}</article>'
                         for name, text in documents.items())
    page.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n"
        f'<link rel="stylesheet" href="{GITHUB_CSS.as_uri()}">\n'
        f"<style>.markdown-body {{ box-sizing: border-box; min-width: 200px; max-width: {GITHUB_WIDTH}px; "
        f"margin: 0 auto 40px; padding: {GITHUB_PADDING}px; }}</style>\n"
        f'<script src="{MERMAID_JS.as_uri()}"></script>\n</head><body>\n'
        f'{articles}\n<pre id="result"></pre>\n{_MEASURE}</body></html>\n', encoding="utf-8")
    return page


def measure(documents: dict[str, str], work: Path) -> list[dict]:
    """Render ``documents`` in headless Chromium; per document its content width, every table's
    scroll and visible width, and every diagram's shown and natural width, scale and smallest
    text (px after scaling), or its Mermaid error."""
    page = render_page(documents, work / "page.html")
    profile = work / "profile"
    profile.mkdir()
    done = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    start, end = done.stdout.find('<pre id="result">'), done.stdout.find("</pre>", done.stdout.find('<pre id="result">'))
    text = html.unescape(done.stdout[start + len('<pre id="result">'):end]) if start >= 0 else ""
    assert text, f"Chromium printed no measurement (exit {done.returncode}): {done.stderr[-2000:]}"
    return json.loads(text)


def legibility_problems(measured: list[dict]) -> list[str]:
    """Every table wider than the content, every diagram whose text is under ``MIN_TEXT_PX`` once
    scaled, and every diagram Mermaid could not render."""
    problems = []
    for doc in measured:
        assert abs(doc["width"] - CONTENT_WIDTH) < 1, doc["width"]
        for table in doc["tables"]:
            if table["scroll"] > table["client"] + 1 or table["client"] > doc["width"] + 1:
                problems.append(f"{doc['name']}: table {table['head']!r} is {table['scroll']} px wide "
                                f"(content {doc['width']:.0f} px)")
        for diagram in doc["diagrams"]:
            if "error" in diagram:
                problems.append(f"{doc['name']}: Mermaid error in {diagram['first']!r}: {diagram['error']}")
            elif diagram["smallest"] < MIN_TEXT_PX:
                problems.append(f"{doc['name']}: {diagram['first']!r} is {diagram['natural']:.0f} px wide, scaled "
                                f"to {diagram['shown']:.0f} px: text {diagram['smallest']:.1f} px")
    return problems


# --- the tests -------------------------------------------------------------------------------------

# A page as the report used to be, to show the measurement sees what a reader would: an 11-column
# matrix, a 5-participant sequence diagram with long unwrapped messages, and a diagram Mermaid refuses.
_BAD_PAGE = "\n".join([
    "| property | " + " | ".join(f"`{v.name}`" for v in VARIANTS) + " |", "|---|" + ":---:|" * len(VARIANTS),
    "| PendingPodBoundBesideDeferredResize (sometimes) | " + " | ".join("never" for _ in VARIANTS) + " |", "",
    "```mermaid", "sequenceDiagram", *(f"    participant P{i} as participant number {i}" for i in range(5)),
    *(f"    P{i}->>P{i + 1}: a long message that the diagram does not wrap, so its gap grows with it" for i in range(4)),
    "```", "", "```mermaid", "stateDiagram-v2", "    Running --> : no target", "```", ""])


def _chosen_traces(outcome) -> list[str]:
    """Trace reports to render: the longest on the scenario with the most nodes (the widest sequence
    diagram) and the longest lasso."""
    reports = [(ctx, r) for run in outcome for r in run.results if has_report(r) for ctx in [run.ctx]]
    widest = max(reports, key=lambda cr: (len(cr[0].node_range), len(cr[1].trace), trace_file_name(cr[1])))
    lasso = max((cr for cr in reports if cr[1].trace.loop is not None),
                key=lambda cr: (len(cr[1].trace), trace_file_name(cr[1])))
    return list(dict.fromkeys(f"traces/{trace_file_name(r)}" for _, r in (widest, lasso)))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """The default matrix's review and a page of known defects, rendered once: {file: measurement}."""
    missing = _missing()
    if missing:
        pytest.skip(f"cannot render in a browser: {missing}")
    outcome = list(default_matrix())
    out = tmp_path_factory.mktemp("review")
    write_review(outcome, out, include_times=False)
    names = ["index.md", LIFECYCLE_PAGE] + sorted(f"scenarios/{p.name}" for p in (out / "scenarios").glob("*.md"))
    documents = {name: (out / name).read_text(encoding="utf-8") for name in names + _chosen_traces(outcome)}
    documents["defects.md"] = _BAD_PAGE
    measured = measure(documents, tmp_path_factory.mktemp("chromium"))
    by_name = {doc["name"]: doc for doc in measured}
    for name, text in documents.items():
        assert len(by_name[name]["diagrams"]) == text.count("```mermaid"), name  # every diagram was rendered
    return by_name


@pytest.mark.slow
def test_measurement_sees_overflow_small_text_and_errors(rendered):
    problems = legibility_problems([rendered["defects.md"]])
    assert any("table" in p and "property" in p for p in problems), problems
    assert any("'sequenceDiagram'" in p and "text" in p for p in problems), problems
    assert any("Mermaid error" in p for p in problems), problems


@pytest.mark.slow
def test_index_scenario_pages_and_lifecycle_fit_github_width(rendered):
    pages = [doc for name, doc in rendered.items() if not name.startswith("traces/") and name != "defects.md"]
    assert legibility_problems(pages) == []
    assert rendered["index.md"]["tables"] and len(rendered[LIFECYCLE_PAGE]["diagrams"]) >= 3


@pytest.mark.slow
def test_trace_reports_fit_github_width(rendered):
    traces = [doc for name, doc in rendered.items() if name.startswith("traces/")]
    assert traces and all(doc["diagrams"] for doc in traces)
    assert legibility_problems(traces) == []
