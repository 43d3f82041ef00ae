"""``kepcheck sweep BOUNDS.yaml``: check properties on every small cluster within declared bounds.

The small-scope hypothesis (Alloy's) applied to this model: every scenario within the bounds
(``checks/sweep/bounds.py``), once per isomorphism class and smallest first
(``checks/sweep/space.py``), each loaded by the scenario loader (so a sweep never checks a
scenario ``kepcheck check`` would refuse) and checked exhaustively by the explicit engine on every
chosen property × variant (``checks/sweep_store.check_scenario``). The result per property ×
variant is ``holds on all K scenarios within bounds B``, or the smallest violating scenario
(fewest pods, then nodes, then events, then the shortest trace, then the enumeration order),
written as a scenario file with its trace report.

Output directory (``-o DIR``, default ``sweep-<bounds name>``): ``sweep-results.jsonl`` (the
results store, ``checks/sweep/store.py``: a re-run with the same directory continues where an
interrupted one stopped) and ``result/`` (written atomically at the end: ``summary.md``, and per
violated property × variant the minimal scenario ``PROPERTY--VARIANT.yaml``, its trace report
``.md`` and ITF file). The result depends only on the bounds, never on ``--workers`` or on
interruptions.

Execution: one process, ``--workers N`` local processes, or ``--cluster`` a Dask cluster
(``checks/search/cluster.py``). Left out (issue 17's next slice): one large exploration partitioned across
workers; budgets per scenario other than ``--max-states`` and ``--timeout``.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
import yaml

from kepcheck.spec.kep.fairness import groups_of_variant
from kepcheck.spec.kep.properties import property_by_name
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.language.loader import ScenarioError, parse_scenario

from kepcheck.checks.exits import EXIT_DIFFERS, EXIT_INCONCLUSIVE, EXIT_OK, UsageError
from kepcheck.checks.outputs.files import OutputError, atomic_directory, check_output_dir, say
from kepcheck.checks.outputs.locks import lock_output
from kepcheck.checks.outputs.progress import PLAIN_SECONDS
from kepcheck.checks.outputs.trace_report import trace_markdown, write_itf
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, VIOLATED, CheckResult, Trace, replay
from kepcheck.checks.search.cluster import check_address, cluster_client, map_in_order
from kepcheck.checks.sweep.bounds import BoundsError, SweepBounds, load_bounds
from kepcheck.checks.sweep.space import (
    MAX_SCENARIO_BOUND, Point, enumerate_points, largest_factor, point_document, scenario_bound,
)
from kepcheck.checks.sweep.store import STORE_NAME, ResultStore, check_scenario
from kepcheck.model.context import Context

__all__ = ["add_sweep_parser", "command_sweep", "run_sweep", "sweep_points", "Verdict"]

RESULT_DIR = "result"
BATCH = 512  # scenarios handed to the worker pool at a time


def sweep_points(bounds: SweepBounds, until: float | None = None) -> tuple[list[Point], int]:
    """The canonical scenarios of ``bounds`` that the loader accepts, and how many it refused (none
    when the enumeration respects the loader's rules, as it is built to). Past ``until`` (wall-clock
    time: the sweep's deadline) the rest are kept unread: no scenario is checked after it anyway."""
    bound = scenario_bound(bounds)
    if bound > MAX_SCENARIO_BOUND:
        raise BoundsError(bounds.source, largest_factor(bounds), f"the bounds admit up to {bound:.1e} scenarios before "
                          f"isomorphism reduction, more than {MAX_SCENARIO_BOUND:.0e} can be enumerated; narrow this "
                          "field first")
    fifo = any(v.kubelet_order == "fifo" for v in VARIANTS if v.name in bounds.variants)
    accepted, refused = [], 0
    for point in enumerate_points(bounds, ordered_classes=not fifo):
        if until is not None and time.time() >= until:
            accepted.append(point)
            continue
        try:
            parse_scenario(point_document(bounds, point), point.name)
        except ScenarioError:
            refused += 1
            continue
        accepted.append(point)
    return accepted, refused


class Verdict:
    """The sweep's result for one property × variant: counts, states, and the smallest violation."""

    def __init__(self, variant: str, prop: str):
        self.variant, self.property = variant, prop
        self.scenarios = self.states = self.violations = self.inconclusive = self.unreached = 0
        self.smallest: tuple | None = None  # (order, point, record)

    def not_reached(self) -> None:
        """A scenario the sweep's time budget (``--timeout``) left unchecked: inconclusive."""
        self.scenarios += 1
        self.inconclusive += 1
        self.unreached += 1

    def add(self, index: int, point: Point, record: dict) -> None:
        self.scenarios += 1
        self.states += record["states"]
        if record["verdict"] == INCONCLUSIVE:
            self.inconclusive += 1
        if record["verdict"] == VIOLATED:
            self.violations += 1
            order = point.size + (record.get("length", 0), index)
            if self.smallest is None or order < self.smallest[0]:
                self.smallest = (order, point, record)

    @property
    def verdict(self) -> str:
        return VIOLATED if self.violations else INCONCLUSIVE if self.inconclusive else HOLDS

    def line(self, bounds: SweepBounds) -> str:
        head = f"{self.property} under {self.variant}: "
        if self.verdict == HOLDS:
            return head + (f"holds on all {self.scenarios:,} scenarios within bounds {bounds.name} "
                           f"({self.states:,} states)")
        if self.verdict == INCONCLUSIVE:
            unreached = f", {self.unreached:,} of them not reached within the time budget" if self.unreached else ""
            return head + (f"inconclusive on {self.inconclusive:,} of {self.scenarios:,} scenarios (budget "
                           f"reached{unreached})")
        _, point, record = self.smallest
        pods, nodes, events = point.size
        return head + (f"violated on {self.violations:,} of {self.scenarios:,} scenarios; smallest: {point.name} "
                       f"({_plural(pods, 'pod')}, {_plural(nodes, 'node')}, {_plural(events, 'event')}, trace of "
                       f"{_plural(record['length'], 'step')}): "
                       f"{RESULT_DIR}/{_file_stem(self)}.yaml")


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _file_stem(verdict: Verdict) -> str:
    return f"{verdict.property}--{verdict.variant}"


class _Progress:
    """Scenarios done of all and violated checks (scenario × variant × property) so far on stderr: a
    live line on a terminal, else a plain line every ``PLAIN_SECONDS`` (none for a shorter run), as
    ``checks/outputs/progress.py`` does for check."""

    def __init__(self, stream, total: int):
        self.stream, self.total = stream, total
        self.live = stream.isatty() if hasattr(stream, "isatty") else False
        self.started = self.shown = time.perf_counter()
        self.done = self.violations = 0

    def update(self, violations: int) -> None:
        self.done += 1
        self.violations = violations
        now = time.perf_counter()
        if now - self.shown >= (0.5 if self.live else PLAIN_SECONDS):
            self.shown = now
            line = (f"kepcheck: progress: sweep {self.done:,}/{self.total:,} scenarios, {self.violations:,} "
                    f"violated checks, {now - self.started:.0f} s")
            self.stream.write(("\r\x1b[K" + line) if self.live else line + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.live and self.done:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _ignore_interrupts() -> None:
    """A worker leaves SIGINT to the sweep's process, which stops the pool and exits 130. Workers are
    spawned, not forked, so that they do not hold a copy of the enumeration."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _checked(bounds: SweepBounds, points: list[Point], store: ResultStore, workers: int | str, budget: tuple,
             progress: _Progress) -> dict[str, list[dict]]:
    """Every point's records, from the store or checked now and stored: in ``workers`` processes, or
    as tasks on the Dask cluster ``workers`` names (``local:N`` or a scheduler address). With the
    sweep's deadline in ``budget`` (``check_scenario``), the points it leaves unchecked have no
    records, and no batch is started once it has passed."""
    pairs = {(v, p) for v in bounds.variants for p in bounds.properties}
    results, todo = {}, []
    for point in points:
        stored = store.done(point.key, pairs)
        if stored is None:
            todo.append(point)
        else:
            results[point.key] = stored
    progress.done = len(results)
    progress.violations = sum(1 for records in results.values() for r in records if r["verdict"] == VIOLATED)

    def tasks(batch):
        return ((point_document(bounds, p), bounds.variants, bounds.properties, budget) for p in batch)

    if workers == 1:
        _collect(todo, (check_scenario(*task) for task in tasks(todo)), store, results, progress)
        return results
    if isinstance(workers, str):
        with cluster_client(workers) as client:
            for start in range(0, len(todo), BATCH):
                if _past(budget):
                    break
                batch = todo[start:start + BATCH]
                _collect(batch, map_in_order(client, check_scenario, *zip(*tasks(batch))), store, results, progress)
        return results
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn"), initializer=_ignore_interrupts) as pool:
        try:
            for start in range(0, len(todo), BATCH):  # batches: the documents are built as they are needed
                if _past(budget):
                    break
                batch = todo[start:start + BATCH]
                _collect(batch, pool.map(check_scenario, *zip(*tasks(batch)), chunksize=8), store, results, progress)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return results


def _past(budget: tuple) -> bool:
    """Whether the sweep's deadline (the third item of ``budget``, wall-clock time) has passed."""
    return len(budget) > 2 and time.time() >= budget[2]


def _collect(todo, outcomes, store, results, progress) -> None:
    for point, records in zip(todo, outcomes):
        if records is None:  # not reached within the sweep's time budget
            continue
        store.add(point.key, records)
        results[point.key] = records
        progress.update(progress.violations + sum(1 for r in records if r["verdict"] == VIOLATED))


def run_sweep(bounds: SweepBounds, directory: Path, workers: int | str = 1, budget: tuple = (None, None),
              stream=None, announce=None) -> tuple[list[Verdict], int, int, dict]:
    """Sweep ``bounds`` with the store in ``directory``: (verdicts per variant × property, scenarios
    checked, scenarios the loader refused, the variants' disagreements: ``disagreements``).
    ``workers``: processes, or a Dask cluster (``local:N`` or a scheduler address,
    ``checks/search/cluster.py``). ``budget``: see ``check_scenario``. ``announce(scenarios, refused)``,
    when given, is called once the scenarios are known, before any is checked."""
    store = ResultStore(directory, budget)  # first: a store this run cannot continue is refused at once
    points, refused = sweep_points(bounds, budget[2] if len(budget) > 2 else None)
    if announce is not None:
        announce(len(points), refused)
    progress = _Progress(stream if stream is not None else sys.stderr, len(points))
    try:
        results = _checked(bounds, points, store, workers, budget, progress)
    finally:
        progress.close()
    verdicts = {(v, p): Verdict(v, p) for v in bounds.variants for p in bounds.properties}
    for index, point in enumerate(points):
        if point.key not in results:
            for verdict in verdicts.values():
                verdict.not_reached()
            continue
        for record in results[point.key]:
            pair = (record["variant"], record["property"])
            if pair in verdicts:
                verdicts[pair].add(index, point, record)
    return list(verdicts.values()), len(points), refused, disagreements(bounds, points, results)


def disagreements(bounds: SweepBounds, points: list[Point], results: dict) -> dict[str, tuple[int, Point]]:
    """With two or more variants: per property, on how many scenarios the variants' verdicts differ
    and the first such scenario (in the sweep's order); a property on which they always agree is
    absent. With one variant: nothing."""
    found: dict[str, tuple[int, Point]] = {}
    if len(bounds.variants) < 2:
        return found
    for point in points:
        by_property: dict[str, set] = {}
        for record in results.get(point.key, ()):  # none for a scenario not reached
            by_property.setdefault(record["property"], set()).add(record["verdict"])
        for prop in bounds.properties:
            if len(by_property.get(prop, ())) > 1:
                count, first = found.get(prop, (0, point))
                found[prop] = (count + 1, first)
    return found


def agreement_lines(bounds: SweepBounds, differing: dict, scenarios: int, unreached: int = 0) -> list[str]:
    """The summary's lines on the variants' agreement (none with one variant); ``unreached``
    scenarios (left by the time budget) are not counted as agreeing."""
    if len(bounds.variants) < 2:
        return []
    names = ", ".join(bounds.variants)
    if not differing and unreached:
        return [f"variants {names}: the same verdict of every property on each of the {scenarios - unreached:,} "
                f"scenarios checked ({unreached:,} of {scenarios:,} not reached within the time budget)"]
    if not differing:
        return [f"variants {names}: the same verdict of every property on every one of the {scenarios:,} scenarios"]
    return [f"variants {names}: {prop} differs on {count:,} of {scenarios:,} scenarios (first: {first.name})"
            for prop, (count, first) in sorted(differing.items(), key=lambda item: bounds.properties.index(item[0]))]


def _scenario_yaml(bounds: SweepBounds, point: Point) -> str:
    document = point_document(bounds, point)
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=120, allow_unicode=True)


def write_result(bounds: SweepBounds, verdicts: list[Verdict], scenarios: int, target: Path,
                 differing: dict | None = None) -> Path:
    """Write ``result/`` atomically: ``summary.md`` and each minimal violating scenario with its
    trace report and ITF file. Deterministic: no times."""
    with atomic_directory(target) as staging:
        lines = [f"# Sweep {bounds.name}", "", f"Bounds: {bounds.describe()}", "",
                 f"{scenarios:,} scenarios (canonical, loaded by the scenario loader).", ""]
        lines += [f"- {verdict.line(bounds)}" for verdict in verdicts]
        unreached = verdicts[0].unreached if verdicts else 0
        lines += [f"- {line}" for line in agreement_lines(bounds, differing or {}, scenarios, unreached)] + [""]
        (staging / "summary.md").write_text("\n".join(lines), encoding="utf-8")
        for verdict in verdicts:
            if verdict.smallest is not None:
                _write_minimal(bounds, verdict, staging)
    return target / "summary.md"


def _write_minimal(bounds: SweepBounds, verdict: Verdict, staging: Path) -> None:
    _, point, record = verdict.smallest
    stem = _file_stem(verdict)
    scenario_file = staging / f"{stem}.yaml"
    scenario_file.write_text(_scenario_yaml(bounds, point), encoding="utf-8")
    scenario = parse_scenario(point_document(bounds, point), f"{RESULT_DIR}/{stem}.yaml")
    ctx = Context.build(scenario, next(v for v in VARIANTS if v.name == verdict.variant), ())
    trace = Trace(replay(ctx, record["labels"]).steps, record.get("loop"))
    spec = property_by_name(verdict.property)
    result = CheckResult(scenario.name, verdict.variant, verdict.property, spec.kind, "explicit", VIOLATED,
                         states=record["states"], transitions=record["transitions"], depth=record["depth"],
                         trace=trace, fairness=groups_of_variant(spec.fairness, ctx.variant))
    report = staging / f"{stem}.md"
    report.write_text(trace_markdown(ctx, result), encoding="utf-8")
    write_itf(ctx, result, report)


def _output_directory(value: str) -> Path:
    """The sweep's directory: one holding its store (a re-run continues it), or one that
    ``check_output_dir`` accepts (new or empty)."""
    target = Path(os.path.realpath(os.path.abspath(value)))
    if (target / STORE_NAME).is_file():
        if not os.access(target, os.W_OK | os.X_OK):
            raise OutputError(value, "is a directory that is not writable")
        return target
    return check_output_dir(value)


def command_sweep(options) -> int:
    bounds = load_bounds(options.bounds)
    try:
        directory = _output_directory(options.output or f"sweep-{bounds.name}")
        lock_output(directory, options.output or f"sweep-{bounds.name}")  # one sweep at a time writes a store
    except OutputError as error:
        raise UsageError(f"-o {error}") from None
    started = time.perf_counter()
    if options.cluster and options.workers:
        raise UsageError("--workers and --cluster exclude each other (a cluster brings its own workers)")
    if options.cluster:
        check_address(options.cluster)
    executors = options.cluster or options.workers or 1
    budget = (options.max_states, options.timeout_per_check)
    if options.deadline is not None:  # --timeout: the whole sweep, as wall-clock time for every worker
        until = options.deadline.sooner(min(1.0, 0.2 * options.deadline.seconds))
        budget += (time.time() + until.left(), options.deadline.seconds)

    def announce(scenarios: int, refused: int) -> None:  # the count, before the checks start
        if not scenarios:
            raise UsageError(f"{options.bounds}: the bounds admit no scenario the loader accepts (nothing to check)")
        print(f"sweep {bounds.describe()}")
        print(f"{scenarios:,} scenarios" + (f" ({refused:,} refused by the loader, not checked)" if refused else ""),
              flush=True)

    verdicts, scenarios, refused, differing = run_sweep(bounds, directory, executors, budget, announce=announce)
    try:
        summary = write_result(bounds, verdicts, scenarios, directory / RESULT_DIR, differing)
    except OutputError as error:
        raise UsageError(f"-o {error}") from None
    unreached = verdicts[0].unreached if verdicts else 0
    for line in [verdict.line(bounds) for verdict in verdicts] + agreement_lines(bounds, differing, scenarios,
                                                                                 unreached):
        print(line)
    where = f"Dask cluster {options.cluster}" if options.cluster else f"{options.workers or 1} worker(s)"
    print(f"{time.perf_counter() - started:.1f} s with {where}; results in {summary}")
    say(f"kepcheck: wrote the sweep's result {summary}")
    if any(v.verdict == VIOLATED for v in verdicts):
        return EXIT_DIFFERS
    return EXIT_INCONCLUSIVE if any(v.verdict == INCONCLUSIVE for v in verdicts) else EXIT_OK


def add_sweep_parser(sub) -> None:
    sweep = sub.add_parser("sweep", help="check properties on every scenario within bounds (a YAML file), up to "
                           "isomorphism; the smallest violating scenario when one exists")
    sweep.add_argument("bounds", metavar="BOUNDS.yaml")
    sweep.add_argument("-o", "--output", metavar="DIR", help="results store and result/ (default sweep-<name>); "
                       "a re-run with the same DIR continues an interrupted sweep")
    sweep.add_argument("--workers", type=int, metavar="N", help="processes checking scenarios (default 1)")
    sweep.add_argument("--cluster", metavar="ADDRESS", help="run the scenarios as tasks on a Dask cluster: local:N "
                       "(N local worker processes) or a scheduler address (tcp://HOST:8786); needs the optional "
                       "'distributed' extra; the same results as --workers")
    sweep.add_argument("--max-states", type=int, metavar="N", help="state budget of each scenario × variant")
    sweep.add_argument("--timeout", type=float, metavar="S", help="time budget of the whole sweep, seconds (the "
                       "scenarios it does not reach are inconclusive, and a re-run with the same -o continues)")
    sweep.add_argument("--timeout-per-check", type=float, metavar="S", help="time budget of each scenario × variant, "
                       "seconds")
