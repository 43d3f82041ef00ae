"""Design decisions of KEP-5836 and the named variants (combinations of options) the checker runs.

Each decision is a point the KEP or its review discusses (docs/design.md §3; docs/reference.md §4). The first
option of each decision is the v1.37 alpha as implemented (kubernetes/kubernetes PR #140000).
A variant names one option per decision; ``alpha-1.37`` is the baseline.

``scheduler_view`` and ``preemption_calls`` say how asynchronous the scheduler is; the ``-stale``
variants turn both on. The last four decisions are the choices of the KEP's beta text (v1.38,
the KEP-5836 README in its beta state for v1.38, kubernetes/enhancements
``keps/sig-scheduling/5836-scheduler-preemption-for-ippr/README.md``; what beta changes is listed in
docs/design.md §3): ``beta-1.38`` takes
the beta option of each, and of ``double_preemption_guard`` (the beta adopts the spec.nodeName
check), so that any one of them can be switched back to the alpha option alone. Two beta changes
are not switches because the v1.37 implementation already does them (docs/reference.md §4.4, PR #140000):
the scheduler, not a kubelet-written pod condition, reads the node's opt-out, and the kubelet never
preempts for a resize (kubernetes/kubernetes #139996); the model has no kubelet-side preemption.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["Decision", "DECISIONS", "Variant", "VARIANTS", "variant_by_name", "derived_variant"]


@dataclass(frozen=True)
class Decision:
    field: str
    title: str
    options: tuple[str, ...]
    meaning: tuple[str, ...]
    ref: str


DECISIONS: tuple[Decision, ...] = (
    Decision(
        "accounting",
        "scheduler accounting of assigned pods",
        ("max", "kubelet-aligned", "allocated-only"),
        (
            "every assigned pod at max(desired, allocated, actual); Infeasible ignores desired (v1.37)",
            "while evaluating a Deferred pod, other pods at max(allocated, actual) like the kubelet; "
            "new pods still see max(desired, allocated, actual) (KEP-5836 Risk of Additional Preemption)",
            "every assigned pod at its allocation only: the review's 'the scheduler must assume' premise",
        ),
        "docs/reference.md §1.2, §1.6, §4.7; KEP-5836 'Risk of Additional Preemption'",
    ),
    Decision(
        "resize_preemption",
        "resize preemption (feature gate InPlacePodVerticalScalingSchedulerPreemption)",
        ("on", "off"),
        ("Deferred pods enter the scheduling queue and may preempt (KEP-5836)", "gate disabled: v1.36 behaviour"),
        "docs/reference.md §4.1, §4.3",
    ),
    Decision(
        "reservation",
        "scheduler reservation for a resize it preempted for",
        ("none", "assume"),
        (
            "nothing beyond the cache: the accounting already counts desired",
            "the scheduler holds the new size in its cache (in memory) from the preemption until the "
            "kubelet decides; lost on scheduler restart",
        ),
        "KEP-5836 'Scheduler Resource Reservation'",
    ),
    Decision(
        "double_preemption_guard",
        "double-preemption guard",
        ("none", "in-memory", "nominated-node-name", "node-name-as-nomination"),
        (
            "alpha: accepted risk",
            "the scheduler remembers, in memory, the victims in flight for each resize (lost on restart)",
            "set status.nominatedNodeName for resizes and reuse the 'terminating victims on the "
            "nominated node' eligibility check",
            "treat spec.nodeName as the nomination in that eligibility check",
        ),
        "KEP-5836 'Shifting Preemption Victims during Scheduler Restart' (alpha), 'Preventing Additional "
        "Preemption Across Grace Periods and Restarts' (beta adopts the spec.nodeName check); docs/reference.md §4.6, §3.3",
    ),
    Decision(
        "kubelet_measure",
        "how the kubelet measures the resizing pod",
        ("desired", "max"),
        ("desired requests only (implementation)", "max(desired, allocated, actual) (KEP-5836 text)"),
        "docs/reference.md §2.2, §4.9",
    ),
    Decision(
        "kubelet_order",
        "kubelet retry order of pending resizes",
        ("kubernetes", "fifo"),
        (
            "non-increasing first, then priority, then Deferred before not-yet-decided, then age",
            "in the order the resizes were requested (pod declaration order)",
        ),
        "docs/reference.md §2.3",
    ),
    Decision(
        "scheduler_view",
        "when the scheduler sees a pod's updates",
        ("synchronous", "stale"),
        (
            "its informer delivers every pod update in the step that writes it: cache, queue and handlers see the "
            "API at once (the idealised view; every other variant uses it)",
            "its informer delivers a pod's update later than the API write, in order (DeliverPodUpdate); cache and "
            "queue keep the copy last delivered, except what the scheduler writes itself (assume on Bind). At most "
            "one undelivered update per pod: later writes merge into it, so the handlers see old → newest",
        ),
        "docs/design.md §3 'scheduler view'; KEP-1287 'Scheduler race'; docs/reference.md §4.5; KEP-5836 'Conflicting Sources "
        "of Truth for the Pod'",
    ),
    Decision(
        "preemption_calls",
        "when the preemption's API calls take effect",
        ("atomic", "asynchronous"),
        (
            "the victims' DisruptionTarget and DELETE calls complete within the scheduling cycle",
            "the calls run after the cycle, one step per victim (EvictVictim); DefaultPreemption's PreEnqueue keeps "
            "the preemptor out of activeQ until its last call is done",
        ),
        "docs/reference.md §3.1 (async preemption, PreEnqueue), §3.3 'Execution'",
    ),
    Decision(
        "fitted_resize",
        "a Deferred resize that fits in the scheduler's view",
        ("park", "bind"),
        (
            "Permit rejects it 'pod resize fits, waiting for Kubelet actuation' (UnschedulableAndUnresolvable): "
            "it waits in the unschedulable pool for a same-node event (v1.37)",
            "it passes Permit and a Bind that does nothing for a bound pod, and leaves the scheduling queue; "
            "the cache's max(desired, allocated, actual) keeps its room (beta)",
        ),
        "docs/reference.md §4.3 (5), §4.4; KEP-5836 beta 'Handling Node Evaluation Results'",
    ),
    Decision(
        "queued_pod_copy",
        "which copy of a Deferred pod its cycle uses when the queue's and the cache's differ",
        ("larger-of-copies", "refreshed-from-cache"),
        (
            "the popped (queue) copy: it is treated as Deferred, and NodeResourcesFit adds what its requests exceed "
            "the cache copy's, max(0, queued − cached) (v1.37, adjustDeltasToAccomodateCacheDiscrepancy)",
            "the cycle swaps the popped pod for the cache's copy; when that copy is gone or no longer Deferred the "
            "cycle aborts and the pod is dropped from the queue without requeueing (beta)",
        ),
        "docs/reference.md §4.4, §4.5; KEP-5836 'Conflicting Sources of Truth for the Pod' (alpha and beta), "
        "'NodeResourcesFit Plugin: Calculating Resource Fit in the Filter Phase'",
    ),
    Decision(
        "scale_up_requeue",
        "what brings a Deferred pod back when another pod on its node scales up",
        ("queueing-hint", "add-or-activate"),
        (
            "NodeResourcesFit queueing hints move a Deferred pod waiting in the unschedulable pool to activeQ on "
            "any size change of a pod on its node (v1.37)",
            "updatePod finds the Deferred pods on the node of an assigned pod that scaled up and calls "
            "SchedulingQueue.AddOrActivate: added when out of the queue, activated when waiting; deletions and "
            "downsizes still requeue through the hints (beta)",
        ),
        "docs/reference.md §4.3 (6), §7.3 S-6..S-16; KEP-5836 beta 'Handling Node Evaluation Results', "
        "'Reconsideration Race Conditions'",
    ),
    Decision(
        "scale_up_events",
        "which scale-ups AddOrActivate answers (only with scale_up_requeue: add-or-activate)",
        ("any-pod", "other-pods"),
        (
            "any assigned pod on the node that grows, the Deferred pod's own larger request included (the "
            "model's first reading of the beta's 'an assigned pod scales up')",
            "only other pods' scale-ups: a Deferred pod that left the queue after the no-op Bind is not brought "
            "back by its own larger request, only by events of other pods on its node (the narrower reading)",
        ),
        "KEP-5836 beta 'Handling Node Evaluation Results', 'Reconsideration Race Conditions'; issue 28 item 4",
    ),
    Decision(
        "opt_out_enforcement",
        "how the node's spec.podPreemptionPolicy.disableResizePreemption is enforced",
        ("not-queued", "filter"),
        (
            "a Deferred pod on an opted-out node is not kept in the scheduling queue (v1.37 integration test S-5)",
            "the pod is queued and DeferredPodScheduling.Filter rejects its node as UnschedulableAndUnresolvable: "
            "no preemption and no Bind; it waits in the unschedulable pool for a Node update (beta)",
        ),
        "docs/reference.md §4.3 (11), §4.4, §7.3 S-5, S-20; KEP-5836 beta 'Policy Enforcement via "
        "DeferredPodScheduling Plugin'",
    ),
)


@dataclass(frozen=True)
class Variant:
    """One option per decision. Field names equal ``Decision.field``."""

    name: str
    description: str
    accounting: str = "max"
    resize_preemption: str = "on"
    reservation: str = "none"
    double_preemption_guard: str = "none"
    kubelet_measure: str = "desired"
    kubelet_order: str = "kubernetes"
    scheduler_view: str = "synchronous"
    preemption_calls: str = "atomic"
    fitted_resize: str = "park"
    queued_pod_copy: str = "larger-of-copies"
    scale_up_requeue: str = "queueing-hint"
    scale_up_events: str = "any-pod"
    opt_out_enforcement: str = "not-queued"

    def __post_init__(self) -> None:
        for decision in DECISIONS:
            value = getattr(self, decision.field)
            if value not in decision.options:
                raise ValueError(f"variant {self.name}: {decision.field}={value!r} not in {decision.options}")
        if self.scheduler_view == "stale" and self.accounting == "allocated-only":
            raise ValueError(f"variant {self.name}: the stale view keeps max(allocated, actual) only, not the "
                             f"allocation that allocated-only accounting reads")

    @property
    def gate_on(self) -> bool:
        return self.resize_preemption == "on"

    @property
    def synchronous(self) -> bool:
        """The scheduler sees every update at once and its preemption's calls complete in the cycle."""
        return self.scheduler_view == "synchronous" and self.preemption_calls == "atomic"

    def options(self) -> dict[str, str]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("name", "description")}


VARIANTS: tuple[Variant, ...] = (
    Variant("alpha-1.37", "KEP-5836 alpha as implemented in v1.37 (PR #140000)"),
    Variant("gate-off", "feature gate off: the v1.36 baseline that shows why the KEP exists", resize_preemption="off"),
    Variant("kep-text", "the kubelet measures the resizing pod at max(desired, allocated, actual), as the KEP text says",
            kubelet_measure="max"),
    Variant("kubelet-aligned", "scheduler counts other pods like the kubelet while evaluating a Deferred pod",
            accounting="kubelet-aligned"),
    Variant("allocated-only", "scheduler counts assigned pods at their allocation only (no max accounting)",
            accounting="allocated-only"),
    Variant("allocated-only-assume", "allocation-only accounting plus an explicit in-memory assume of the resize",
            accounting="allocated-only", reservation="assume"),
    Variant("dp-in-memory", "double-preemption guard: in-memory tracking of victims in flight",
            double_preemption_guard="in-memory"),
    Variant("dp-nominated-node-name", "double-preemption guard: nominatedNodeName set for resizes",
            double_preemption_guard="nominated-node-name"),
    Variant("dp-node-name", "double-preemption guard: spec.nodeName treated as the nomination",
            double_preemption_guard="node-name-as-nomination"),
    Variant("kubelet-fifo", "the kubelet retries pending resizes first come, first served", kubelet_order="fifo"),
    Variant("beta-1.38", "the design of the KEP-5836 beta text (v1.38): a fitted resize binds and leaves the queue, "
            "AddOrActivate on same-node scale-ups, the cycle refreshes the queued pod from the cache, the spec.nodeName "
            "double-preemption guard, the opt-out in Filter",
            double_preemption_guard="node-name-as-nomination", fitted_resize="bind",
            queued_pod_copy="refreshed-from-cache", scale_up_requeue="add-or-activate", opt_out_enforcement="filter"),
    Variant("beta-1.38-narrow-requeue", "beta-1.38, AddOrActivate read narrowly: only other pods' scale-ups re-add a "
            "Deferred pod that left the queue",
            double_preemption_guard="node-name-as-nomination", fitted_resize="bind",
            queued_pod_copy="refreshed-from-cache", scale_up_requeue="add-or-activate", scale_up_events="other-pods",
            opt_out_enforcement="filter"),
    Variant("alpha-1.37-stale", "alpha-1.37 with the scheduler's informer delivering pod updates late and the "
            "preemption's API calls asynchronous", scheduler_view="stale", preemption_calls="asynchronous"),
    Variant("beta-1.38-stale", "beta-1.38 with the scheduler's informer delivering pod updates late and the "
            "preemption's API calls asynchronous", double_preemption_guard="node-name-as-nomination",
            fitted_resize="bind", queued_pod_copy="refreshed-from-cache", scale_up_requeue="add-or-activate",
            opt_out_enforcement="filter",
            scheduler_view="stale", preemption_calls="asynchronous"),
)


def variant_by_name(name: str) -> Variant:
    for variant in VARIANTS:
        if variant.name == name:
            return variant
    raise KeyError(name)


def derived_variant(name: str) -> Variant:
    """A named variant with some decisions switched: ``beta-1.38+fitted_resize=park`` is ``beta-1.38``
    with the alpha's parking (one ``+decision=option`` per switch), so that one choice can be switched
    back without editing this file. ValueError (one line) for an unknown variant, decision or option."""
    base_name, *switches = name.split("+")
    try:
        base = variant_by_name(base_name)
    except KeyError:
        raise ValueError(f"unknown variant {base_name!r} (known: {', '.join(v.name for v in VARIANTS)})") from None
    changes = {}
    fields_by_name = {d.field: d for d in DECISIONS}
    for switch in switches:
        field, _, option = switch.partition("=")
        decision = fields_by_name.get(field)
        if decision is None:
            raise ValueError(f"variant {name!r}: unknown decision {field!r} (known: {', '.join(fields_by_name)})")
        if option not in decision.options:
            raise ValueError(f"variant {name!r}: {field} has no option {option!r} (options: {', '.join(decision.options)})")
        changes[field] = option
    if not changes:
        return base
    said = ", ".join(f"{field}={option}" for field, option in changes.items())
    try:
        return replace(base, name=name, description=f"{base.description}; switched: {said}", **changes)
    except ValueError as error:
        raise ValueError(str(error)) from None
