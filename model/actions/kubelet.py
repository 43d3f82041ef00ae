"""The kubelet's actions (per node): admission, the pending-resize retry pass, actuation and the end
of a pod's termination (docs/reference.md §2).

The retry pass walks the node's pending resizes in the kubelet's order and allocates each one
that fits; an allocation earlier in the pass leaves less room for later ones (docs/reference.md §2.2,
§2.3). It runs on the events the kubelet retries on (``RetryPendingResizes``: a pod update, a
removed pod, a completed resize) and periodically (``PeriodicRetryPendingResizes``, 3 minutes:
time is abstract, it may happen at any time).

The kubelet's own Infeasible decision comes first (``resize_infeasible``: a Guaranteed pod changing a
request its node's static CPU or memory manager pins, ``spec/kubernetes/qos.py``): such a resize is never
retried until the pod is resized again.

The retry order is ``sortPendingResizes``'s: non-increasing first, priority, QoS class, then the age of
the ``PodResizePending`` condition (its lastTransitionTime as a rank, ``model/actions/queue_order.py``). The
kubelet sorts its list only when it pushes a pod that is not in it yet; the model sorts on every pass,
which gives the same order: a pod stays in the list only while Deferred, and so increasing (a resize
that increases nothing is always allocated, in the pass it is pushed), its priority and class never
change, and a condition set during a pass is newer than every condition set before it, as the
pod without one was ranked after them.

Conditions and generations. ``handlePodResourcesResize`` (``pkg/kubelet/allocation/allocation_manager.go``)
always evaluates the latest spec against the allocation: equal, PodResizePending is cleared (a revert);
allocated, PodResizePending is cleared and PodResizeInProgress cleared and set again with the pod's
current generation, even when the new allocation equals what the runtime runs (a revert of an
allocation not yet actuated); otherwise PodResizePending is set with the current generation. Before it
generates each API status, ``SyncPod`` (``pkg/kubelet/kubelet.go``) sets PodResizeInProgress if the
runtime's resources differ from the allocation and clears it otherwise (ResizeCompleted), so the
status the API receives carries PodResizeInProgress exactly when allocated differs from actual, which
is what the model writes at once. Generations are not a field of the model: every spec change bumps
``metadata.generation``, and ``observed`` says whether the kubelet has evaluated the current one (a
condition's ``observedGeneration`` equals it); nothing reads the numbers further (``IsPodResizeDeferred``
reads the reason only, docs/reference.md §1 "Infeasible detection"). So "resize, revert, resize again" before
the kubelet looks is, for the kubelet, one evaluation of the latest spec: the condition and its age
stay (scenario ``deferred-resize-requested-again``); after it looked, the revert cleared the condition.

Left out: kubelet restarts, Infeasible for static pods, swap and pod-level resizes, the
``pods_added`` retry trigger (a new pod only takes room, it never lets a pending resize through),
the order of pushes within one step (several pods the kubelet has not looked at are handled in one
pass, in declaration order among equal keys), actuation errors (PodResizeInProgress with reason
Error), and the race ``SyncPod`` notes in a TODO: an allocation between its PodResizeInProgress
update and ``generateAPIPodStatus`` can publish the condition for one status with allocated equal
to actual (a revert), until the next sync clears it.
"""

from __future__ import annotations

from itertools import product

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason
from kepcheck.spec.kubernetes.qos import QOS_CLASSES

from kepcheck.model.accounting.views import kubelet_fits_admission, kubelet_fits_resize
from kepcheck.model.context import Context, overridable
from kepcheck.model.expr.scalars import and_, any_, is_false, ite, not_, or_
from kepcheck.model.expr.vectors import veq
from kepcheck.model.memo import differs, node_local, per_state
from kepcheck.model.state import PodState, State, evolve
from kepcheck.model.step import Action, is_deferred, is_running, mark_retry_due, set_pod, update

__all__ = ["admit_pod", "reject_pod", "pending_resize_slots", "retry_order_key", "resize_condition_after_retry",
           "resize_infeasible",
           "retry_pending_resizes", "periodic_retry_pending_resizes", "actuate_resize", "finish_termination",
           "pods_removed_retry"]


def admit_pod(ctx: Context, state: State):
    """The kubelet admits a newly bound pod that fits next to the admitted pods (docs/reference.md §2.1)."""
    for i, pod in enumerate(state.pods):
        bound = pod.phase == Phase.BOUND
        if is_false(bound):
            continue
        guard = and_(bound, kubelet_fits_admission(ctx, state, i))
        if is_false(guard):
            continue
        after = set_pod(state, i, phase=Phase.RUNNING, allocated=pod.desired, actual=pod.desired)
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
        yield Action("RejectPod", (("pod", ctx.names[i]),)), guard, set_pod(state, i, phase=Phase.REJECTED)


def _increases(pod: PodState):
    return or_(*(d > a for d, a in zip(pod.desired, pod.allocated)))


@overridable
def retry_order_key(ctx: Context, index: int, increases: bool, undecided: bool, since: int) -> tuple:
    """The kubelet's sort key of a pending resize (``sortPendingResizes``, docs/reference.md §2.3): resizes that
    increase no request first, then higher priority, then Guaranteed before Burstable, then pods that
    carry PodResizePending, the older condition first (``since``: the rank of its lastTransitionTime,
    ``model/actions/queue_order.py``), then those that carry none; equal ages in declaration order."""
    return increases, -ctx.priorities[index], QOS_CLASSES.index(ctx.qos_classes[index]), undecided, since, index


def pending_resize_slots(ctx: Context, state: State, node: int) -> list[tuple[int, object]]:
    """The kubelet's pending-resize list for ``node`` in retry order (docs/reference.md §2.3), as
    ``(pod index, condition)`` slots: each pod has one slot per value of the state-dependent parts
    of its sort key (``retry_order_key``), and the condition says the pod is pending and its key has
    those values. The slots are in key order, so processing the slots whose condition holds walks
    the list in order. ``fifo``: declaration order only.
    """
    slots = []
    for i, pod in enumerate(state.pods):
        pending = and_(pod.phase == Phase.RUNNING, pod.node == node,
                       or_(not_(pod.observed), pod.resize == ResizeReason.DEFERRED))
        if is_false(pending):
            continue
        if ctx.variant.kubelet_order == "fifo":
            slots.append(((i,), i, pending))
            continue
        increases = _increases(pod)
        undecided = pod.resize == ResizeReason.NONE
        if type(increases) is bool and type(undecided) is bool and type(pod.pending_since) is int:
            slots.append((retry_order_key(ctx, i, increases, undecided, pod.pending_since), i, pending))
            continue
        for up, new, since in product((False, True), (False, True), range(len(state.pods))):
            condition = and_(pending, increases == up, undecided == new, pod.pending_since == since)
            if not is_false(condition):
                slots.append((retry_order_key(ctx, i, up, new, since), i, condition))
    slots.sort(key=lambda slot: slot[0])
    return [(i, condition) for _, i, condition in slots]


@overridable
def resize_condition_after_retry(ctx: Context, pod: PodState, revert, fits):
    """PodResizePending after the kubelet decided on the pod's resize: cleared when the resize is
    reverted (desired = allocated) or allocated, Deferred when it does not fit (docs/reference.md §2.2, §2.4)."""
    return ite(or_(revert, fits), ResizeReason.NONE, ResizeReason.DEFERRED)


def resize_infeasible(ctx: Context, pod: PodState, index: int):
    """``podResizesAdmitHandler``, the kubelet's first admit handler: the resize changes a request that
    the pod's node pins for it (a Guaranteed pod beside a static CPU or memory manager; docs/reference.md §2.2,
    ``spec/kubernetes/qos.py``). Decided before the fit: Infeasible however much room there is."""
    return or_(*(and_(pod.node == n, not_(veq([pod.desired[r] for r in pinned], [pod.allocated[r] for r in pinned])))
                 for n, pinned in enumerate(ctx.pinned_resources[index]) if pinned))


def _retry_pods(ctx: Context, state: State, node: int) -> State:
    """The pass over the node's pending resizes, in order."""
    for i, in_slot in pending_resize_slots(ctx, state, node):
        pod = state.pods[i]
        revert = veq(pod.desired, pod.allocated)
        infeasible = and_(not_(revert), resize_infeasible(ctx, pod, i))
        fits = and_(not_(revert), not_(infeasible), kubelet_fits_resize(ctx, state, i))
        condition = resize_condition_after_retry(ctx, pod, revert, fits)
        fields = dict(resize=ite(infeasible, ResizeReason.INFEASIBLE, condition), observed=True,
                      allocated=ite(fits, pod.desired, pod.allocated),
                      in_progress=ite(fits, not_(veq(pod.desired, pod.actual)), pod.in_progress))
        state = update(state, [(i, in_slot, fields)])
    return state


@node_local(lambda state, node: (node, None))
def _pods_after_retry(ctx: Context, state: State, node: int) -> tuple:
    """(index, pod) for every pod the pass over ``node`` changes: it reads and writes only the pods
    on the node, so the pass is memoised on those."""
    after = _retry_pods(ctx, state, node)
    return tuple((i, new) for i, (old, new) in enumerate(zip(state.pods, after.pods)) if differs(old, new))


@per_state
def _retry_pass(ctx: Context, state: State, node: int) -> State:
    """One pass of retryPendingResizes over every pending resize of the node; the retry it owed is done."""
    pods = list(state.pods)
    for i, pod in _pods_after_retry(ctx, state, node):
        pods[i] = pod
    due = tuple(False if n == node else flag for n, flag in enumerate(state.retry_due))
    return evolve(state, pods=tuple(pods), retry_due=due)


@node_local(lambda state, node, kind: (node, None))
def _node_flags(ctx: Context, state: State, node: int, kind: str) -> tuple:
    """Per pod: it runs on ``node`` with a resize the kubelet has not looked at (``unobserved``), or
    it runs there Deferred (``deferred``)."""
    if kind == "unobserved":
        return tuple(and_(is_running(pod), pod.node == node, not_(pod.observed)) for pod in state.pods)
    return tuple(and_(is_deferred(pod), pod.node == node) for pod in state.pods)


def retry_pending_resizes(ctx: Context, state: State):
    """The kubelet handles a pod update or a pod removal on its node and retries every pending
    resize (triggers pod_resized / pod_updated / pods_removed / pod_terminated; docs/reference.md §2.3)."""
    for node in ctx.node_range:
        guard = or_(state.retry_due[node], *_node_flags(ctx, state, node, "unobserved"))
        if is_false(guard):
            continue
        yield Action("RetryPendingResizes", (("node", ctx.node_names[node]),)), guard, _retry_pass(ctx, state, node)


@overridable
def periodic_retry_pending_resizes(ctx: Context, state: State):
    """The kubelet's periodic retry (3 minutes after the last pass; docs/reference.md §2.3, §7.4 P-8)."""
    for node in ctx.node_range:
        guard = any_(_node_flags(ctx, state, node, "deferred"))
        if is_false(guard):
            continue
        yield Action("PeriodicRetryPendingResizes", (("node", ctx.node_names[node]),)), guard, _retry_pass(ctx, state, node)


def actuate_resize(ctx: Context, state: State):
    """The kubelet actuates an allocated resize: actual := allocated, PodResizeInProgress cleared
    (docs/reference.md §2.6); the completed resize triggers a retry of pending resizes (pod_resized, §2.3)."""
    for i, pod in enumerate(state.pods):
        guard = and_(is_running(pod), pod.in_progress)
        if is_false(guard):
            continue
        after = mark_retry_due(set_pod(state, i, actual=pod.allocated, in_progress=False), pod.node)
        yield Action("ActuateResize", (("pod", ctx.names[i]),)), guard, after


@overridable
def pods_removed_retry(ctx: Context, state: State, node) -> State:
    """A pod left ``node``: the kubelet owes a retry pass over its pending resizes (pods_removed,
    docs/reference.md §2.3; KEP-5836 §Kubelet-Scheduler Preemption Interaction)."""
    return mark_retry_due(state, node)


def finish_termination(ctx: Context, state: State):
    """A terminating pod (deleted or evicted) finishes its graceful termination and is removed; the
    kubelet owes a retry pass (pods_removed)."""
    for i, pod in enumerate(state.pods):
        guard = pod.phase == Phase.TERMINATING
        if is_false(guard):
            continue
        after = pods_removed_retry(ctx, set_pod(state, i, phase=Phase.GONE), pod.node)
        yield Action("FinishTermination", (("pod", ctx.names[i]),)), guard, after
