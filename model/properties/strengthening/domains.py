"""Strengthening invariants about domains and bookkeeping: what every reachable state's fields can
hold, given the scenario's structure (its pods, nodes, menu and variant), and the helpers the other
invariants share. Each is a state predicate ``(ctx, state)`` written with ``model/expr/scalars.py``
helpers (see ``model/properties/strengthening/__init__.py``).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, any_, implies, ite, not_, or_
from kepcheck.model.expr.vectors import veq
from kepcheck.model.state import NO_NODE, NO_POD, State

__all__ = ["start_node", "recreated", "size_options", "initial_allocation", "one_of", "ite_int", "resize_entries",
           "fields_in_range", "node_follows_phase", "environment_bookkeeping", "sizes_from_menu",
           "no_status_before_admission", "victims_were_preempted", "admitted_pods_hold_sizes",
           "scheduler_memory_of_variant", "promise_only_while_deferred", "infeasible_only_from_start",
           "termination_has_cause", "unchanged_pods_observed"]


def start_node(ctx: Context, index: int) -> int:
    spec = ctx.scenario.pods[index]
    return NO_NODE if spec.node is None else ctx.node_names.index(spec.node)


def recreated(ctx: Context, index: int) -> bool:
    """The environment's menu lets a controller recreate this pod once it is gone: it may then be
    pending again, on no node, and be bound anywhere (the invariants below that follow a pod from
    its start say nothing of such a pod beyond what holds for a pod that starts pending)."""
    return any(event.kind == "recreation" and event.pod == index for event in ctx.events)


def size_options(ctx: Context, index: int) -> list:
    """Every value the pod's desired size can take: its initial requests and its menu resizes."""
    options = [tuple(ctx.scenario.pods[index].requests)]
    for event in ctx.events:
        if event.kind == "resize" and event.pod == index:
            options.append(tuple(event.requests))
    return options


def initial_allocation(ctx: Context, index: int) -> list:
    spec = ctx.scenario.pods[index]
    if spec.node is None:
        return []
    allocated = spec.allocated if spec.allocated is not None else spec.requests
    actual = spec.actual if spec.actual is not None else allocated
    return [tuple(allocated), tuple(actual)]


def one_of(vector, options):
    return any_(veq(vector, option) for option in options)


def fields_in_range(ctx: Context, state: State):
    """Every enumerated field holds one of its values; indices name a node or a pod (or none); the
    rank of a PodResizePending condition's age is a rank among the pods (the kubelet's retry pass
    looks a pod up by it)."""
    nodes, pods = len(ctx.node_names), len(ctx.names)
    return all_(and_(pod.phase >= Phase.ABSENT, pod.phase <= Phase.REJECTED,
                     pod.resize >= ResizeReason.NONE, pod.resize <= ResizeReason.INFEASIBLE,
                     pod.queue >= Queue.NOT_QUEUED, pod.queue <= Queue.UNSCHEDULABLE,
                     pod.node >= NO_NODE, pod.node < nodes, pod.nominated >= NO_NODE, pod.nominated < nodes,
                     pod.preempted_by >= NO_POD, pod.preempted_by < pods,
                     pod.pending_since >= 0, pod.pending_since < pods)
                for pod in state.pods)


def node_follows_phase(ctx: Context, state: State):
    """A pod that starts on a node stays there; one that starts without a node has none until it is
    bound (absent or pending: no node; bound, running or terminating: some node)."""
    nodes = len(ctx.node_names)
    terms = []
    for i, pod in enumerate(state.pods):
        start = start_node(ctx, i)
        if start != NO_NODE and not recreated(ctx, i):
            terms.append(and_(pod.node == start, pod.phase >= Phase.RUNNING))
        else:
            terms.append(and_(implies(pod.phase <= Phase.PENDING, pod.node == NO_NODE),
                              implies(and_(pod.phase >= Phase.BOUND, pod.phase <= Phase.TERMINATING),
                                      and_(pod.node >= 0, pod.node < nodes))))
    return all_(terms)


def environment_bookkeeping(ctx: Context, state: State):
    """The event counter equals the number of menu entries used and stays within maxEvents; an
    arrival's pod is absent exactly while its entry is unused, and a pod that is no arrival is never
    absent. (What a used resize entry implies is ``sizes_from_menu`` and ``resize_history``.)"""
    used = 0
    for flag in state.env_used:
        used = used + ite_int(flag)
    terms = [state.env_events == used, state.env_events >= 0, state.env_events <= ctx.max_events]
    for k, event in enumerate(ctx.events):
        if event.kind == "arrival":
            terms.append((state.pods[event.pod].phase == Phase.ABSENT) == not_(state.env_used[k]))
    for i, pod in enumerate(state.pods):
        if not any(e.kind == "arrival" and e.pod == i for e in ctx.events):
            terms.append(pod.phase != Phase.ABSENT)
    return all_(terms)


def ite_int(flag):
    """1 where ``flag`` holds, else 0 (to count used menu entries)."""
    return ite(flag, 1, 0)


def sizes_from_menu(ctx: Context, state: State):
    """Desired is the initial requests or a menu resize; allocated and actual are zero (no status
    yet) or a size the pod had; promised and assumed are zero or a desired size."""
    terms = []
    zero = (0,) * ctx.width
    for i, pod in enumerate(state.pods):
        desired = size_options(ctx, i)
        held = [zero] + initial_allocation(ctx, i) + desired
        terms += [one_of(pod.desired, desired), one_of(pod.allocated, held), one_of(pod.actual, held),
                  one_of(pod.promised, [zero] + desired), one_of(pod.assumed, [zero] + desired)]
    return all_(terms)


def no_status_before_admission(ctx: Context, state: State):
    """A pod the kubelet has not admitted (absent, pending, bound) has no allocation, no actual size,
    no resize condition and nothing in progress; the scheduler queues only pending pods and
    Deferred running pods."""
    zero = (0,) * ctx.width
    terms = []
    for pod in state.pods:
        unadmitted = pod.phase <= Phase.BOUND
        terms.append(implies(unadmitted, and_(veq(pod.allocated, zero), veq(pod.actual, zero),
                                              pod.resize == ResizeReason.NONE, not_(pod.in_progress), pod.observed)))
        terms.append(implies(pod.queue != Queue.NOT_QUEUED,
                             or_(pod.phase == Phase.PENDING,
                                 and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED))))
        terms.append(implies(pod.phase != Phase.PENDING, implies(pod.nominated != NO_NODE, pod.phase == Phase.RUNNING)))
    return all_(terms)


def victims_were_preempted(ctx: Context, state: State):
    """Only a terminating or gone pod carries DisruptionTarget, and it never names the pod itself as
    its preemptor. (That the preemptor has a strictly higher priority is the catalog property
    VictimsStrictlyLowerPriority, not restated here.)"""
    terms = []
    for i, pod in enumerate(state.pods):
        terms.append(implies(pod.preempted_by != NO_POD, or_(pod.phase == Phase.TERMINATING, pod.phase == Phase.GONE)))
        terms.append(pod.preempted_by != i)
    return all_(terms)


def resize_entries(ctx: Context, index: int) -> bool:
    return any(event.kind == "resize" and event.pod == index for event in ctx.events)


def _deletion_entry(ctx: Context, index: int):
    return [k for k, event in enumerate(ctx.events) if event.kind == "deletion" and event.pod == index]


def admitted_pods_hold_sizes(ctx: Context, state: State):
    """A running pod holds a real allocation: its allocated and actual sizes are a size it had (the
    initial status or one of its desired sizes), never the empty status of an unadmitted pod. A
    terminating pod holds one too, or none at all when it was evicted while bound (not admitted)."""
    zero = (0,) * ctx.width
    terms = []
    for i, pod in enumerate(state.pods):
        held = initial_allocation(ctx, i) + size_options(ctx, i)
        holds = and_(one_of(pod.allocated, held), one_of(pod.actual, held))
        terms.append(implies(pod.phase == Phase.RUNNING, holds))
        terms.append(implies(pod.phase == Phase.TERMINATING,
                             or_(holds, and_(veq(pod.allocated, zero), veq(pod.actual, zero)))))
    return all_(terms)


def scheduler_memory_of_variant(ctx: Context, state: State):
    """Scheduler memory the variant does not use stays empty: nothing is assumed for a resize unless
    the variant's reservation is an explicit assume, nothing is tracked unless the double-preemption
    guard is the in-memory one (the fields exist for those variants only)."""
    zero = (0,) * ctx.width
    terms = []
    for pod in state.pods:
        if ctx.variant.reservation != "assume":
            terms.append(veq(pod.assumed, zero))
        if ctx.variant.double_preemption_guard != "in-memory":
            terms.append(not_(pod.tracking))
    return all_(terms)


def promise_only_while_deferred(ctx: Context, state: State):
    """A resize promise (the size the scheduler evicted victims for) exists only while the pod is
    running with its resize still outstanding and Deferred: the scheduler's handlers drop it as soon
    as the kubelet allocates (desired = allocated) or the pod stops running, and the kubelet never
    turns a Deferred resize into anything but allocated or Deferred."""
    zero = (0,) * ctx.width
    return all_(implies(not_(veq(pod.promised, zero)),
                        and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED,
                             not_(veq(pod.desired, pod.allocated))))
                for pod in state.pods)


def infeasible_only_from_start(ctx: Context, state: State):
    """Only a pod that starts Infeasible, or one whose node may pin a resource it resizes (a
    Guaranteed pod beside a static CPU or memory manager, ``kubelet.resize_infeasible``), can carry
    PodResizePending=Infeasible: otherwise the kubelet's retry pass writes Deferred or clears the
    condition (requests above allocatable never reach a pod)."""
    return all_(pod.resize != ResizeReason.INFEASIBLE for i, pod in enumerate(state.pods)
                if ctx.scenario.pods[i].resize != "Infeasible" and not any(ctx.pinned_resources[i]))


def termination_has_cause(ctx: Context, state: State):
    """A pod terminates (or is gone after terminating) only because the scheduler evicted it
    (DisruptionTarget set) or a user deleted it (its deletion entry of the menu is used)."""
    terms = []
    for i, pod in enumerate(state.pods):
        causes = [pod.preempted_by != NO_POD] + [state.env_used[k] for k in _deletion_entry(ctx, i)]
        terms.append(implies(or_(pod.phase == Phase.TERMINATING, pod.phase == Phase.GONE), or_(*causes)))
    return all_(terms)


def unchanged_pods_observed(ctx: Context, state: State):
    """A pod whose requests are never changed (no resize of it in the menu) has always been observed
    by the kubelet: only a user's resize makes the kubelet's view of a pod stale."""
    return all_(pod.observed for i, pod in enumerate(state.pods) if not resize_entries(ctx, i))
