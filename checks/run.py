"""One run of checks: select → explore once → judge → replay → results.

``run_checks`` checks every selected scenario × variant with one engine (``checks/engine.py``):
one exploration (or unrolling, or set of walks) per context, every selected property judged on
it, every trace it reports replayed through the model (an ``EngineError`` if one does not), and
the manifest's expectation filled into each result. The command line (``checks/cli/main.py``) parses
arguments into a selection and prints what comes back; the reporter (``checks/outputs/review.py``)
writes what comes back. Neither searches.

``select_*`` turn names from the command line into spec values, with a ``SelectionError`` (a
usage error) naming what is unknown.
"""

from __future__ import annotations

import re
import time
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, NamedTuple, Sequence

from kepcheck.spec.kep.fairness import FAIRNESS_GROUPS
from kepcheck.spec.kep.manifest import Manifest, load_manifest
from kepcheck.spec.kep.properties import PROPERTIES, PropertySpec
from kepcheck.spec.kep.variants import VARIANTS, Variant, derived_variant
from kepcheck.spec.language.loader import Scenario, default_scenarios, load_scenario

from kepcheck.checks.engine import ENGINE_KINDS, ENGINE_NAMES, Budget, Deadline, EngineOptions, engine
from kepcheck.checks.engines.differential import DIFFERENTIAL_NAMES
from kepcheck.model.lifecycle import LifecycleRecorder
from kepcheck.checks.result import INCONCLUSIVE, NOT_CHECKED, CheckResult, EngineError, replay
from kepcheck.model.context import Context
from kepcheck.model.memo import caching
from kepcheck.model.mutants import MUTANTS, Mutant

__all__ = ["ContextRun", "run_checks", "SelectionError", "select_scenarios", "select_variants", "select_properties",
           "select_mutants", "select_engine", "select_fairness", "select_checks", "check_trace_replays", "LIFECYCLE_VARIANT",
           "not_reached"]

LIFECYCLE_VARIANT = "alpha-1.37"  # recorded for the review's lifecycle diagram (else the run's first variant)


class SelectionError(ValueError):
    """A name on the command line that names nothing (exit 2)."""


class ContextRun(NamedTuple):
    """What the run found for one scenario × variant."""

    ctx: Context
    results: list[CheckResult]
    lifecycle: LifecycleRecorder | None = None  # the exploration's lifecycle record, when one was asked for
    seconds: float = 0.0  # the wall time of the check, the replay of its traces included


# --- selection ---------------------------------------------------------------------------------------

def _by_name(names: Sequence[str] | None, known: dict, kind: str) -> list:
    if not names:
        return list(known.values())
    chosen = []
    for name in names:
        if name not in known:
            raise SelectionError(f"unknown {kind} {name!r} (known: {', '.join(known)})")
        chosen.append(known[name])
    return chosen


def select_scenarios(arguments: Sequence[str] | None) -> list[Scenario]:
    """Shipped scenarios by name, or scenario files (every shipped one when none is named)."""
    shipped = {s.name: s for s in default_scenarios()}
    if not arguments:
        return list(shipped.values())
    chosen = []
    for argument in arguments:
        if argument in shipped:
            chosen.append(shipped[argument])
        elif argument.endswith((".yaml", ".yml")) or Path(argument).exists():
            chosen.append(load_scenario(argument))
        else:
            raise SelectionError(f"unknown scenario {argument!r} (a shipped name or a YAML file; known: "
                                 f"{', '.join(shipped)})")
    return chosen


def select_variants(names: Sequence[str] | None) -> list[Variant]:
    """Named variants; a name with ``+decision=option`` switches (``spec/variants.derived_variant``) is
    that variant with those decisions switched (and has no expectation in the manifest)."""
    if not names:
        return list(VARIANTS)
    chosen = []
    for name in names:
        try:
            chosen.append(derived_variant(name))
        except ValueError as error:
            raise SelectionError(str(error)) from None
    return chosen


def select_properties(names: Sequence[str] | None) -> list[PropertySpec]:
    return _by_name(names, {p.name: p for p in PROPERTIES}, "property")


def select_checks(names: Sequence[str] | None, engine_name: str) -> tuple[list[PropertySpec], tuple | None]:
    """``--property`` names -> (catalog properties, differential checks): every property and every
    differential check that applies (None) when none is named; else the named ones, where a
    differential check (``checks/engines/differential.py``) is refused for an engine other than random."""
    if not names:
        return list(PROPERTIES), None
    differential = tuple(dict.fromkeys(name for name in names if name in DIFFERENTIAL_NAMES))
    if differential and engine_name != "random":
        raise SelectionError(f"{differential[0]} is a differential check of the random engine (add --engine random)")
    catalog = {p.name: p for p in PROPERTIES}
    unknown = [name for name in names if name not in catalog and name not in DIFFERENTIAL_NAMES]
    if unknown:
        raise SelectionError(f"unknown property {unknown[0]!r} (known: {', '.join(catalog)}; with --engine random "
                             f"also {', '.join(sorted(DIFFERENTIAL_NAMES))})")
    return [catalog[name] for name in dict.fromkeys(names) if name in catalog], differential


def select_mutants(names: Sequence[str] | None) -> list[Mutant]:
    return _by_name(names, {m.name: m for m in MUTANTS}, "mutant") if names else []


def select_engine(name: str) -> str:
    if name not in ENGINE_NAMES:
        raise SelectionError(f"unknown engine {name!r} (available: {', '.join(ENGINE_NAMES)})")
    return name


def select_fairness(values: Sequence[str] | None) -> tuple | None:
    """``a,b`` and ``c`` -> ("a", "b", "c"); ``none`` -> (); nothing -> None (each property's own)."""
    if not values:
        return None
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    if names == ["none"]:
        return ()
    known = [group.name for group in FAIRNESS_GROUPS]
    for name in names:
        if name not in known:
            raise SelectionError(f"unknown fairness group {name!r} (known: {', '.join(known)}, or none)")
    return tuple(names)


# --- the run -------------------------------------------------------------------------------------------

def _expect(results: list[CheckResult], manifest: Manifest | None, scenario: str, variant: str) -> None:
    """Fill in the manifest's expectation of every result (none for a run outside the manifest)."""
    if manifest is None:
        return
    for result in results:
        expectation = manifest.expected(scenario, variant, result.property)
        if expectation is None:
            continue
        result.expected = expectation.verdict
        result.expected_reason, result.expected_ref = expectation.reason, expectation.ref
        if expectation.reason and not result.reason:
            result.reason = expectation.reason
        if expectation.ref:
            result.ref = expectation.ref


def _replayed(ctx: Context, results: list[CheckResult]) -> None:
    """Every trace an engine reports replays through the model to the same last state."""
    with caching(ctx):
        for result in results:
            check_trace_replays(ctx, result)


def check_trace_replays(ctx: Context, result: CheckResult) -> None:
    """``result``'s trace (if any) replays through the model to the same last state; ``EngineError`` if not."""
    if result.trace is not None:
        try:
            again = replay(ctx, result.trace.labels)
        except ValueError as error:
            raise EngineError(f"{result.engine}: the trace of {result.property} does not replay: {error}") from None
        if again.steps[-1][1] != result.trace.steps[-1][1]:
            raise EngineError(f"{result.engine}: the trace of {result.property} replays to another state")


@lru_cache(maxsize=1)
def _shipped() -> tuple[dict, Manifest]:
    """The shipped scenarios by name and their manifest, read once per process (a sweep runs
    thousands of scenarios through ``run_checks``)."""
    shipped = {s.name: s for s in default_scenarios()}
    return shipped, load_manifest(list(shipped))


def run_checks(scenarios: Sequence[Scenario], variants: Sequence[Variant], properties: Sequence[PropertySpec], *,
               engine_name: str = "explicit", budget: Budget = Budget(), options: EngineOptions = EngineOptions(),
               mutants: Sequence[Mutant] = (), record_lifecycle: bool = False,
               progress: Callable | None = None, starting: Callable | None = None) -> Iterator[ContextRun]:
    """Check every scenario × variant; yields one ``ContextRun`` per pair, in order.

    The manifest's expectations assume the shipped scenarios, no mutant and each property's own
    fairness: any other run has no expectation (``expected`` is None). ``record_lifecycle``: record
    the lifecycle of the lifecycle variant's explorations (explicit engine) for the review.
    ``starting(ctx)`` is called before each scenario × variant is checked, ``progress()`` after.

    ``budget.until`` (``--timeout``) is one deadline for every scenario × variant: each engine gets
    the time left of it (``Budget.for_one_check``), and once it has passed every scenario × variant
    not yet started is ``inconclusive`` (``not_reached``) without running, so the whole run ends
    within about a second of it. The reasons name the budget the user gave."""
    checker = engine(engine_name)
    shipped, manifest = _shipped()
    names = [v.name for v in variants]
    lifecycle_variant = LIFECYCLE_VARIANT if LIFECYCLE_VARIANT in names else (names[0] if names else None)
    for scenario in scenarios:
        in_manifest = shipped.get(scenario.name) == scenario and not mutants and options.fairness is None
        for variant in variants:
            ctx = Context.build(scenario, variant, mutants)
            recorder = None
            if record_lifecycle and variant.name == lifecycle_variant:
                recorder = LifecycleRecorder(ctx)
            run_options = options if recorder is None else _with_recorder(options, recorder)
            if starting is not None:
                starting(ctx)
            started = time.perf_counter()
            if budget.until is not None and budget.until.passed():
                results = not_reached(ctx, properties, engine_name, budget.until)
            else:
                cut = budget.cut_by_until()
                results = checker.check(ctx, properties, budget=budget.for_one_check(), options=run_options)
                if cut:
                    _name_the_budget(results, budget.until)
            if options.parametric is None:  # a parametric trace replays in the scenario of the sizes Z3 chose (bmc)
                _replayed(ctx, results)
            shipped_variant = variant in VARIANTS  # a derived variant (with switches) has no expectation
            _expect(results, manifest if in_manifest and shipped_variant else None, scenario.name, variant.name)
            if progress is not None:
                progress()
            yield ContextRun(ctx, results, recorder, time.perf_counter() - started)


_TIME_BUDGET = re.compile(r"time budget of [0-9.e+-]+ s reached|time budget exhausted|(?<=: )(timeout|canceled)$")


def _name_the_budget(results: list[CheckResult], until: Deadline) -> None:
    """An engine handed the time left of the command's deadline names that remainder in its reasons;
    the user gave ``until.seconds``, so that is what the reasons say."""
    for result in results:
        if result.verdict == INCONCLUSIVE:
            result.reason = _TIME_BUDGET.sub(until.reason, result.reason)


def not_reached(ctx: Context, properties: Sequence[PropertySpec], engine_name: str, until: Deadline) -> list[CheckResult]:
    """The results of a scenario × variant the command's deadline left no time for: ``inconclusive``
    for every property kind the engine judges, ``not-checked`` for the others (as the engine says)."""
    judged = ENGINE_KINDS[engine_name]
    return [CheckResult(scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name, kind=spec.kind,
                        engine=engine_name, verdict=INCONCLUSIVE if spec.kind in judged else NOT_CHECKED,
                        reason=(f"{until.reason} before this scenario × variant was started" if spec.kind in judged
                                else f"the {engine_name} engine does not judge {spec.kind}-properties"),
                        ref=spec.ref, mutants=tuple(sorted(ctx.mutants))) for spec in properties]


def _with_recorder(options: EngineOptions, recorder: LifecycleRecorder) -> EngineOptions:
    return replace(options, on_step=recorder)
