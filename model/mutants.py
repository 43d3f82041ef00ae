"""Mutants: deliberately broken models that the checks must catch (docs/style.md R11).

A mutant replaces or wraps named functions of the model (each marked ``@overridable`` where it is
defined): ``Context.build(scenario, variant, [mutant])`` makes the model call the mutant's version,
``replacement(original, ctx, *args)``, so the production model carries no mutant switches. Each
mutant removes or bends one important-looking condition and replaces one function, except
``kubelet-never-retries-after-removal``, which takes away two retry triggers (the removal one and
the periodic one; either alone still resolves the resize). Each is registered with the property it
must violate, the variant and scenario where it is checked, and the length of the shortest
counterexample the explicit engine finds (a regression oracle). ``tests/test_mutants.py`` fails if
any mutant goes undetected: an undetected mutant means the property is toothless there.
"""

from __future__ import annotations

from dataclasses import dataclass

from kepcheck.spec.kep.vocabulary import ResizeReason

from kepcheck.model.accounting.views import max_footprint, on_node
from kepcheck.model.actions.preemption import greedy_reprieve
from kepcheck.model.expr.scalars import and_, is_false, ite, not_
from kepcheck.model.expr.vectors import vmax
from kepcheck.model.step import is_deferred

__all__ = ["Mutant", "MUTANTS", "mutant_by_name", "mutants_named"]


@dataclass(frozen=True)
class Mutant:
    name: str
    breaks: str  # what condition is removed, in Kubernetes words
    property: str
    variant: str
    scenario: str
    shortest: int  # length of the explicit engine's counterexample (for a lasso: prefix and loop)
    overrides: tuple = ()  # ((model function name, replacement(original, ctx, *args)), ...)


def _with_equal_priority(original, ctx, state, claimant, node):
    lower = original(ctx, state, claimant, node)
    victims = {}
    for i, pod in enumerate(state.pods):
        if i in lower:
            victims[i] = lower[i]
        elif i != claimant and ctx.priorities[i] == ctx.priorities[claimant] and not is_false(on_node(pod, node)):
            victims[i] = on_node(pod, node)
    return victims


def _no_reprieve(original, ctx, state, claimant, node, fits, removed):
    return dict(removed)


def _least_important_first(original, ctx, state, claimant, node, fits, removed):
    order = sorted(removed, key=lambda i: (ctx.priorities[i], -i))
    return greedy_reprieve(ctx, state, claimant, node, fits, removed, order)


def _deferred_size_forgotten(original, ctx, pod):
    return ite(pod.resize == ResizeReason.DEFERRED, vmax(pod.allocated, pod.actual), original(ctx, pod))


def _priority_ignored(original, ctx, index, increases, undecided, since):
    return increases, undecided, since, index


def _condition_age_ignored(original, ctx, index, increases, undecided, since):
    return original(ctx, index, increases, undecided, 0)


def _allocation_only_of_others(original, ctx, pod):
    return pod.allocated


def _actual_ignored(original, ctx, pod):
    return vmax(pod.desired, pod.allocated)  # without the runtime's actual size (kubernetes/kubernetes #117765)


def _condition_kept(original, ctx, pod, revert, fits):
    cleared = ite(pod.resize == ResizeReason.DEFERRED, ResizeReason.DEFERRED, ResizeReason.NONE)
    return ite(revert, cleared, ite(fits, pod.resize, ResizeReason.DEFERRED))


def _nominates_own_node(original, ctx, state, claimant):
    return {**original(ctx, state, claimant), "nominated": state.pods[claimant].node}


def _guard_never_waits(original, ctx, state, claimant):
    return True


def _deferred_never_released(original, ctx, pod, event):
    return and_(original(ctx, pod, event), not_(is_deferred(pod)))


def _no_retry_after_removal(original, ctx, state, node):
    return state


def _no_periodic_retry(original, ctx, state):
    return iter(())


def _aligned_counts_desired(original, ctx, pod):
    return max_footprint(ctx, pod)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("equal-priority-victims", "preemption also picks victims of equal priority (P-1 broken)",
           "VictimsStrictlyLowerPriority", "alpha-1.37", "no-lower-priority-victims", 1,
           (("potential_victims", _with_equal_priority),)),
    Mutant("ignore-desired-for-deferred", "the scheduler counts a Deferred pod at max(allocated, actual), "
           "forgetting its desired size", "NoDoubleReservation", "alpha-1.37", "deferred-upsize-one-victim", 5,
           (("max_footprint", _deferred_size_forgotten),)),
    Mutant("kubelet-ignores-priority", "the kubelet retries pending resizes without regard to priority",
           "KubeletHonorsReservation", "kubelet-aligned", "competing-resizes", 3,
           (("retry_order_key", _priority_ignored),)),
    Mutant("kubelet-ignores-condition-age", "the kubelet retries pending resizes of equal priority and QoS class "
           "in declaration order, not oldest PodResizePending first", "KubeletHonorsReservation", "alpha-1.37",
           "older-deferred-resize-first", 5,
           (("retry_order_key", _condition_age_ignored),)),
    Mutant("no-reprieve", "preemption evicts every lower-priority pod, skipping the greedy reprieve",
           "NoVictimWithoutNeed", "alpha-1.37", "resize-superseded", 1,
           (("reprieve", _no_reprieve),)),
    Mutant("reprieve-least-important-first", "the greedy reprieve puts victims back least important first "
           "(P-2's order reversed)", "NoNeedlessVictimForPendingPod", "allocated-only", "higher-priority-arrival", 2,
           (("reprieve", _least_important_first),)),
    Mutant("kubelet-ignores-others-actual", "the kubelet counts other pods at their allocation only, "
           "ignoring a downsize not yet actuated", "KubeletNeverOvercommits", "alpha-1.37", "resize-races-binding", 2,
           (("kubelet_counts_other", _allocation_only_of_others),)),
    Mutant("scheduler-ignores-actual", "the scheduler counts assigned pods at max(desired, allocated), "
           "ignoring actual (the risk kubernetes/kubernetes #117765 names)", "BoundPodsAdmitted", "alpha-1.37", "downsize-in-progress", 2,
           (("max_footprint", _actual_ignored),)),
    Mutant("forget-pending-condition", "the kubelet allocates a resize but leaves PodResizePending in place",
           "ConditionsTruthful", "alpha-1.37", "deferred-upsize-one-victim", 3,
           (("resize_condition_after_retry", _condition_kept),)),
    Mutant("resize-sets-nomination", "the scheduler sets nominatedNodeName when it preempts for a resize",
           "ConditionsTruthful", "alpha-1.37", "deferred-upsize-one-victim", 1,
           (("resize_claimant_fields", _nominates_own_node),)),
    Mutant("guard-ignores-terminating-victims", "the double-preemption guard does not wait for victims "
           "still terminating", "NoDoublePreemption", "dp-node-name", "resize-superseded", 3,
           (("double_preemption_guard_allows", _guard_never_waits),)),
    Mutant("scheduler-never-requeues-deferred", "a Deferred pod in the unschedulable pool is never requeued "
           "(no queueing hint, no flush)", "DeferredResizeResolved", "alpha-1.37", "later-competing-resize", 7,
           (("released_from_unschedulable_pool", _deferred_never_released),)),
    Mutant("kubelet-never-retries-after-removal", "the kubelet does not retry pending resizes when a victim "
           "terminates, nor periodically", "DeferredResizeResolved", "alpha-1.37", "deferred-upsize-one-victim", 4,
           (("pods_removed_retry", _no_retry_after_removal),
            ("periodic_retry_pending_resizes", _no_periodic_retry))),
    Mutant("aligned-counts-desired", "the kubelet-aligned accounting still counts other pods' desired sizes",
           "NoExcessVictims", "kubelet-aligned", "additional-preemption", 1,
           (("aligned_footprint", _aligned_counts_desired),)),
)


def mutant_by_name(name: str) -> Mutant:
    for mutant in MUTANTS:
        if mutant.name == name:
            return mutant
    raise KeyError(name)


def mutants_named(names) -> tuple[Mutant, ...]:
    """The mutants with these names (KeyError for an unknown one)."""
    return tuple(mutant_by_name(name) for name in names)
