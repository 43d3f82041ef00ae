"""Auxiliary invariants that strengthen k-induction (issue 4), one function per invariant.

k-induction starts its path in an *arbitrary* state that satisfies the hypothesis; most such
states are not reachable (a phase of 17, a pod of size -3, an environment counter that disagrees
with the menu). These invariants rule those states out. Each is a state predicate ``(ctx,
state)`` written with ``model/expr.py`` helpers, so it evaluates on concrete states (the tests
check it on every state the explicit engine explores) and on Z3 terms; the symbolic engine proves
their conjunction by k-induction before it assumes them (``checks.bmc.prove_strengthening``).

They speak only about domains and bookkeeping that follow from the scenario's structure; none
restates a catalog property. What is deliberately left out: invariants specific to one scenario.
"""

from __future__ import annotations

from spec.vocabulary import Phase, Queue, ResizeReason

from model.context import Context
from model.expr import all_, and_, any_, implies, not_, or_, veq, vle
from model.state import NO_NODE, NO_POD, State
from model.views import allocatable_of, scheduler_requested

__all__ = ["STRENGTHENING", "size_options", "start_node"]


def start_node(ctx: Context, index: int) -> int:
    spec = ctx.scenario.pods[index]
    return NO_NODE if spec.node is None else ctx.node_names.index(spec.node)


def size_options(ctx: Context, index: int) -> list:
    """Every value the pod's desired size can take: its initial requests and its menu resizes."""
    options = [tuple(ctx.scenario.pods[index].requests)]
    for event in ctx.events:
        if event.kind == "resize" and event.pod == index:
            options.append(tuple(event.requests))
    return options


def _initial_allocation(ctx: Context, index: int) -> list:
    spec = ctx.scenario.pods[index]
    if spec.node is None:
        return []
    allocated = spec.allocated if spec.allocated is not None else spec.requests
    actual = spec.actual if spec.actual is not None else allocated
    return [tuple(allocated), tuple(actual)]


def _one_of(vector, options):
    return any_(veq(vector, option) for option in options)


def fields_in_range(ctx: Context, state: State):
    """Every enumerated field holds one of its values; indices name a node or a pod (or none)."""
    nodes, pods = len(ctx.node_names), len(ctx.names)
    return all_(and_(pod.phase >= Phase.ABSENT, pod.phase <= Phase.REJECTED,
                     pod.resize >= ResizeReason.NONE, pod.resize <= ResizeReason.INFEASIBLE,
                     pod.queue >= Queue.NOT_QUEUED, pod.queue <= Queue.UNSCHEDULABLE,
                     pod.node >= NO_NODE, pod.node < nodes, pod.nominated >= NO_NODE, pod.nominated < nodes,
                     pod.preempted_by >= NO_POD, pod.preempted_by < pods)
                for pod in state.pods)


def node_follows_phase(ctx: Context, state: State):
    """A pod that starts on a node stays there; one that starts without a node has none until it is
    bound (absent or pending: no node; bound, running or terminating: some node)."""
    nodes = len(ctx.node_names)
    terms = []
    for i, pod in enumerate(state.pods):
        start = start_node(ctx, i)
        if start != NO_NODE:
            terms.append(and_(pod.node == start, pod.phase >= Phase.RUNNING))
        else:
            terms.append(and_(implies(pod.phase <= Phase.PENDING, pod.node == NO_NODE),
                              implies(and_(pod.phase >= Phase.BOUND, pod.phase <= Phase.TERMINATING),
                                      and_(pod.node >= 0, pod.node < nodes))))
    return all_(terms)


def environment_bookkeeping(ctx: Context, state: State):
    """The event counter equals the number of menu entries used and stays within maxEvents; an
    arrival's pod is absent exactly while its entry is unused; a resize entry unused means ... (the
    desired size is one of the menu's values, see ``sizes_from_menu``)."""
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
    from model.expr import ite

    return ite(flag, 1, 0)


def sizes_from_menu(ctx: Context, state: State):
    """Desired is the initial requests or a menu resize; allocated and actual are zero (no status
    yet) or a size the pod had; promised and assumed are zero or a desired size."""
    terms = []
    zero = (0,) * ctx.width
    for i, pod in enumerate(state.pods):
        desired = size_options(ctx, i)
        held = [zero] + _initial_allocation(ctx, i) + desired
        terms += [_one_of(pod.desired, desired), _one_of(pod.allocated, held), _one_of(pod.actual, held),
                  _one_of(pod.promised, [zero] + desired), _one_of(pod.assumed, [zero] + desired)]
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
    """Only a terminating or gone pod carries DisruptionTarget, and its preemptor has a strictly
    higher priority... (restricted to the shape: a pod never names itself)."""
    terms = []
    for i, pod in enumerate(state.pods):
        terms.append(implies(pod.preempted_by != NO_POD, or_(pod.phase == Phase.TERMINATING, pod.phase == Phase.GONE)))
        terms.append(pod.preempted_by != i)
    return all_(terms)


def _resize_entries(ctx: Context, index: int) -> bool:
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
        held = _initial_allocation(ctx, i) + size_options(ctx, i)
        holds = and_(_one_of(pod.allocated, held), _one_of(pod.actual, held))
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
    """Only a pod that starts Infeasible can carry PodResizePending=Infeasible: the kubelet's retry
    pass writes Deferred or clears the condition (requests above allocatable never reach a pod)."""
    return all_(pod.resize != ResizeReason.INFEASIBLE for i, pod in enumerate(state.pods)
                if ctx.scenario.pods[i].resize != "Infeasible")


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
    return all_(pod.observed for i, pod in enumerate(state.pods) if not _resize_entries(ctx, i))


def victims_keep_promise(ctx: Context, state: State):
    """While a victim evicted for a running pod is still terminating and that pod's resize is still
    outstanding (Deferred, desired != allocated), the pod carries the promise it preempted for: the
    scheduler's handlers drop the promise only when the resize is allocated or the pod stops running. Claimed for pods without resizes in the menu
    (a user may resize again after the allocation, making the pod Deferred anew while the old
    victims still terminate: resize-superseded)."""
    zero = (0,) * ctx.width
    terms = []
    for victim in state.pods:
        for j, claimant in enumerate(state.pods):
            if _resize_entries(ctx, j):
                continue
            terms.append(implies(and_(victim.phase == Phase.TERMINATING, victim.preempted_by == j,
                                      claimant.phase == Phase.RUNNING, claimant.resize == ResizeReason.DEFERRED,
                                      not_(veq(claimant.desired, claimant.allocated))),
                                 not_(veq(claimant.promised, zero))))
    return all_(terms)


def _max_accounting(ctx: Context) -> bool:
    return ctx.variant.accounting == "max" and not ctx.mutants


def bound_pods_fit_scheduler_view(ctx: Context, state: State):
    """Under max accounting, while a pod is bound but not yet admitted, the scheduler's Requested on
    its node (every assigned pod at max(desired, allocated, actual), the bound pod at its desired,
    terminating pods included) fits allocatable: it fitted when the pod was bound, and since then
    footprints only shrink (allocations grow only to a desired size already counted, terminating
    pods leave). Claimed only when no resize is in the menu (a user resize after the bind grows a
    footprint: the resize-races-binding finding)."""
    if not _max_accounting(ctx) or any(e.kind == "resize" for e in ctx.events):
        return True
    return all_(implies(any_(and_(pod.phase == Phase.BOUND, pod.node == node) for pod in state.pods),
                        vle(scheduler_requested(ctx, state, node), allocatable_of(ctx, node)))
                for node in ctx.node_range)


def promises_fit_scheduler_view(ctx: Context, state: State):
    """Under max accounting, while a pod carries a resize promise, the scheduler's Requested over the
    non-terminating pods of its node fits allocatable: the scheduler preempted until it fitted with
    the victims gone, and since then nothing grows (claimed only without resizes in the menu)."""
    if not _max_accounting(ctx) or any(e.kind == "resize" for e in ctx.events):
        return True
    zero = (0,) * ctx.width
    terms = []
    for node in ctx.node_range:
        staying = {i: pod.phase == Phase.TERMINATING for i, pod in enumerate(state.pods)}
        promise = any_(and_(pod.node == node, not_(veq(pod.promised, zero))) for pod in state.pods)
        terms.append(implies(promise, vle(scheduler_requested(ctx, state, node, staying), allocatable_of(ctx, node))))
    return all_(terms)


STRENGTHENING = {
    "FieldsInRange": fields_in_range,
    "NodeFollowsPhase": node_follows_phase,
    "EnvironmentBookkeeping": environment_bookkeeping,
    "SizesFromMenu": sizes_from_menu,
    "NoStatusBeforeAdmission": no_status_before_admission,
    "VictimsWerePreempted": victims_were_preempted,
    "AdmittedPodsHoldSizes": admitted_pods_hold_sizes,
    "SchedulerMemoryOfVariant": scheduler_memory_of_variant,
    "PromiseOnlyWhileDeferred": promise_only_while_deferred,
    "InfeasibleOnlyFromStart": infeasible_only_from_start,
    "TerminationHasCause": termination_has_cause,
    "UnchangedPodsObserved": unchanged_pods_observed,
    "VictimsKeepPromise": victims_keep_promise,
    "BoundPodsFitSchedulerView": bound_pods_fit_scheduler_view,
    "PromisesFitSchedulerView": promises_fit_scheduler_view,
}
