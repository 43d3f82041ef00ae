"""The one step-describer: a step of a trace told in Kubernetes words, for every output.

``describe_trace(ctx, trace)`` gives one ``StepDescription`` per step (step 0 is the initial state)
with everything the outputs print of it, each derived once, here, from the step's ``Action`` and
its two states:

* ``changes`` — what changed for each pod (``web: desired cpu 2 → 3``, ``batch: Running →
  Terminating (DisruptionTarget: preempted for web)``) and for each kubelet: the table row of the
  text trace and of the Markdown trace report;
* ``messages`` — the step as sequence-diagram lines between the user, kube-apiserver,
  kube-scheduler and each node's kubelet: the Mermaid diagram;
* ``clause`` — one sentence in plain words: the narrative of the trace report;
* ``itf`` — the state as an ITF state object (Apalache ADR-015), encoded by ``checks/outputs/itf.py``.

What each action says is one ``_Teller`` per action name (``_TELLERS``), in the order of
``spec/transitions.ACTIONS``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kepcheck.spec.kep.vocabulary import Actor, Phase, Queue, ResizeReason
from kepcheck.spec.kubernetes.quantities import format_quantity

from kepcheck.checks.outputs.describe_async import ASYNC_TELLERS, scheduler_copy_changes
from kepcheck.checks.outputs.itf import PHASE_WORDS, QUEUE_WORDS, REASON_WORDS, itf_state
from kepcheck.checks.result import Trace
from kepcheck.model.accounting.views import admitted
from kepcheck.model.actions.next import ACTOR_OF
from kepcheck.model.context import Context
from kepcheck.model.state import NO_NODE, NO_POD, PodState, State
from kepcheck.model.step import Action

__all__ = ["StepDescription", "describe_trace", "describe_step", "describe_pod", "describe_pod_changes",
           "itf_state", "kubelet_participant", "delta", "PHASES", "REASONS", "QUEUES"]

# One set of words for the pod fields (checks/outputs/itf.py holds them); in words, no condition is "none".
PHASES, QUEUES = PHASE_WORDS, QUEUE_WORDS
REASONS = {**REASON_WORDS, ResizeReason.NONE: "none"}


@dataclass(frozen=True)
class StepDescription:
    number: int
    action: Action | None  # None for the initial state
    actor: str  # "" for the initial state
    changes: tuple  # lines in words (the initial state: one line per pod)
    messages: tuple  # ((source, target, text), ...); target "note" is a note over source
    clause: str  # the step in one sentence ("" for the initial state)
    itf: dict
    loop_start: bool  # the lasso's loop returns to this state

    @property
    def label(self) -> str:
        return self.action.label() if self.action is not None else "initial state"


def _node(ctx: Context, index: int) -> str:
    return ctx.node_names[index] if index != NO_NODE else "none"


def delta(ctx: Context, old: tuple, new: tuple) -> str:
    """``cpu 2→3`` for the resources that changed (every resource if none did)."""
    parts = []
    for name, before, after, unit in zip(ctx.scenario.resources, old, new, ctx.scenario.units):
        if before != after:
            parts.append(f"{name} {format_quantity(before * unit, name)}→{format_quantity(after * unit, name)}")
    return ", ".join(parts) or ctx.format(new)


def _out_of(ctx: Context) -> str:
    return "/".join(f"OutOf{name}" for name in ctx.scenario.resources)


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# --- pods and nodes in words -------------------------------------------------------------------------

def describe_pod(ctx: Context, index: int, pod: PodState) -> str:
    """A one-line description of a pod, for the initial state."""
    parts = [f"{ctx.names[index]} (priority {ctx.priorities[index]}): {PHASES[pod.phase]}"]
    if pod.node != NO_NODE:
        parts.append(f"on {ctx.node_names[pod.node]}")
    parts.append(f"desired {ctx.format(pod.desired)}")
    if admitted(pod):
        parts.append(f"allocated {ctx.format(pod.allocated)}")
        parts.append(f"actual {ctx.format(pod.actual)}")
    if pod.resize != ResizeReason.NONE:
        parts.append(f"PodResizePending={REASONS[pod.resize]}")
    if pod.in_progress:
        parts.append("PodResizeInProgress")
    if pod.queue != Queue.NOT_QUEUED:
        parts.append(f"scheduler: {QUEUES[pod.queue]}")
    if pod.nominated != NO_NODE:
        parts.append(f"nominatedNodeName={ctx.node_names[pod.nominated]}")
    return ", ".join(parts)


def describe_pod_changes(ctx: Context, index: int, old: PodState, new: PodState) -> list[str]:
    """What changed for one pod, in Kubernetes words."""
    name = ctx.names[index]
    changes = []
    if old.phase != new.phase:
        text = f"{name}: {PHASES[old.phase]} → {PHASES[new.phase]}"
        if new.phase == Phase.TERMINATING and new.preempted_by != NO_POD and old.preempted_by == NO_POD:
            text += f" (DisruptionTarget: preempted for {ctx.names[new.preempted_by]})"
        if new.phase == Phase.BOUND:
            text += f" to {ctx.node_names[new.node]}"
        changes.append(text)
    for field in ("desired", "allocated", "actual"):
        before, after = getattr(old, field), getattr(new, field)
        if before != after and (field == "desired" or admitted(new)):
            changes.append(f"{name}: {field} {ctx.format(before)} → {ctx.format(after)}")
    if old.resize != new.resize:
        changes.append(f"{name}: PodResizePending {REASONS[old.resize]} → {REASONS[new.resize]}")
    if old.in_progress != new.in_progress:
        changes.append(f"{name}: PodResizeInProgress {'set' if new.in_progress else 'cleared'}")
    if old.queue != new.queue:
        changes.append(f"{name}: scheduler {QUEUES[old.queue]} → {QUEUES[new.queue]}")
    if old.nominated != new.nominated:
        changes.append(f"{name}: nominatedNodeName {_node(ctx, old.nominated)} → {_node(ctx, new.nominated)}")
    if old.assumed != new.assumed:
        changes.append(f"{name}: scheduler assumes {ctx.format(new.assumed) if any(new.assumed) else 'nothing'}")
    if old.tracking != new.tracking:
        changes.append(f"{name}: scheduler {'tracks' if new.tracking else 'forgets'} its victims in flight")
    if old.promised != new.promised:  # a ghost: what the properties count as the scheduler's promise
        changes.append(f"{name}: resize promise (what the scheduler preempted for) "
                       + (ctx.format(new.promised) if any(new.promised) else "dropped"))
    if new.observed and not old.observed and old.resize == new.resize and old.allocated == new.allocated:
        changes.append(f"{name}: the kubelet has evaluated the new spec")
    return changes + scheduler_copy_changes(ctx, name, old, new)


def _changes(ctx: Context, before: State, after: State) -> list[str]:
    changes = []
    for i, (old, new) in enumerate(zip(before.pods, after.pods)):
        changes += describe_pod_changes(ctx, i, old, new)
    for node in ctx.node_range:
        if before.retry_due[node] != after.retry_due[node]:
            changes.append(f"kubelet on {ctx.node_names[node]}: "
                           + ("a retry of pending resizes is due" if after.retry_due[node] else "the due retry is done"))
    return changes


def kubelet_participant(ctx: Context, node: int) -> str:
    """The sequence-diagram participant of a node's kubelet."""
    return "K_" + "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in ctx.node_names[node])


@dataclass
class _Step:
    """A step being told: the context, the action, the two states and the pod the action names."""

    ctx: Context
    action: Action
    before: State
    after: State

    @property
    def pod(self) -> str:
        return self.action.param("pod", "")

    @property
    def index(self) -> int | None:
        return self.ctx.pod_index(self.pod) if self.pod in self.ctx.names else None

    def pods(self):
        return zip(self.ctx.names, self.before.pods, self.after.pods)

    def kubelet_of(self, index: int) -> str:
        old, new = self.before.pods[index], self.after.pods[index]
        node = new.node if new.node != NO_NODE else old.node
        return kubelet_participant(self.ctx, node if node != NO_NODE else 0)

    def victims(self) -> list[str]:
        """The pods the step evicts (or, with asynchronous preemption, issues the eviction calls for)."""
        return [p for p, old, new in self.pods()
                if (new.phase == Phase.TERMINATING and old.phase != Phase.TERMINATING and self.action.name != "EvictVictim")
                or (new.evicting_for not in (None, NO_POD) and old.evicting_for != new.evicting_for)]


def _request_resize(step: _Step):
    i, ctx = step.index, step.ctx
    change = delta(ctx, step.before.pods[i].desired, step.after.pods[i].desired)
    return [("U", "API", f"PATCH {step.pod}/resize {change}")], f"the user asks to resize {step.pod} ({change})"


def _create_pod(step: _Step):
    i, ctx = step.index, step.ctx
    size = ctx.format(step.after.pods[i].desired)
    return ([("U", "API", f"POST pod {step.pod} (priority {ctx.priorities[i]}, {size})")],
            f"{step.pod} (priority {ctx.priorities[i]}, {size}) is created")


def _delete_pod(step: _Step):
    return [("U", "API", f"DELETE pod {step.pod}")], f"the user deletes {step.pod}"


def _recreate_pod(step: _Step):
    i, ctx = step.index, step.ctx
    size = ctx.format(step.after.pods[i].desired)
    return ([("U", "API", f"POST pod {step.pod} again (its controller; priority {ctx.priorities[i]}, {size})")],
            f"{step.pod}'s controller recreates it, pending ({size})")


def _restart_scheduler(step: _Step):
    return ([("S", "note", "restart: queue and in-memory state lost, Deferred pods re-enqueued")],
            "the scheduler restarts and loses its in-memory state")


def _bind_pod(step: _Step):
    node = step.action.param("node")
    return [("S", "API", f"bind {step.pod} → {node}")], f"the scheduler binds {step.pod} to {node}"


def _preemption_messages(step: _Step, for_what: str) -> list:
    messages = [("S", "API", f"evict {victim} (DisruptionTarget) for {for_what}") for victim in step.victims()]
    for pod, old, new in step.pods():
        if old.nominated != new.nominated:
            text = (f"{pod} nominatedNodeName={step.ctx.node_names[new.nominated]}" if new.nominated != NO_NODE
                    else f"clear {pod} nominatedNodeName")
            messages.append(("S", "API", text))
    return messages or [("S", "note", f"preemption for {for_what}: no victim evicted")]


def _preempt_for_pod(step: _Step):
    nominated = step.after.pods[step.index].nominated
    node = step.ctx.node_names[nominated] if nominated != NO_NODE else "a node"
    return (_preemption_messages(step, step.pod),
            f"the scheduler evicts {_and(step.victims())} for the pending {step.pod} and nominates {node}")


def _preempt_for_resize(step: _Step):
    victims = step.victims()
    clause = (f"the scheduler evicts {_and(victims)} to make room for {step.pod}'s Deferred resize" if victims
              else f"the scheduler runs preemption for {step.pod}'s resize")
    return _preemption_messages(step, f"{step.pod} resize"), clause


def _pod_unschedulable(step: _Step):
    return ([("S", "note", f"{step.pod} does not fit → unschedulable pool")],
            f"the scheduler finds no room for {step.pod} and parks it")


def _resize_unschedulable(step: _Step):
    return ([("S", "note", f"{step.pod} resize: no victims can make room → unschedulable pool")],
            f"the scheduler finds no victims for {step.pod}'s resize and parks it")


def _park_deferred_pod(step: _Step):
    return ([("S", "note", f"{step.pod} resize fits in the scheduler's view → parked")],
            f"the scheduler sees {step.pod}'s resize as fitting and parks it")


def _bind_deferred_pod(step: _Step):
    return ([("S", "note", f"{step.pod} resize fits in the scheduler's view → no-op Bind, leaves the queue")],
            f"the scheduler sees {step.pod}'s resize as fitting; {step.pod} leaves the queue")


def _flush_unschedulable_pod(step: _Step):
    return ([("S", "note", f"periodic flush: {step.pod} → activeQ")],
            f"the periodic flush moves {step.pod} back to the active queue")


def _admit_pod(step: _Step):
    return [(step.kubelet_of(step.index), "API", f"admit {step.pod} (Running)")], f"the kubelet admits {step.pod}"


def _reject_pod(step: _Step):
    out_of = _out_of(step.ctx)
    return ([(step.kubelet_of(step.index), "API", f"reject {step.pod}: {out_of} (phase Failed)")],
            f"the kubelet rejects {step.pod} with {out_of}")


def _retry_messages(step: _Step, kubelet: str) -> list:
    messages = []
    for pod, old, new in step.pods():
        if old.allocated != new.allocated:
            messages.append((kubelet, "API", f"{pod} allocated {delta(step.ctx, old.allocated, new.allocated)}"
                             + (" (PodResizeInProgress)" if new.in_progress else "")))
        if old.resize != new.resize:
            if new.resize == ResizeReason.DEFERRED:
                messages.append((kubelet, "API", f"{pod} PodResizePending=Deferred"))
            elif new.resize == ResizeReason.INFEASIBLE:
                messages.append((kubelet, "API", f"{pod} PodResizePending=Infeasible"))
            elif old.allocated == new.allocated:
                messages.append((kubelet, "API", f"{pod} PodResizePending cleared"))
        elif old.observed != new.observed and old.allocated == new.allocated and new.resize != ResizeReason.NONE:
            reason = "Deferred" if new.resize == ResizeReason.DEFERRED else "Infeasible"
            messages.append((kubelet, "API", f"{pod} still PodResizePending={reason} (new spec observed)"))
    return messages


def _retry_pending_resizes(step: _Step):
    node = step.action.param("node")
    kubelet = kubelet_participant(step.ctx, step.ctx.node_index(node))
    kind = "periodic retry" if step.action.name.startswith("Periodic") else "retry"
    unchanged = step.before == step.after
    messages = _retry_messages(step, kubelet) or [
        (kubelet, "note", f"{kind} of pending resizes: nothing fits" + (", no change" if unchanged else ""))]
    done = []
    for pod, old, new in step.pods():
        if old.allocated != new.allocated:
            done.append(f"grants {pod}'s resize ({delta(step.ctx, old.allocated, new.allocated)})")
        elif old.resize != new.resize:
            done.append({ResizeReason.DEFERRED: f"marks {pod} Deferred", ResizeReason.INFEASIBLE: f"marks {pod} "
                         f"Infeasible"}.get(new.resize, f"clears {pod}'s PodResizePending (desired = allocated)"))
        elif old.observed != new.observed:
            done.append(f"evaluates {pod}'s new spec (still {REASONS[new.resize]})")
    nothing = "changes nothing" if unchanged else "finds no pending resize that fits"
    return messages, f"the kubelet on {node} runs a {kind} and " + (_and(done) if done else nothing)


def _actuate_resize(step: _Step):
    old, new = step.before.pods[step.index], step.after.pods[step.index]
    change = delta(step.ctx, old.actual, new.actual)
    cleared = ", PodResizeInProgress cleared" if old.in_progress and not new.in_progress else ""
    return ([(step.kubelet_of(step.index), "API", f"{step.pod} resized: actual {change}{cleared}")],
            f"the kubelet actuates {step.pod}'s resize ({change})")


def _finish_termination(step: _Step):
    return ([(step.kubelet_of(step.index), "API", f"{step.pod} terminated and removed")],
            f"{step.pod} finishes terminating and leaves the node")


_TELLERS = {
    "RequestResize": _request_resize, "CreatePod": _create_pod, "DeletePod": _delete_pod,
    "RestartScheduler": _restart_scheduler, "RecreatePod": _recreate_pod,
    "BindPod": _bind_pod, "PreemptForPod": _preempt_for_pod, "PodUnschedulable": _pod_unschedulable,
    "ParkDeferredPod": _park_deferred_pod, "BindDeferredPod": _bind_deferred_pod, "PreemptForResize": _preempt_for_resize,
    "ResizeUnschedulable": _resize_unschedulable, "FlushUnschedulablePod": _flush_unschedulable_pod,
    "AdmitPod": _admit_pod, "RejectPod": _reject_pod, "RetryPendingResizes": _retry_pending_resizes,
    "PeriodicRetryPendingResizes": _retry_pending_resizes, "ActuateResize": _actuate_resize,
    "FinishTermination": _finish_termination, **ASYNC_TELLERS,
}


def _scheduler_learns(step: _Step) -> list:
    """What the scheduler learns from the watch (requeues caused by others) and its own memory."""
    messages = []
    # the scheduler's own steps (its cycles, and its restart's start-up pass) are not learned from the watch
    own = ACTOR_OF.get(step.action.name) == Actor.SCHEDULER or step.action.name == "RestartScheduler"
    for pod, old, new in step.pods():
        if old.queue != new.queue and new.queue == Queue.ACTIVE and not own:
            messages.append(("API", "S", f"watch: {pod} requeued to activeQ"))
        if old.assumed != new.assumed:
            text = f"assume {pod} at {step.ctx.format(new.assumed)}" if any(new.assumed) else f"forget assume of {pod}"
            messages.append(("S", "note", text))
        if old.tracking != new.tracking:
            messages.append(("S", "note", f"{'track' if new.tracking else 'forget'} victims in flight for {pod}"))
    return messages


def describe_step(ctx: Context, number: int, before: State | None, action: Action | None, after: State,
                  loop: int | None = None) -> StepDescription:
    """Step ``number`` of a trace: ``action`` from ``before`` to ``after`` (the initial state when
    ``action`` is None)."""
    itf = itf_state(ctx, after, action, number)
    if action is None:
        changes = [describe_pod(ctx, i, pod) for i, pod in enumerate(after.pods) if pod.phase != Phase.ABSENT]
        return StepDescription(number, None, "", tuple(changes), (), "", itf, loop == number)
    step = _Step(ctx, action, before, after)
    teller = _TELLERS.get(action.name)
    messages, clause = teller(step) if teller is not None else ([], action.label())
    messages = messages + _scheduler_learns(step)
    if not messages:
        messages = [("S", "note", action.label())]
    return StepDescription(number, action, ACTOR_OF.get(action.name, ""), tuple(_changes(ctx, before, after)),
                           tuple(messages), clause, itf, loop == number)


def describe_trace(ctx: Context, trace: Trace) -> list[StepDescription]:
    """One description per step of the trace (step 0: the initial state)."""
    descriptions = []
    before = None
    for number, (action, state) in enumerate(trace.steps):
        descriptions.append(describe_step(ctx, number, before, action, state, trace.loop))
        before = state
    return descriptions
