"""Strengthening invariants about what the scheduler's view can still hold: bound pods, promises and
nominations fit the scheduler's accounting of their nodes, claimed per resource until a resize that
may grow that resource happens (``model/properties/strengthening/history.py`` holds those about how
a state was reached; see ``model/properties/strengthening/__init__.py``).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase

from kepcheck.model.accounting.views import allocatable_of, nominated_load, scheduler_requested
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, any_, implies, is_concrete, is_false, not_, or_
from kepcheck.model.expr.vectors import vadd, veq, vle
from kepcheck.model.properties.strengthening.domains import initial_allocation, recreated, size_options
from kepcheck.model.state import State

__all__ = ["bound_pods_fit_scheduler_view", "promises_fit_scheduler_view", "nominations_fit_scheduler_view"]


def max_accounting(ctx: Context) -> bool:
    return ctx.variant.accounting == "max" and not ctx.mutants


def growing_entries(ctx: Context, resource: int | None = None) -> list:
    """The resize entries of the menu that may grow a pod's footprint (scheduler's or kubelet's):
    their requests exceed, in some resource (in ``resource`` when given), a size the pod's allocation
    or actual size may have. A resize at most every such size (e.g. a revert of an Infeasible resize)
    never grows one. With symbolic sizes every resize entry counts as growing."""
    growing = []
    for k, event in enumerate(ctx.events):
        if event.kind != "resize":
            continue
        held = initial_allocation(ctx, event.pod) + size_options(ctx, event.pod)
        values = tuple(event.requests) + tuple(x for size in held for x in size)
        compared = range(ctx.width) if resource is None else (resource,)
        if not is_concrete(*values) or any(not all(event.requests[r] <= size[r] for r in compared) for size in held):
            growing.append(k)
    return growing


def _before_growth(ctx: Context, state: State, resource: int | None = None):
    """No resize that may grow a footprint (in ``resource`` when given) has happened yet (see
    ``growing_entries``)."""
    return not_(any_(state.env_used[k] for k in growing_entries(ctx, resource)))


def bound_pods_fit_scheduler_view(ctx: Context, state: State):
    """Under max accounting, while a pod is bound but not yet admitted, the scheduler's Requested on
    its node (every assigned pod at max(desired, allocated, actual), the bound pod at its desired,
    terminating pods included) fits allocatable: it fitted when the pod was bound, and since then
    footprints only shrink (allocations grow only to a desired size already counted, terminating
    pods leave). Claimed per resource until a resize that may grow a footprint in that resource
    happens (a user resize after the bind that grows one: the resize-races-binding finding; see
    ``growing_entries``): a memory-only resize leaves the cpu claim standing."""
    if not max_accounting(ctx):
        return True
    before = [_before_growth(ctx, state, r) for r in range(ctx.width)]
    terms = []
    for node in ctx.node_range:
        bound = any_(and_(pod.phase == Phase.BOUND, pod.node == node) for pod in state.pods)
        requested, allocatable = scheduler_requested(ctx, state, node), allocatable_of(ctx, node)
        terms += [implies(and_(before[r], bound), requested[r] <= allocatable[r]) for r in range(ctx.width)]
    return all_(terms)


def promises_fit_scheduler_view(ctx: Context, state: State):
    """Under max accounting, while a pod carries a resize promise, the scheduler's Requested over the
    non-terminating pods of its node fits allocatable: the scheduler preempted until it fitted with
    the victims gone, and since then nothing grows. Claimed until a resize that may grow a footprint
    happens; for a promise of the pod's current requests (its last preemption was for the resize
    asked for now) until a resize of another pod that may grow a footprint happens: the pod's own
    footprint is what it was at that preemption, since its allocation has not changed (allocating
    drops the promise) and its requests are the promised ones."""
    if not max_accounting(ctx):
        return True
    zero = (0,) * ctx.width
    before_growth = _before_growth(ctx, state)
    terms = []
    for node in ctx.node_range:
        staying = {i: pod.phase == Phase.TERMINATING for i, pod in enumerate(state.pods)}
        fits = vle(scheduler_requested(ctx, state, node, staying), allocatable_of(ctx, node))
        for j, pod in enumerate(state.pods):
            promise = and_(pod.node == node, not_(veq(pod.promised, zero)))
            if is_false(promise):
                continue
            current = and_(veq(pod.promised, pod.desired), not_(others_grew(ctx, state, j)))
            terms.append(implies(and_(promise, or_(before_growth, current)), fits))
    return all_(terms)


def may_be_pending(ctx: Context, index: int) -> bool:
    spec = ctx.scenario.pods[index]
    return spec.node is None or recreated(ctx, index)


def nominations_fit_scheduler_view(ctx: Context, state: State):
    """Under max accounting, a pending pod nominated to a node fits there in the scheduler's view
    once the terminating pods are gone: the non-terminating pods of the node, the pods nominated
    there with at least its priority, and itself fit allocatable. The scheduler nominated it after
    evicting until it fitted (already terminating pods of higher priority counted), and since then
    nothing on the node grows: allocations grow only to a desired size already counted, a pod bound
    there or nominated there with at most its priority counted it, and a preemptor of higher
    priority clears the nomination. Claimed until a resize that may grow a footprint happens,
    when no pod starts nominated, and for a pod no other pod that may be pending outranks (a
    higher-priority pod binds without counting it)."""
    if not max_accounting(ctx):
        return True
    if any(spec.nominated_node is not None for spec in ctx.scenario.pods):
        return True
    terms = []
    for i, pod in enumerate(state.pods):
        if not may_be_pending(ctx, i):
            continue
        if any(may_be_pending(ctx, j) and ctx.priorities[j] > ctx.priorities[i] for j in ctx.pod_range if j != i):
            continue
        for node in ctx.node_range:
            staying = {j: other.phase == Phase.TERMINATING for j, other in enumerate(state.pods)}
            used = vadd(vadd(scheduler_requested(ctx, state, node, staying),
                             nominated_load(ctx, state, node, ctx.priorities[i], i)), pod.desired)
            terms.append(implies(and_(pod.phase == Phase.PENDING, pod.nominated == node),
                                 vle(used, allocatable_of(ctx, node))))
    return implies(_before_growth(ctx, state), all_(terms))


def others_grew(ctx: Context, state: State, index: int):
    """A resize of a pod other than ``index`` that may grow a footprint has happened."""
    return any_(state.env_used[k] for k in growing_entries(ctx) if ctx.events[k].pod != index)
