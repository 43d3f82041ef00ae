"""Strengthening invariants about history: what a reachable state still shows of how it was reached
(the user's resizes so far, the preemptions the scheduler made and for which size, what fitted
when it decided). Each is a state predicate ``(ctx, state)``, claimed only where the scenario's
structure makes it true, with the reason in its docstring (see ``model/properties/strengthening/__init__.py``).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting.footprints import kubelet_other_pod_requests, kubelet_resizing_pod_requests
from kepcheck.model.accounting.views import kubelet_fits_resize
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, any_, implies, is_concrete, is_false, not_, or_, pick
from kepcheck.model.expr.vectors import vadd, veq, vle
from kepcheck.model.properties.strengthening.domains import initial_allocation, ite_int, one_of, recreated, size_options
from kepcheck.model.state import State

__all__ = ["allocation_history_before_resizes", "deferred_resize_lacks_room", "resize_history"]


def resizes_used(ctx: Context, state: State, index: int):
    """How many of the pod's menu resizes the user has made so far (an int or a term)."""
    used = 0
    for k, event in enumerate(ctx.events):
        if event.kind == "resize" and event.pod == index:
            used = used + ite_int(state.env_used[k])
    return used


def resizes_to_defer(ctx: Context, index: int) -> int:
    """How many resizes a pod that starts on a node needs before the kubelet can mark it Deferred:
    none if it starts Deferred, one otherwise (0 for a pod that starts pending: not a resize)."""
    spec = ctx.scenario.pods[index]
    return 1 if spec.node is not None and spec.resize != "Deferred" else 0




def allocation_history_before_resizes(ctx: Context, state: State):
    """Until a user resizes a pod (while none of its resize entries of the menu is used) its
    requests are the initial ones, the kubelet has observed them, and it has had at most two
    allocations: a pod that starts on a node holds its initial allocation until the kubelet
    allocates its requests (the only change the kubelet makes, never undone while the requests stay),
    and its actual size is the initial one or an allocation it has had — the initial actual or
    allocation while the allocation is still the initial one; a pod that starts without a node is
    admitted at its requests (allocated = actual = requests) and keeps them while it is admitted
    (terminating: or nothing, when it was evicted while bound)."""
    zero = (0,) * ctx.width
    terms = []
    for i, pod in enumerate(state.pods):
        if recreated(ctx, i):
            continue  # a recreated pod starts its history again (pending, no status)
        entries = [k for k, event in enumerate(ctx.events) if event.kind == "resize" and event.pod == i]
        untouched = not_(any_(state.env_used[k] for k in entries))
        requests = tuple(ctx.scenario.pods[i].requests)
        facts = [veq(pod.desired, requests), pod.observed] if entries else []
        initial = initial_allocation(ctx, i)
        start = ctx.scenario.pods[i].resize
        if start == "Infeasible":
            facts.append(pod.resize == ResizeReason.INFEASIBLE)  # the kubelet re-evaluates it only after a resize
        elif start != "Deferred":
            facts.append(pod.resize == ResizeReason.NONE)
        if initial:
            allocated, actual = initial
            facts += [one_of(pod.allocated, [allocated, requests]),
                      one_of(pod.actual, [actual, allocated, requests]),
                      implies(veq(pod.allocated, allocated), one_of(pod.actual, [actual, allocated]))]
        else:
            holds = and_(veq(pod.allocated, requests), veq(pod.actual, requests))
            facts += [implies(pod.phase == Phase.RUNNING, holds),
                      implies(pod.phase == Phase.TERMINATING,
                              or_(holds, and_(veq(pod.allocated, zero), veq(pod.actual, zero))))]
        terms.append(implies(untouched, all_(facts)))
    return all_(terms)


def _size_changes_mixed(ctx: Context) -> bool:
    """Some allocation change of a pod could grow one resource and shrink another (or the sizes are
    symbolic with more than one resource, so this cannot be ruled out)."""
    if ctx.width == 1:
        return False
    for i in ctx.pod_range:
        sizes = initial_allocation(ctx, i) + size_options(ctx, i)
        if not is_concrete(*(x for size in sizes for x in size)):
            return True
        for old in sizes:
            for new in sizes:
                if any(n > o for n, o in zip(new, old)) and any(n < o for n, o in zip(new, old)):
                    return True
    return False


def _deferred_fits_at_start(ctx: Context, index: int):
    """The scenario declares the pod Deferred although the kubelet would admit its resize in the
    initial state (the loader allows it): the condition on the initial sizes (a term when they are
    symbolic)."""
    spec = ctx.scenario.pods[index]
    if spec.resize != "Deferred":
        return False
    allocated, actual = initial_allocation(ctx, index)
    own = kubelet_resizing_pod_requests(tuple(spec.requests), allocated, actual, ctx.variant.kubelet_measure)
    total = own
    for j, other in enumerate(ctx.scenario.pods):
        if j != index and other.node == spec.node and not other.arrival:
            total = vadd(total, kubelet_other_pod_requests(*initial_allocation(ctx, j)))
    return vle(total, ctx.allocatable[ctx.node_names.index(spec.node)])


def deferred_resize_lacks_room(ctx: Context, state: State):
    """A running pod the kubelet has marked Deferred (for its current requests) does not fit the
    kubelet's view of its node unless the kubelet owes the node a retry pass: the pass that deferred
    it found no room, later passes walk increasing resizes after every non-increasing one so room
    only shrinks behind it, and everything else that frees room on a node (a pod removed, a resize
    actuated) makes a retry due. Claimed for the Kubernetes retry order and without mutants, when no
    allocation change can grow one resource and shrink another, and not for a pod declared Deferred
    although it fits at the start."""
    if ctx.mutants or ctx.variant.kubelet_order != "kubernetes" or _size_changes_mixed(ctx):
        return True
    terms = []
    for i, pod in enumerate(state.pods):
        premise = and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED, pod.observed,
                       not_(pick(state.retry_due, pod.node, False)))
        if is_false(premise):
            continue
        terms.append(implies(premise, or_(_deferred_fits_at_start(ctx, i), not_(kubelet_fits_resize(ctx, state, i)))))
    return all_(terms)


def resize_entry_indices(ctx: Context, index: int) -> list:
    return [k for k, event in enumerate(ctx.events) if event.kind == "resize" and event.pod == index]


def resize_history(ctx: Context, state: State):
    """What a pod's resize fields say about the user's resizes so far. Its requests are the initial
    ones only while none of its resize entries is used (a menu resize differs from the initial
    requests and no entry can be used twice), and otherwise the requests of a used entry. A pod that
    starts Infeasible is never allocated its initial requests (the kubelet evaluates a pod again only
    after a resize, which replaces them). A Deferred condition on requests the kubelet has not seen
    yet was written for earlier requests: the pod started Deferred and was resized since, or it was
    resized twice. A promise of a menu resize's requests means that resize was used. A resize promise is never the pod's allocation: it is the requests the scheduler
    preempted for while they differed from the allocation, and the scheduler drops it when the
    allocation changes (the kubelet allocates only the requests)."""
    zero = (0,) * ctx.width
    terms = []
    for i, pod in enumerate(state.pods):
        terms.append(implies(not_(veq(pod.promised, zero)), not_(veq(pod.promised, pod.allocated))))
        entries = resize_entry_indices(ctx, i)
        if not entries:
            continue
        spec = ctx.scenario.pods[i]
        initial = tuple(spec.requests)
        if not is_concrete(*initial, *(x for k in entries for x in ctx.events[k].requests)):
            continue
        if all(tuple(ctx.events[k].requests) != initial for k in entries):
            terms.append(implies(veq(pod.desired, initial), not_(any_(state.env_used[k] for k in entries))))
        for option in {tuple(ctx.events[k].requests) for k in entries}:
            if option == initial:
                continue
            users = [state.env_used[k] for k in entries if tuple(ctx.events[k].requests) == option]
            terms.append(implies(veq(pod.desired, option), any_(users)))
            terms.append(implies(veq(pod.promised, option), any_(users)))
        if spec.resize == "Infeasible" and all(tuple(ctx.events[k].requests) != initial for k in entries):
            allocation = initial_allocation(ctx, i)
            if allocation and initial not in allocation:
                terms += [not_(veq(pod.allocated, initial)), not_(veq(pod.actual, initial))]
        used = 0
        for k in entries:
            used = used + ite_int(state.env_used[k])
        needed = 1 if spec.resize == "Deferred" else 2
        terms.append(implies(and_(pod.resize == ResizeReason.DEFERRED, not_(pod.observed)), used >= needed))
    return all_(terms)


