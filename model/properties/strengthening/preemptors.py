"""Strengthening invariants about preemptors and their victims: a victim's promise is kept while it
terminates, a preemptor could preempt when it did, and what the victims of a Deferred resize
outweigh (see ``model/properties/strengthening/__init__.py``; the preemption lemmas of
``lemmas.py`` build on these).
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting.views import scheduler_footprint
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, implies, is_false, ite, not_, or_
from kepcheck.model.expr.vectors import vadd, veq
from kepcheck.model.properties.strengthening.domains import recreated, start_node
from kepcheck.model.properties.strengthening.fits import max_accounting, may_be_pending, others_grew
from kepcheck.model.properties.strengthening.history import resize_entry_indices, resizes_to_defer, resizes_used
from kepcheck.model.state import NO_NODE, NO_POD, State

__all__ = [
    "victims_keep_promise", "preemptors_can_preempt", "resize_victims_after_deferral", "reprieve_order",
    "resize_preemptors_under_max_accounting", "resize_victims_outweigh_kept_pods",
]


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
        untouched = resizes_used(ctx, state, j) <= resizes_to_defer(ctx, j)
        for victim in state.pods:
            terms.append(implies(and_(untouched, or_(victim.phase == Phase.TERMINATING, victim.phase == Phase.GONE),
                                      victim.preempted_by == j,
                                      claimant.phase == Phase.RUNNING, claimant.resize == ResizeReason.DEFERRED,
                                      not_(veq(claimant.desired, claimant.allocated))),
                                 not_(veq(claimant.promised, zero))))
    return all_(terms)


def _may_preempt_for_resize(ctx: Context, index: int) -> bool:
    spec = ctx.scenario.pods[index]
    return (ctx.variant.gate_on and spec.node is not None and not ctx.never_preempts[index]
            and not ctx.resize_preemption_disabled[ctx.node_names.index(spec.node)]
            and (spec.resize == "Deferred" or bool(resize_entry_indices(ctx, index))))


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
            if may_be_pending(ctx, j) and not ctx.never_preempts[j]:
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
        used, needed = resizes_used(ctx, state, j), resizes_to_defer(ctx, j)
        after = and_(used >= needed, implies(not_(state.pods[j].observed), used >= needed + 1))
        for i, victim in enumerate(state.pods):
            if i != j:
                terms.append(implies(victim.preempted_by == j, after))
    return all_(terms)


def reprieve_order(ctx: Context, claimant: int) -> list:
    """The pods of strictly lower priority than ``claimant`` in the order the greedy reprieve tries
    them (higher priority first, then the older: declaration order; model/actions/preemption.py)."""
    lower = [i for i in ctx.pod_range if i != claimant and ctx.priorities[i] < ctx.priorities[claimant]]
    return sorted(lower, key=lambda i: (-ctx.priorities[i], i))


def resize_preemptors_under_max_accounting(ctx: Context) -> list:
    """The pods that may preempt for a resize, when the variant uses max accounting (none otherwise:
    the claims below are then trivially true). None either when the scenario has
    PodDisruptionBudgets: the reprieve order then depends on the budgets' status when the victims
    were chosen (``model/actions/preemption.py``), which no state keeps, so the claims are not stated."""
    if not max_accounting(ctx) or ctx.budgets:
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
        grew = others_grew(ctx, state, j)
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
