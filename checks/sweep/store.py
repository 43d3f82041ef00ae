"""The results of a sweep: one task per scenario, and the store that keeps what is done.

``check_scenario(document, variants, properties, budget)`` is the task: a pure, top-level function
of a scenario document (``checks/sweep_space.point_document``), variant and property names and a
budget to JSON-ready records, one per variant × property. It imports nothing from the caller's
state and returns plain data, so it runs unchanged in a ``ProcessPoolExecutor`` worker (what
``kepcheck sweep --workers N`` uses) and can be submitted as is to a cluster's task scheduler
(Dask's ``client.map``, Ray's ``remote``: the next step of issue 17, not done here).

The store is a JSON-lines file in the sweep's output directory: one line per scenario, keyed by
its canonical form (``Point.key``), written and flushed as each scenario is done, so an
interrupted sweep continues where it stopped. A stored scenario is reused when it has a record for
every variant × property asked; a last line cut short by an interrupt (or ``kill -9``) is ignored.
The first line is a header (``store_header``: format, kepcheck version, the per-scenario budget):
a store of another format, version or budget, or one with any other line that is not a record,
is refused (``StoreError``, exit 2) rather than mixed with this run's results.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from kepcheck.spec.kep.properties import property_by_name
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.language.fields import ScenarioError
from kepcheck.spec.language.loader import parse_scenario
from kepcheck.spec.limits import cut

from kepcheck.checks.engine import Budget, Deadline, EngineOptions
from kepcheck.checks.outputs.signals import deferred_signals
from kepcheck.checks.result import INCONCLUSIVE, VIOLATED
from kepcheck.checks.run import run_checks

__all__ = ["STORE_NAME", "check_scenario", "ResultStore", "StoreError", "store_header"]

STORE_NAME = "sweep-results.jsonl"
STORE_KIND, STORE_FORMAT = "kepcheck sweep results", 2  # format 1: no header line (refused)


def _is_entry(entry) -> bool:
    return (isinstance(entry, dict) and isinstance(entry.get("key"), str) and isinstance(entry.get("records"), list)
            and all(_is_record(record) for record in entry["records"]))


def _shown(value) -> str:
    return cut(json.dumps(value, sort_keys=True)) if not isinstance(value, str) else cut(value)


def check_scenario(document: dict, variants: tuple, properties: tuple, budget: tuple = (None, None)) -> list[dict] | None:
    """Check ``properties`` × ``variants`` on the scenario ``document`` through the run pipeline
    (``checks.run.run_checks``: the explicit engine on one core, every trace replayed through the
    model); one record per pair: variant, property, verdict, states, transitions, depth and, for a
    violation, the trace as action labels with its lasso ``loop``. Pure: the same arguments give
    the same records, on any worker. ``budget`` is (max states, timeout seconds) per variant,
    optionally followed by the sweep's deadline as (wall-clock time, the seconds the user gave):
    None when that deadline leaves no time for the scenario or cuts one of its checks short (the
    scenario is then not reached: not stored, checked again by a re-run)."""
    max_states, per_check, *until = budget
    deadline = None
    if until:
        left = until[0] - time.time()  # wall-clock time: the same on every worker of a cluster
        if left <= 0:
            return None
        deadline = Deadline(time.perf_counter() + left, until[1])
    scenario = parse_scenario(document, f"<sweep scenario {document.get('name')}>")
    specs = [property_by_name(name) for name in properties]
    chosen = [v for v in VARIANTS if v.name in variants]
    records = []
    budget = Budget(max_states, per_check, until=deadline)
    for run in run_checks([scenario], chosen, specs, budget=budget, options=EngineOptions(workers=1)):
        if deadline is not None and any(r.verdict == INCONCLUSIVE and deadline.reason in r.reason for r in run.results):
            return None
        for result in run.results:
            record = {"variant": run.ctx.variant.name, "property": result.property, "verdict": result.verdict,
                      "states": result.states, "transitions": result.transitions, "depth": result.depth}
            if result.verdict == VIOLATED and result.trace is not None:
                record.update(length=len(result.trace), labels=result.trace.labels, loop=result.trace.loop)
            records.append(record)
    return records


class StoreError(ScenarioError):
    """A results store this sweep cannot continue: one line ``FILE: line N: problem``, exit 2."""


def store_header(budget: tuple = (None, None)) -> dict:
    """The store's first line: its format, the kepcheck that wrote it and the per-scenario budget
    its records were checked within (a record is a function of the scenario and that budget)."""
    return {"store": STORE_KIND, "format": STORE_FORMAT, "kepcheck": _version(),
            "budget": {"max_states": budget[0], "timeout_per_check": budget[1]}}


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kepcheck")
    except PackageNotFoundError:
        return "unknown"


_RECORD_FIELDS = {"variant": str, "property": str, "verdict": str, "states": int, "transitions": int, "depth": int}


def _is_record(record) -> bool:
    return isinstance(record, dict) and all(isinstance(record.get(k), t) for k, t in _RECORD_FIELDS.items())


class ResultStore:
    """The JSON-lines store of a sweep's results (see the module's doc string). ``budget``: (max
    states, timeout per check), recorded in the header; a store whose header differs (another
    format, another kepcheck, another budget), or with a line that is not a record, is a
    ``StoreError``: its results are never mixed with this run's."""

    def __init__(self, directory: Path, budget: tuple = (None, None)):
        self.path = Path(directory) / STORE_NAME
        self.header = store_header(budget[:2])
        self.records: dict[str, list[dict]] = {}
        if self.path.exists() and self.path.stat().st_size:
            self._load()
        else:
            self._write(json.dumps(self.header, sort_keys=True) + "\n")

    def _fail(self, line: int, problem: str):
        raise StoreError(str(self.path), f"line {line}", problem)

    def _load(self) -> None:
        try:
            with open(self.path, "rb") as handle:
                lines = handle.read().split(b"\n")
        except OSError as error:
            raise StoreError(str(self.path), "", f"cannot read ({error.strerror})") from None
        last = len(lines) - 1  # the text after the last newline: empty, or a line an interrupt cut short
        for number, raw in enumerate(lines, start=1):
            try:
                entry = json.loads(raw.decode("utf-8")) if raw else None
            except (UnicodeDecodeError, ValueError):
                entry = ...
            if number == 1:
                self._check_header(entry)
            elif number - 1 == last:
                if raw:  # cut short by an interrupt: dropped, so the next line starts on a line of its own
                    with deferred_signals(), open(self.path, "r+b") as handle:
                        handle.truncate(sum(len(line) + 1 for line in lines[:-1]))
            elif entry is ... or not _is_entry(entry):
                self._fail(number, "corrupted: not a record of a sweep (delete the store or use another -o)")
            else:
                self.records[entry["key"]] = entry["records"]

    def _check_header(self, entry) -> None:
        if not isinstance(entry, dict) or entry.get("store") != STORE_KIND:
            self._fail(1, "not a kepcheck sweep store of this format (an older kepcheck's, or another file): use "
                          "another -o")
        for field, problem in (("format", "a store of format {} (this kepcheck reads format {})"),
                               ("kepcheck", "a store written by kepcheck {} (this is kepcheck {}): its results may "
                                            "differ; use another -o"),
                               ("budget", "a store checked within the budget {} (this run: {}): run again with the "
                                          "same --max-states/--timeout-per-check, or use another -o")):
            if entry.get(field) != self.header[field]:
                self._fail(1, problem.format(_shown(entry.get(field)), _shown(self.header[field])))

    def done(self, key: str, pairs: set) -> list[dict] | None:
        """The stored records of the scenario ``key`` if they cover every (variant, property) of
        ``pairs`` (only those records), else None."""
        records = self.records.get(key)
        if records is None:
            return None
        chosen = [r for r in records if (r["variant"], r["property"]) in pairs]
        return chosen if len(chosen) == len(pairs) else None

    def add(self, key: str, records: list[dict]) -> None:
        """Append one scenario's records (the line is written whole, signals held meanwhile)."""
        self.records[key] = records
        self._write(json.dumps({"key": key, "records": records}, separators=(",", ":"), sort_keys=True) + "\n")

    def _write(self, line: str) -> None:
        try:
            with deferred_signals():
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with open(self.path, "a", encoding="utf-8") as store:
                    store.write(line)
        except OSError as error:  # a full disk: what is stored stays, and a re-run continues from it
            raise StoreError(str(self.path), "", f"cannot write the store ({error.strerror or error})") from None
