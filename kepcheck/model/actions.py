"""The actions of the model, one function per action, grouped by the actor that performs it.

Each function takes ``(ctx, state)`` and yields ``(Action, guard, next_state)`` for every
instance of the action: the finite choice (which pod, which node, which menu entry) is Python
iteration over parameters; the guard is an expression over the state; the effect builds the next
state, changing only the fields it names, with ``ite`` where the change depends on the state.
Everything on state values goes through ``model/expr.py`` helpers, so the same functions run on
concrete states (the explicit engine: a guard that is concretely ``False`` skips the effect) and
on states whose fields are Z3 terms (the symbolic engine builds its transition relation from
them). ``NEXT`` lists the functions in the order of the transition table (``spec/transitions.py``).

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

from dataclasses import dataclass
from itertools import product
from typing import Callable, Iterator

from kepcheck.spec.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.context import Context, any_state_memo, concrete_pod, node_local, state_memo
from kepcheck.model.expr import and_, any_, implies, is_false, ite, not_, or_, pick, veq, vle, vzero
from kepcheck.model.preemption import chosen_node, select_victims
from kepcheck.model.state import NO_NODE, NO_POD, PodState, State, evolve
from kepcheck.model.views import (
    assigned, fits_deferred_pod, fits_new_pod, kubelet_fits_admission, kubelet_fits_resize, scheduler_footprint,
)

__all__ = ["Action", "NEXT", "ACTION_NAMES", "ACTOR_OF", "next_steps", "transitions", "scheduler_observes",
           "apply_action", "at_head", "resize_preemption_eligible", "pending_resize_slots"]


@dataclass(frozen=True, slots=True)
class Action:
    """An action label with its parameters, e.g. ``PreemptForResize(pod=web)``. Parameters are
    static (names from the scenario), so a label means the same on concrete and symbolic states."""

    name: str
    params: tuple = ()  # ((key, value), ...) in a fixed order

    def label(self) -> str:
        if not self.params:
            return self.name
        return f"{self.name}({', '.join(f'{k}={v}' for k, v in self.params)})"

    def __str__(self) -> str:
        return self.label()


# --- per-state memo (shared by the actions of one state) --------------------------------------

def _per_state(ctx: Context, state: State, key, compute: Callable):
    """``compute()``, a pure function of ``(ctx, state)`` named by ``key``, memoised for a concrete
    state (several actions share one scheduling cycle's work: the pending pod's fit and victims,
    the Deferred pod's fit and victims, the kubelet's retry pass). On a symbolic state the memo
    shares the Z3 terms among the actions of one step (``model/context.any_state_memo``)."""
    memo = any_state_memo(ctx, state)
    key = ("actions", key)
    value = memo.get(key, _MISSING)
    if value is _MISSING:
        value = memo[key] = compute()
    return value


# --- effect helpers ---------------------------------------------------------------------------------

def _guarded(pod: PodState, condition, fields: dict) -> PodState:
    """``pod`` with ``fields`` changed where ``condition`` holds (concretely: changed or not)."""
    if condition is True:
        return evolve(pod, **fields)
    if condition is False:
        return pod
    return evolve(pod, **{name: ite(condition, value, getattr(pod, name)) for name, value in fields.items()})


def _update(state: State, changes: list) -> State:
    """Apply ``[(pod index, condition, {field: value}), ...]`` to the pods of ``state``, in order."""
    pods = list(state.pods)
    for index, condition, fields in changes:
        pods[index] = _guarded(pods[index], condition, fields)
    return evolve(state, pods=tuple(pods))


def _set(state: State, index: int, **fields) -> State:
    return _update(state, [(index, True, fields)])


def _mark_retry_due(state: State, node) -> State:
    """The kubelet of ``node`` (a state value) owes a retry pass over its pending resizes."""
    due = tuple(or_(node == n, flag) for n, flag in enumerate(state.retry_due))
    return evolve(state, retry_due=due)


def _budget(ctx: Context, state: State, event: int):
    return and_(state.env_events < ctx.max_events, not_(state.env_used[event]))


def _use_event(state: State, event: int) -> State:
    used = tuple(True if i == event else flag for i, flag in enumerate(state.env_used))
    return evolve(state, env_used=used, env_events=state.env_events + 1)


def _menu(ctx: Context, kind: str):
    for index, event in enumerate(ctx.events):
        if event.kind == kind:
            yield index, event


def _is_running(pod: PodState):
    return pod.phase == Phase.RUNNING


def _is_deferred(pod: PodState):
    return and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)


# --- user / controllers (environment) ------------------------------------------------------------

def request_resize(ctx: Context, state: State):
    """A user PATCHes the pod's /resize subresource: desired changes (reference §2.1, §2.5).

    Requests above the node's allocatable are rejected by the API server since v1.36 and never
    reach the pod; the scenario loader refuses them.
    """
    for event_index, event in _menu(ctx, "resize"):
        pod = state.pods[event.pod]
        guard = and_(_budget(ctx, state, event_index), _is_running(pod), not_(veq(pod.desired, event.requests)))
        if is_false(guard):
            continue
        after = _set(_use_event(state, event_index), event.pod, desired=event.requests, observed=False)
        yield Action("RequestResize", (("pod", ctx.names[event.pod]), ("requests", f"[{ctx.format(event.requests)}]"))), guard, after


def create_pod(ctx: Context, state: State):
    """A controller creates a pending pod (an arrival of the scenario)."""
    for event_index, event in _menu(ctx, "arrival"):
        guard = and_(_budget(ctx, state, event_index), state.pods[event.pod].phase == Phase.ABSENT)
        if is_false(guard):
            continue
        after = _set(_use_event(state, event_index), event.pod, phase=Phase.PENDING, queue=Queue.ACTIVE)
        yield Action("CreatePod", (("pod", ctx.names[event.pod]),)), guard, after


def delete_pod(ctx: Context, state: State):
    """A user deletes a pod: a pending pod disappears, a pod on a node starts terminating."""
    for event_index, event in _menu(ctx, "deletion"):
        pod = state.pods[event.pod]
        pending = pod.phase == Phase.PENDING
        guard = and_(_budget(ctx, state, event_index),
                     or_(pending, pod.phase == Phase.BOUND, pod.phase == Phase.RUNNING))
        if is_false(guard):
            continue
        after = _set(_use_event(state, event_index), event.pod, phase=ite(pending, Phase.GONE, Phase.TERMINATING),
                     queue=Queue.NOT_QUEUED, nominated=ite(pending, NO_NODE, pod.nominated))
        yield Action("DeletePod", (("pod", ctx.names[event.pod]),)), guard, after


def restart_scheduler(ctx: Context, state: State):
    """The kube-scheduler restarts: its queue and in-memory state are lost; on start-up the AddPod
    handler re-enqueues pending and Deferred pods (reference §4.3 (1), §7.3 S-17)."""
    for event_index, _ in _menu(ctx, "restart"):
        guard = _budget(ctx, state, event_index)
        if is_false(guard):
            continue
        zero = vzero(ctx.width)
        changes = [
            (i, True, dict(queue=ite(pod.phase == Phase.PENDING, Queue.ACTIVE, Queue.NOT_QUEUED), assumed=zero,
                           tracking=False))
            for i, pod in enumerate(state.pods)
        ]
        yield Action("RestartScheduler"), guard, _update(_use_event(state, event_index), changes)


# --- kube-scheduler --------------------------------------------------------------------------------

def at_head(ctx: Context, state: State, claimant: int):
    """The next scheduling cycle may pop ``claimant``: it is in activeQ and no pod of higher
    priority is (PrioritySort; pods of equal priority in any order)."""
    priority = ctx.priorities[claimant]
    active = state.pods[claimant].queue == Queue.ACTIVE
    if is_false(active):
        return False
    return and_(active, *(state.pods[j].queue != Queue.ACTIVE for j in ctx.pod_range if ctx.priorities[j] > priority))


def _victims_terminating_on(ctx: Context, state: State, claimant: int, node):
    """A lower-priority pod on ``node`` is terminating because of preemption (reference §3.3
    'Eligibility': the preemptor waits for its nominated node's victims)."""
    priority = ctx.priorities[claimant]
    return any_(
        and_(pod.phase == Phase.TERMINATING, pod.node == node, pod.preempted_by != NO_POD)
        for i, pod in enumerate(state.pods) if ctx.priorities[i] < priority
    )


def _pending_pod_eligible(ctx: Context, state: State, claimant: int):
    """PodEligibleToPreemptOthers for a pending pod (reference §3.3)."""
    if ctx.never_preempts[claimant]:
        return False
    nominated = state.pods[claimant].nominated
    return or_(nominated == NO_NODE, not_(_victims_terminating_on(ctx, state, claimant, nominated)))


def resize_preemption_eligible(ctx: Context, state: State, claimant: int):
    """May this Deferred pod preempt now? ``preemptionPolicy: Never`` forbids it (reference §4.3
    (10)); the double-preemption guard of the variant may make it wait (reference §4.6)."""
    if ctx.never_preempts[claimant]:
        return False
    pod = state.pods[claimant]
    guard = ctx.variant.double_preemption_guard
    if ctx.has("guard-ignores-terminating-victims") or guard == "none":
        return True
    if guard == "in-memory":
        return not_(and_(pod.tracking, any_(and_(other.phase == Phase.TERMINATING, other.preempted_by == claimant)
                                            for other in state.pods)))
    if guard == "nominated-node-name":
        return or_(pod.nominated != pod.node, not_(_victims_terminating_on(ctx, state, claimant, pod.node)))
    return not_(_victims_terminating_on(ctx, state, claimant, pod.node))  # node-name-as-nomination


class _PendingCycle:
    """What one scheduling cycle computes for a pending pod: fit per node, and per node the
    preemption candidate and its victims (reference §3.2-§3.4)."""

    def __init__(self, ctx: Context, state: State, claimant: int):
        pod = state.pods[claimant]
        self.fits = [fits_new_pod(ctx, state, claimant, n) for n in ctx.node_range]
        self.any_fit = or_(*self.fits)
        nominated_fits = or_(*(and_(pod.nominated == n, fit) for n, fit in enumerate(self.fits)))
        # a pod whose nominated node fits goes there; otherwise any fitting node
        self.may_bind = [and_(fit, or_(pod.nominated == n, not_(nominated_fits))) for n, fit in enumerate(self.fits)]
        self._ctx, self._state, self._claimant = ctx, state, claimant
        self._options = None

    def options(self):
        if self._options is None:
            ctx, state, claimant = self._ctx, self._state, self._claimant
            desired = state.pods[claimant].desired
            eligible = _pending_pod_eligible(ctx, state, claimant)
            options = {}
            for node in ctx.node_range:
                resolvable = and_(eligible, vle(desired, ctx.allocatable[node]))  # P-6: never a candidate otherwise
                if is_false(resolvable):
                    continue
                candidate, victims = select_victims(
                    ctx, state, claimant, node, lambda removed, node=node: fits_new_pod(ctx, state, claimant, node, removed),
                    memo="fits_new_pod")
                candidate = and_(resolvable, candidate)
                if not is_false(candidate):
                    options[node] = (candidate, victims)
            self._options = options
        return self._options

    def can_preempt(self):
        return or_(*(candidate for candidate, _ in self.options().values()))


def _pending_cycles(ctx: Context, state: State):
    """(claimant, head-and-pending condition, cycle) for each pod the scheduler may pop as pending."""
    return _per_state(ctx, state, "pending-cycles", lambda: list(_pending_cycles_of(ctx, state)))


def _pending_cycles_of(ctx: Context, state: State):
    for claimant in ctx.pod_range:
        pending = state.pods[claimant].phase == Phase.PENDING
        if is_false(pending):
            continue
        base = and_(at_head(ctx, state, claimant), pending)
        if not is_false(base):
            yield claimant, base, _PendingCycle(ctx, state, claimant)


def _evict(ctx: Context, state: State, claimant: int, node, victims: dict) -> dict:
    """prepareCandidate: delete victims with DisruptionTarget, clear lower-priority nominations on
    the node (reference §3.3 'Execution', §7.4 P-5). Returns ``_update`` changes."""
    changes = []
    for victim, condition in victims.items():
        pod = state.pods[victim]
        live = and_(condition, or_(pod.phase == Phase.BOUND, pod.phase == Phase.RUNNING))
        if not is_false(live):
            changes.append((victim, live, dict(phase=Phase.TERMINATING, preempted_by=claimant, queue=Queue.NOT_QUEUED)))
    for i, pod in enumerate(state.pods):
        if ctx.priorities[i] < ctx.priorities[claimant]:
            nominated_here = and_(pod.phase == Phase.PENDING, pod.nominated == node)
            if not is_false(nominated_here):
                changes.append((i, nominated_here, dict(nominated=NO_NODE)))
    return changes


def bind_pod(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits: assume and bind (reference §3.2)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        for node in ctx.node_range:
            guard = and_(base, cycle.may_bind[node])
            if is_false(guard):
                continue
            after = _set(state, claimant, phase=Phase.BOUND, node=node, queue=Queue.NOT_QUEUED, nominated=NO_NODE)
            yield Action("BindPod", (("pod", ctx.names[claimant]), ("node", ctx.node_names[node]))), guard, after


def preempt_for_pod(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits nowhere: PostFilter evicts victims and sets
    nominatedNodeName (reference §3.3)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        base = and_(base, not_(cycle.any_fit))
        if is_false(base):
            continue
        options = cycle.options()
        for node in options:
            guard = and_(base, chosen_node(ctx, options, node))
            if is_false(guard):
                continue
            changes = _evict(ctx, state, claimant, node, options[node][1])
            changes.append((claimant, True, dict(nominated=node, queue=Queue.UNSCHEDULABLE)))
            yield Action("PreemptForPod", (("pod", ctx.names[claimant]), ("node", ctx.node_names[node]))), guard, _update(state, changes)


def pod_unschedulable(ctx: Context, state: State):
    """Scheduling cycle for a pending pod that fits nowhere and cannot preempt: it goes to the
    unschedulable pool (reference §3.1)."""
    for claimant, base, cycle in _pending_cycles(ctx, state):
        base = and_(base, not_(cycle.any_fit))
        if is_false(base):
            continue
        guard = and_(base, not_(cycle.can_preempt()))
        if is_false(guard):
            continue
        yield Action("PodUnschedulable", (("pod", ctx.names[claimant]),)), guard, _set(state, claimant, queue=Queue.UNSCHEDULABLE)


def _deferred_cycles(ctx: Context, state: State):
    """(claimant, condition, fits) for each pod the scheduler may pop as a Deferred resize."""
    return _per_state(ctx, state, "deferred-cycles", lambda: list(_deferred_cycles_of(ctx, state)))


def _deferred_cycles_of(ctx: Context, state: State):
    for claimant in ctx.pod_range:
        deferred = _is_deferred(state.pods[claimant])
        if is_false(deferred):
            continue
        base = and_(at_head(ctx, state, claimant), deferred)
        if not is_false(base):
            yield claimant, base, fits_deferred_pod(ctx, state, claimant)


def _resize_victims(ctx: Context, state: State, claimant: int):
    """(candidate, victims) for a Deferred pod on its own node (reference §4.3 (3)-(5), §4.4)."""
    return _per_state(ctx, state, ("resize-victims", claimant), lambda: _resize_victims_of(ctx, state, claimant))


def _resize_victims_of(ctx: Context, state: State, claimant: int):
    eligible = resize_preemption_eligible(ctx, state, claimant)
    if is_false(eligible):
        return False, {}
    candidate, victims = select_victims(ctx, state, claimant, state.pods[claimant].node,
                                        lambda removed: fits_deferred_pod(ctx, state, claimant, removed),
                                        memo="fits_deferred_pod")
    return and_(eligible, candidate), victims


def park_deferred_pod(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod whose resize fits its node: Permit rejects it with
    "pod resize fits, waiting for Kubelet actuation" and it is parked (reference §4.4, §7.3 S-21)."""
    for claimant, base, fits in _deferred_cycles(ctx, state):
        guard = and_(base, fits)
        if is_false(guard):
            continue
        yield Action("ParkDeferredPod", (("pod", ctx.names[claimant]),)), guard, _set(state, claimant, queue=Queue.UNSCHEDULABLE)


def preempt_for_resize(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod that does not fit: DefaultPreemption evicts victims on
    its own node; nominatedNodeName is never set in the alpha (reference §4.3 (5), (9), §7.3 S-1)."""
    for claimant, base, fits in _deferred_cycles(ctx, state):
        base = and_(base, not_(fits))
        if is_false(base):
            continue
        candidate, victims = _resize_victims(ctx, state, claimant)
        guard = and_(base, candidate)
        if is_false(guard):
            continue
        pod = state.pods[claimant]
        changes = _evict(ctx, state, claimant, pod.node, victims)
        own = dict(queue=Queue.UNSCHEDULABLE, promised=pod.desired)
        if ctx.variant.reservation == "assume":
            own["assumed"] = pod.desired
        if ctx.variant.double_preemption_guard == "in-memory":
            own["tracking"] = True
        if ctx.variant.double_preemption_guard == "nominated-node-name" or ctx.has("resize-sets-nomination"):
            own["nominated"] = pod.node
        changes.append((claimant, True, own))
        yield Action("PreemptForResize", (("pod", ctx.names[claimant]),)), guard, _update(state, changes)


def resize_unschedulable(ctx: Context, state: State):
    """Restricted cycle for a Deferred pod that does not fit and cannot preempt (no strictly
    lower-priority victims that suffice, preemptionPolicy Never, or the double-preemption guard):
    it waits in the unschedulable pool (reference §4.3 (5), §7.3 S-3)."""
    for claimant, base, fits in _deferred_cycles(ctx, state):
        base = and_(base, not_(fits))
        if is_false(base):
            continue
        candidate, _ = _resize_victims(ctx, state, claimant)
        guard = and_(base, not_(candidate))
        if is_false(guard):
            continue
        yield Action("ResizeUnschedulable", (("pod", ctx.names[claimant]),)), guard, _set(state, claimant, queue=Queue.UNSCHEDULABLE)


def flush_unschedulable_pod(ctx: Context, state: State):
    """The periodic flush moves a pod that waited long enough in the unschedulable pool back to
    the active queue (5 minutes; reference §3.1, §7.4 P-8)."""
    for i, pod in enumerate(state.pods):
        guard = pod.queue == Queue.UNSCHEDULABLE
        if ctx.has("scheduler-never-requeues-deferred"):
            guard = and_(guard, not_(_is_deferred(pod)))
        if is_false(guard):
            continue
        yield Action("FlushUnschedulablePod", (("pod", ctx.names[i]),)), guard, _set(state, i, queue=Queue.ACTIVE)


# --- kubelet ---------------------------------------------------------------------------------------

def admit_pod(ctx: Context, state: State):
    """The kubelet admits a newly bound pod that fits next to the admitted pods (reference §2.1)."""
    for i, pod in enumerate(state.pods):
        bound = pod.phase == Phase.BOUND
        if is_false(bound):
            continue
        guard = and_(bound, kubelet_fits_admission(ctx, state, i))
        if is_false(guard):
            continue
        after = _set(state, i, phase=Phase.RUNNING, allocated=pod.desired, actual=pod.desired)
        yield Action("AdmitPod", (("pod", ctx.names[i]),)), guard, after


def reject_pod(ctx: Context, state: State):
    """The kubelet rejects a bound pod that does not fit: phase Failed, reason OutOfcpu/OutOfmemory."""
    for i, pod in enumerate(state.pods):
        bound = pod.phase == Phase.BOUND
        if is_false(bound):
            continue
        guard = and_(bound, not_(kubelet_fits_admission(ctx, state, i)))
        if is_false(guard):
            continue
        yield Action("RejectPod", (("pod", ctx.names[i]),)), guard, _set(state, i, phase=Phase.REJECTED)


def _increases(pod: PodState):
    return or_(*(d > a for d, a in zip(pod.desired, pod.allocated)))


def pending_resize_slots(ctx: Context, state: State, node: int) -> list[tuple[int, object]]:
    """The kubelet's pending-resize list for ``node`` in retry order (reference §2.3), as
    ``(pod index, condition)`` slots: each pod has one slot per value of the state-dependent parts
    of its sort key, and the condition says the pod is pending and its key has those values. The
    slots are in key order, so processing the slots whose condition holds walks the list in order.

    Kubernetes order: resizes that do not increase any request first, then higher priority, then
    pods that already carry PodResizePending before those that do not, then age (declaration
    order stands in for lastTransitionTime). QoS is not modelled (all pods are Burstable).
    ``fifo``: declaration order only.
    """
    slots = []
    for i, pod in enumerate(state.pods):
        pending = and_(pod.phase == Phase.RUNNING, pod.node == node,
                       or_(not_(pod.observed), pod.resize == ResizeReason.DEFERRED))
        if is_false(pending):
            continue
        increases = _increases(pod)
        undecided = pod.resize == ResizeReason.NONE
        if ctx.variant.kubelet_order == "fifo":
            slots.append(((i,), i, pending))
            continue
        for up, new in product((False, True), repeat=2):
            condition = and_(pending, increases == up, undecided == new)
            if is_false(condition):
                continue
            key = (up, new, i) if ctx.has("kubelet-ignores-priority") else (up, -ctx.priorities[i], new, i)
            slots.append((key, i, condition))
    slots.sort(key=lambda slot: slot[0])
    return [(i, condition) for _, i, condition in slots]


def _retry_pass(ctx: Context, state: State, node: int) -> State:
    """One pass of retryPendingResizes over every pending resize of the node, in order; an
    allocation earlier in the pass reduces room for later ones (reference §2.2, §2.3)."""
    return _per_state(ctx, state, ("retry-pass", node), lambda: _retry_pass_of(ctx, state, node))


def _retry_pass_of(ctx: Context, state: State, node: int) -> State:
    state = _retry_pods(ctx, state, node)
    due = tuple(False if n == node else flag for n, flag in enumerate(state.retry_due))
    return evolve(state, retry_due=due)


def _retry_pods(ctx: Context, state: State, node: int) -> State:
    """The pass over the node's pending resizes (the pods it rewrites). It reads and writes only
    the pods on ``node``: on a concrete state the pods it rewrites are memoised on those."""
    if state_memo(ctx, state) is None:
        return _retry_pods_of(ctx, state, node)
    rewritten = node_local(ctx, state, node, "retry-pass", lambda: _rewritten(state, _retry_pods_of(ctx, state, node)),
                           keep=lambda value: True)
    if not rewritten:
        return state
    pods = list(state.pods)
    for i, pod in rewritten:
        # a rewritten pod is a new object, as _update makes it (never the object already in place)
        pods[i] = pod if pod is not pods[i] else evolve(pod)
    return evolve(state, pods=tuple(pods))


def _rewritten(before: State, after: State) -> tuple:
    return tuple((i, new) for i, (old, new) in enumerate(zip(before.pods, after.pods)) if new is not old)


def _retry_pods_of(ctx: Context, state: State, node: int) -> State:
    forget = ctx.has("forget-pending-condition")
    for i, in_slot in pending_resize_slots(ctx, state, node):
        pod = state.pods[i]
        revert = veq(pod.desired, pod.allocated)
        fits = and_(not_(revert), kubelet_fits_resize(ctx, state, i))
        was_deferred = pod.resize == ResizeReason.DEFERRED
        if forget:
            cleared = ite(was_deferred, ResizeReason.DEFERRED, ResizeReason.NONE)
            resize = ite(revert, cleared, ite(fits, pod.resize, ResizeReason.DEFERRED))
        else:
            resize = ite(or_(revert, fits), ResizeReason.NONE, ResizeReason.DEFERRED)
        fields = dict(resize=resize, observed=True,
                      allocated=ite(fits, pod.desired, pod.allocated),
                      in_progress=ite(fits, not_(veq(pod.desired, pod.actual)), pod.in_progress))
        state = _update(state, [(i, in_slot, fields)])
    return state


def retry_pending_resizes(ctx: Context, state: State):
    """The kubelet handles a pod update or a pod removal on its node and retries every pending
    resize (triggers pod_resized / pod_updated / pods_removed / pod_terminated; reference §2.3)."""
    for node in ctx.node_range:
        # per pod: it runs on the node with a resize the kubelet has not looked at (memoised on the
        # node's pods for concrete states)
        unobserved = node_local(ctx, state, node, "unobserved-on-node", lambda node=node: tuple(
            and_(_is_running(pod), pod.node == node, not_(pod.observed)) for pod in state.pods))
        guard = or_(state.retry_due[node], *unobserved)
        if is_false(guard):
            continue
        yield Action("RetryPendingResizes", (("node", ctx.node_names[node]),)), guard, _retry_pass(ctx, state, node)


def periodic_retry_pending_resizes(ctx: Context, state: State):
    """The kubelet's periodic retry (3 minutes after the last pass; reference §2.3, §7.4 P-8)."""
    if ctx.has("kubelet-never-retries-after-removal"):
        return
    for node in ctx.node_range:
        guard = any_(node_local(ctx, state, node, "deferred-on-node", lambda node=node: tuple(
            and_(_is_deferred(pod), pod.node == node) for pod in state.pods)))
        if is_false(guard):
            continue
        yield Action("PeriodicRetryPendingResizes", (("node", ctx.node_names[node]),)), guard, _retry_pass(ctx, state, node)


def actuate_resize(ctx: Context, state: State):
    """The kubelet actuates an allocated resize: actual := allocated, PodResizeInProgress cleared
    (reference §2.6); the completed resize triggers a retry of pending resizes (pod_resized, §2.3)."""
    for i, pod in enumerate(state.pods):
        guard = and_(_is_running(pod), pod.in_progress)
        if is_false(guard):
            continue
        after = _mark_retry_due(_set(state, i, actual=pod.allocated, in_progress=False), pod.node)
        yield Action("ActuateResize", (("pod", ctx.names[i]),)), guard, after


def finish_termination(ctx: Context, state: State):
    """A terminating pod (deleted or evicted) finishes its graceful termination and is removed; the
    kubelet owes a retry pass (pods_removed; reference §2.3, KEP-5836 §Kubelet-Scheduler Preemption
    Interaction)."""
    for i, pod in enumerate(state.pods):
        guard = pod.phase == Phase.TERMINATING
        if is_false(guard):
            continue
        after = _set(state, i, phase=Phase.GONE)
        if not ctx.has("kubelet-never-retries-after-removal"):
            after = _mark_retry_due(after, pod.node)
        yield Action("FinishTermination", (("pod", ctx.names[i]),)), guard, after


# --- the scheduler's event handlers (applied after every effect) -----------------------------------

def scheduler_observes(ctx: Context, before: State | None, after: State) -> State:
    """What the scheduler's informer event handlers do with the pod updates of one step.

    * AddPod at start-up / UpdatePod: a running pod that carries PodResizePending=Deferred enters
      the queue (gate on, node not opted out); when the condition disappears or the pod goes
      away it leaves the queue and the scheduler forgets what it kept for it (reference §4.3 (1),
      §4.4, §7.3 S-5, S-17, S-18).
    * Queueing hints: a parked/unschedulable Deferred pod is requeued when another pod on its
      node changes size or is deleted, or when its own desired changes (S-6..S-16); an
      unschedulable pending pod is requeued when an assigned pod is deleted or scales down, or a
      nominated pending pod is deleted (reference §3.5).
    """
    changed: list[tuple[int, object, object]] = []  # (pod index, condition, node where its footprint changed)
    shrunk_terms = []
    updated = []  # the indices of the pods that are new objects in this step
    own_changes = {}  # their index -> condition that their own desired changed
    if before is not None:
        for i, (old, new) in enumerate(zip(before.pods, after.pods)):
            if old is new:
                continue
            updated.append(i)
            terms, condition, own_changes[i] = _pod_event(ctx, old, new)
            shrunk_terms += terms
            if condition is not False:
                changed.append((i, condition, old.node))
    shrunk = or_(*shrunk_terms)
    changes = []
    quiet = is_false(shrunk)
    cache = None
    if type(shrunk) is bool:  # concrete so far: memoise the handlers' effect per pod (below)
        cache = ctx.cache.get(_OBSERVED)
        if cache is None:
            cache = ctx.cache[_OBSERVED] = {}
    changed_nodes = [node for _, _, node in changed]
    others_by_node = {}
    before_pods = before.pods if before is not None else None
    pods = None
    after_pods = after.pods
    # with no event, the loop below skips every pod that is not new: visit only the new ones
    visit = updated if before is not None and quiet and not changed else range(len(after_pods))
    for j in visit:
        pod = after_pods[j]
        old = before_pods[j] if before_pods is not None else None
        if old is pod or old is None:
            if quiet and old is pod:
                for node in changed_nodes:
                    if not is_false(node == pod.node):
                        break
                else:
                    continue  # an unchanged pod without events: the handlers already left it at a fixed point
            own_change = False
        else:
            own_change = own_changes[j]
        if not changed:
            others_changed = False
        elif type(pod.node) is int:  # concrete node: the same answer for every pod on it
            others_changed = others_by_node.get(pod.node, _MISSING)
            if others_changed is _MISSING:
                others_changed = others_by_node[pod.node] = _others_changed(changed, pod.node)
        else:
            others_changed = _others_changed(changed, pod.node)
        if cache is not None and type(own_change) is bool and type(others_changed) is bool and concrete_pod(pod):
            # concrete: the handlers' effect on this pod is a pure function of these four values
            key = (pod, own_change, shrunk, others_changed)
            handled = cache.get(key, _MISSING)
            if handled is _MISSING:
                fields = _observed_fields(ctx, pod, own_change, shrunk, others_changed)
                # keep the pod object itself when nothing changes
                same = all(getattr(pod, name) == value for name, value in fields.items())
                handled = cache[key] = None if same else fields
            if handled is not None:
                if pods is None:
                    pods = list(after.pods)
                pods[j] = evolve(pod, **handled)
            continue
        fields = _observed_fields(ctx, pod, own_change, shrunk, others_changed)
        if isinstance(pod.phase, int):  # concrete: keep the pod object itself when nothing changes
            if all(getattr(pod, name) == value for name, value in fields.items()):
                continue
        elif all(_same(getattr(pod, name), value) for name, value in fields.items()):
            continue
        changes.append((j, True, fields))
    if pods is not None:
        after = evolve(after, pods=tuple(pods))
    return _update(after, changes) if changes else after


def _others_changed(changed: list, node):
    """Another pod's footprint changed on ``node`` in this step (a queueing-hint event)."""
    return any_(and_(condition, where == node) for _, condition, where in changed)


_OBSERVED = "scheduler_observes"  # ctx.cache key of the concrete memo of _observed_fields
_EVENTS = "scheduler_observes/events"  # ctx.cache key of the concrete memo of _pod_event
_MISSING = object()


def _pod_event(ctx: Context, old: PodState, new: PodState) -> tuple[list, object, object]:
    """What the handlers see of one pod's update: the terms saying it freed room for unschedulable
    pending pods, the condition that its scheduler footprint changed on its (old) node, and the
    condition that its desired requests changed.
    Concrete results are memoised per context (a pure function of the two pods)."""
    concrete = concrete_pod(old) and concrete_pod(new)
    if concrete:
        cache = ctx.cache.get(_EVENTS)
        if cache is None:
            cache = ctx.cache[_EVENTS] = {}
        key = (old, new)
        cached = cache.get(key)
        if cached is not None:
            return cached
    terms = [and_(old.phase == Phase.PENDING, old.nominated != NO_NODE, new.phase == Phase.GONE)]
    condition = False
    was = assigned(old)
    if not is_false(was):
        still = assigned(new)
        old_size, new_size = scheduler_footprint(ctx, old), scheduler_footprint(ctx, new)
        resized = not_(veq(old_size, new_size))
        smaller = or_(*(n < o for n, o in zip(new_size, old_size)))
        condition = and_(was, or_(not_(still), resized))
        if is_false(condition):
            condition = False
        terms.append(and_(was, or_(not_(still), and_(still, smaller))))
    own_change = not_(veq(old.desired, new.desired))
    result = (terms, condition, own_change)
    if concrete and all(type(t) is bool for t in terms) and type(condition) is bool and type(own_change) is bool:
        cache[key] = result
    return result


def _observed_fields(ctx: Context, pod: PodState, own_change, shrunk, others_changed) -> dict:
    """The fields the handlers write on one pod of the step's result: its queue, and what the
    scheduler keeps for it (``own_change``: its own desired changed in this step; ``shrunk``: some
    pod freed room; ``others_changed``: another pod on its node changed size or went away)."""
    gate = ctx.variant.gate_on
    zero = vzero(ctx.width)
    pending = pod.phase == Phase.PENDING
    candidate = and_(gate, _is_deferred(pod), not_(pick(ctx.resize_preemption_disabled, pod.node, False)))
    queue = ite(pending, ite(and_(pod.queue == Queue.UNSCHEDULABLE, shrunk), Queue.ACTIVE, pod.queue),
                ite(candidate,
                    ite(or_(pod.queue == Queue.NOT_QUEUED,
                            and_(pod.queue == Queue.UNSCHEDULABLE, or_(own_change, others_changed),
                                 not ctx.has("scheduler-never-requeues-deferred"))),
                        Queue.ACTIVE, pod.queue),
                    Queue.NOT_QUEUED))
    outside = not_(or_(pending, candidate))  # neither pending nor a Deferred pod the scheduler tracks
    fields = dict(queue=queue, assumed=ite(outside, zero, pod.assumed), tracking=and_(not_(outside), pod.tracking),
                  promised=ite(and_(_is_running(pod), not_(veq(pod.desired, pod.allocated))), pod.promised, zero))
    if not ctx.has("resize-sets-nomination"):
        # the nominated-node-name guard's nomination is cleared with the Deferred condition
        fields["nominated"] = ite(and_(outside, assigned(pod)), NO_NODE, pod.nominated)
    return fields


def _same(old, new) -> bool:
    """Concretely equal (a symbolic value is never 'the same': it is always written)."""
    if isinstance(old, tuple):
        return len(old) == len(new) and all(_same(a, b) for a, b in zip(old, new))
    return isinstance(old, int) and isinstance(new, int) and old == new


NEXT: tuple[Callable[[Context, State], Iterator[tuple[Action, object, State]]], ...] = (
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


def transitions(ctx: Context, state: State) -> Iterator[tuple[Action, object, State]]:
    """Every action instance with its guard and its successor (event handlers applied), in NEXT
    order. On a symbolic state the guards and successors are Z3 terms."""
    for action_function in NEXT:
        for action, guard, after in action_function(ctx, state):
            yield action, guard, scheduler_observes(ctx, state, after)


def next_steps(ctx: Context, state: State) -> Iterator[tuple[Action, State]]:
    """Every enabled action instance and its successor on a concrete state (deterministic order)."""
    for action_function in NEXT:
        for action, guard, after in action_function(ctx, state):
            if guard is True:
                yield action, scheduler_observes(ctx, state, after)
            elif guard is not False:
                raise TypeError(f"{action.label()}: guard is not concrete on a concrete state: {guard!r}")


def apply_action(ctx: Context, state: State, label: str) -> State:
    """The successor reached by the action with this label; ValueError if it is not enabled."""
    for action, after in next_steps(ctx, state):
        if action.label() == label:
            return after
    enabled = ", ".join(a.label() for a, _ in next_steps(ctx, state)) or "none"
    raise ValueError(f"action {label} is not enabled here (enabled: {enabled})")
