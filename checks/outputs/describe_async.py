"""How the steps of the asynchronous scheduler are told (``checks/outputs/describe.py`` tells the others): the
stale view's informer copies and deliveries, the asynchronous preemption's calls in flight, the
beta's aborted cycle. A teller takes the step being told (``describe._Step``) and returns its
sequence-diagram messages and its clause in the narrative."""

from __future__ import annotations

from kepcheck.spec.kep.vocabulary import Phase

from kepcheck.checks.outputs.itf import PHASE_WORDS as PHASES, REASON_WORDS as REASONS
from kepcheck.model.accounting.copies import update_undelivered
from kepcheck.model.context import Context
from kepcheck.model.state import NO_POD, PodState

__all__ = ["ASYNC_TELLERS", "scheduler_copy_changes", "scheduler_copy_words"]


def scheduler_copy_changes(ctx: Context, name: str, old: PodState, new: PodState) -> list[str]:
    """The stale view's informer copies and the asynchronous preemption's calls in flight."""
    changes = []
    if new.seen_phase is not None and update_undelivered(new) and not update_undelivered(old):
        changes.append(f"{name}: the scheduler has not received this update yet")
    seen = ("seen_phase", "seen_node", "seen_desired", "seen_held", "seen_resize")
    if any(getattr(old, f) != getattr(new, f) for f in seen):
        changes.append(f"{name}: the scheduler's cache and queue now have {scheduler_copy_words(ctx, new)}")
    elif not old.cache_ahead and new.cache_ahead:
        changes.append(f"{name}: the scheduler's cache has the new version; its queue still has "
                       f"{scheduler_copy_words(ctx, new)}")
    if old.evicting_for != new.evicting_for:
        changes.append(f"{name}: DisruptionTarget + DELETE call in flight (preempted for {ctx.names[new.evicting_for]})"
                       if new.evicting_for not in (None, NO_POD) else f"{name}: the preemption's call for it is done")
    if old.preempting != new.preempting:
        changes.append(f"{name}: " + ("its preemption calls are in flight: PreEnqueue holds it out of activeQ"
                                      if new.preempting else "its preemption calls are done"))
    return changes


def scheduler_copy_words(ctx: Context, pod: PodState) -> str:
    """The scheduler's informer copy of a pod (stale view), in Kubernetes words."""
    words = [PHASES[pod.seen_phase]]
    if pod.seen_phase != Phase.ABSENT:
        words.append(f"desired {ctx.format(pod.seen_desired)}")
    if any(pod.seen_held):
        words.append(f"allocated/actual {ctx.format(pod.seen_held)}")
    if pod.seen_resize:
        words.append(f"PodResizePending={REASONS[pod.seen_resize]}")
    return ", ".join(words)


def _abort_deferred_cycle(step):
    return ([("S", "note", f"{step.pod}: the cache's copy is no longer Deferred → cycle aborted, dropped from queue")],
            f"the scheduler refreshes {step.pod} from its cache, finds it no longer Deferred and drops it")


def _deliver_pod_update(step):
    copy = scheduler_copy_words(step.ctx, step.after.pods[step.index])
    return ([("API", "S", f"watch: {step.pod} ({copy})")], f"the scheduler's informer delivers {step.pod}'s update")


def _update_pod_in_cache(step):
    return ([("API", "S", f"watch: {step.pod} → cache (queue copy still old)")],
            f"the scheduler's cache takes {step.pod}'s update; its queue still has the old copy")


def _update_pod_in_scheduling_queue(step):
    return ([("S", "note", f"{step.pod}: queue copy updated")],
            f"the scheduler's queue takes {step.pod}'s update")


def _evict_victim(step):
    i = step.index
    preemptor = step.before.pods[i].evicting_for
    live = step.after.pods[i].phase == Phase.TERMINATING and step.before.pods[i].phase != Phase.TERMINATING
    if live:
        return ([("S", "API", f"DisruptionTarget + DELETE {step.pod}")],
                f"the preemption for {step.ctx.names[preemptor]} deletes {step.pod}")
    return ([("S", "API", f"DELETE {step.pod}: already deleting or gone")],
            f"the preemption's call for {step.pod} finds it already deleting or gone")


ASYNC_TELLERS = {
    "AbortDeferredCycle": _abort_deferred_cycle, "DeliverPodUpdate": _deliver_pod_update,
    "UpdatePodInCache": _update_pod_in_cache, "UpdatePodInSchedulingQueue": _update_pod_in_scheduling_queue,
    "EvictVictim": _evict_victim,
}
