"""The resize lifecycle as a transition table, grouped by the actor that owns each transition.

Each row says: this actor's action may move a pod from one lifecycle status to another, with the
reference section that says so. Statuses are ``spec.vocabulary.LIFECYCLE_STATUSES`` (the per-pod
projection computed by ``model/lifecycle.py``). ``role`` says whose status changes: the pod the
action names (``self``) or another pod (``other``: a victim, a pod whose nomination is cleared,
a pod the kubelet's retry pass decides on).

Table checks (``tests/test_transitions.py``): every status is known; every source status has one
owning actor, except the ``SHARED_SOURCES`` listed with their reason; every action name exists in
the model; nothing enters ``Absent``. Every step the model explores is checked against the table
(step conformance, STYLE.md R3).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Transition", "TRANSITIONS", "SHARED_SOURCES", "REMOVAL_STATUSES", "RESIZE_REQUEST_ACTION"]


@dataclass(frozen=True)
class Transition:
    actor: str
    action: str
    source: str
    target: str
    role: str
    ref: str


def _rows(actor: str, action: str, role: str, ref: str, *pairs: tuple[str, str]) -> list[Transition]:
    return [Transition(actor, action, source, target, role, ref) for source, target in pairs]


_RESIZABLE = ("Running", "ResizeRequested", "Deferred", "Preempting", "Superseded", "InProgress", "Infeasible")
_LIVE_ON_NODE = ("Bound",) + _RESIZABLE

TRANSITIONS: tuple[Transition, ...] = tuple(
    # --- user / controllers ----------------------------------------------------------------------
    _rows("user", "RequestResize", "self", "reference §2.1, §2.5 (resize B supersedes A)",
          ("Running", "ResizeRequested"), ("InProgress", "ResizeRequested"), ("Infeasible", "Superseded"),
          ("Deferred", "Superseded"), ("Preempting", "Superseded"))
    + _rows("user", "CreatePod", "self", "DESIGN.md §2 (environment)", ("Absent", "Pending"))
    + _rows("user", "DeletePod", "self", "DESIGN.md §2 (environment)",
            ("Pending", "Gone"), ("Nominated", "Gone"), *((s, "Terminating") for s in _LIVE_ON_NODE))
    # --- kube-scheduler -------------------------------------------------------------------------
    + _rows("scheduler", "BindPod", "self", "reference §3.2", ("Pending", "Bound"), ("Nominated", "Bound"))
    + _rows("scheduler", "PreemptForPod", "self", "reference §3.3 (nominatedNodeName)",
            ("Pending", "Nominated"), ("Nominated", "Nominated"))
    + _rows("scheduler", "PreemptForPod", "other", "reference §3.3 (victims), §7.4 P-5 (lower nominations cleared)",
            *((s, "Terminating") for s in _LIVE_ON_NODE), ("Nominated", "Pending"))
    + _rows("scheduler", "PreemptForResize", "self", "reference §4.3 (5), §4.4", ("Deferred", "Preempting"))
    + _rows("scheduler", "PreemptForResize", "other", "reference §4.3 (5), §7.4 P-5",
            *((s, "Terminating") for s in _LIVE_ON_NODE), ("Nominated", "Pending"))
    # --- kubelet --------------------------------------------------------------------------------
    + _rows("kubelet", "AdmitPod", "self", "reference §2.1", ("Bound", "Running"))
    + _rows("kubelet", "RejectPod", "self", "reference §2.1 (OutOfcpu / OutOfmemory)", ("Bound", "Rejected"))
    + [
        row
        for action in ("RetryPendingResizes", "PeriodicRetryPendingResizes")
        for row in _rows(
            "kubelet", action, "other", "reference §2.2, §2.3, §2.5",
            ("ResizeRequested", "InProgress"), ("ResizeRequested", "Deferred"), ("ResizeRequested", "Running"),
            ("Deferred", "InProgress"), ("Deferred", "Running"), ("Preempting", "InProgress"), ("Preempting", "Running"),
            ("Superseded", "InProgress"), ("Superseded", "Deferred"), ("Superseded", "Preempting"),
            ("Superseded", "Running"),
        )
    ]
    + _rows("kubelet", "ActuateResize", "self", "reference §2.6", ("InProgress", "Running"))
    + _rows("kubelet", "FinishTermination", "self", "reference §2.3 (pods_removed), KEP-5836 §Kubelet-Scheduler Preemption Interaction",
            ("Terminating", "Gone"))
)

# Statuses that leave the node: any actor that deletes (user) or evicts (scheduler) may cause them.
REMOVAL_STATUSES = ("Terminating", "Gone")
# A user may supersede a resize in any status; that is the "resize B supersedes A" of DESIGN.md §2.
RESIZE_REQUEST_ACTION = "RequestResize"

# Source statuses with more than one owner once removals and resize requests are set aside.
SHARED_SOURCES = {
    "Deferred": "the scheduler preempts for it while the kubelet may allocate it: the race KEP-5836 "
                "§Reconsideration Race Conditions discusses",
}
