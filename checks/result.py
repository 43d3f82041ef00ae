"""The one result type and the one trace type shared by every engine (docs/style.md R7).

A ``Trace`` is a list of steps ``(action, state)``: ``None`` for the initial state, then the
``Action`` value (``model/step.py``) that led to each state; ``loop`` is the index where a lasso's
cycle starts (liveness), ``None`` for a finite trace. Every trace replays through the model
(``replay``) from its scenario's initial state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kepcheck.model.actions.next import find_step
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state

__all__ = ["HOLDS", "VIOLATED", "INCONCLUSIVE", "NOT_CHECKED", "PROVED", "SYMBOLS", "Trace", "CheckResult",
           "closed_loop", "replay", "EngineError"]

HOLDS = "holds"
VIOLATED = "violated"
INCONCLUSIVE = "inconclusive"
NOT_CHECKED = "not-checked"
PROVED = "proved"  # induction: holds at every depth
SYMBOLS = {HOLDS: "✓", VIOLATED: "✗", INCONCLUSIVE: "≈", NOT_CHECKED: "–", PROVED: "∎"}


class Progress(NamedTuple):
    """Where a running search is, as its core reports it (``progress(Progress)``)."""

    states: int  # distinct states so far
    transitions: int
    depth: int  # the breadth-first level being reached
    frontier: int  # states waiting to be expanded
    seconds: float  # since the search started

    def describe(self) -> str:
        rate = self.states / self.seconds if self.seconds > 0 else 0.0
        return (f"{self.states:,} states ({rate:,.0f}/s), {self.transitions:,} transitions, depth {self.depth}, "
                f"frontier {self.frontier:,}")


class EngineError(RuntimeError):
    """An engine produced something the model does not confirm (an engine bug), e.g. a trace that
    does not replay."""


@dataclass(frozen=True)
class Trace:
    steps: tuple  # ((None, State), (Action, State), ...)
    loop: int | None = None

    @property
    def actions(self) -> list:
        return [action for action, _ in self.steps[1:]]

    @property
    def labels(self) -> list[str]:
        return [action.label() for action, _ in self.steps[1:]]

    def __len__(self) -> int:
        """Number of actions (the initial state is not a step)."""
        return len(self.steps) - 1


@dataclass
class CheckResult:
    scenario: str
    variant: str
    property: str
    kind: str
    engine: str
    verdict: str
    expected: str | None = None
    states: int = 0
    transitions: int = 0
    depth: int = 0
    seconds: float = 0.0
    trace: Trace | None = None
    reason: str = ""  # why inconclusive / not checked / violated (the engine's explanation or the manifest's)
    ref: str = ""
    mutants: tuple = ()
    fairness: tuple = ()  # eventually: the fairness groups assumed
    expected_reason: str = ""  # the manifest's reason for an expected exception (empty otherwise)
    expected_ref: str = ""

    @property
    def matches(self) -> bool:
        """The verdict agrees with the expectation (a proof agrees with "holds")."""
        return self.expected is None or self.verdict == self.expected or (
            self.verdict == PROVED and self.expected == HOLDS)

    @property
    def differs(self) -> bool:
        """A definite verdict that contradicts the expectation (inconclusive and not-checked never do)."""
        return self.verdict not in (INCONCLUSIVE, NOT_CHECKED) and not self.matches

    def explanation(self) -> tuple[str, str]:
        """(reason, ref) to show: the manifest's when it records this cell as an exception, else the
        result's own (the engine's explanation)."""
        if self.expected is not None and self.expected_reason:
            return self.expected_reason, self.expected_ref
        return self.reason, self.ref

def closed_loop(trace: Trace, loop: int | None = None) -> Trace:
    """The trace as a lasso when it is one: ``loop`` when given (an ITF file's), else the step whose
    state the last step returns to, if any; unchanged otherwise."""
    if trace.loop is not None or len(trace) == 0:
        return trace
    if loop is None:
        last = trace.steps[-1][1]
        loop = next((number for number, (_, state) in enumerate(trace.steps[:-1]) if state == last), None)
    return trace if loop is None else Trace(trace.steps, loop=loop)


def replay(ctx: Context, actions) -> Trace:
    """Rebuild a trace from ``Action`` values (or their labels) through the model; ValueError if one
    is not enabled where it is taken, or is not a label."""
    state = initial_state(ctx)
    steps: list = [(None, state)]
    for taken in actions:
        action, state = find_step(ctx, state, taken)
        steps.append((action, state))
    return Trace(tuple(steps))
