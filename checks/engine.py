"""What every engine is: the ``Engine`` protocol, its budget and options, and the engine registry.

An engine takes one context (a scenario, a variant, mutants) and the properties to judge, and
returns one ``CheckResult`` per property (``checks/result.py``), in the order given; a property
kind it does not judge is ``not-checked``. A new engine is one module that defines an object
``ENGINE`` with this protocol, plus one line in ``ENGINE_MODULES``.

Engines are imported when first used (``engine(name)``), so that a run of the explicit engine
never loads Z3 or Hypothesis.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from importlib import import_module
from typing import Callable, NamedTuple, Protocol, Sequence

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, SOMETIMES, PropertySpec

from kepcheck.checks.result import CheckResult
from kepcheck.model.context import Context

__all__ = ["Budget", "Deadline", "EngineOptions", "Engine", "ENGINE_MODULES", "ENGINE_NAMES", "ENGINE_KINDS", "engine",
           "default_workers", "process_started", "DepthProgress", "WalkProgress"]


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def process_started() -> float:
    """When this process started, as a ``time.perf_counter()`` value (Linux: from ``/proc``, so the
    interpreter's start-up counts against a command's budget too); now where that is not known."""
    now = time.perf_counter()
    try:
        with open("/proc/self/stat", encoding="ascii") as stat:
            ticks = int(stat.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        with open("/proc/uptime", encoding="ascii") as uptime:
            age = float(uptime.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return now
    return now - min(max(0.0, age), 60.0)  # a wild reading never eats a budget


@dataclass(frozen=True)
class Budget:
    """How far an engine may go: a run that hits a budget reports ``inconclusive`` with the budget
    in ``reason``, never ``holds``.

    ``max_states`` and ``timeout`` bound one scenario × variant (``--max-states``,
    ``--timeout-per-check``); ``until`` is the whole command's deadline (``--timeout``), shared by
    every scenario × variant of the run: ``checks.run.run_checks`` hands each engine the time left
    of it as ``timeout`` (``for_one_check``) and marks what it did not reach ``inconclusive``."""

    max_states: int | None = None
    timeout: float | None = None  # seconds, per scenario × variant
    until: "Deadline | None" = None  # the whole command's deadline

    def deadline(self) -> "Deadline | None":
        """The time budget as a deadline counted from now (None without one)."""
        return None if self.timeout is None else Deadline(time.perf_counter() + self.timeout, self.timeout)

    def for_one_check(self) -> "Budget":
        """The budget of the next scenario × variant: ``timeout`` cut to what is left of ``until``
        (at least a millisecond: a deadline already passed is for the caller to see)."""
        if self.until is None:
            return self
        left = max(0.001, self.until.left())
        return Budget(self.max_states, left if self.timeout is None else min(self.timeout, left))

    def cut_by_until(self) -> bool:
        """Whether the command's deadline, not the per-check timeout, is the nearer one now."""
        return self.until is not None and (self.timeout is None or self.until.left() < self.timeout)


@dataclass(frozen=True)
class Deadline:
    """A time budget as a point in time (``time.perf_counter()``): every phase of a run checks the one
    deadline of its scenario × variant (search, compiling, liveness judgement), and the command's
    deadline (``Budget.until``) bounds them all."""

    at: float
    seconds: float  # the budget as given

    @classmethod
    def after(cls, seconds: float | None, start: float | None = None) -> "Deadline | None":
        """A deadline ``seconds`` after ``start`` (a ``time.perf_counter()`` value; default now), None
        for None."""
        return None if seconds is None else cls((time.perf_counter() if start is None else start) + seconds, seconds)

    def sooner(self, seconds: float) -> "Deadline":
        """The same budget ending ``seconds`` earlier (the time kept back for what follows)."""
        return Deadline(self.at - seconds, self.seconds)

    def passed(self) -> bool:
        return time.perf_counter() > self.at

    def left(self) -> float:
        return self.at - time.perf_counter()

    @property
    def reason(self) -> str:
        return f"time budget of {self.seconds:g} s reached"


@dataclass(frozen=True)
class EngineOptions:
    """Options of the engines; each engine reads the ones that concern it."""

    symmetry: bool = True  # explicit: symmetry reduction (never for eventually-properties)
    fairness: tuple | None = None  # liveness: the fairness groups assumed (None: each property's own)
    on_step: Callable | None = None  # explicit: called as on_step(before, action, after) on every transition
    progress: Callable | None = None  # called as progress(ctx, where) while a check runs (see below)
    core: str = "auto"  # explicit: interpreted, vector or auto (checks/search/hybrid.py)
    workers: int = field(default_factory=lambda: default_workers())  # explicit: cores for the vector core
    depth: int = 10  # bmc: unrolling depth
    max_k: int = 3  # induction: largest k tried
    parametric: tuple | None = None  # bmc/induction: (low, high) for symbolic sizes
    examples: int | None = None  # random: walks per run
    steps: int | None = None  # random: steps per walk
    seed: int = 0  # random
    profile: str = "ci"  # random: Hypothesis settings profile
    differential: tuple | None = None  # random: the differential checks to run (None: every one that applies)


class DepthProgress(NamedTuple):
    """Where a bmc or induction run is (``progress(ctx, DepthProgress)``); the explicit engine's cores
    report ``checks.result.Progress``, the random engine ``WalkProgress``."""

    engine: str  # bmc or induction
    depth: int  # bmc: the depth being decided; induction: the k being tried
    bound: int  # --depth or --max-k
    subject: str  # what is being decided, e.g. "9 always-properties open", "NoExcessVictims (3 of 9)"

    def describe(self) -> str:
        letter = "depth" if self.engine == "bmc" else "k ="
        return f"{self.engine} {letter} {self.depth} of {self.bound}, {self.subject}"


class WalkProgress(NamedTuple):
    """Where a random run is (``progress(ctx, WalkProgress)``, at the start of every walk)."""

    walks: int  # walks started so far, Hypothesis' own phases and shrinking included
    steps: int  # steps taken
    states: int  # distinct states met
    deepest: int  # the longest walk

    def describe(self) -> str:
        walks = f"{self.walks:,} walk" + ("s" if self.walks != 1 else "")
        return f"random: {walks}, {self.steps:,} steps, {self.states:,} distinct states, longest walk {self.deepest}"


class Engine(Protocol):
    name: str

    def check(self, ctx: Context, properties: Sequence[PropertySpec], *, budget: Budget,
              options: EngineOptions) -> list[CheckResult]:
        """One result per property of ``properties``, in order."""


ENGINE_MODULES = {
    "explicit": "kepcheck.checks.engines.explicit",  # breadth-first search: always, sometimes and eventually
    "liveness": "kepcheck.checks.engines.liveness",  # the same search, eventually-properties only
    "bmc": "kepcheck.checks.symbolic.bmc",  # bounded model checking with Z3: always-properties
    "induction": "kepcheck.checks.symbolic.induction",  # k-induction proofs with Z3: always-properties
    "random": "kepcheck.checks.engines.random_walk",  # Hypothesis random walks
}
ENGINE_NAMES = tuple(ENGINE_MODULES)
ENGINE_KINDS = {  # the property kinds each engine judges (the others it reports not-checked)
    "explicit": (ALWAYS, SOMETIMES, EVENTUALLY), "liveness": (EVENTUALLY,), "bmc": (ALWAYS,), "induction": (ALWAYS,),
    "random": (ALWAYS, SOMETIMES),
}


def engine(name: str) -> Engine:
    """The engine of this name (KeyError for an unknown one)."""
    return import_module(ENGINE_MODULES[name]).ENGINE
