"""The scheduler's copies of a pod: the API fields its informer copies (``SEEN_FIELDS``), the copy a
scheduling-queue entry holds and the copy its cache holds, and the scheduler's view of a state
built from them (docs/reference.md §3.1, §3.4; the stale view of docs/design.md §3 "scheduler view").

The fit checks of ``model/accounting/views.py`` read pods through these copies; the informer
(``model/actions/informer.py``) writes them.
"""

from __future__ import annotations

from functools import lru_cache

from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import and_, ite, not_
from kepcheck.model.expr.vectors import veq, vmax
from kepcheck.model.memo import per_state
from kepcheck.model.state import PodState, State, evolve

__all__ = ["SEEN_FIELDS", "api_copy", "seen_copy", "queued_copy", "cached_copy", "scheduler_view", "update_undelivered", "api_unchanged"]


# The API fields the scheduler's informer copies, and the field of ``PodState`` that holds each copy.
# Of allocated and actual the scheduler's accounting reads only max(allocated, actual) (docs/reference.md §1.2:
# max(desired, allocated, actual), Infeasible ignoring desired), so the copy holds that one vector: an
# update that changes neither is one the scheduler cannot tell from no update.
SEEN_FIELDS = (("phase", "seen_phase"), ("node", "seen_node"), ("desired", "seen_desired"), ("resize", "seen_resize"))


def api_copy(pod: PodState) -> dict:
    """What the scheduler's informer copies of a pod as the API has it now, by ``PodState`` field
    (allocated and actual both by their maximum, ``held``)."""
    held = vmax(pod.allocated, pod.actual)
    return dict(allocated=held, actual=held, **{api: getattr(pod, api) for api, _ in SEEN_FIELDS})


def seen_copy(pod: PodState) -> dict:
    """The ``seen_*`` fields of a copy of the pod as the API has it now (a delivery, or the scheduler's
    own write), cache and queue alike."""
    fields = {seen: getattr(pod, api) for api, seen in SEEN_FIELDS}
    fields.update(seen_held=vmax(pod.allocated, pod.actual), cache_ahead=False)
    return fields


def queued_copy(pod: PodState) -> PodState:
    """The pod as the scheduler's queue has it (the copy last delivered to the queue): its API fields
    replaced by the copy (allocated and actual both by their maximum); what the scheduler keeps itself
    (queue, nomination, promises) as it is."""
    if type(pod.phase) is int:
        return _queued_copy_of_values(pod)
    return _queued_copy(pod)


@lru_cache(maxsize=1 << 16)
def _queued_copy_of_values(pod: PodState) -> PodState:
    return _queued_copy(pod)


def _queued_copy(pod: PodState) -> PodState:
    return evolve(pod, allocated=pod.seen_held, actual=pod.seen_held,
                  **{api: getattr(pod, seen) for api, seen in SEEN_FIELDS})


def cached_copy(pod: PodState) -> PodState:
    """The pod as the scheduler's cache (NodeInfo) has it: the queue's copy, or the API's version once
    the cache has it and the queue not yet (``cache_ahead``)."""
    queued = queued_copy(pod)
    if pod.cache_ahead is False:
        return queued
    return evolve(queued, **{name: ite(pod.cache_ahead, value, getattr(queued, name))
                             for name, value in api_copy(pod).items()})


@per_state
def scheduler_view(ctx: Context, state: State) -> State:
    """The state as the kube-scheduler's cache sees it: with the stale view (``scheduler_view: stale``)
    every pod as its informer last delivered it to the cache, else the state itself (docs/design.md §3).
    The scheduler's guards, fits and victim choices are computed on this view (a Deferred pod's own
    requests may come from the queue's copy, ``queued_copy``); their effects go to the API state."""
    if ctx.variant.scheduler_view != "stale":  # (not with allocated-only accounting: spec/variants.Variant)
        return state
    return evolve(state, pods=tuple(cached_copy(pod) for pod in state.pods))


def update_undelivered(pod: PodState):
    """The API has a version of the pod the scheduler's queue has not received yet (its cache may have)."""
    if type(pod.phase) is int:  # plain values: the same test, without building expressions
        return (pod.phase != pod.seen_phase or pod.node != pod.seen_node or pod.desired != pod.seen_desired
                or pod.resize != pod.seen_resize
                or tuple(a if a >= b else b for a, b in zip(pod.allocated, pod.actual)) != pod.seen_held)
    return not_(_same_copy(api_copy(pod), api_copy(queued_copy(pod))))


def api_unchanged(old: PodState, new: PodState):
    """The step wrote none of the pod's API fields the scheduler copies."""
    if old is new:
        return True
    return _same_copy(api_copy(old), api_copy(new))


def _same_copy(a: dict, b: dict):
    return and_(*(veq(a[name], b[name]) if isinstance(a[name], tuple) else a[name] == b[name] for name in a))
