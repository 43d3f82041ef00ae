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
every variant × property asked; a last line cut short by an interrupt is ignored.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kepcheck.spec.kep.properties import property_by_name
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.language.loader import parse_scenario

from kepcheck.checks.engine import Budget, EngineOptions
from kepcheck.checks.outputs.files import deferred_signals
from kepcheck.checks.result import VIOLATED
from kepcheck.checks.run import run_checks

__all__ = ["STORE_NAME", "check_scenario", "ResultStore"]

STORE_NAME = "sweep-results.jsonl"


def check_scenario(document: dict, variants: tuple, properties: tuple, budget: tuple = (None, None)) -> list[dict]:
    """Check ``properties`` × ``variants`` on the scenario ``document`` through the run pipeline
    (``checks.run.run_checks``: the explicit engine on one core, every trace replayed through the
    model); one record per pair: variant, property, verdict, states, transitions, depth and, for a
    violation, the trace as action labels with its lasso ``loop``. Pure: the same arguments give
    the same records, on any worker. ``budget`` is (max states, timeout seconds) per variant."""
    scenario = parse_scenario(document, f"<sweep scenario {document.get('name')}>")
    specs = [property_by_name(name) for name in properties]
    chosen = [v for v in VARIANTS if v.name in variants]
    records = []
    for run in run_checks([scenario], chosen, specs, budget=Budget(*budget), options=EngineOptions(workers=1)):
        for result in run.results:
            record = {"variant": run.ctx.variant.name, "property": result.property, "verdict": result.verdict,
                      "states": result.states, "transitions": result.transitions, "depth": result.depth}
            if result.verdict == VIOLATED and result.trace is not None:
                record.update(length=len(result.trace), labels=result.trace.labels, loop=result.trace.loop)
            records.append(record)
    return records


class ResultStore:
    """The JSON-lines store of a sweep's results (see the module's doc string)."""

    def __init__(self, directory: Path):
        self.path = Path(directory) / STORE_NAME
        self.records: dict[str, list[dict]] = {}
        if self.path.exists():
            self._load()
            if self.path.stat().st_size and not self._ends_with_newline():
                with open(self.path, "a", encoding="utf-8") as store:
                    store.write("\n")

    def _load(self) -> None:
        with open(self.path, encoding="utf-8") as lines:
            for line in lines:
                try:
                    entry = json.loads(line)
                    self.records[entry["key"]] = entry["records"]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by an interrupt: that scenario is checked again

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
        line = json.dumps({"key": key, "records": records}, separators=(",", ":"), sort_keys=True) + "\n"
        with deferred_signals():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as store:
                store.write(line)

    def _ends_with_newline(self) -> bool:
        with open(self.path, "rb") as store:
            store.seek(-1, os.SEEK_END)
            return store.read(1) == b"\n"
