"""Auxiliary invariants that strengthen k-induction, one function per invariant.

k-induction starts its path in an *arbitrary* state that satisfies the hypothesis; most such
states are not reachable (a phase of 17, a pod of size -3, an environment counter that disagrees
with the menu). These invariants rule those states out. Each is a state predicate ``(ctx,
state)`` written with ``model/expr/scalars.py`` helpers, so it evaluates on concrete states (the tests
check it on every state the explicit engine explores) and on Z3 terms; the symbolic engine proves
their conjunction by k-induction before it assumes them (``checks.symbolic.induction.prove_strengthening``).

They speak only about what follows from the scenario's structure; none restates a catalog
property. ``domains.py`` holds those about fields and bookkeeping, ``history.py`` those about what a
state still shows of how it was reached, ``lemmas.py`` the second tier below. What is deliberately
left out: invariants specific to one scenario.

``PREEMPTION_LEMMAS`` are a second tier: facts about the scheduler's preemption whose proof rests
on catalog state properties as well (``LEMMA_BASIS``: the kubelet never allocates beyond a node's
allocatable, which bounds the sizes a resizing pod can hold while its victims terminate; a victim
has lower priority than its preemptor). The symbolic engine proves them together with that basis,
assuming the invariants of ``STRENGTHENING``, after the catalog's state properties and before the
step properties (``checks.symbolic.induction.prove_lemmas``).

All of them describe the synchronous scheduler (its queue and memory follow the API at once, a
preemption's victims terminate in the cycle). For the stale view and asynchronous preemption
(``-stale`` variants) none is stated yet: ``strengthening_applies`` is False there, and induction
proves what it can without them (usually nothing: BMC still checks those variants).
"""


from __future__ import annotations

from kepcheck.model.properties.strengthening.domains import (
    admitted_pods_hold_sizes, environment_bookkeeping, fields_in_range, infeasible_only_from_start,
    no_status_before_admission, node_follows_phase, promise_only_while_deferred, scheduler_memory_of_variant,
    size_options, sizes_from_menu, start_node, termination_has_cause, unchanged_pods_observed, victims_were_preempted,
)
from kepcheck.model.properties.strengthening.fits import (
    bound_pods_fit_scheduler_view, nominations_fit_scheduler_view, promises_fit_scheduler_view,
)
from kepcheck.model.properties.strengthening.history import (
    allocation_history_before_resizes, deferred_resize_lacks_room, resize_history,
)
from kepcheck.model.properties.strengthening.lemmas import reprieve_never_trades
from kepcheck.model.properties.strengthening.preemptors import (
    preemptors_can_preempt, resize_victims_after_deferral, resize_victims_outweigh_kept_pods, victims_keep_promise,
)

__all__ = ["STRENGTHENING", "PREEMPTION_LEMMAS", "LEMMA_BASIS", "size_options", "start_node", "strengthening_applies"]


def strengthening_applies(ctx) -> bool:
    """The invariants below are stated for this context's variant (the synchronous scheduler)."""
    return ctx.variant.synchronous

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
    "AllocationHistoryBeforeResizes": allocation_history_before_resizes,
    "DeferredResizeLacksRoom": deferred_resize_lacks_room,
    "NominationsFitSchedulerView": nominations_fit_scheduler_view,
    "ResizeHistory": resize_history,
    "PreemptorsCanPreempt": preemptors_can_preempt,
    "ResizeVictimsAfterDeferral": resize_victims_after_deferral,
    "ResizeVictimsOutweighKeptPods": resize_victims_outweigh_kept_pods,
}


# The second tier (see the docstring): proved with the catalog state properties named in
# LEMMA_BASIS, after STRENGTHENING, and assumed for the step properties.
PREEMPTION_LEMMAS = {
    "ReprieveNeverTrades": reprieve_never_trades,
}
LEMMA_BASIS = ("KubeletNeverOvercommits", "VictimsStrictlyLowerPriority")
