"""The actions of the model, one function per action, grouped by the actor that performs it.

Each function takes ``(ctx, state)`` and yields ``(Action, next_state)`` for every enabled
instance: guard first, then the finite choice (which pod, which node, which menu entry), then the
effect, which changes only the fields it names (``dataclasses.replace``). ``NEXT`` lists them in
the order of the transition table (``spec/transitions.py``).

After every effect, ``scheduler_observes`` applies what the kube-scheduler's event handlers do on
the resulting pod updates (synchronous informer: DESIGN.md §3 "scheduler view: synchronous"):
enqueue a pod that gains PodResizePending=Deferred, drop it when the condition disappears,
requeue unschedulable pods on the events their plugins register (reference §3.1, §3.5, §4.4,
§7.3 S-6..S-18).

Time is abstract: backoff, the 5-minute flush and the kubelet's periodic retry are actions that
may happen at any time (``FlushUnschedulablePod``, ``PeriodicRetryPendingResizes``).

Left out: a controller recreating evicted pods, node add/remove and allocatable changes, kubelet
restarts, limits/QoS, the ``pods_added`` retry trigger (a new pod only takes room, it never lets
a pending resize through), PodDisruptionBudgets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Iterator

from spec.vocabulary import Phase, Queue, ResizeReason

from model.context import Context
from model.expr import veq, vle, vmax
from model.preemption import pick_node, select_victims
from model.state import NO_NODE, NO_POD, PodState, State
from model.views import (
    fits_deferred_pod, fits_new_pod, kubelet_fits_admission, kubelet_fits_resize, scheduler_footprint,
)

__all__ = ["Action", "NEXT", "ACTION_NAMES", "ACTOR_OF", "next_steps", "scheduler_observes", "apply_action",
           "head_of_queue", "resize_preemption_eligible"]


@dataclass(frozen=True, slots=True)
class Action:
    """An action label with its parameters, e.g. ``PreemptForResize(pod=web)``."""

    name: str
    params: tuple = ()  # ((key, value), ...) in a fixed order; values are names or numbers

    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in self.params)})"

    def __str__(self) -> str:
        return self.label()


def _set(state: State, changes: dict[int, dict]) -> State:
    pods = list(state.pods)
    for index, fields in changes.items():
        pods[index] = replace(pods[index], **fields)
    return replace(state, pods=tuple(pods))


def _use_event(state: State, event: int) -> State:
    return replace(state, env_used=state.env_used | (1 << event), env_events=state.env_events + 1)


def _events_enabled(ctx: Context, state: State, kind: str):
    """Menu entries of ``kind`` that are still available within the environment budget."""
    if state.env_events >= ctx.max_events:
        return
    for index, event in enumerate(ctx.events):
        if event.kind == kind and not state.env_used & (1 << index):
            yield index, event


# --- user / controllers (environment) ------------------------------------------------------------

def request_resize(ctx: Context, state: State):
    """A user PATCHes the pod's /resize subresource: desired changes (reference §2.1, §2.5).

    Requests above the node's allocatable are rejected by the API server since v1.36 and never
    reach the pod; the scenario loader refuses them.
    """
    for event_index, event in _events_enabled(ctx, state, "resize"):
        pod = state.pods[event.pod]
        if pod.phase != Phase.RUNNING or pod.desired == event.requests:
            continue
        after = _set(_use_event(state, event_index), {event.pod: dict(desired=event.requests, observed=False)})
        yield Action("RequestResize", (("pod", ctx.names[event.pod]), ("requests", f"[{ctx.format(event.requests)}]"))), after


def create_pod(ctx: Context, state: State):
    """A controller creates a pending pod (an arrival of the scenario)."""
    for event_index, event in _events_enabled(ctx, state, "arrival"):
        if state.pods[event.pod].phase != Phase.ABSENT:
            continue
        after = _set(_use_event(state, event_index), {event.pod: dict(phase=Phase.PENDING, queue=Queue.ACTIVE)})
        yield Action("CreatePod", (("pod", ctx.names[event.pod]),)), after


def delete_pod(ctx: Context, state: State):
    """A user deletes a pod: a pending pod disappears, a pod on a node starts terminating."""
    for event_index, event in _events_enabled(ctx, state, "deletion"):
        pod = state.pods[event.pod]
        if pod.phase == Phase.PENDING:
            change = dict(phase=Phase.GONE, queue=Queue.NOT_QUEUED, nominated=NO_NODE)
        elif pod.phase in (Phase.BOUND, Phase.RUNNING):
            change = dict(phase=Phase.TERMINATING, queue=Queue.NOT_QUEUED)
        else:
            continue
        yield Action("DeletePod", (("pod", ctx.names[event.pod]),)), _set(_use_event(state, event_index), {event.pod: change})


def restart_scheduler(ctx: Context, state: State):
    """The kube-scheduler restarts: its queue and in-memory state are lost; on start-up the AddPod
    handler re-enqueues pending and Deferred pods (reference §4.3 (1), §7.3 S-17)."""
    for event_index, _ in _events_enabled(ctx, state, "restart"):
        changes = {}
        for i, pod in enumerate(state.pods):
            queue = Queue.ACTIVE if pod.phase == Phase.PENDING else Queue.NOT_QUEUED
            changes[i] = dict(queue=queue, assumed=(), tracking=False)
        yield Action("RestartScheduler"), _set(_use_event(state, event_index), changes)


# --- kube-scheduler --------------------------------------------------------------------------------

def head_of_queue(ctx: Context, state: State) -> list[int]:
    """Pods the next scheduling cycle may pop: the highest-priority pods in activeQ (PrioritySort;
    pods of equal priority in any order)."""
    active = [i for i, pod in enumerate(state.pods) if pod.queue == Queue.ACTIVE]
    if not active:
        return []
    top = max(ctx.priorities[i] for i in active)
    return [i for i in active if ctx.priorities[i] == top]


def _is_pending(pod: PodState) -> bool:
    return pod.phase == Phase.PENDING


def _is_deferred(pod: PodState) -> bool:
    return pod.phase == Phase.RUNNING and pod.resize == ResizeReason.DEFERRED


def _preemption_victims_waiting(ctx: Context, state: State, claimant: int, node: int) -> bool:
    """A lower-priority pod on ``node`` is terminating because of preemption (reference §3.3
    'Eligibility': the preemptor waits for its nominated node's victims)."""
    priority = ctx.priorities[claimant]
    return any(
        pod.phase == Phase.TERMINATING and pod.node == node and pod.preempted_by != NO_POD
        and ctx.priorities[i] < priority
        for i, pod in enumerate(state.pods)
    )


def _pending_pod_eligible(ctx: Context, state: State, claimant: int) -> bool:
    """PodEligibleToPreemptOthers for a pending pod (reference §3.3)."""
    if ctx.never_preempts[claimant]:
        return False
    nominated = state.pods[claimant].nominated
    return nominated == NO_NODE or not _preemption_victims_waiting(ctx, state, claimant, nominated)


def resize_preemption_eligible(ctx: Context, state: State, claimant: int) -> bool:
    """May this Deferred pod preempt now? ``preemptionPolicy: Never`` forbids it (reference §4.3
    (10)); the double-preemption guard of the variant may make it wait (reference §4.6)."""
    if ctx.never_preempts[claimant]:
        return False
    pod = state.pods[claimant]
    guard = ctx.variant.double_preemption_guard
    if ctx.has("guard-ignores-terminating-victims"):
        return True
    if guard == "in-memory":
        return not (pod.tracking and any(
            other.phase == Phase.TERMINATING and other.preempted_by == claimant for other in state.pods))
    if guard == "nominated-node-name":
        return pod.nominated != pod.node or not _preemption_victims_waiting(ctx, state, claimant, pod.node)
    if guard == "node-name-as-nomination":
        return not _preemption_victims_waiting(ctx, state, claimant, pod.node)
    return True


def _fitting_nodes(ctx: Context, state: State, claimant: int) -> list[int]:
    """Nodes that pass the filter; a pod with a nominated node that fits goes there (reference §3.4)."""
    nominated = state.pods[claimant].nominated
    if nominated != NO_NODE and fits_new_pod(ctx, state, claimant, nominated):
        return [nominated]
    return [n for n in ctx.node_range if fits_new_pod(ctx, state, claimant, n)]


def _pending_preemption(ctx: Context, state: State, claimant: int):
    """(node, victims) the PostFilter would choose for a pending pod, or None."""
    if not _pending_pod_eligible(ctx, state, claimant):
        return None
    desired = state.pods[claimant].desired
    options = {}
    for node in ctx.node_range:
        if not vle(desired, ctx.allocatable[node]):
            continue  # UnschedulableAndUnresolvable: never a candidate (P-6)
        victims = select_victims(ctx, state, claimant, node,
                                 lambda removed, node=node: fits_new_pod(ctx, state, claimant, node, removed))
        if victims is not None:
            options[node] = victims
    if not options:
        return None
    node = pick_node(ctx, options)
    return node, options[node]


def _resize_preemption(ctx: Context, state: State, claimant: int):
    """Victims for a Deferred pod on its own node, or None (reference §4.3 (3)-(5), §4.4)."""
    if not resize_preemption_eligible(ctx, state, claimant):
        return None
    node = state.pods[claimant].node
    return select_victims(ctx, state, claimant, node,
                          lambda removed: fits_deferred_pod(ctx, state, claimant, removed))


def _evict(ctx: Context, state: State, claimant: int, node: int, victims) -> dict[int, dict]:
    """prepareCandidate: delete victims with DisruptionTarget, clear lower-priority nominations on
    the node (reference §3.3 'Execution', §7.4 P-5)."""
    changes: dict[int, dict] = {}
    for victim in victims:
        pod = state.pods[victim]
        if pod.phase in (Phase.BOUND, Phase.RUNNING):
            changes[victim] = dict(phase=Phase.TERMINATING, preempted_by=claimant, queue=Queue.NOT_QUEUED)
    for i, pod in enumerate(state.pods):
        if pod.phase == Phase.PENDING and pod.nominated == node and ctx.priorities[i] < ctx.priorities[claimant]:
            changes.setdefault(i, {})["nominated"] = NO_NODE
    return changes


def bind_pod(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits: assume and bind (reference §3.2)."""
    for claimant in head_of_queue(ctx, state):
        pod = state.pods[claimant]
        if not _is_pending(pod):
            continue
        for node in _fitting_nodes(ctx, state, claimant):
            after = _set(state, {claimant: dict(phase=Phase.BOUND, node=node, queue=Queue.NOT_QUEUED, nominated=NO_NODE)})
            yield Action("BindPod", (("pod", ctx.names[claimant]), ("node", ctx.node_names[node]))), after


def preempt_for_pod(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits nowhere: PostFilter evicts victims and sets
    nominatedNodeName (reference §3.3)."""
    for claimant in head_of_queue(ctx, state):
        if not _is_pending(state.pods[claimant]) or _fitting_nodes(ctx, state, claimant):
            continue
        choice = _pending_preemption(ctx, state, claimant)
        if choice is None:
            continue
        node, victims = choice
        changes = _evict(ctx, state, claimant, node, victims)
        changes.setdefault(claimant, {}).update(nominated=node, queue=Queue.UNSCHEDULABLE)
        yield Action("PreemptForPod", (("pod", ctx.names[claimant]), ("node", ctx.node_names[node]))), _set(state, changes)


def pod_unschedulable(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits nowhere and cannot preempt: it goes to the
    unschedulable pool (reference §3.1)."""
    for claimant in head_of_queue(ctx, state):
        if not _is_pending(state.pods[claimant]) or _fitting_nodes(ctx, state, claimant):
            continue
        if _pending_preemption(ctx, state, claimant) is not None:
            continue
        yield Action("PodUnschedulable", (("pod", ctx.names[claimant]),)), _set(state, {claimant: dict(queue=Queue.UNSCHEDULABLE)})


def park_deferred_pod(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod whose resize fits its node: Permit rejects it with
    "pod resize fits, waiting for Kubelet actuation" and it is parked (reference §4.4, §7.3 S-21)."""
    for claimant in head_of_queue(ctx, state):
        if not _is_deferred(state.pods[claimant]) or not fits_deferred_pod(ctx, state, claimant):
            continue
        yield Action("ParkDeferredPod", (("pod", ctx.names[claimant]),)), _set(state, {claimant: dict(queue=Queue.UNSCHEDULABLE)})


def preempt_for_resize(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod that does not fit: DefaultPreemption evicts victims on
    its own node; nominatedNodeName is never set in the alpha (reference §4.3 (5), (9), §7.3 S-1)."""
    for claimant in head_of_queue(ctx, state):
        pod = state.pods[claimant]
        if not _is_deferred(pod) or fits_deferred_pod(ctx, state, claimant):
            continue
        victims = _resize_preemption(ctx, state, claimant)
        if victims is None:
            continue
        changes = _evict(ctx, state, claimant, pod.node, victims)
        own = dict(queue=Queue.UNSCHEDULABLE, promised=pod.desired)
        if ctx.variant.reservation == "assume":
            own["assumed"] = pod.desired
        if ctx.variant.double_preemption_guard == "in-memory":
            own["tracking"] = True
        if ctx.variant.double_preemption_guard == "nominated-node-name" or ctx.has("resize-sets-nomination"):
            own["nominated"] = pod.node
        changes.setdefault(claimant, {}).update(own)
        yield Action("PreemptForResize", (("pod", ctx.names[claimant]),)), _set(state, changes)


def resize_unschedulable(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod that does not fit and cannot preempt (no strictly
    lower-priority victims that suffice, preemptionPolicy Never, or the double-preemption guard):
    it waits in the unschedulable pool (reference §4.3 (5), §7.3 S-3)."""
    for claimant in head_of_queue(ctx, state):
        if not _is_deferred(state.pods[claimant]) or fits_deferred_pod(ctx, state, claimant):
            continue
        if _resize_preemption(ctx, state, claimant) is not None:
            continue
        yield Action("ResizeUnschedulable", (("pod", ctx.names[claimant]),)), _set(state, {claimant: dict(queue=Queue.UNSCHEDULABLE)})


def flush_unschedulable_pod(ctx: Context, state: State):
    """The periodic flush moves a pod that waited long enough in the unschedulable pool back to
    the active queue (5 minutes; reference §3.1, §7.4 P-8)."""
    for i, pod in enumerate(state.pods):
        if pod.queue == Queue.UNSCHEDULABLE:
            yield Action("FlushUnschedulablePod", (("pod", ctx.names[i]),)), _set(state, {i: dict(queue=Queue.ACTIVE)})


# --- kubelet ---------------------------------------------------------------------------------------

def admit_pod(ctx: Context, state: State):
    """The kubelet admits a newly bound pod that fits next to the admitted pods (reference §2.1)."""
    for i, pod in enumerate(state.pods):
        if pod.phase == Phase.BOUND and kubelet_fits_admission(ctx, state, i):
            after = _set(state, {i: dict(phase=Phase.RUNNING, allocated=pod.desired, actual=pod.desired)})
            yield Action("AdmitPod", (("pod", ctx.names[i]), ("node", ctx.node_names[pod.node]))), after


def reject_pod(ctx: Context, state: State):
    """The kubelet rejects a bound pod that does not fit: phase Failed, reason OutOfcpu/OutOfmemory."""
    for i, pod in enumerate(state.pods):
        if pod.phase == Phase.BOUND and not kubelet_fits_admission(ctx, state, i):
            yield Action("RejectPod", (("pod", ctx.names[i]), ("node", ctx.node_names[pod.node]))), _set(state, {i: dict(phase=Phase.REJECTED)})


def _increases(pod: PodState) -> bool:
    return any(d > a for d, a in zip(pod.desired, pod.allocated))


def _pending_resizes(ctx: Context, state: State, node: int) -> list[int]:
    """The kubelet's pending-resize list for ``node`` in retry order (reference §2.3).

    Kubernetes order: resizes that do not increase any request first, then higher priority, then
    pods that already carry PodResizePending before those that do not, then age (declaration
    order stands in for lastTransitionTime). QoS is not modelled (all pods are Burstable).
    ``fifo``: declaration order only.
    """
    pending = [
        i for i, pod in enumerate(state.pods)
        if pod.phase == Phase.RUNNING and pod.node == node
        and (not pod.observed or pod.resize == ResizeReason.DEFERRED)
    ]
    if ctx.variant.kubelet_order == "fifo":
        return pending
    if ctx.has("kubelet-ignores-priority"):
        return sorted(pending, key=lambda i: (_increases(state.pods[i]), state.pods[i].resize == ResizeReason.NONE, i))
    return sorted(pending, key=lambda i: (_increases(state.pods[i]), -ctx.priorities[i],
                                          state.pods[i].resize == ResizeReason.NONE, i))


def _retry_pass(ctx: Context, state: State, node: int) -> State:
    """One pass of retryPendingResizes over every pending resize of the node, in order; an
    allocation earlier in the pass reduces room for later ones (reference §2.2, §2.3)."""
    for i in _pending_resizes(ctx, state, node):
        pod = state.pods[i]
        if veq(pod.desired, pod.allocated):
            keep = ResizeReason.DEFERRED if ctx.has("forget-pending-condition") and pod.resize == ResizeReason.DEFERRED else ResizeReason.NONE
            state = _set(state, {i: dict(resize=keep, observed=True)})
        elif kubelet_fits_resize(ctx, state, i):
            keep = pod.resize if ctx.has("forget-pending-condition") else ResizeReason.NONE
            state = _set(state, {i: dict(allocated=pod.desired, resize=keep, in_progress=pod.desired != pod.actual,
                                          observed=True)})
        else:
            state = _set(state, {i: dict(resize=ResizeReason.DEFERRED, observed=True)})
    due = list(state.retry_due)
    due[node] = False
    return replace(state, retry_due=tuple(due))


def retry_pending_resizes(ctx: Context, state: State):
    """The kubelet handles a pod update or a pod removal on its node and retries every pending
    resize (triggers pod_resized / pod_updated / pods_removed / pod_terminated; reference §2.3)."""
    for node in ctx.node_range:
        if state.retry_due[node] or any(
            pod.phase == Phase.RUNNING and pod.node == node and not pod.observed for pod in state.pods
        ):
            yield Action("RetryPendingResizes", (("node", ctx.node_names[node]),)), _retry_pass(ctx, state, node)


def periodic_retry_pending_resizes(ctx: Context, state: State):
    """The kubelet's periodic retry (3 minutes after the last pass; reference §2.3, §7.4 P-8)."""
    for node in ctx.node_range:
        if any(_is_deferred(pod) and pod.node == node for pod in state.pods):
            yield Action("PeriodicRetryPendingResizes", (("node", ctx.node_names[node]),)), _retry_pass(ctx, state, node)


def actuate_resize(ctx: Context, state: State):
    """The kubelet actuates an allocated resize: actual := allocated, PodResizeInProgress cleared
    (reference §2.6); the completed resize triggers a retry of pending resizes (pod_resized, §2.3)."""
    for i, pod in enumerate(state.pods):
        if pod.phase == Phase.RUNNING and pod.in_progress:
            due = list(state.retry_due)
            due[pod.node] = True  # pod_resized: a completed resize may let a pending one through
            after = replace(_set(state, {i: dict(actual=pod.allocated, in_progress=False)}), retry_due=tuple(due))
            yield Action("ActuateResize", (("pod", ctx.names[i]),)), after


def finish_termination(ctx: Context, state: State):
    """A terminating pod (deleted or evicted) finishes its graceful termination and is removed; the
    kubelet owes a retry pass (pods_removed; reference §2.3, KEP-5836 §Kubelet-Scheduler Preemption
    Interaction)."""
    for i, pod in enumerate(state.pods):
        if pod.phase == Phase.TERMINATING:
            due = list(state.retry_due)
            due[pod.node] = True
            after = replace(_set(state, {i: dict(phase=Phase.GONE)}), retry_due=tuple(due))
            yield Action("FinishTermination", (("pod", ctx.names[i]),)), after


# --- the scheduler's event handlers (applied after every effect) -----------------------------------

def scheduler_observes(ctx: Context, before: State | None, after: State) -> State:
    """What the scheduler's informer event handlers do with the pod updates of one step.

    * AddPod at start-up / UpdatePod: a running pod that carries PodResizePending=Deferred enters
      the queue (gate on, node not opted out); when the condition disappears or the pod goes
      away it leaves the queue and the scheduler forgets what it kept for it (reference §4.3 (1),
      §4.4, §7.3 S-5, S-17, S-18).
    * Queueing hints: a parked/unschedulable Deferred pod is requeued when another pod on its
      node changes size or is deleted, or when its own desired changes (S-6..S-16); an
      unschedulable pending pod is requeued when an assigned pod is deleted or scales down
      (reference §3.5).
    """
    gate = ctx.variant.gate_on
    changed_nodes: set[int] = set()
    shrunk = False
    if before is not None:
        for i, (old, new) in enumerate(zip(before.pods, after.pods)):
            if old is new:
                continue
            if old.phase == Phase.PENDING and old.nominated != NO_NODE and new.phase == Phase.GONE:
                shrunk = True  # a deleted nominated pod frees its nomination (reference §3.5)
                continue
            if not old.assigned:
                continue
            if not new.assigned:
                changed_nodes.add(old.node)
                shrunk = True
                continue
            old_size, new_size = scheduler_footprint(ctx, old), scheduler_footprint(ctx, new)
            if old_size != new_size:
                changed_nodes.add(old.node)
                shrunk = shrunk or any(n < o for n, o in zip(new_size, old_size))
    changes: dict[int, dict] = {}
    for i, pod in enumerate(after.pods):
        old = before.pods[i] if before is not None else None
        fields: dict = {}
        if pod.phase == Phase.PENDING:
            if pod.queue == Queue.UNSCHEDULABLE and shrunk:
                fields["queue"] = Queue.ACTIVE
        elif gate and _is_deferred(pod) and not ctx.resize_preemption_disabled[pod.node]:
            own_change = old is not None and old.desired != pod.desired
            others_changed = pod.node in changed_nodes and (old is None or old.assigned)
            if pod.queue == Queue.NOT_QUEUED or (pod.queue == Queue.UNSCHEDULABLE and (own_change or others_changed)):
                fields["queue"] = Queue.ACTIVE
        else:
            if pod.queue != Queue.NOT_QUEUED:
                fields["queue"] = Queue.NOT_QUEUED
            if pod.assumed or pod.tracking:
                fields.update(assumed=(), tracking=False)
            if pod.assigned and pod.nominated != NO_NODE and not ctx.has("resize-sets-nomination"):
                fields["nominated"] = NO_NODE  # nominated-node-name guard: cleared with the condition
        if pod.promised and not (pod.phase == Phase.RUNNING and pod.desired != pod.allocated):
            fields["promised"] = ()  # ghost: the resize was allocated, reverted, or its pod is gone
        if fields:
            changes[i] = fields
    return _set(after, changes) if changes else after


NEXT: tuple[Callable[[Context, State], Iterator[tuple[Action, State]]], ...] = (
    request_resize, create_pod, delete_pod, restart_scheduler,
    bind_pod, preempt_for_pod, pod_unschedulable, park_deferred_pod, preempt_for_resize, resize_unschedulable,
    flush_unschedulable_pod,
    admit_pod, reject_pod, retry_pending_resizes, periodic_retry_pending_resizes, actuate_resize, finish_termination,
)

ACTION_NAMES = (
    "RequestResize", "CreatePod", "DeletePod", "RestartScheduler",
    "BindPod", "PreemptForPod", "PodUnschedulable", "ParkDeferredPod", "PreemptForResize", "ResizeUnschedulable",
    "FlushUnschedulablePod",
    "AdmitPod", "RejectPod", "RetryPendingResizes", "PeriodicRetryPendingResizes", "ActuateResize", "FinishTermination",
)

ACTOR_OF = {name: actor for names, actor in (
    (ACTION_NAMES[:4], "user"), (ACTION_NAMES[4:11], "scheduler"), (ACTION_NAMES[11:], "kubelet"),
) for name in names}


def next_steps(ctx: Context, state: State) -> Iterator[tuple[Action, State]]:
    """Every enabled action instance and its successor, in NEXT order (deterministic)."""
    for action_function in NEXT:
        for action, after in action_function(ctx, state):
            yield action, scheduler_observes(ctx, state, after)


def apply_action(ctx: Context, state: State, label: str) -> State:
    """The successor reached by the action with this label; ValueError if it is not enabled."""
    for action, after in next_steps(ctx, state):
        if action.label() == label:
            return after
    enabled = ", ".join(a.label() for a, _ in next_steps(ctx, state)) or "none"
    raise ValueError(f"action {label} is not enabled here (enabled: {enabled})")
