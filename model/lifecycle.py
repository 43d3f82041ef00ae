"""The per-pod projection of a state onto the resize lifecycle (``spec/vocabulary.LIFECYCLE_STATUSES``).

This is what the transition table (``spec/kep/transitions.py``) and the lifecycle diagram speak
about: a pod is Deferred, Preempting (the scheduler evicted victims for its resize), Superseded
(a newer spec B arrived while A was Deferred and the kubelet has not looked at B yet),
InProgress, ... Precedence when several hold: Superseded, Infeasible, Preempting, Deferred,
ResizeRequested, InProgress, Running.

``LifecycleRecorder`` is the step hook that records one exploration's projection: the statuses
reached, the status changes of every transition (per actor and action) and how often each action
fired; ``checks/outputs/lifecycle.py`` draws the diagram and the action coverage from its records.
"""

from __future__ import annotations

from collections import Counter

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.actions.next import ACTOR_OF
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.model.state import NO_NODE, PodState

__all__ = ["lifecycle_status", "LifecycleRecorder"]

_FIXED = {Phase.ABSENT: "Absent", Phase.BOUND: "Bound", Phase.TERMINATING: "Terminating", Phase.GONE: "Gone",
          Phase.REJECTED: "Rejected"}


def lifecycle_status(pod: PodState) -> str:
    if pod.phase in _FIXED:
        return _FIXED[pod.phase]
    if pod.phase == Phase.PENDING:
        return "Nominated" if pod.nominated != NO_NODE else "Pending"
    if pod.resize != ResizeReason.NONE and not pod.observed:
        return "Superseded"
    if pod.resize == ResizeReason.INFEASIBLE:
        return "Infeasible"
    if pod.resize == ResizeReason.DEFERRED:
        return "Preempting" if any(pod.promised) else "Deferred"
    if not pod.observed:
        return "ResizeRequested"
    if pod.in_progress:
        return "InProgress"
    return "Running"


class LifecycleRecorder:
    """Records one exploration of one context: the statuses reached, the status changes of every
    transition (per actor and action), and how often each action fired."""

    def __init__(self, ctx: Context):
        self.scenario = ctx.scenario.name
        self.initial = {lifecycle_status(pod) for pod in initial_state(ctx).pods}
        self.reached = set(self.initial)
        self.edges: dict = {}  # (source, target) -> {actor: {action names}}
        self.action_counts: Counter = Counter()
        self.transitions = 0
        self._statuses: dict = {}

    def _status(self, state) -> tuple:
        statuses = self._statuses.get(state)
        if statuses is None:
            statuses = self._statuses[state] = tuple(lifecycle_status(pod) for pod in state.pods)
            self.reached.update(statuses)
        return statuses

    def __call__(self, before, action, after) -> None:
        self.transitions += 1
        self.action_counts[action.name] += 1
        old_statuses, new_statuses = self._status(before), self._status(after)
        for old, new in zip(old_statuses, new_statuses):
            if old != new:
                self.edges.setdefault((old, new), {}).setdefault(ACTOR_OF.get(action.name, "?"), set()).add(action.name)
