"""The per-pod projection of a state onto the resize lifecycle (``spec/vocabulary.LIFECYCLE_STATUSES``).

This is what the transition table (``spec/transitions.py``) and the lifecycle diagram speak
about: a pod is Deferred, Preempting (the scheduler evicted victims for its resize), Superseded
(a newer spec B arrived while A was Deferred and the kubelet has not looked at B yet),
InProgress, ... Precedence when several hold: Superseded, Infeasible, Preempting, Deferred,
ResizeRequested, InProgress, Running.
"""

from __future__ import annotations

from kepcheck.spec.vocabulary import Phase, ResizeReason

from kepcheck.model.state import NO_NODE, PodState

__all__ = ["lifecycle_status"]

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
