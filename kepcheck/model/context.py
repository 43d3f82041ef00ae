"""The static side of a model run: one scenario, one variant, and optional mutants.

``Context`` holds what never changes while the model runs (names, priorities, preemption
policies, node allocatable, the environment's menu, the variant's options) so that states hold
only what changes. ``initial_state`` builds the scenario's start state.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from kepcheck.spec.scenarios import Scenario
from kepcheck.spec.variants import Variant
from kepcheck.spec.vocabulary import Phase, Queue, ResizeReason

from kepcheck.model.state import NO_NODE, PodState, State

__all__ = ["EnvEvent", "Context", "initial_state", "state_memo", "any_state_memo", "node_local", "pod_values", "concrete_pod",
           "changed_pods"]


@dataclass(frozen=True)
class EnvEvent:
    """One entry of the environment's menu; each can happen at most once per run."""

    kind: str  # "resize", "arrival", "deletion", "restart"
    pod: int = -1
    requests: tuple = ()


@dataclass(frozen=True)
class Context:
    scenario: Scenario
    variant: Variant
    mutants: frozenset = frozenset()
    names: tuple = ()
    priorities: tuple = ()
    never_preempts: tuple = ()  # preemptionPolicy: Never
    node_names: tuple = ()
    allocatable: tuple = ()
    resize_preemption_disabled: tuple = ()  # per node: spec.podPreemptionPolicy.disableResizePreemption
    width: int = 1
    events: tuple = ()  # EnvEvent menu
    max_events: int = 0
    cache: dict = field(default_factory=dict, compare=False, hash=False, repr=False)  # memoised pure functions of a pod

    @staticmethod
    def build(scenario: Scenario, variant: Variant, mutants=()) -> "Context":
        events = []
        for resize in scenario.resizes:
            events.append(EnvEvent("resize", scenario.pod_index(resize.pod), resize.requests))
        for i, pod in enumerate(scenario.pods):
            if pod.arrival:
                events.append(EnvEvent("arrival", i))
        for name in scenario.deletions:
            events.append(EnvEvent("deletion", scenario.pod_index(name)))
        for _ in range(scenario.scheduler_restarts):
            events.append(EnvEvent("restart"))
        return Context(
            scenario=scenario,
            variant=variant,
            mutants=frozenset(mutants),
            names=tuple(p.name for p in scenario.pods),
            priorities=tuple(p.priority for p in scenario.pods),
            never_preempts=tuple(p.preemption_policy == "Never" for p in scenario.pods),
            node_names=tuple(n.name for n in scenario.nodes),
            allocatable=tuple(n.allocatable for n in scenario.nodes),
            resize_preemption_disabled=tuple(n.disable_resize_preemption for n in scenario.nodes),
            width=len(scenario.resources),
            events=tuple(events),
            max_events=scenario.max_events,
        )

    def has(self, mutant: str) -> bool:
        return mutant in self.mutants

    @property
    def pod_range(self) -> range:
        return range(len(self.names))

    @property
    def node_range(self) -> range:
        return range(len(self.node_names))

    def format(self, vector) -> str:
        return self.scenario.format(vector)


# --- concrete-only memoisation ------------------------------------------------------------------------
#
# The explicit engine evaluates the model's functions on plain-int states, one state after another;
# many of them are pure functions of (ctx, state) and are asked several times per state (several
# actions share a scheduling cycle) or of a part of the state that recurs across states (the pods
# of one node). These memos apply only to concrete states: symbolic states (Z3 terms) are always
# evaluated afresh, so the symbolic engines build exactly the terms they built without them.

_STATE_SLOTS = "memo/states"  # ctx.cache key: [(state, memo or None), ...], most recent first
_NODE_LOCAL = "memo/node-local"  # ctx.cache key: {((name, args...), node view number): value}
_STATE_SLOT_COUNT = 4
_MISSING = object()


def _concrete_value(value) -> bool:
    if isinstance(value, tuple):
        for x in value:
            if not isinstance(x, int):
                return False
        return True
    return isinstance(value, int)


def concrete_pod(pod) -> bool:
    """Every field of the pod is a plain value (no Z3 term)."""
    if "z3" not in sys.modules:
        return True
    for value in (pod.phase, pod.node, pod.desired, pod.allocated, pod.actual, pod.resize, pod.in_progress,
                  pod.observed, pod.queue, pod.nominated, pod.preempted_by, pod.promised, pod.assumed, pod.tracking):
        if not _concrete_value(value):
            return False
    return True


def _concrete_state(state: State) -> bool:
    if "z3" not in sys.modules:  # a symbolic value is a Z3 term: without Z3 loaded every state is concrete
        return True
    if not (_concrete_value(state.retry_due) and _concrete_value(state.env_used) and isinstance(state.env_events, int)):
        return False
    return all(concrete_pod(pod) for pod in state.pods)


def state_memo(ctx: Context, state: State) -> dict | None:
    """A dict in which to memoise pure functions of ``(ctx, state)`` for this state object, or None
    when the state is not concrete. Kept for the few states asked about last, most recent first
    (the state being expanded stays while its successors are judged)."""
    slots = ctx.cache.get(_STATE_SLOTS)
    if slots is None:
        slots = ctx.cache[_STATE_SLOTS] = []
    elif slots[0][0] is state:
        return slots[0][1]
    for position, entry in enumerate(slots):
        if entry[0] is state:
            if position:
                del slots[position]
                slots.insert(0, entry)
            return entry[1]
    memo = {} if _concrete_state(state) else None
    slots.insert(0, (state, memo))
    del slots[_STATE_SLOT_COUNT:]
    return memo


_SYMBOLIC_SLOTS = "memo/symbolic-states"  # ctx.cache key: [(state, memo), ...], most recent first


def any_state_memo(ctx: Context, state: State) -> dict:
    """A memo dict for this state object, concrete or symbolic: for pure functions of ``(ctx,
    state)`` whose result is not compared or hashed (on a symbolic state the result is a Z3 term,
    built once and shared by every action that asks: the terms are the same as without it)."""
    memo = state_memo(ctx, state)
    if memo is not None:
        return memo
    slots = ctx.cache.get(_SYMBOLIC_SLOTS)
    if slots is None:
        slots = ctx.cache[_SYMBOLIC_SLOTS] = []
    for entry in slots:
        if entry[0] is state:
            return entry[1]
    memo = {}
    slots.insert(0, (state, memo))
    del slots[_STATE_SLOT_COUNT:]
    return memo


def node_local(ctx: Context, state: State, node, key, compute, keep=None, transient: bool = False):
    """``compute()`` memoised across concrete states by ``key`` (the function's name and other
    arguments, hashable and concrete) and the pods of ``node``: the pods whose node or nominated
    node is ``node``, by index (the other entries None). Only for functions in which every pod
    elsewhere contributes nothing (its contribution is guarded by ``pod.node == node`` or
    ``pod.nominated == node``). Results that are not concrete are not kept (``keep(value)`` says
    which are, by default: a bool, an int or a tuple of ints). ``transient``: the state is judged
    once (a successor), so its node view is not kept in ``state_memo``."""
    if not isinstance(node, int):
        return compute()
    if transient:
        if not _concrete_state(state):
            return compute()
        view = _view_number(ctx, state, node)
    else:
        memo = state_memo(ctx, state)
        if memo is None:
            return compute()
        view_key = ("node-view", node)
        view = memo.get(view_key)
        if view is None:
            view = memo[view_key] = _view_number(ctx, state, node)
    cache = ctx.cache.get(_NODE_LOCAL)
    if cache is None:
        cache = ctx.cache[_NODE_LOCAL] = {}
    full_key = (key, view)
    value = cache.get(full_key, _MISSING)
    if value is _MISSING:
        value = compute()
        if (keep or _concrete_value)(value):
            cache[full_key] = value
    return value


_VIEWS = "memo/node-views"  # ctx.cache key: {(node, pods of the node): number}


def _view_number(ctx: Context, state: State, node: int) -> int:
    """A number for the pods of ``node`` in ``state`` (equal pods of the node, equal number), so
    that memo keys hash a small int instead of the pods."""
    views = ctx.cache.get(_VIEWS)
    if views is None:
        views = ctx.cache[_VIEWS] = {}
    view = (node, tuple(pod if pod.node == node or pod.nominated == node else None for pod in state.pods))
    number = views.get(view)
    if number is None:
        number = views[view] = len(views)
    return number


def pod_values(ctx: Context, state: State, key, function) -> list:
    """``[function(i, pod) for each pod]``, memoised per (``key``, index, pod) on concrete states:
    for predicates that look at one pod at a time (``key`` names the function and whatever else
    it depends on besides ``ctx``)."""
    if state_memo(ctx, state) is None:
        return [function(i, pod) for i, pod in enumerate(state.pods)]
    cache = ctx.cache.get(key)
    if cache is None:
        cache = ctx.cache[key] = {}
    values = []
    for i, pod in enumerate(state.pods):
        value = cache.get((i, pod), _MISSING)
        if value is _MISSING:
            value = cache[(i, pod)] = function(i, pod)
        values.append(value)
    return values


_PAIRS: dict = {}  # changed_pods memo of functions of two pods alone (no context)
_PAIRS_LIMIT = 200_000
_LAST_STEP: tuple = (None, None, [])  # (before, after, [(i, old, new) for the pods that are new objects])


def changed_pods(before: State, after: State, key, function, ctx: Context | None = None) -> list:
    """``[(i, function(i, old, new))]`` for every pod that is a new object in ``after`` (``old is
    not new``), in pod order; memoised per (``key``, i, old, new) when both pods are concrete.
    ``function`` must be a pure function of its arguments (and of ``ctx`` when given: the memo is
    then kept in ``ctx.cache``)."""
    if ctx is not None:
        cache = ctx.cache.get(key)
        if cache is None:
            cache = ctx.cache[key] = {}
    else:
        cache = _PAIRS
        if len(cache) > _PAIRS_LIMIT:
            cache.clear()
    global _LAST_STEP
    if _LAST_STEP[0] is before and _LAST_STEP[1] is after:  # several properties judge the same step
        pairs = _LAST_STEP[2]
    else:
        pairs = [(i, old, new) for i, (old, new) in enumerate(zip(before.pods, after.pods)) if old is not new]
        _LAST_STEP = (before, after, pairs)
    result = []
    for i, old, new in pairs:
        if concrete_pod(old) and concrete_pod(new):
            memo_key = (key, i, old, new)
            value = cache.get(memo_key, _MISSING)
            if value is _MISSING:
                value = cache[memo_key] = function(i, old, new)
        else:
            value = function(i, old, new)
        result.append((i, value))
    return result


def initial_state(ctx: Context) -> State:
    """The scenario's start state (reference §4.3 (1): Deferred pods are enqueued at start-up)."""
    zero = (0,) * ctx.width
    pods = []
    for i, spec in enumerate(ctx.scenario.pods):
        blank = dict(promised=zero, assumed=zero)
        if spec.arrival:
            pods.append(PodState(int(Phase.ABSENT), NO_NODE, spec.requests, zero, zero, **blank))
            continue
        if spec.node is None:
            nominated = ctx.node_names.index(spec.nominated_node) if spec.nominated_node else NO_NODE
            pods.append(PodState(int(Phase.PENDING), NO_NODE, spec.requests, zero, zero, queue=int(Queue.ACTIVE),
                                 nominated=nominated, **blank))
            continue
        node = ctx.node_names.index(spec.node)
        allocated = spec.allocated if spec.allocated is not None else spec.requests
        actual = spec.actual if spec.actual is not None else allocated
        resize = {"Deferred": ResizeReason.DEFERRED, "Infeasible": ResizeReason.INFEASIBLE}.get(
            spec.resize, ResizeReason.NONE)
        pods.append(PodState(int(Phase.RUNNING), node, spec.requests, allocated, actual, resize=int(resize),
                             in_progress=allocated != actual, **blank))
    state = State(pods=tuple(pods), retry_due=(False,) * len(ctx.node_names), env_used=(False,) * len(ctx.events))
    from kepcheck.model.actions import scheduler_observes  # the informer's start-up AddPod pass

    return scheduler_observes(ctx, None, state)
