"""The property catalog (docs/design.md §4): one row per property, with the same name as its predicate in
``model/properties/catalog.py``.

Kinds: ``always`` (must hold in every reachable state, or on every step for ``scope="step"``),
``sometimes`` (a witness must be reachable, so that an ``always`` pass is not vacuous) and
``eventually`` (liveness under stated fairness; checked by the liveness engine, issue 3).

``scope="step"`` properties are judged on each transition (before, action, after), the way TLA+
writes ``[][A => P]_vars``: they speak about a decision at the moment it is taken.
"""

from __future__ import annotations

from dataclasses import dataclass

from kepcheck.spec.kep.fairness import DEFAULT_FAIRNESS

__all__ = ["ALWAYS", "SOMETIMES", "EVENTUALLY", "PropertySpec", "PROPERTIES", "property_by_name"]

ALWAYS = "always"
SOMETIMES = "sometimes"
EVENTUALLY = "eventually"


@dataclass(frozen=True)
class PropertySpec:
    name: str
    kind: str
    meaning: str
    ref: str
    scope: str = "state"  # "state" or "step"
    witnesses: tuple[str, ...] = ()  # for always: the sometimes properties that show its premise is reachable
    fairness: tuple[str, ...] = ()  # for eventually: the fairness groups (spec/kep/fairness.py) assumed


PROPERTIES: tuple[PropertySpec, ...] = (
    # --- always (safety) -------------------------------------------------------------------------
    PropertySpec(
        "KubeletNeverOvercommits", ALWAYS,
        "on every node, the kubelet's allocations (max(allocated, actual) of every admitted pod) stay within allocatable",
        "docs/reference.md §2.2, §1.7", witnesses=("ResizeAllocatedAfterPreemption", "PodAdmitted"),
    ),
    PropertySpec(
        "NoDoubleReservation", ALWAYS,
        "whenever the scheduler grants capacity on a node (binds a pod, nominates a preemptor, preempts for a "
        "Deferred resize), that grant, the grants of equal or higher priority already outstanding there "
        "(resize promises, nominations), and what the non-terminating pods really hold fit in allocatable",
        "KEP-5836 §Scheduler Resource Reservation; docs/reference.md §3.4, §6", scope="step",
        witnesses=("ResizePreempted", "PendingPodBoundBesideDeferredResize"),
    ),
    PropertySpec(
        "KubeletHonorsReservation", ALWAYS,
        "whenever the kubelet allocates capacity to a pod (admits a bound pod or allocates a resize), the "
        "allocation, the scheduler's outstanding grants of equal or higher priority on the node, and what the other "
        "non-terminating pods hold fit in allocatable: the kubelet never hands capacity freed for one claimant to "
        "another",
        "KEP-5836 §Kubelet-Scheduler Preemption Interaction, §Reconsideration Race Conditions", scope="step",
        witnesses=("ResizeAllocatedAfterPreemption",),
    ),
    PropertySpec(
        "BoundPodsAdmitted", ALWAYS,
        "the kubelet never rejects (OutOfcpu/OutOfmemory) a pod the scheduler bound",
        "docs/reference.md §5 (#126891, #129532)", witnesses=("PodAdmitted",),
    ),
    PropertySpec(
        "VictimsStrictlyLowerPriority", ALWAYS,
        "every pod evicted by preemption has a strictly lower priority than the pod it was evicted for",
        "docs/reference.md §3.3, §7.4 P-1", witnesses=("VictimEvicted",),
    ),
    PropertySpec(
        "NoVictimWithoutNeed", ALWAYS,
        "when the scheduler evicts, the claimant did not fit (in the scheduler's view) and would not fit with "
        "any one of the victims kept",
        "docs/reference.md §3.3 (greedy reprieve), §7.4 P-2", scope="step", witnesses=("VictimEvicted",),
    ),
    PropertySpec(
        "NoExcessVictims", ALWAYS,
        "a preemption for a resize evicts no victim the kubelet did not need: without any one of them the "
        "kubelet would still have room for the resize",
        "KEP-5836 'Risk of Additional Preemption'; docs/reference.md §4.7", scope="step", witnesses=("ResizePreempted",),
    ),
    PropertySpec(
        "NoNeedlessVictimForPendingPod", ALWAYS,
        "a pending pod's preemption evicts only victims the same selection picks with the node's pods at the "
        "kubelet's allocations (none only because a Deferred resize counts at its desired size)",
        "KEP-5836 review point (c) 'we probably don't want to kill the original pod if it's not necessary'; "
        "KEP-5836 'Race between a Deferred resize and a new higher-priority pod'; docs/reference.md §3.3, §4.7",
        scope="step", witnesses=("PendingPodPreemptsBesideDeferredResize",),
    ),
    PropertySpec(
        "NoDoublePreemption", ALWAYS,
        "a Deferred resize does not evict new victims while victims evicted for it earlier are still terminating",
        "KEP-5836 'Shifting Preemption Victims during Scheduler Restart'; docs/reference.md §4.6", scope="step",
        witnesses=("ResizePreempted",),
    ),
    PropertySpec(
        "ConditionsTruthful", ALWAYS,
        "PodResizePending is set exactly when a decided resize is waiting, PodResizeInProgress exactly when "
        "allocated != actual, and the scheduler never sets nominatedNodeName for a resize unless the variant "
        "uses nominations for resizes",
        "docs/reference.md §2.4, §4.4", witnesses=("ResizeDeferred", "ResizeInProgress"),
    ),
    # --- sometimes (witnesses) -------------------------------------------------------------------
    PropertySpec("ResizeDeferred", SOMETIMES, "some resize is marked PodResizePending=Deferred", "docs/reference.md §2.2"),
    PropertySpec("ResizeInProgress", SOMETIMES, "some resize is allocated and PodResizeInProgress", "docs/reference.md §2.4"),
    PropertySpec("ResizePreempted", SOMETIMES, "the scheduler evicts a victim for a Deferred resize",
                 "docs/reference.md §4.3 (5)", scope="step"),
    PropertySpec("ResizeAllocatedAfterPreemption", SOMETIMES,
                 "a resize the scheduler preempted for is allocated by the kubelet", "docs/reference.md §4.3 (8)",
                 scope="step"),
    PropertySpec("VictimEvicted", SOMETIMES, "some pod is evicted by preemption", "docs/reference.md §3.3", scope="step"),
    PropertySpec("PodAdmitted", SOMETIMES, "the kubelet admits a pod the scheduler bound", "docs/reference.md §2.1",
                 scope="step"),
    PropertySpec("PendingPodBoundBesideDeferredResize", SOMETIMES,
                 "the scheduler binds a pod to a node that holds a Deferred resize", "docs/reference.md §4.7, #135107",
                 scope="step"),
    PropertySpec("PendingPodPreemptsBesideDeferredResize", SOMETIMES,
                 "the scheduler evicts for a pending pod on a node that holds a Deferred resize", "docs/reference.md §3.3, §4.7",
                 scope="step"),
    # --- eventually (liveness under the stated fairness) -------------------------------------------
    PropertySpec("DeferredResizeResolved", EVENTUALLY,
                 "a Deferred resize that enough strictly-lower-priority victims could make room for is eventually "
                 "allocated, reverted, or its pod is gone", "KEP-5836 §Motivation, §Goals; docs/reference.md §6",
                 fairness=DEFAULT_FAIRNESS),
    PropertySpec("EveryDeferredResizeResolved", EVENTUALLY,
                 "every Deferred resize is eventually allocated, reverted, or its pod is gone (no premise: shows "
                 "where a resize stays Deferred by design)", "docs/reference.md §6 'Eventual resolution is not guaranteed'",
                 fairness=DEFAULT_FAIRNESS),
    PropertySpec("NoPreemptionLivelock", EVENTUALLY, "evictions eventually stop", "docs/reference.md §6",
                 fairness=DEFAULT_FAIRNESS),
    PropertySpec("PendingPodResolved", EVENTUALLY,
                 "a pending pod is eventually bound or stays unschedulable for lack of victims", "docs/reference.md §3",
                 fairness=DEFAULT_FAIRNESS),
)


def property_by_name(name: str) -> PropertySpec:
    for spec in PROPERTIES:
        if spec.name == name:
            return spec
    raise KeyError(name)
