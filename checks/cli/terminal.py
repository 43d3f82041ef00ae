"""What ``kepcheck check`` and ``kepcheck list`` print on the terminal: the verdict matrix laid out to
fit the width, the traces, whether each mutant was caught, and the listings of ``list``.

The matrix is one table per scenario, its name on a line of its own above it. When it fits the
console's width (``checks.outputs.files.width_of``: ``$COLUMNS``, else the terminal's width, else 200),
the checks are rows and the variants columns, as in the review report. Otherwise the variants are
rows and the checks columns under short numbered keys (``1``, ``2``, …, named once in a legend),
split into several tables of consecutive checks when they do not all fit. Every table is measured
before it is printed and only a layout whose natural width fits is used, so no name is cut. The
rows are the checks the engines returned: the selected properties, then the random engine's
differential checks (``checks/engines/differential.py``). Free text — reasons, traces, the replay command —
is printed without inserted line breaks (the terminal wraps it), so a copied command is the
command.

Left out: abbreviating names to make a layout fit (a name is what a reviewer types into
``--property``), and colour beyond the marking of a verdict that differs from the manifest.
"""

from __future__ import annotations

from functools import lru_cache

from kepcheck.spec.kep.properties import EVENTUALLY, SOMETIMES

from kepcheck.checks.cli.replay import breach_marks
from kepcheck.checks.engines.differential import DIFFERENTIAL_NAMES
from kepcheck.checks.outputs.report import counted, format_trace
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, SYMBOLS, VIOLATED

__all__ = ["print_matrix", "print_traces", "print_text", "print_listing", "check_rows", "mutant_verdicts",
           "natural_width"]

MISSING = "·"  # a check that did not run for this variant (a differential check that does not apply)


def print_text(console, text: str, style: str | None = None) -> None:
    """Plain text, never re-wrapped by rich (the terminal wraps long lines itself)."""
    console.print(text, markup=False, soft_wrap=True, style=style)


def print_listing(out, title: str, columns, rows) -> None:
    """A titled table on the console ``out`` whose words are never cut: every column is at least as
    wide as its longest word (text wraps between words). When even that does not fit the width,
    each row is printed as a record instead: its first cell, then one indented ``column: value``
    line per other column."""
    from rich.table import Table

    rows = [[str(cell) for cell in row] for row in rows]
    made = Table(title=title)
    for number, column in enumerate(columns):
        longest = max((len(word) for row in rows for word in row[number].split()), default=0)
        made.add_column(column, min_width=max(longest, len(column)), overflow="fold")
    for row in rows:
        made.add_row(*row)
    if out.measure(made, options=out.options.update(max_width=100_000)).minimum <= out.width:
        out.print(made)
        return
    out.print(title, markup=False, soft_wrap=True, style="bold")
    for row in rows:
        out.print(row[0], markup=False, soft_wrap=True)
        for column, cell in zip(columns[1:], row[1:]):
            out.print(f"    {column}: {cell}", markup=False, soft_wrap=True)


def check_rows(outcome) -> list[tuple[str, str]]:
    """(name, kind) of every check in the runs' results, in the order the engines returned them."""
    rows: dict[str, str] = {}
    for run in outcome:
        for result in run.results:
            rows.setdefault(result.property, result.kind)
    return list(rows.items())


def _row_label(name: str, kind: str) -> str:
    if name in DIFFERENTIAL_NAMES:
        return f"{name} (differential)"
    return name + {SOMETIMES: " (sometimes)", EVENTUALLY: " (eventually)"}.get(kind, "")


def _cell(run, name: str, kind: str, short: bool) -> str:
    result = next((r for r in run.results if r.property == name), None)
    if result is None:
        return MISSING
    cell = SYMBOLS[result.verdict]
    if kind == SOMETIMES:
        cell = {HOLDS: "seen", VIOLATED: "never", INCONCLUSIVE: "≈"}.get(result.verdict, cell)
    if result.differs:
        cell = f"[bold red]{cell}!" if short else f"[bold red]{cell} (expected {result.expected})"
        cell += "[/]"
    return cell


def _states_shown(runs) -> bool:
    return all(run.results and run.results[0].engine == "explicit" for run in runs)


def _new_table(first: str):
    from rich.table import Table

    table = Table(title=None, pad_edge=True)
    table.add_column(first, no_wrap=True)
    return table


def _wide_table(runs, rows):
    """Checks as rows, variants as columns."""
    table = _new_table("check")
    for run in runs:
        table.add_column(run.ctx.variant.name, justify="center", no_wrap=True)
    for name, kind in rows:
        table.add_row(_row_label(name, kind), *(_cell(run, name, kind, short=False) for run in runs))
    if _states_shown(runs):
        table.add_row("[dim]distinct states[/]", *(f"[dim]{run.results[0].states}[/]" for run in runs))
    return table


def _keyed_table(runs, rows, keys: list[int]):
    """Variants as rows, the checks numbered ``keys`` (1-based indices into ``rows``) as columns."""
    table = _new_table("variant")
    for key in keys:
        table.add_column(str(key), justify="center", no_wrap=True)
    states = _states_shown(runs)
    if states:
        table.add_column("states", justify="right", no_wrap=True)
    for run in runs:
        cells = [_cell(run, *rows[key - 1], short=True) for key in keys]
        table.add_row(run.ctx.variant.name, *cells, *([f"[dim]{run.results[0].states}[/]"] if states else []))
    return table


def _fits(console, table) -> bool:
    """Whether the table's natural width (every cell on one line) fits the console."""
    return natural_width(table) <= console.width


def natural_width(table) -> int:
    """What rich measures as the natural width of one of these tables (``_new_table``: default box,
    padding 1 on each side, no column limits), computed from its cells: the widest cell of each
    column plus its padding, plus one border per column and one more. Rich's own measurement
    renders every cell and took about 0.15 s a table, so the layout of the whole default matrix
    (hundreds of trial tables) took half a minute; ``tests/test_terminal.py`` checks the two agree."""
    widths = [max(_cell_width(cell) for cell in [column.header, *column.cells]) + 2 for column in table.columns]
    return sum(widths) + len(widths) + 1


def _measured(table):
    """The table with every column's width set to its widest cell, so that rich does not measure
    every cell again to lay it out (the same layout: these tables are printed only where they fit)."""
    for column in table.columns:
        column.width = max(_cell_width(cell) for cell in [column.header, *column.cells])
    return table


@lru_cache(maxsize=4096)
def _cell_width(cell) -> int:
    """The width of a cell's text on the terminal, its markup left out (cells repeat: cached)."""
    from rich.text import Text

    return Text.from_markup(cell).cell_len if isinstance(cell, str) else cell.cell_len


def _keyed_tables(console, runs, rows) -> list:
    """The keyed layout, in as few tables of consecutive checks as fit the width (one check a table
    at least)."""
    tables, group = [], []
    for key in range(1, len(rows) + 1):
        if group and not _fits(console, _keyed_table(runs, rows, group + [key])):
            tables.append(_keyed_table(runs, rows, group))
            group = []
        group.append(key)
    tables.append(_keyed_table(runs, rows, group))
    return tables


def _legend(console, outcome, rows, keyed: bool) -> None:
    """The keys of the keyed layout and the marks used, packed into lines of the console's width."""
    entries = [f"{key} {_row_label(name, kind)}" for key, (name, kind) in enumerate(rows, start=1)] if keyed else []
    if any(r.differs for run in outcome for r in run.results) and keyed:
        entries.append("! differs from the manifest")
    if any(len(run.results) < len(rows) for run in outcome):
        entries.append(f"{MISSING} not run for this variant")
    if not entries:
        return
    lines, line = [], "checks:" if keyed else "marks:"
    indent = " " * len(line)
    for entry in entries:
        if len(line) + 3 + len(entry) > console.width and line.strip():
            lines.append(line)
            line = indent
        line += "   " + entry
    lines.append(line)
    for text in lines:
        print_text(console, text.rstrip())


def print_matrix(console, outcome) -> None:
    """One verdict table (or several) per scenario, in the layout that fits (module docstring)."""
    by_scenario: dict[str, list] = {}
    for run in outcome:
        by_scenario.setdefault(run.ctx.scenario.name, []).append(run)
    rows = check_rows(outcome)
    wide = all(_fits(console, _wide_table(runs, rows)) for runs in by_scenario.values())
    _legend(console, outcome, rows, keyed=not wide)
    for scenario, runs in by_scenario.items():
        console.print()
        print_text(console, scenario, style="bold")
        for table in [_wide_table(runs, rows)] if wide else _keyed_tables(console, runs, rows):
            console.print(_measured(table))


def print_traces(console, outcome, shown) -> None:
    """The headline, fairness, reason and trace of every result in ``shown``; the step at which an
    always- or step-property is violated is marked, and the replay command is the last line."""
    contexts = {(run.ctx.scenario.name, run.ctx.variant.name): run.ctx for run in outcome}
    for result in shown:
        ctx = contexts[(result.scenario, result.variant)]
        headline = f"{result.property} {result.verdict} in {result.scenario} under {result.variant}"
        if result.expected is not None and result.verdict != result.expected:
            headline += f" (expected {result.expected})"
        console.print()
        print_text(console, headline, style="bold")
        if result.fairness:
            print_text(console, f"fairness assumed: {', '.join(result.fairness) or 'none'}")
        if result.reason:
            print_text(console, f"why: {result.reason}  [{result.ref}]")
        if result.trace is not None:
            marks = breach_marks(ctx, result) if result.verdict == VIOLATED else None
            print_text(console, format_trace(ctx, result.trace, marks))


def mutant_verdicts(outcome, mutants) -> list[str]:
    """One line per mutant: caught when a check of the property it must violate came out violated
    (``model/mutants.py``: ``property``, and where it is registered to be caught)."""
    results = [r for run in outcome for r in run.results]
    lines = []
    for mutant in mutants:
        judged = [r for r in results if r.property == mutant.property]
        violated = [r for r in judged if r.verdict == VIOLATED]
        where = f"registered to be caught in {mutant.scenario} under {mutant.variant}"
        if violated:
            first = violated[0]
            lines.append(f"mutant {mutant.name}: caught — {mutant.property} violated in {first.scenario} under "
                         f"{first.variant}" + (f" (and {counted(len(violated) - 1, 'more check')})"
                                               if len(violated) > 1 else ""))
        elif not judged:
            lines.append(f"mutant {mutant.name}: not judged — its property {mutant.property} was not checked "
                         f"({where})")
        else:
            undecided = sum(1 for r in judged if r.verdict == INCONCLUSIVE)
            lines.append(f"mutant {mutant.name}: NOT caught — {mutant.property} is not violated in "
                         f"{counted(len(judged), 'check')} run" + (f" ({undecided} inconclusive)" if undecided else "")
                         + f"; {where}")
    return lines
