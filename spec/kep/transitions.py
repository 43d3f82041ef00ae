"""The actions of the model and the resize lifecycle as a transition table, grouped by actor.

``ACTIONS`` lists every action the model has, grouped by the actor that performs it, in the order
the model tries them (``kepcheck.model.actions.next.NEXT`` is derived from it, so breadth-first search
and every trace follow this order). An action named ``PreemptForResize`` here is the function
``preempt_for_resize`` in the model module of its actor (``model/actions/user.py``, ``model/actions/scheduler.py``,
``model/actions/kubelet.py``) and the label ``PreemptForResize(pod=web)`` in a trace.

Each row of ``TRANSITIONS`` says: this actor's action may move a pod from one lifecycle status to another, with the
reference section that says so. Statuses are ``spec.kep.vocabulary.LIFECYCLE_STATUSES`` (the per-pod
projection computed by ``model/lifecycle.py``). ``role`` says whose status changes: the pod the
action names (``self``) or another pod (``other``: a victim, a pod whose nomination is cleared,
a pod the kubelet's retry pass decides on).

Table checks (``tests/test_transitions.py``): every status is known; every source status has one
owning actor, except the ``SHARED_SOURCES`` listed with their reason; every action name exists in
the model; nothing enters ``Absent``. Every step the model explores is checked against the table
(step conformance, docs/style.md R3).
"""

from __future__ import annotations

from dataclasses import dataclass

from kepcheck.spec.kep.vocabulary import Actor

__all__ = ["ActionSpec", "ACTIONS", "Transition", "TRANSITIONS", "SHARED_SOURCES", "REMOVAL_STATUSES",
           "RESIZE_REQUEST_ACTION"]


@dataclass(frozen=True)
class ActionSpec:
    name: str
    actor: Actor
    meaning: str


def _actions(actor: Actor, *rows: tuple[str, str]) -> list[ActionSpec]:
    return [ActionSpec(name, actor, meaning) for name, meaning in rows]


ACTIONS: tuple[ActionSpec, ...] = tuple(
    _actions(Actor.USER,
             ("RequestResize", "a user PATCHes the pod's /resize subresource (a second one supersedes the first)"),
             ("CreatePod", "a controller creates a pending pod"),
             ("DeletePod", "a user deletes a pod"),
             ("RestartScheduler", "the kube-scheduler restarts and loses its in-memory state"),
             ("RecreatePod", "a controller recreates a pod that is gone, under the same name, as a pending pod"))
    + _actions(Actor.SCHEDULER,
               ("BindPod", "a scheduling cycle binds a pending pod that fits"),
               ("PreemptForPod", "PostFilter evicts victims for a pending pod and sets nominatedNodeName"),
               ("PodUnschedulable", "a pending pod that fits nowhere and cannot preempt waits in the unschedulable pool"),
               ("ParkDeferredPod", "a Deferred resize that fits in the scheduler's view is parked for the kubelet"),
               ("BindDeferredPod", "a Deferred resize that fits in the scheduler's view passes a no-op Bind and "
                                   "leaves the queue (beta)"),
               ("PreemptForResize", "the restricted cycle of a Deferred pod evicts victims on its own node"),
               ("ResizeUnschedulable", "a Deferred resize that no victims can make room for waits in the pool"),
               ("FlushUnschedulablePod", "the periodic flush moves a pod from the unschedulable pool to activeQ"),
               ("AbortDeferredCycle", "the cache's copy of a popped Deferred pod is gone or no longer Deferred: "
                                      "the cycle aborts and the pod leaves the queue (beta)"),
               ("DeliverPodUpdate", "the scheduler's informer delivers a pod's update to its cache, queue and "
                                    "handlers (stale view)"),
               ("UpdatePodInCache", "the handler puts a queued Deferred pod's update into the cache (stale view)"),
               ("UpdatePodInSchedulingQueue", "the handler puts the update into the queue's copy and reacts "
                                              "(stale view)"),
               ("EvictVictim", "a preemption's DisruptionTarget and DELETE calls for one victim complete "
                               "(asynchronous preemption)"))
    + _actions(Actor.KUBELET,
               ("AdmitPod", "the kubelet admits a bound pod that fits"),
               ("RejectPod", "the kubelet rejects a bound pod that does not fit (OutOfcpu/OutOfmemory)"),
               ("RetryPendingResizes", "the kubelet retries pending resizes on a pod update or removal"),
               ("PeriodicRetryPendingResizes", "the kubelet's periodic retry of pending resizes"),
               ("ActuateResize", "the runtime applies an allocated resize (actual := allocated)"),
               ("FinishTermination", "a terminating pod finishes its graceful termination and leaves the node"))
)


@dataclass(frozen=True)
class Transition:
    actor: Actor
    action: str
    source: str
    target: str
    role: str
    ref: str


def _rows(actor: Actor, action: str, role: str, ref: str, *pairs: tuple[str, str]) -> list[Transition]:
    return [Transition(actor, action, source, target, role, ref) for source, target in pairs]


_RESIZABLE = ("Running", "ResizeRequested", "Deferred", "Preempting", "Superseded", "InProgress", "Infeasible")
_LIVE_ON_NODE = ("Bound",) + _RESIZABLE

TRANSITIONS: tuple[Transition, ...] = tuple(
    # --- user / controllers ----------------------------------------------------------------------
    _rows(Actor.USER, "RequestResize", "self", "docs/reference.md §2.1, §2.5 (resize B supersedes A)",
          ("Running", "ResizeRequested"), ("InProgress", "ResizeRequested"), ("Infeasible", "Superseded"),
          ("Deferred", "Superseded"), ("Preempting", "Superseded"))
    + _rows(Actor.USER, "CreatePod", "self", "docs/design.md §2 (environment)", ("Absent", "Pending"))
    + _rows(Actor.USER, "DeletePod", "self", "docs/design.md §2 (environment)",
            ("Pending", "Gone"), ("Nominated", "Gone"), *((s, "Terminating") for s in _LIVE_ON_NODE))
    + _rows(Actor.USER, "RecreatePod", "self", "docs/design.md §2 (environment); a StatefulSet controller", ("Gone", "Pending"))
    # --- kube-scheduler -------------------------------------------------------------------------
    + _rows(Actor.SCHEDULER, "BindPod", "self", "docs/reference.md §3.2", ("Pending", "Bound"), ("Nominated", "Bound"))
    + _rows(Actor.SCHEDULER, "PreemptForPod", "self", "docs/reference.md §3.3 (nominatedNodeName)",
            ("Pending", "Nominated"), ("Nominated", "Nominated"))
    + _rows(Actor.SCHEDULER, "PreemptForPod", "other", "docs/reference.md §3.3 (victims), §7.4 P-5 (lower nominations cleared)",
            *((s, "Terminating") for s in _LIVE_ON_NODE), ("Nominated", "Pending"))
    + _rows(Actor.SCHEDULER, "PreemptForResize", "self", "docs/reference.md §4.3 (5), §4.4", ("Deferred", "Preempting"))
    + _rows(Actor.SCHEDULER, "PreemptForResize", "other", "docs/reference.md §4.3 (5), §7.4 P-5",
            *((s, "Terminating") for s in _LIVE_ON_NODE), ("Nominated", "Pending"))
    + _rows(Actor.SCHEDULER, "EvictVictim", "self", "docs/reference.md §3.1 (asynchronous preemption), §3.3 'Execution'",
            *((s, "Terminating") for s in _LIVE_ON_NODE))
    # --- kubelet --------------------------------------------------------------------------------
    + _rows(Actor.KUBELET, "AdmitPod", "self", "docs/reference.md §2.1", ("Bound", "Running"))
    + _rows(Actor.KUBELET, "RejectPod", "self", "docs/reference.md §2.1 (OutOfcpu / OutOfmemory)", ("Bound", "Rejected"))
    + [
        row
        for action in ("RetryPendingResizes", "PeriodicRetryPendingResizes")
        for row in _rows(
            Actor.KUBELET, action, "other", "docs/reference.md §2.2, §2.3, §2.5",
            ("ResizeRequested", "InProgress"), ("ResizeRequested", "Deferred"), ("ResizeRequested", "Running"),
            ("Deferred", "InProgress"), ("Deferred", "Running"), ("Preempting", "InProgress"), ("Preempting", "Running"),
            ("Superseded", "InProgress"), ("Superseded", "Deferred"), ("Superseded", "Preempting"),
            ("Superseded", "Running"),
        )
    ]
    + [
        row
        for action in ("RetryPendingResizes", "PeriodicRetryPendingResizes")
        for row in _rows(Actor.KUBELET, action, "other", "docs/design.md §3 stale view: the scheduler preempted for the "
                         "resize on an old copy before it saw the new spec, which the kubelet now defers",
                         ("ResizeRequested", "Preempting"))
    ]
    + [
        row
        for action in ("RetryPendingResizes", "PeriodicRetryPendingResizes")
        for row in _rows(Actor.KUBELET, action, "other", "docs/reference.md §2.2 (podResizesAdmitHandler: a Guaranteed pod "
                         "beside a static CPU or memory manager)",
                         ("ResizeRequested", "Infeasible"), ("Superseded", "Infeasible"))
    ]
    + _rows(Actor.KUBELET, "ActuateResize", "self", "docs/reference.md §2.6", ("InProgress", "Running"))
    + _rows(Actor.KUBELET, "FinishTermination", "self", "docs/reference.md §2.3 (pods_removed), KEP-5836 §Kubelet-Scheduler Preemption Interaction",
            ("Terminating", "Gone"))
)

# Statuses that leave the node: any actor that deletes (user) or evicts (scheduler) may cause them.
REMOVAL_STATUSES = ("Terminating", "Gone")
# A user may supersede a resize in any status; that is the "resize B supersedes A" of docs/design.md §2.
RESIZE_REQUEST_ACTION = "RequestResize"

# Source statuses with more than one owner once removals and resize requests are set aside.
SHARED_SOURCES = {
    "Deferred": "the scheduler preempts for it while the kubelet may allocate it: the race KEP-5836 "
                "§Reconsideration Race Conditions discusses",
}
