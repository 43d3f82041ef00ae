"""The preemption lemmas: the second tier of strengthening, facts about the scheduler's preemption
whose proof rests on catalog state properties as well (``LEMMA_BASIS`` in
``model/properties/strengthening/__init__.py``). Each is a state predicate ``(ctx, state)``.
"""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase, ResizeReason

from kepcheck.model.accounting.views import fits_deferred_pod
from kepcheck.model.actions.preemption import select_victims
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, and_, any_, implies, is_false, not_, or_
from kepcheck.model.properties.strengthening.preemptors import reprieve_order, resize_preemptors_under_max_accounting
from kepcheck.model.state import State

__all__ = ["reprieve_never_trades"]


def reprieve_never_trades(ctx: Context, state: State):
    """Under max accounting, the scheduler's greedy reprieve for a Deferred pod never puts back a pod
    that is terminating because a higher-priority pod evicted it while it evicts a running pod
    ranked below that one (reprieve order: higher priority first). Such a trade is how a
    preemption could take a running pod that the kubelet does not need once the terminating pods
    are gone (NoExcessVictims), or take new victims while its own are still terminating
    (NoDoublePreemption); the lemma speaks only of the scheduler's dry run, not of the kubelet or of
    whose victims they are.

    Why it holds: a terminating pod was evicted by a run of the same greedy order, in which it found
    no room with the pods above it kept, while every running pod below it that starts on the node
    was kept (it outweighs them: ``resize_victims_outweigh_kept_pods``). Putting it back now
    leaves no room for a pod below it only if the Deferred pod asks for less than then but still
    too much, or something above it has left or shrunk since, and the sizes the kubelet can have
    granted meanwhile are bounded by the node's allocatable (``LEMMA_BASIS``). This is not a
    theorem for every cluster: a later request B smaller than the request A a victim was evicted
    for, but still above the allocation, can make A's victim fit again while a smaller running pod
    below it no longer does: it is false in resize-lowered-while-victims-terminate (a B of 4 cpu
    after low-a and mid were evicted for 5). So the symbolic engine assumes it only in a context
    where it is proved by k-induction (with ``LEMMA_BASIS``); the tests check where it holds on
    the explored states and that its proof fails where it does not. Not used with symbolic sizes
    (parametric mode), where such a B exists."""
    terms = []
    for j in resize_preemptors_under_max_accounting(ctx):
        pod = state.pods[j]
        deferred = and_(pod.phase == Phase.RUNNING, pod.resize == ResizeReason.DEFERRED)
        if is_false(deferred):
            continue
        # the scheduler's own dry run (model/actions/preemption.py), as PreemptForResize computes it
        _, victims = select_victims(ctx, state, j, pod.node, fits_deferred_pod)
        order = [i for i in reprieve_order(ctx, j) if i in victims]
        for a, t in enumerate(order):
            leaving = state.pods[t]
            evicted = and_(leaving.phase == Phase.TERMINATING,
                           any_(leaving.preempted_by == q for q in ctx.pod_range if ctx.priorities[q] > ctx.priorities[t]))
            if is_false(evicted):
                continue
            for r in order[a + 1:]:
                live = or_(state.pods[r].phase == Phase.RUNNING, state.pods[r].phase == Phase.BOUND)
                terms.append(implies(and_(deferred, evicted, live), not_(and_(not_(victims[t]), victims[r]))))
    return all_(terms)
