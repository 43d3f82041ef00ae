"""The one result type and the one trace type shared by every engine (STYLE.md R7).

A ``Trace`` is a list of steps ``(action label or None for the initial state, state)``; ``loop``
is the index where a lasso's cycle starts (liveness), ``None`` for a finite trace. Every trace
replays through the model (``replay``) from its scenario's initial state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["HOLDS", "VIOLATED", "INCONCLUSIVE", "NOT_CHECKED", "PROVED", "Trace", "CheckResult", "replay"]

HOLDS = "holds"
VIOLATED = "violated"
INCONCLUSIVE = "inconclusive"
NOT_CHECKED = "not-checked"
PROVED = "proved"


@dataclass(frozen=True)
class Trace:
    steps: tuple  # ((label | None, State), ...)
    loop: int | None = None

    @property
    def labels(self) -> list[str]:
        return [label for label, _ in self.steps[1:]]

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
    reason: str = ""  # why inconclusive / not checked; the manifest's reason for an expected violation
    ref: str = ""
    mutants: tuple = ()
    fairness: tuple = ()  # eventually: the fairness groups assumed

    @property
    def matches(self) -> bool:
        """The verdict agrees with the expectation (a proof agrees with "holds")."""
        return self.expected is None or self.verdict == self.expected or (
            self.verdict == PROVED and self.expected == HOLDS)

    @property
    def differs(self) -> bool:
        """A definite verdict that contradicts the expectation (inconclusive and not-checked never do)."""
        return self.verdict not in (INCONCLUSIVE, NOT_CHECKED) and not self.matches


def replay(ctx, labels: list[str]) -> Trace:
    """Rebuild a trace from action labels through the model (raises ValueError if one is not enabled)."""
    from kepcheck.model.actions import apply_action
    from kepcheck.model.context import initial_state

    state = initial_state(ctx)
    steps: list[tuple[Any, Any]] = [(None, state)]
    for label in labels:
        state = apply_action(ctx, state, label)
        steps.append((label, state))
    return Trace(tuple(steps))
