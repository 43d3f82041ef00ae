"""Strengthening invariants about history: what a reachable state still shows of how it was reached
(the user's resizes so far, the preemptions the scheduler made and for which size, what fitted
when it decided). Each is a state predicate ``(ctx, state)``, claimed only where the scenario's
structure makes it true, with the reason in its docstring (see ``model/strengthening/__init__.py``).
"""

from __future__ import annotations

from kepcheck.spec.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting import kubelet_other_pod_requests, kubelet_resizing_pod_requests
from kepcheck.model.context import Context
from kepcheck.model.expr import all_, and_, any_, implies, is_concrete, is_false, ite, not_, or_, pick, vadd, veq, vle
from kepcheck.model.state import NO_NODE, NO_POD, State
from kepcheck.model.strengthening.domains import (
    initial_allocation, ite_int, one_of, recreated, size_options, start_node,
)
from kepcheck.model.views import (
    allocatable_of, kubelet_fits_resize, nominated_load, scheduler_footprint, scheduler_requested,
)

__all__ = ["victims_keep_promise", "bound_pods_fit_scheduler_view", "promises_fit_scheduler_view",
           "allocation_history_before_resizes", "deferred_resize_lacks_room", "nominations_fit_scheduler_view",
           "resize_history", "preemptors_can_preempt", "resize_victims_after_deferral",
           "resize_victims_outweigh_kept_pods", "reprieve_order", "resize_preemptors_under_max_accounting"]


def _resizes_used(ctx: Context, state: State, index: int):
    """How many of the pod's menu resizes the user has made so far (an int or a term)."""
    used = 0
    for k, event in enumerate(ctx.events):
        if event.kind == "resize" and event.pod == index:
            used = used + ite_int(state.env_used[k])
    return used


def _resizes_to_defer(ctx: Context, index: int) -> int:
    """How many resizes a pod that starts on a node needs before the kubelet can mark it Deferred:
    none if it starts Deferred, one otherwise (0 for a pod that starts pending: not a resize)."""
    spec = ctx.scenario.pods[index]
    return 1 if spec.node is not None and spec.resize != "Deferred" else 0


def victims_keep_promise(ctx: Context, state: State):
    """While a pod evicted for a running pod is terminating or gone and that pod's resize is still
    outstanding (Deferred, desired != allocated), the pod carries the promise it preempted for: the
    scheduler's handlers drop the promise only when the resize is allocated or the pod stops running,
    and a scheduler restart keeps it (it is what the scheduler evicted for). Claimed while the user
    has resized that pod no more often than it takes to make it Deferred in the first place (never
    for a pod that starts Deferred or pending, once for any other pod that starts on a node, see
    ``resize_victims_after_deferral``): a further resize may make the pod Deferred anew after the
    allocation while the old victims still terminate (resize-superseded); until then an allocation
    resolves the resize for good."""
    zero = (0,) * ctx.width
    terms = []
    for j, claimant in enumerate(state.pods):
        untouched = _resizes_used(ctx, state, j) <= _resizes_to_defer(ctx, j)
        for victim in state.pods:
            terms.append(implies(and_(untouched, or_(victim.phase == Phase.TERMINATING, victim.phase == Phase.GONE),
                                      victim.preempted_by == j,
                                      claimant.phase == Phase.RUNNING, claimant.resize == ResizeReason.DEFERRED,
                                      not_(veq(claimant.desired, claimant.allocated))),
                                 not_(veq(claimant.promised, zero))))
    return all_(terms)


def _max_accounting(ctx: Context) -> bool:
    return ctx.variant.accounting == "max" and not ctx.mutants


def _growing_entries(ctx: Context, resource: int | None = None) -> list:
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
    ``_growing_entries``)."""
    return not_(any_(state.env_used[k] for k in _growing_entries(ctx, resource)))


def bound_pods_fit_scheduler_view(ctx: Context, state: State):
    """Under max accounting, while a pod is bound but not yet admitted, the scheduler's Requested on
    its node (every assigned pod at max(desired, allocated, actual), the bound pod at its desired,
    terminating pods included) fits allocatable: it fitted when the pod was bound, and since then
    footprints only shrink (allocations grow only to a desired size already counted, terminating
    pods leave). Claimed per resource until a resize that may grow a footprint in that resource
    happens (a user resize after the bind that grows one: the resize-races-binding finding; see
    ``_growing_entries``): a memory-only resize leaves the cpu claim standing."""
    if not _max_accounting(ctx):
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
    if not _max_accounting(ctx):
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
            current = and_(veq(pod.promised, pod.desired), not_(_others_grew(ctx, state, j)))
            terms.append(implies(and_(promise, or_(before_growth, current)), fits))
    return all_(terms)


def _others_grew(ctx: Context, state: State, index: int):
    """A resize of a pod other than ``index`` that may grow a footprint has happened."""
    return any_(state.env_used[k] for k in _growing_entries(ctx) if ctx.events[k].pod != index)


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


def _may_be_pending(ctx: Context, index: int) -> bool:
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
    if not _max_accounting(ctx):
        return True
    if any(spec.nominated_node is not None for spec in ctx.scenario.pods):
        return True
    terms = []
    for i, pod in enumerate(state.pods):
        if not _may_be_pending(ctx, i):
            continue
        if any(_may_be_pending(ctx, j) and ctx.priorities[j] > ctx.priorities[i] for j in ctx.pod_range if j != i):
            continue
        for node in ctx.node_range:
            staying = {j: other.phase == Phase.TERMINATING for j, other in enumerate(state.pods)}
            used = vadd(vadd(scheduler_requested(ctx, state, node, staying),
                             nominated_load(ctx, state, node, ctx.priorities[i], i)), pod.desired)
            terms.append(implies(and_(pod.phase == Phase.PENDING, pod.nominated == node),
                                 vle(used, allocatable_of(ctx, node))))
    return implies(_before_growth(ctx, state), all_(terms))


def _entries(ctx: Context, index: int) -> list:
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
        entries = _entries(ctx, i)
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


def _may_preempt_for_resize(ctx: Context, index: int) -> bool:
    spec = ctx.scenario.pods[index]
    return (ctx.variant.gate_on and spec.node is not None and not ctx.never_preempts[index]
            and not ctx.resize_preemption_disabled[ctx.node_names.index(spec.node)]
            and (spec.resize == "Deferred" or bool(_entries(ctx, index))))


def preemptors_can_preempt(ctx: Context, state: State):
    """DisruptionTarget names a pod that can preempt: a pod that may be pending (it starts without a
    node) and whose preemptionPolicy allows it, or a pod whose resize may be Deferred (it starts
    Deferred or the menu resizes it) on a node that does not opt out, with the gate on and
    preemption allowed; a pod evicted for a resize is on the resizing pod's node, and an evicted pod
    was on some node."""
    nodes = len(ctx.node_names)
    terms = []
    for i, pod in enumerate(state.pods):
        terms.append(implies(pod.preempted_by != NO_POD, and_(pod.node >= 0, pod.node < nodes)))
        for j in ctx.pod_range:
            if j == i:
                continue
            if _may_be_pending(ctx, j) and not ctx.never_preempts[j]:
                continue  # a pending pod evicts on the node it chooses
            if _may_preempt_for_resize(ctx, j):
                terms.append(implies(pod.preempted_by == j, pod.node == start_node(ctx, j)))
            else:
                terms.append(pod.preempted_by != j)
    return all_(terms)


def resize_victims_after_deferral(ctx: Context, state: State):
    """A pod evicted for a running pod's resize (DisruptionTarget names a pod that starts on a node)
    was evicted while the kubelet had that resize Deferred: the resizing pod started Deferred or the
    user has resized it. If the kubelet has not yet seen the resizing pod's current requests, the
    user resized it again after the eviction: it needs one resize more than it took to make it
    Deferred in the first place (the scheduler preempts only for a resize the kubelet deferred, so
    the kubelet had seen the requests then)."""
    terms = []
    for j in ctx.pod_range:
        if start_node(ctx, j) == NO_NODE or recreated(ctx, j):  # a recreated pod may evict while pending
            continue
        used, needed = _resizes_used(ctx, state, j), _resizes_to_defer(ctx, j)
        after = and_(used >= needed, implies(not_(state.pods[j].observed), used >= needed + 1))
        for i, victim in enumerate(state.pods):
            if i != j:
                terms.append(implies(victim.preempted_by == j, after))
    return all_(terms)


def reprieve_order(ctx: Context, claimant: int) -> list:
    """The pods of strictly lower priority than ``claimant`` in the order the greedy reprieve tries
    them (higher priority first, then the older: declaration order; model/preemption.py)."""
    lower = [i for i in ctx.pod_range if i != claimant and ctx.priorities[i] < ctx.priorities[claimant]]
    return sorted(lower, key=lambda i: (-ctx.priorities[i], i))


def resize_preemptors_under_max_accounting(ctx: Context) -> list:
    """The pods that may preempt for a resize, when the variant uses max accounting (none otherwise:
    the claims below are then trivially true). None either when the scenario has
    PodDisruptionBudgets: the reprieve order then depends on the budgets' status when the victims
    were chosen (``model/preemption.py``), which no state keeps, so the claims are not stated."""
    if not _max_accounting(ctx) or ctx.budgets:
        return []
    return [j for j in ctx.pod_range if _may_preempt_for_resize(ctx, j)]


def resize_victims_outweigh_kept_pods(ctx: Context, state: State):
    """Under max accounting, a pod the scheduler evicted for a running pod's resize (terminating or
    gone) is, in some resource, larger than any running pod ranked below it in the reprieve order on
    that node together with the running pods ranked between them that start there. The running pods
    were there when it was evicted (they start on the node) and the greedy reprieve kept them: it
    tried the victim first and found no room with it back, then found room with the pod below and
    those in between back, the same pods above them kept and the same claimant in both trials. A
    victim's size is fixed once it terminates, and the running pods' footprints only shrink since;
    claimed until a resize of another pod that may grow a footprint happens."""
    terms = []
    for j in resize_preemptors_under_max_accounting(ctx):
        node = start_node(ctx, j)
        grew = _others_grew(ctx, state, j)
        order = reprieve_order(ctx, j)
        for a, v in enumerate(order):
            victim = state.pods[v]
            evicted = and_(or_(victim.phase == Phase.TERMINATING, victim.phase == Phase.GONE), victim.preempted_by == j)
            if is_false(evicted):
                continue
            size = scheduler_footprint(ctx, victim, True)
            kept = [i for i in order[a + 1:] if start_node(ctx, i) == node]
            for b, r in enumerate(kept):
                total = scheduler_footprint(ctx, state.pods[r], True)
                for m in kept[:b]:
                    running = state.pods[m].phase == Phase.RUNNING
                    total = vadd(total, tuple(ite(running, x, 0) for x in scheduler_footprint(ctx, state.pods[m], True)))
                terms.append(implies(and_(evicted, state.pods[r].phase == Phase.RUNNING, not_(grew)),
                                     or_(*(size[x] > total[x] for x in range(ctx.width)))))
    return all_(terms)
