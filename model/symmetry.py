"""Symmetry reduction for interchangeable pods (docs/style.md R10).

Two pods are interchangeable when everything static about them is equal (priority,
preemptionPolicy, being an arrival, QoS class and the resources their nodes pin, the
PodDisruptionBudgets that select them) and no entry of the environment's menu names either of
them. ``representative(state)`` sorts the pods of each class of interchangeable pods into a
canonical order and renames the references between pods (``preempted_by``) to match, so that
states that differ only by a permutation of interchangeable pods are explored once.

Soundness. The reduction is exact when every permutation within a class maps transitions to
transitions and preserves every property. The model's properties never name a pod of a class
individually. The one place where the model does look at pod order is the age tie-break
(declaration order stands in for start time and lastTransitionTime in victim reprieve and the
kubelet's retry order): among interchangeable pods that are in *different* states, the reduced
search breaks that tie by the canonical order instead of the declaration order. Real start
times are arbitrary, so both are legitimate Kubernetes runs; ``tests/test_traces.py`` checks
that every verdict on the default scenarios is the same with and without the reduction.
A search with symmetry on stores representatives; the search re-executes the path of
representatives concretely to report a trace of the model (``checks/search/breadth_first.py``).
"""

from __future__ import annotations

from kepcheck.model.context import Context
from kepcheck.model.state import NO_POD, State, evolve

__all__ = ["symmetry_classes", "make_representative"]


def symmetry_classes(ctx: Context) -> list[tuple[int, ...]]:
    if ctx.variant.preemption_calls == "asynchronous":
        return []  # a call in flight names its preemptor (``evicting_for``): not renamed, so no reduction
    named = {event.pod for event in ctx.events if event.pod >= 0}
    groups: dict[tuple, list[int]] = {}
    for i, spec in enumerate(ctx.scenario.pods):
        if i in named:
            continue
        key = (spec.priority, spec.preemption_policy, spec.arrival, ctx.qos_classes[i], ctx.pinned_resources[i],
               tuple(b for b, (members, _) in enumerate(ctx.budgets) if i in members))
        groups.setdefault(key, []).append(i)
    return [tuple(members) for members in groups.values() if len(members) > 1]


def make_representative(ctx: Context):
    """A function mapping a state to its canonical representative, or None if nothing is symmetric."""
    classes = symmetry_classes(ctx)
    if not classes:
        return None
    in_class = {i for members in classes for i in members}

    def key(pod):
        return evolve(pod, preempted_by=-2) if pod.preempted_by in in_class else pod

    def sort_key(pod):  # every field in order, as the compiled canonicalisation compares them
        return tuple(key(pod))

    def representative(state: State) -> State:
        pods = state.pods
        mapping = list(range(len(pods)))  # old index -> new index
        new_pods = list(pods)
        for members in classes:
            ordered = sorted(members, key=lambda i: sort_key(pods[i]))
            for slot, old in zip(members, ordered):
                mapping[old] = slot
                new_pods[slot] = pods[old]
        if mapping == list(range(len(pods))):
            return state
        new_pods = [
            evolve(pod, preempted_by=mapping[pod.preempted_by]) if pod.preempted_by != NO_POD else pod
            for pod in new_pods
        ]
        return evolve(state, pods=tuple(new_pods))

    return representative
