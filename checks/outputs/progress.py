"""Progress of a long run on stderr, and the statistics of a run at its end.

While checks run, ``Reporter`` shows where the running check is: on a terminal one live line,
rewritten twice a second and erased when the run ends; otherwise (stderr a file or a pipe) a plain
line every ``PLAIN_SECONDS`` seconds, and none for a run shorter than that, so a quick run or a
quick error leaves stderr as it was. A line names the scenario × variant being checked (the how
manieth of how many), what the engine last reported — explicit: distinct states, states/s,
transitions, BFS depth, frontier (``checks.result.Progress``); bmc: the depth being decided and
the properties still open; induction: the property being proved and its k
(``checks.engine.DepthProgress``); random: walks, steps, distinct states, longest walk
(``checks.engine.WalkProgress``) — the time spent on the pair, the budget left and the peak
memory. Engines report through ``EngineOptions.progress(ctx, where)``; the reporter's own thread
prints, so a core that reports rarely (the interpreted search reports every 50,000 states) still
shows the time going by.

``statistics`` is the summary printed at the end of ``check``, as TLC and SPIN print one: per
engine, the runs, distinct states, transitions and depth (each engine's own meaning, as in the
JSON records), the time spent checking (``ContextRun.seconds``) and states/s; then the whole run's
time and the process's peak memory.

Left out: an estimate of the time still needed (the number of reachable states is not known ahead,
which is why the budgets exist), and progress of a single solver call (Z3 reports none).
"""

from __future__ import annotations

import os
import resource
import threading
import time

from kepcheck.checks.engine import Budget
from kepcheck.checks.outputs.files import width_of

__all__ = ["Reporter", "statistics", "peak_mib", "PLAIN_SECONDS"]

PLAIN_SECONDS = 5.0  # a plain progress line this often when stderr is not a terminal
LIVE_SECONDS = 0.5  # the live line's refresh on a terminal


def peak_mib() -> float:
    """The process's peak resident memory, MiB (``ru_maxrss`` is in kilobytes on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


class Reporter:
    """The progress of one run of checks on ``stream`` (a context manager: the thread that prints
    runs inside it). ``starting(ctx)`` and ``update(ctx, where)`` are the hooks of ``run_checks``
    and of the engines; ``live`` (default: whether ``stream`` is a terminal) picks the live line."""

    def __init__(self, stream, total: int, engine: str = "explicit", budget: Budget = Budget(),
                 live: bool | None = None, interval: float | None = None) -> None:
        self.stream, self.total, self.engine, self.budget = stream, total, engine, budget
        self.live = _is_terminal(stream) if live is None else live
        self.interval = interval if interval is not None else (LIVE_SECONDS if self.live else PLAIN_SECONDS)
        self.started = time.perf_counter()
        self.current = None  # (ctx, number, started)
        self.where = None  # what the running engine last reported
        self.number = 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._tick, name="kepcheck-progress", daemon=True)

    def __enter__(self) -> "Reporter":
        self.thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.stop.set()
        self.thread.join()
        if self.live:
            self._write("\r\x1b[K")

    def starting(self, ctx) -> None:
        self.number += 1
        self.where, self.current = None, (ctx, self.number, time.perf_counter())

    def update(self, ctx, where) -> None:
        self.where = where

    def line(self) -> str:
        """Where the run is now, in one line: the most telling first (a live line may be cut)."""
        now = time.perf_counter()
        parts = [_seconds(now - self.started)]
        if self.current is not None:
            ctx, number, since = self.current
            parts.append(f"{number}/{self.total} {ctx.scenario.name} × {ctx.variant.name}")
            where = self.where
            told = where.describe() if where is not None else "running, no count reported yet"
            parts.append(told if told.startswith(self.engine) else f"{self.engine}: {told}")
            left = self._budget_left(now - since, where)
            if left:
                parts.append(left)
        parts.append(f"peak memory {peak_mib():,.0f} MiB")
        return " · ".join(parts)

    def _budget_left(self, spent: float, where) -> str:
        left = []
        seconds = [self.budget.timeout - spent] if self.budget.timeout is not None else []
        if self.budget.until is not None:  # the command's deadline (--timeout)
            seconds.append(self.budget.until.left())
        if seconds:
            left.append(f"{_seconds(max(0.0, min(seconds)))}")
        states = getattr(where, "states", None)
        if self.budget.max_states is not None and states is not None:
            left.append(f"{max(0, self.budget.max_states - states):,} states")
        return ("budget left: " + ", ".join(left)) if left else ""

    def _tick(self) -> None:
        while not self.stop.wait(self.interval):
            if self.live:
                width = max(20, width_of(self.stream) - 1)
                self._write("\r\x1b[K" + self.line()[:width])
            else:
                self._write(f"kepcheck: progress: {self.line()}\n")

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed stderr is not an error of the run
            self.stop.set()


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


def _run_figures(run) -> tuple[int, int, int]:
    """(states, transitions, depth) of one scenario × variant: its results share one exploration
    (explicit, random) or report each their own (bmc, induction): the largest of each."""
    results = run.results or []
    return (max((r.states for r in results), default=0), max((r.transitions for r in results), default=0),
            max((r.depth for r in results), default=0))


def _engine_line(engine: str, runs: list) -> str:
    figures = [_run_figures(run) for run in runs]
    states, transitions, depth = sum(f[0] for f in figures), sum(f[1] for f in figures), max(f[2] for f in figures)
    seconds = sum(run.seconds for run in runs)
    count = f"{len(runs)} scenario × variant run" + ("s" if len(runs) != 1 else "")
    what = {
        "bmc": f"depth reached {depth}",
        "induction": f"k up to {depth}",
        "random": f"{states:,} distinct states met, {transitions:,} steps, longest walk {depth}",
    }.get(engine, f"{states:,} distinct states, {transitions:,} transitions, depth up to {depth}")
    rate = f" ({states / seconds:,.0f} states/s)" if seconds > 0 and states and engine not in ("random",) else ""
    return f"{engine}: {count}; {what}; {seconds:.1f} s checking{rate}"


def statistics(outcome, seconds: float) -> list[str]:
    """The end-of-run summary lines (module docstring)."""
    by_engine: dict[str, list] = {}
    for run in outcome:
        if run.results:
            by_engine.setdefault(run.results[0].engine, []).append(run)
    lines = [f"statistics: {_engine_line(engine, runs)}" for engine, runs in by_engine.items()]
    lines.append(f"statistics: {seconds:.1f} s in all, peak memory {peak_mib():,.0f} MiB")
    return lines
