"""Fairness as data: which groups of actions are assumed weakly fair, and the real mechanism each
assumption stands for (docs/design.md §2 "Time is abstract"; docs/reference.md §3.1, §2.3, §7.4 P-8).

Weak fairness of an action group, as TLA+ writes ``WF_vars(A)``: no run may keep an action of the
group continuously enabled forever without taking it. The liveness checker applies it per action
instance (per label, e.g. ``FinishTermination(pod=batch)``). User and controller actions are never
fair: they are bounded by the scenario's budget, and a user who never acts is a legitimate run.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FairnessGroup", "FAIRNESS_GROUPS", "DEFAULT_FAIRNESS", "fairness_group", "fair_action_names",
           "groups_of_variant"]


@dataclass(frozen=True)
class FairnessGroup:
    name: str
    actions: tuple[str, ...]
    mechanism: str  # the real mechanism that makes the assumption reasonable
    ref: str
    needs: tuple = ()  # ((decision, option), ...): the variants whose model has these actions at all


FAIRNESS_GROUPS: tuple[FairnessGroup, ...] = (
    FairnessGroup("scheduler-cycle",
                  ("BindPod", "PreemptForPod", "PodUnschedulable", "ParkDeferredPod", "BindDeferredPod", "PreemptForResize",
                   "ResizeUnschedulable", "AbortDeferredCycle"),
                  "the scheduler keeps popping activeQ; backoff is at most 10 s", "docs/reference.md §3.1, §7.4 P-8"),
    FairnessGroup("scheduler-flush", ("FlushUnschedulablePod",),
                  "pods left in the unschedulable pool for 5 minutes are flushed back to the queue",
                  "docs/reference.md §3.1, §7.4 P-8"),
    FairnessGroup("informer-delivery", ("DeliverPodUpdate", "UpdatePodInCache", "UpdatePodInSchedulingQueue"),
                  "the scheduler's informer delivers every watch event, in order (stale view only)",
                  "docs/design.md §3 'scheduler view'", (("scheduler_view", "stale"),)),
    FairnessGroup("preemption-calls", ("EvictVictim",),
                  "the preemption goroutine's API calls complete (asynchronous preemption only)",
                  "docs/reference.md §3.1, §3.3 'Execution'", (("preemption_calls", "asynchronous"),)),
    FairnessGroup("kubelet-admission", ("AdmitPod", "RejectPod"),
                  "the kubelet admits or rejects every pod bound to its node", "docs/reference.md §2.1"),
    FairnessGroup("kubelet-retry", ("RetryPendingResizes",),
                  "the kubelet retries pending resizes on pod updates, additions and removals",
                  "docs/reference.md §2.3 (pod_resized, pod_updated, pods_removed, pod_terminated)"),
    FairnessGroup("kubelet-periodic-retry", ("PeriodicRetryPendingResizes",),
                  "the kubelet's periodic retry, 3 minutes after the last pass", "docs/reference.md §2.3, §7.4 P-8"),
    FairnessGroup("kubelet-actuation", ("ActuateResize",),
                  "the kubelet actuates allocated resizes through the runtime", "docs/reference.md §2.6"),
    FairnessGroup("termination", ("FinishTermination",),
                  "a terminating pod's graceful termination period ends", "KEP-5836 §Pod Priority, Graceful Termination"),
)

DEFAULT_FAIRNESS: tuple[str, ...] = tuple(group.name for group in FAIRNESS_GROUPS)


def fairness_group(name: str) -> FairnessGroup:
    for group in FAIRNESS_GROUPS:
        if group.name == name:
            return group
    raise KeyError(name)


def fair_action_names(groups) -> frozenset[str]:
    return frozenset(action for name in groups for action in fairness_group(name).actions)


def groups_of_variant(groups, variant) -> tuple[str, ...]:
    """The groups whose actions the variant's model has (the others are vacuous there: a stale-view
    group under a synchronous variant), in the given order."""
    return tuple(name for name in groups
                 if all(getattr(variant, field) == option for field, option in fairness_group(name).needs))
