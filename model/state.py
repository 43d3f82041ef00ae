"""States of the model: immutable values with value equality.

A ``State`` is the whole cluster as the model sees it: every pod (in scenario order) and, per
node, whether the kubelet owes a retry pass over its pending resizes. Everything static (names,
priorities, node allocatable, the environment's menu, the variant) lives in ``Context``
(``model/context.py``), not in the state.

Each pod holds its ``PodRequests`` totals (desired, allocated, actual), small integer sizes per
resource (the scenario loader adds a pod's containers up with the KEP-753 formula,
``spec/kubernetes/pod_resources.py``, and scales Kubernetes quantities down by their common divisor); the
containers themselves are not in the state. Accounting is always done by ``model/accounting/footprints.py``
(docs/reference.md §1), the rule ``model/accounting/pod_requests.py`` applies to general multi-container pods.

Fields that are not Kubernetes API state are marked:
* scheduler memory (lost on scheduler restart): ``queue``, ``assumed``, ``tracking``;
* ghost (history for properties, never read by guards): ``promised``;
* the scheduler's informer copy of the pod's API fields (``seen_*``, only with the stale view,
  ``scheduler_view: stale``; None or empty otherwise, and then not part of the state's leaves);
* a preemption DELETE call in flight (``evicting_for``, only with ``preemption_calls:
  asynchronous``; None otherwise).
``preempted_by`` is the ``DisruptionTarget`` condition the scheduler sets on a victim (docs/reference.md
§3.3), with the preemptor's index recorded so that properties can name it.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import MISSING, dataclass, fields, replace

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason

__all__ = ["PodState", "State", "NO_NODE", "NO_POD", "evolve", "replace_pod", "type_ok"]

NO_NODE = -1
NO_POD = -1

# A state is a value that the explicit engine builds, hashes and compares on every transition, so
# ``PodState`` and ``State`` are tuples underneath (construction, hashing and equality in C; each
# field is a named, read-only item). They are declared as dataclasses too: ``dataclasses.fields``,
# ``dataclasses.replace`` and ``dataclasses.asdict`` work on them, from the declarations below.


@dataclass(frozen=True)
class _PodFields:
    phase: int  # spec.kep.vocabulary.Phase
    node: int  # spec.nodeName as a node index, NO_NODE when unscheduled
    desired: tuple  # spec...resources.requests, one int per resource
    allocated: tuple  # status...allocatedResources
    actual: tuple  # status...resources (what the runtime reports)
    resize: int = ResizeReason.NONE  # PodResizePending reason (NONE = no condition)
    in_progress: bool = False  # PodResizeInProgress
    observed: bool = True  # the kubelet has evaluated the current desired (condition observedGeneration)
    queue: int = Queue.NOT_QUEUED  # scheduler memory: activeQ/backoffQ vs unschedulable pool
    nominated: int = NO_NODE  # status.nominatedNodeName
    preempted_by: int = NO_POD  # DisruptionTarget condition: evicted by preemption for this pod
    promised: tuple = ()  # ghost: the resize size the scheduler evicted victims for (all zero: none)
    assumed: tuple = ()  # scheduler memory (reservation=assume): the size held in the cache (all zero: none)
    tracking: bool = False  # scheduler memory (in-memory guard): victims in flight are tracked
    queued_at: int = 0  # scheduler memory: the queue timestamp as a rank among queued pods (0 = oldest; ties allowed)
    pending_since: int = 0  # PodResizePending's lastTransitionTime as a rank among running pods with one (model/actions/queue_order.py)
    # stale view only: the scheduler's informer copy (cache and queue) of the API fields above
    seen_phase: object = None
    seen_node: object = None
    seen_desired: tuple = ()
    seen_held: tuple = ()  # max(allocated, actual): all of the two the scheduler's accounting reads
    seen_resize: object = None
    # stale view only: the scheduler's cache already has the API's version; its queue still has the copy
    # above (the handler updates the cache first, then the queue: KEP-5836 'Conflicting Sources of Truth')
    cache_ahead: object = None
    # asynchronous preemption only: the preemptor whose DisruptionTarget/DELETE call for this pod is
    # in flight (NO_POD: none); the preemptor's own calls in flight (PreEnqueue holds it back)
    evicting_for: object = None
    preempting: object = None


@dataclass(frozen=True)
class _StateFields:
    pods: tuple  # tuple[PodState, ...] in scenario order
    retry_due: tuple  # per node: a pod was removed, so the kubelet owes a retry pass (pods_removed)
    env_used: tuple = ()  # per entry of the scenario's environment menu: it has happened
    env_events: int = 0  # environment events used so far (bounded by maxEvents)


def _record(name: str, declaration):
    """A named tuple with the fields (names and defaults) of a dataclass ``declaration``."""
    declared = fields(declaration)
    defaults = [f.default for f in declared if f.default is not MISSING]  # the trailing fields
    return namedtuple(name, [f.name for f in declared], defaults=defaults)


class PodState(_record("PodState", _PodFields)):
    """One pod; fields as declared in ``_PodFields``."""

    __slots__ = ()
    __dataclass_fields__ = _PodFields.__dataclass_fields__
    __dataclass_params__ = _PodFields.__dataclass_params__


class State(_record("State", _StateFields)):
    """The whole cluster; fields as declared in ``_StateFields``. Fields hold plain ints, bools and
    tuples for the explicit engine, or Z3 terms for the symbolic engine; the model's functions
    treat both alike (``model/expr/scalars.py``)."""

    __slots__ = ()
    __dataclass_fields__ = _StateFields.__dataclass_fields__
    __dataclass_params__ = _StateFields.__dataclass_params__


_tuple_new = tuple.__new__
_INDEX = {cls: {name: i for i, name in enumerate(cls._fields)} for cls in (PodState, State)}


def evolve(obj, **changes):
    """``dataclasses.replace`` for ``PodState`` and ``State`` (always a new object)."""
    cls = type(obj)
    index = _INDEX.get(cls)
    if index is None:
        return replace(obj, **changes)
    values = list(obj)
    for name, value in changes.items():
        position = index.get(name)
        if position is None:
            raise TypeError(f"{cls.__name__} has no field {name!r}")
        values[position] = value
    return _tuple_new(cls, values)


def replace_pod(state: State, index: int, **changes) -> State:
    pods = list(state.pods)
    pods[index] = replace(pods[index], **changes)
    return replace(state, pods=tuple(pods))


def type_ok(state: State, pod_count: int, node_count: int, width: int) -> bool:
    """TypeOK: every field within its domain (``tests/test_transitions.py`` checks it on every state the
    explicit engine explores, under every variant)."""
    if len(state.pods) != pod_count or len(state.retry_due) != node_count:
        return False
    for pod in state.pods:
        if pod.phase not in tuple(Phase) or pod.resize not in tuple(ResizeReason) or pod.queue not in tuple(Queue):
            return False
        if not (NO_NODE <= pod.node < node_count and NO_NODE <= pod.nominated < node_count):
            return False
        if not (NO_POD <= pod.preempted_by < pod_count) or not 0 <= pod.queued_at < pod_count \
                or not 0 <= pod.pending_since < pod_count:
            return False
        for vector in (pod.desired, pod.allocated, pod.actual):
            if len(vector) != width or any(v < 0 for v in vector):
                return False
        if len(pod.promised) != width or len(pod.assumed) != width:
            return False
        if pod.seen_phase is not None and (pod.seen_phase not in tuple(Phase) or pod.seen_resize not in tuple(ResizeReason)
                                           or not NO_NODE <= pod.seen_node < node_count
                                           or any(len(v) != width for v in (pod.seen_desired, pod.seen_held))):
            return False
        if pod.evicting_for is not None and not NO_POD <= pod.evicting_for < pod_count:
            return False
        if (pod.phase >= Phase.BOUND) != (pod.node != NO_NODE) and pod.phase != Phase.GONE and pod.phase != Phase.REJECTED:
            return False
    return True
