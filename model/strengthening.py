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
from model.expr import all_, and_, any_, implies, not_, or_, veq
from model.state import NO_NODE, NO_POD, State

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


STRENGTHENING = {
    "FieldsInRange": fields_in_range,
    "NodeFollowsPhase": node_follows_phase,
    "EnvironmentBookkeeping": environment_bookkeeping,
    "SizesFromMenu": sizes_from_menu,
    "NoStatusBeforeAdmission": no_status_before_admission,
    "VictimsWerePreempted": victims_were_preempted,
}
