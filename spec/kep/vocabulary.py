"""The vocabulary of the model, in Kubernetes words.

Pod phases are the model's own coarse phases of a pod object (the API phase plus where it stands
with scheduler and kubelet); resize conditions are the pod conditions of KEP-1287 as of v1.33+
(docs/reference.md §2.4); actors own the actions (docs/reference.md §2, §3, §4).

Left out: pod phases Succeeded/Unknown, the PodScheduled condition (KEP-5836 never touches it,
docs/reference.md §4.4), limits and QoS classes (the model's pods are Burstable with requests only).
"""

from __future__ import annotations

from enum import IntEnum, StrEnum

__all__ = ["Phase", "ResizeReason", "Queue", "Actor", "RESOURCE_NAMES", "LIFECYCLE_STATUSES"]


class Phase(IntEnum):
    """Where a pod stands. Values are small ints so that states stay compact."""

    ABSENT = 0  # not created yet (an arrival the environment may create)
    PENDING = 1  # created, spec.nodeName empty: in the scheduling queue
    BOUND = 2  # bound by the scheduler, not yet admitted by the kubelet
    RUNNING = 3  # admitted by the kubelet and running
    TERMINATING = 4  # deletionTimestamp set (deleted by a user or evicted); still holds its allocation
    GONE = 5  # removed from the API and from the node
    REJECTED = 6  # the kubelet refused admission (phase Failed, reason OutOfcpu/OutOfmemory)


class ResizeReason(IntEnum):
    """Reason of the ``PodResizePending`` condition (absent = NONE). docs/reference.md §2.4, §1.2."""

    NONE = 0
    DEFERRED = 1
    INFEASIBLE = 2


class Queue(IntEnum):
    """Where the kube-scheduler keeps the pod (docs/reference.md §3.1). Backoff is folded into ACTIVE."""

    NOT_QUEUED = 0
    ACTIVE = 1  # activeQ / backoffQ: will be popped by a scheduling cycle
    UNSCHEDULABLE = 2  # the unschedulable pool: waits for a registered event or the periodic flush


class Actor(StrEnum):
    """Who performs an action (the transition table and the action list are grouped by actor). A
    ``StrEnum``: ``Actor.KUBELET == "kubelet"``, which is how reports print it."""

    USER = "user"  # users and controllers: the environment, bounded by the scenario's budget
    SCHEDULER = "scheduler"  # kube-scheduler
    KUBELET = "kubelet"  # the kubelet of the pod's node


RESOURCE_NAMES = ("cpu", "memory")

# The per-pod projection used by the resize lifecycle table (spec/kep/transitions.py) and the
# lifecycle diagram. Each name is what a reviewer would call the pod's situation.
LIFECYCLE_STATUSES = (
    "Absent",  # not created yet
    "Pending",  # waiting for the scheduler (no node)
    "Nominated",  # pending with status.nominatedNodeName set (victims terminating for it)
    "Bound",  # bound, waiting for kubelet admission
    "Running",  # running, desired == allocated == actual
    "ResizeRequested",  # desired != allocated, the kubelet has not decided yet
    "Deferred",  # PodResizePending=Deferred, nobody preempted for it (yet)
    "Preempting",  # Deferred and the scheduler evicted victims for it (resize-preemption promise)
    "Superseded",  # a newer resize B arrived while A was Deferred/Infeasible; the kubelet has not decided on B yet
    "Infeasible",  # PodResizePending=Infeasible
    "InProgress",  # PodResizeInProgress: allocated != actual
    "Terminating",  # deleted or evicted, still on the node
    "Gone",  # removed
    "Rejected",  # refused by the kubelet at admission (OutOfcpu / OutOfmemory)
)
