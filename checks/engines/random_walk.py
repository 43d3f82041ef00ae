"""The random engine: Hypothesis stateful random walks over the model (docs/style.md R14).

One ``RuleBasedStateMachine`` adapter, ``KepWalk``: its single rule ``step`` draws the next action
from the model's own enabled actions (``model.actions.next.next_steps``) with ``st.sampled_from`` and
``note``s its label, so the walk never re-implements the model. After every step the
``@invariant()`` methods — one per watched check, generated from the property catalog — judge
every ``always`` property: state properties on the new state, step properties on the step just
taken. ``sometimes`` properties are not invariants: the first witness any walk meets is recorded
(the first met, not the shortest: witnesses are not minimised).

Two differential checks (``checks/engines/differential.py``) run as extra invariants, reported as
``always`` results under their own names, after the catalog's.

Search plan (documented choice): one Hypothesis run watches every remaining ``always`` check at
once. A run ends at the first violation; Hypothesis shrinks it (fewer steps, earlier choices);
the shrunk walk is replayed through the model and then minimised by deleting steps one at a time
while the replayed walk still violates the check (``_minimise``: Hypothesis cannot delete a step
when that changes what later choice indices mean), and cut at its first violation: that is the
check's trace. The violated check is dropped and the run repeated
with the same seed, until a run finds nothing or no check remains. So every check is searched by
at least one full run of ``examples`` walks of ``steps`` steps, and the cost is one run plus one
per violated check. Shrinking may move from one watched check to another; the trace reported is
always a real violation of the check it is reported under (it is replayed and re-judged).

Verdicts: a violation is ``violated`` with the shrunk trace, which is replayed through the model
(``checks.result.replay``) and must match state for state. Random walks never prove anything:
an ``always`` property not violated is ``inconclusive``, with the number of walks and steps in
``reason`` (exhaustiveness is not detected). A ``sometimes`` property is ``holds`` with a witness
trace when some walk met a witness, else ``inconclusive``. ``eventually`` properties are
``not-checked`` (a finite walk cannot refute or show them).

Determinism: the settings profiles are derandomized, have no example database and no deadline,
and the run's seed is fixed with ``hypothesis.seed``; the model is deterministic, so the same
seed gives the same verdicts, traces and counts.

Left out: exhaustiveness detection, coverage-guided targeting of rare actions (``target()``), and
eventually-properties.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable
from hypothesis import HealthCheck, Phase, Verbosity, note, seed as hypothesis_seed, settings, strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES, PropertySpec

from kepcheck.checks.engine import Budget, EngineOptions, WalkProgress
from kepcheck.checks.engines.differential import DIFFERENTIAL_CHECKS, Check, walk_checks
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult, Trace, replay
from kepcheck.model.actions.next import find_step, next_steps
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.model.memo import caching
from kepcheck.model.state import State

__all__ = ["check_random", "PropertyViolation", "ReplayMismatch", "KepWalk", "machine_for", "PROFILES", "ENGINE"]

# --- settings profiles -----------------------------------------------------------------------------

_COMMON = dict(
    deadline=None,
    database=None,
    derandomize=True,
    print_blob=False,
    report_multiple_bugs=False,
    suppress_health_check=list(HealthCheck),
    verbosity=Verbosity.quiet,
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
)
PROFILES = {
    "ci": dict(max_examples=100, stateful_step_count=50, **_COMMON),
    "deep": dict(max_examples=2000, stateful_step_count=100, **_COMMON),
}
for _name, _values in PROFILES.items():
    settings.register_profile(f"kepcheck-{_name}", **_values)


# --- the state machine adapter ---------------------------------------------------------------------

class PropertyViolation(AssertionError):
    """An ``always`` check failed on a walk; carries the walk so far as ``(label, state)`` steps."""

    def __init__(self, name: str, steps: tuple):
        super().__init__(f"{name} violated after {len(steps) - 1} steps: "
                         + (" -> ".join(action.label() for action, _ in steps[1:]) or "in the initial state"))
        self.name, self.steps = name, steps


class BudgetReached(BaseException):
    """The run's time or state budget is spent. Not an ``Exception``: Hypothesis lets it through
    (it would take an ``Exception`` for a failure and shrink it), so the run stops where it is."""


class ReplayMismatch(AssertionError):
    """A trace recorded by a walk did not replay through the model to the same states: a model bug
    (nondeterminism or a label that does not identify its action)."""


@dataclass
class WalkStats:
    walks: int = 0
    transitions: int = 0
    deepest: int = 0
    states: set = field(default_factory=set)
    witnesses: dict = field(default_factory=dict)  # sometimes check name -> steps tuple
    successors: dict = field(default_factory=dict)  # state -> tuple of (action, next state), memoised
    violations: dict = field(default_factory=dict)  # always check name -> the first violating walk (steps)
    deadline: float | None = None  # the time budget, as a time.perf_counter() value
    max_states: int | None = None  # the state budget: distinct states visited
    progress: Callable | None = None  # called with a WalkProgress at the start of every walk

    def spent(self) -> str:
        """Which budget is spent ("" if none)."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            return "time"
        if self.max_states is not None and len(self.states) >= self.max_states:
            return "state"
        return ""

    def enabled(self, ctx: Context, state: State) -> tuple:
        """``next_steps`` of a state, memoised: walks and Hypothesis' shrinking revisit states often."""
        steps = self.successors.get(state)
        if steps is None:
            if len(self.successors) > 200_000:
                self.successors.clear()
            steps = self.successors[state] = tuple(next_steps(ctx, state))
        return steps


class KepWalk(RuleBasedStateMachine):
    """A random walk through one scenario and variant. Subclasses made by ``machine_for`` set the
    class attributes ``ctx``, ``watched`` (always checks), ``witnessing`` (sometimes checks) and
    ``stats``, and add one ``@invariant()`` per watched check."""

    ctx: Context
    watched: tuple = ()
    witnessing: tuple = ()
    stats: WalkStats

    @initialize()
    def start(self):
        self.state = initial_state(self.ctx)
        self.steps: list = [(None, self.state)]
        self.last_step = None  # (before, action, after) of the step just taken
        self.fresh = True  # the state changed since the invariants last ran
        self.stats.walks += 1
        self.stats.states.add(self.state)
        if self.stats.progress is not None:
            self.stats.progress(WalkProgress(self.stats.walks, self.stats.transitions, len(self.stats.states),
                                             self.stats.deepest))
        self._witness_state(self.state)

    @rule(data=st.data())
    def step(self, data):
        if self.stats.spent():
            raise BudgetReached()
        enabled = self.stats.enabled(self.ctx, self.state)
        if not enabled:
            note("deadlock: no action is enabled")
            self.fresh, self.last_step = False, None
            return
        action, after = data.draw(st.sampled_from(enabled).map(_Choice), label="action").pair
        note(action.label())
        before, self.state = self.state, after
        self.steps.append((action, after))
        self.last_step = (before, action, after)
        self.fresh = True
        self.stats.transitions += 1
        self.stats.deepest = max(self.stats.deepest, len(self.steps) - 1)
        self.stats.states.add(after)
        self._witness_state(after)
        for check in self.witnessing:
            if check.scope == "step" and check.name not in self.stats.witnesses \
                    and check.predicate(self.ctx, before, action, after):
                self.stats.witnesses[check.name] = tuple(self.steps)

    def _witness_state(self, state: State) -> None:
        for check in self.witnessing:
            if check.scope == "state" and check.name not in self.stats.witnesses and check.predicate(self.ctx, state):
                self.stats.witnesses[check.name] = tuple(self.steps)

    def _judge(self, check: Check) -> None:
        if not getattr(self, "fresh", False):
            return
        if check.scope == "state":
            holds = check.predicate(self.ctx, self.state)
        elif self.last_step is None:
            return
        else:
            holds = check.predicate(self.ctx, *self.last_step)
        if not holds:
            self.stats.violations.setdefault(check.name, tuple(self.steps))  # kept if shrinking runs out of budget
            raise PropertyViolation(check.name, tuple(self.steps))


class _Choice:
    """An enabled (action, successor) pair whose repr is the action label (Hypothesis prints it)."""

    __slots__ = ("pair",)

    def __init__(self, pair):
        self.pair = pair

    def __repr__(self) -> str:
        return self.pair[0].label()


def _invariant_for(check: Check):
    def judge(self):
        self._judge(check)

    judge.__name__ = check.name
    return invariant()(judge)


def machine_for(ctx: Context, watched: Iterable[Check], witnessing: Iterable[Check], stats: WalkStats) -> type:
    """A ``KepWalk`` subclass bound to one context, with one invariant per watched check."""
    watched = tuple(watched)
    namespace = {"ctx": ctx, "watched": watched, "witnessing": tuple(witnessing), "stats": stats}
    namespace.update({check.name: _invariant_for(check) for check in watched})
    return type(f"KepWalk_{ctx.scenario.name.replace('-', '_').replace('.', '_')}", (KepWalk,), namespace)


# --- the engine ------------------------------------------------------------------------------------

def _replayed(ctx: Context, steps: tuple) -> Trace:
    """The recorded walk, replayed through the model; it must reach the same states."""
    trace = Trace(tuple(steps))
    again = replay(ctx, trace.labels)
    if [state for _, state in again.steps] != [state for _, state in trace.steps]:
        raise ReplayMismatch(f"{ctx.scenario.name}: walk {trace.labels} replays to different states")
    return again


def _first_violation(ctx: Context, check: Check, labels: list[str]) -> int | None:
    """How many of ``labels`` it takes, replayed from the initial state, to violate ``check``; None
    if the labels stop being enabled, or never violate it."""
    state = initial_state(ctx)
    if check.scope == "state" and not check.predicate(ctx, state):
        return 0
    for taken, label in enumerate(labels, start=1):
        try:
            action, after = find_step(ctx, state, label)
        except ValueError:  # the label is not enabled here
            return None
        if check.scope == "state":
            if not check.predicate(ctx, after):
                return taken
        elif not check.predicate(ctx, state, action, after):
            return taken
        state = after
    return None


def _minimise(ctx: Context, check: Check, labels: list[str], deadline: float | None = None) -> list[str]:
    """Delete steps of a violating walk while it still violates ``check`` (one step at a time, each
    candidate replayed through the model), and cut it at the first violation. Hypothesis shrinks
    the choices it made; this finishes the job where deleting a step changes what the later choice
    indices mean (the enabled list differs), which Hypothesis' shrinker cannot see through."""
    cut = _first_violation(ctx, check, labels)
    if cut is None:
        raise ReplayMismatch(f"{check.name}: the walk {labels} does not violate it when replayed")
    labels = labels[:cut]
    improved = True
    while improved and (deadline is None or time.perf_counter() < deadline):  # (past it: a longer real trace)
        improved = False
        for i in range(len(labels)):
            candidate = labels[:i] + labels[i + 1:]
            cut = _first_violation(ctx, check, candidate)
            if cut is not None:
                labels, improved = candidate[:cut], True
                break
    return labels


@dataclass
class _Hunt:
    """What the runs of one random search found."""

    stats: WalkStats
    violations: dict  # check name -> the minimised Trace
    shrunk: dict  # check name -> length of the walk as Hypothesis shrank it
    runs: int
    budget: str = ""  # what was run, in words (the reason of every verdict)
    stopped: str = ""  # "time" or "state" when a budget stopped the walks


def _hunt(ctx: Context, checks: list, run_settings, seed: int, stats: WalkStats) -> _Hunt:
    """Run the walks until a run finds no violation of the checks still watched (see the module
    docstring), or the budget in ``stats`` is spent (``stopped`` says which)."""
    remaining = [c for c in checks if c.kind == ALWAYS]
    witnessing = [c for c in checks if c.kind == SOMETIMES]
    hunt = _Hunt(stats, {}, {}, 0)
    while True:
        hunt.runs += 1
        machine = hypothesis_seed(seed)(machine_for(ctx, remaining, witnessing, hunt.stats))
        try:
            run_state_machine_as_test(machine, settings=run_settings)
        except PropertyViolation as violation:
            check = next(c for c in remaining if c.name == violation.name)
            _record_violation(ctx, hunt, check, violation.steps)  # the walk as Hypothesis shrank it
            remaining = [c for c in remaining if c.name != check.name]
            if remaining and not stats.spent():
                continue
        except (BudgetReached, Flaky) as stop:  # a violation whose shrinking the budget cut short keeps its first walk
            if isinstance(stop, Flaky) and not stats.spent():
                raise  # Hypothesis replays a walk to report it: only a budget that ran out meanwhile explains a difference
            for check in [c for c in remaining if c.name in stats.violations]:
                _record_violation(ctx, hunt, check, stats.violations[check.name])
        hunt.stopped = stats.spent()
        return hunt


def _record_violation(ctx: Context, hunt: _Hunt, check: Check, steps: tuple) -> None:
    walk = _replayed(ctx, steps)
    hunt.violations[check.name] = replay(ctx, _minimise(ctx, check, walk.labels, hunt.stats.deadline))
    hunt.shrunk[check.name] = len(walk)


def check_random(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, *, examples: int | None = None,
                 steps: int | None = None, seed: int = 0, profile: str = "ci", differential=True,
                 budget: Budget = Budget(), progress: Callable | None = None) -> list[CheckResult]:
    """Random walks over ``ctx``: one ``CheckResult`` per property (catalog order), then one per
    differential check that runs (``differential``: True for every one that applies to the variant,
    False for none, or the names of those to run), all with ``engine="random"``; ``progress``, when
    given, is called with a ``WalkProgress`` at the start of every walk.

    ``examples`` walks of at most ``steps`` steps per run; ``None`` takes the profile's
    (``ci``: 100 walks x 50 steps, ``deep``: 2000 x 100). ``profile`` is ``"ci"`` or ``"deep"``
    (registered with Hypothesis as ``kepcheck-ci`` / ``kepcheck-deep``; both derandomized, no
    example database, no deadline). ``states`` counts the distinct states the
    walks visited, ``transitions`` the steps taken, ``depth`` the longest walk — over every run,
    shrinking included. ``budget``: the walks stop (before the next step) once ``timeout`` seconds
    have passed or ``max_states`` distinct states were visited; a violation already met is still
    reported (its walk minimised while time remains), and every reason names the budget reached.
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    started = time.perf_counter()
    properties = list(properties)
    checks = walk_checks(ctx, properties, differential)
    base = settings.get_profile(f"kepcheck-{profile}")
    examples = base.max_examples if examples is None else examples
    steps = base.stateful_step_count if steps is None else steps
    stats = WalkStats(deadline=started + budget.timeout if budget.timeout else None, max_states=budget.max_states,
                      progress=progress)
    with caching(ctx):
        hunt = _hunt(ctx, checks, settings(base, max_examples=examples, stateful_step_count=steps), seed, stats)
        stopped = ("" if not hunt.stopped else f"time budget of {budget.timeout:g} s reached; " if hunt.stopped == "time"
                   else f"state budget of {budget.max_states} reached; ")
        hunt.budget = (f"{stopped}random walks, not a proof: {hunt.runs} run(s) of up to {examples} walks x {steps} "
                       f"steps (seed {seed}, profile {profile}); {hunt.stats.walks} walks run (Hypothesis adds a few "
                       f"for its own phases), {hunt.stats.transitions} steps, {len(hunt.stats.states)} distinct states")
        return _results(ctx, properties, checks, hunt, time.perf_counter() - started)


def _results(ctx: Context, properties: list, checks: list, hunt: _Hunt, seconds: float) -> list[CheckResult]:
    stats, violations = hunt.stats, hunt.violations

    def found(name: str) -> str:
        return (f"found by random walks ({hunt.budget}); Hypothesis shrank the walk to {hunt.shrunk[name]} steps, "
                f"step deletion to {len(violations[name])}")

    def record(name: str, kind: str, ref: str) -> CheckResult:
        return CheckResult(
            scenario=ctx.scenario.name, variant=ctx.variant.name, property=name, kind=kind,
            engine="random", verdict=INCONCLUSIVE, states=len(stats.states), transitions=stats.transitions,
            depth=stats.deepest, seconds=seconds, reason=hunt.budget, ref=ref, mutants=tuple(sorted(ctx.mutants)),
        )

    results = []
    for spec in properties:
        result = record(spec.name, spec.kind, spec.ref)
        if spec.kind == EVENTUALLY:
            result.verdict, result.reason = NOT_CHECKED, "eventually-properties are not judged on finite random walks"
        elif spec.kind == ALWAYS and spec.name in violations:
            result.verdict, result.trace, result.reason = VIOLATED, violations[spec.name], found(spec.name)
        elif spec.kind == SOMETIMES and spec.name in stats.witnesses:
            result.verdict, result.trace, result.reason = HOLDS, _replayed(ctx, stats.witnesses[spec.name]), ""
        results.append(result)
    names = {c.name for c in checks}
    for name, _, _, ref in DIFFERENTIAL_CHECKS:
        if name in names:
            result = record(name, ALWAYS, ref)
            if name in violations:
                result.verdict, result.trace, result.reason = VIOLATED, violations[name], found(name)
            results.append(result)
    return results


class RandomEngine:
    """The random engine (``Engine`` protocol); ``--timeout`` and ``--max-states`` stop the walks."""

    name = "random"

    def check(self, ctx: Context, properties, *, budget: Budget, options: EngineOptions) -> list[CheckResult]:
        return check_random(ctx, properties, examples=options.examples, steps=options.steps, seed=options.seed,
                            profile=options.profile, budget=budget,
                            differential=True if options.differential is None else options.differential,
                            progress=None if options.progress is None else partial(options.progress, ctx))


ENGINE = RandomEngine()
