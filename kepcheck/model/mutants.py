"""Mutants: deliberately broken models that the checks must catch (STYLE.md R11).

Each mutant is a named switch read by the model (``ctx.has(name)``) that removes or bends one
important-looking condition. It is registered with the property it must violate, the variant
and scenario where it is checked, and the length of the shortest counterexample the explicit
engine finds (a regression oracle). ``tests/test_mutants.py`` fails if any mutant goes
undetected: an undetected mutant means the property is toothless there.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Mutant", "MUTANTS", "mutant_by_name"]


@dataclass(frozen=True)
class Mutant:
    name: str
    breaks: str  # what condition is removed, in Kubernetes words
    property: str
    variant: str
    scenario: str
    shortest: int  # length of the explicit engine's counterexample (for a lasso: prefix and loop)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("equal-priority-victims", "preemption also picks victims of equal priority (P-1 broken)",
           "VictimsStrictlyLowerPriority", "alpha-1.37", "no-lower-priority-victims", 1),
    Mutant("ignore-desired-for-deferred", "the scheduler counts a Deferred pod at max(allocated, actual), "
           "forgetting its desired size", "NoDoubleReservation", "alpha-1.37", "deferred-upsize-one-victim", 5),
    Mutant("kubelet-ignores-priority", "the kubelet retries pending resizes without regard to priority",
           "KubeletHonorsReservation", "kubelet-aligned", "competing-resizes", 3),
    Mutant("no-reprieve", "preemption evicts every lower-priority pod, skipping the greedy reprieve",
           "NoVictimWithoutNeed", "alpha-1.37", "resize-superseded", 1),
    Mutant("kubelet-ignores-others-actual", "the kubelet counts other pods at their allocation only, "
           "ignoring a downsize not yet actuated", "KubeletNeverOvercommits", "alpha-1.37", "resize-races-binding", 2),
    Mutant("scheduler-ignores-actual", "the scheduler counts assigned pods at max(desired, allocated), "
           "ignoring actual (the #129532 bug shape)", "BoundPodsAdmitted", "alpha-1.37", "downsize-in-progress", 2),
    Mutant("forget-pending-condition", "the kubelet allocates a resize but leaves PodResizePending in place",
           "ConditionsTruthful", "alpha-1.37", "deferred-upsize-one-victim", 3),
    Mutant("resize-sets-nomination", "the scheduler sets nominatedNodeName when it preempts for a resize",
           "ConditionsTruthful", "alpha-1.37", "deferred-upsize-one-victim", 1),
    Mutant("guard-ignores-terminating-victims", "the double-preemption guard does not wait for victims "
           "still terminating", "NoDoublePreemption", "dp-node-name", "resize-superseded", 3),
    Mutant("scheduler-never-requeues-deferred", "a Deferred pod in the unschedulable pool is never requeued "
           "(no queueing hint, no flush)", "DeferredResizeResolved", "alpha-1.37", "later-competing-resize", 7),
    Mutant("kubelet-never-retries-after-removal", "the kubelet does not retry pending resizes when a victim "
           "terminates, nor periodically", "DeferredResizeResolved", "alpha-1.37", "deferred-upsize-one-victim", 4),
    Mutant("aligned-counts-desired", "the kubelet-aligned accounting still counts other pods' desired sizes",
           "NoExcessVictims", "kubelet-aligned", "additional-preemption", 1),
)


def mutant_by_name(name: str) -> Mutant:
    for mutant in MUTANTS:
        if mutant.name == name:
            return mutant
    raise KeyError(name)
