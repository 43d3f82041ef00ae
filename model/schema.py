"""The state as a flat list of fields with their domains: what an engine needs to hold states as
columns, terms or packed integers rather than as ``State`` values.

``leaves(ctx)`` lists every field of a state of the context in a fixed order — per pod (scenario
order) its fields in ``PodState`` order, a resource vector one field per resource; then the
kubelet's retry flags per node, the environment menu's used flags, the event counter — each with
the smallest and largest value it can hold. ``flatten(state)`` gives a state's values in that order
and ``assemble(ctx, values)`` builds the state back, so that ``assemble(ctx, flatten(s)) == s``.

The domains follow from the model: a phase, reason or queue is one of its enum's values; a node,
nomination or preemptor is an index or ``-1`` (none); every size the model stores is a size of the
scenario (a request, an allocation, a resize of the menu) or zero, so it lies between 0 and the
largest quantity of its resource in the scenario (``model/properties/strengthening``'s ``SizesFromMenu``
states the finer fact); the event counter is at most ``maxEvents``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.context import Context
from kepcheck.model.state import NO_NODE, NO_POD, PodState, State

__all__ = ["Leaf", "leaves", "flatten", "assemble", "pod_fields", "VECTOR_FIELDS", "BOOL_FIELDS"]

VECTOR_FIELDS = ("desired", "allocated", "actual", "promised", "assumed", "seen_desired", "seen_held")
BOOL_FIELDS = ("in_progress", "observed", "tracking", "cache_ahead", "preempting")
STALE_VIEW_FIELDS = ("seen_phase", "seen_node", "seen_desired", "seen_held", "seen_resize", "cache_ahead")
ASYNC_PREEMPTION_FIELDS = ("evicting_for", "preempting")


def pod_fields(ctx: Context) -> tuple:
    """The ``PodState`` fields that are part of the context's states: the informer copy only with the
    stale view, the calls in flight only with asynchronous preemption (None or empty otherwise)."""
    left_out = set()
    if ctx.variant.scheduler_view != "stale":
        left_out.update(STALE_VIEW_FIELDS)
    if ctx.variant.preemption_calls != "asynchronous":
        left_out.update(ASYNC_PREEMPTION_FIELDS)
    return tuple(field for field in fields(PodState) if field.name not in left_out)


@dataclass(frozen=True)
class Leaf:
    name: str  # e.g. "web.desired.cpu", "retry_due.n1", "env_events"
    low: int
    high: int
    boolean: bool = False


def _largest(ctx: Context, resource: int) -> int:
    scenario = ctx.scenario
    values = [node.allocatable[resource] for node in scenario.nodes]
    for pod in scenario.pods:
        values += [vector[resource] for vector in (pod.requests, pod.allocated, pod.actual) if vector is not None]
    values += [event.requests[resource] for event in scenario.resizes]
    return max(values, default=0)


def _pod_domains(ctx: Context) -> dict:
    nodes, pods = len(ctx.node_names), len(ctx.names)
    def span(enum):
        return int(min(enum)), int(max(enum))

    return {"phase": span(Phase), "node": (NO_NODE, nodes - 1), "resize": span(ResizeReason), "queue": span(Queue),
            "nominated": (NO_NODE, nodes - 1), "preempted_by": (NO_POD, pods - 1), "queued_at": (0, pods - 1),
            "pending_since": (0, pods - 1),
            "seen_phase": span(Phase),
            "seen_node": (NO_NODE, nodes - 1), "seen_resize": span(ResizeReason), "evicting_for": (NO_POD, pods - 1)}


def leaves(ctx: Context) -> tuple[Leaf, ...]:
    """Every field of the context's states, in ``flatten`` order, with its domain."""
    domains = _pod_domains(ctx)
    largest = [_largest(ctx, r) for r in range(ctx.width)]
    result = []
    for name in ctx.names:
        for field in pod_fields(ctx):
            if field.name in VECTOR_FIELDS:
                result += [Leaf(f"{name}.{field.name}.{resource}", 0, largest[r])
                           for r, resource in enumerate(ctx.scenario.resources)]
            elif field.name in BOOL_FIELDS:
                result.append(Leaf(f"{name}.{field.name}", 0, 1, True))
            else:
                result.append(Leaf(f"{name}.{field.name}", *domains[field.name]))
    result += [Leaf(f"retry_due.{node}", 0, 1, True) for node in ctx.node_names]
    result += [Leaf(f"env_used.{k}", 0, 1, True) for k in range(len(ctx.events))]
    result.append(Leaf("env_events", 0, ctx.max_events))
    return tuple(result)


def flatten(state: State) -> list:
    """The state's values in ``leaves`` order."""
    values = []
    for pod in state.pods:
        for value in pod:
            if isinstance(value, tuple):
                values.extend(value)
            elif value is not None:  # None: a field the context's states do not have (``pod_fields``)
                values.append(value)
    values.extend(state.retry_due)
    values.extend(state.env_used)
    values.append(state.env_events)
    return values


def assemble(ctx: Context, values) -> State:
    """The state whose values, in ``leaves`` order, are ``values`` (the inverse of ``flatten``)."""
    values = list(values)
    position = 0
    pods = []
    for _ in ctx.names:
        pod = {}
        for field in pod_fields(ctx):
            if field.name in VECTOR_FIELDS:
                pod[field.name] = tuple(values[position:position + ctx.width])
                position += ctx.width
            else:
                pod[field.name] = values[position]
                position += 1
        pods.append(PodState(**pod))
    nodes, events = len(ctx.node_names), len(ctx.events)
    retry_due = tuple(values[position:position + nodes])
    position += nodes
    env_used = tuple(values[position:position + events])
    position += events
    return State(pods=tuple(pods), retry_due=retry_due, env_used=env_used, env_events=values[position])
