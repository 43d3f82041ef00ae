"""The model's caches, declared in one place and owned by the engine that runs the model.

Many functions of the model are pure functions of the context and of part of a state, and the
explicit engine asks them again and again: several actions share one scheduling cycle, the pods
of one node recur in thousands of states, the same pod update is seen on many transitions. This
module memoises them without the model knowing: a function is declared memoisable with one of the
decorators below and exists once, and the engine decides whether a cache is active.

* ``caching(ctx)`` — a context manager the engine enters for one exploration of one context; it
  creates a ``Memo`` (the cache tables) that lives as long as the ``with`` block. Without an active
  ``Memo`` for the context at hand every decorated function is evaluated afresh.
* ``Memo(ctx, concrete=True)`` is for engines whose states hold plain ints (explicit, random,
  replay): every decorator memoises. ``concrete=False`` is for engines whose states hold Z3 terms
  (or, later, arrays): only ``per_state`` is active, which shares the value computed for one state
  object among the actions of one step (the same terms, built once); value-keyed caches pass such
  states straight through, so the symbolic engine builds exactly the terms it would build without
  them.

The decorators:

* ``per_state`` — ``f(ctx, state, *params)`` keyed by the state object (the few states asked
  about last) and the parameters: one scheduling cycle's work shared by the actions of a state.
* ``of_values`` — ``f(ctx, *args)`` keyed by its arguments (pods, flags): a pure function of
  values, e.g. a pod's scheduler footprint or what the event handlers do with one pod update.
* ``node_local(scope)`` — ``f(ctx, state, *args)`` that reads only the pods on (or nominated to)
  one node, plus what ``scope(state, *args)`` names: keyed by the arguments and a number for that
  node's pods, so that it is computed once for every state with the same pods on the node.

And two helpers for properties: ``pod_values`` (a predicate of one pod, for every pod) and
``changed_pods`` (a function of one pod's update, for every pod a step changed).

What is left out: eviction. Tables grow with the distinct values met in one exploration (about
the size of the state space); they are dropped with the ``Memo`` when the exploration ends.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from functools import wraps
from typing import Callable, Iterator

__all__ = ["Memo", "caching", "per_state", "of_values", "node_local", "pod_values", "changed_pods", "differs"]

_MISSING = object()
_RECENT_STATES = 4  # per-state memos kept: the state being expanded stays while its successors are judged


class Memo:
    """The cache tables of one exploration of one context."""

    __slots__ = ("ctx", "concrete", "tables", "recent", "views", "last_step")

    def __init__(self, ctx, concrete: bool = True):
        self.ctx = ctx
        self.concrete = concrete
        self.tables: dict = {}  # function -> {key: value}
        self.recent: list = []  # [(state, {key: value}), ...], most recent first
        self.views: dict = {}  # (node, the node's pods) -> a small number
        self.last_step: tuple = (None, None, ())  # (before, after, the pods the step changed)

    def table(self, function) -> dict:
        """The value-keyed table of one memoised function."""
        table = self.tables.get(function)
        if table is None:
            table = self.tables[function] = {}
        return table

    def state_table(self, state) -> dict:
        """The per-state table of this state object (kept for the few states asked about last)."""
        recent = self.recent
        if recent and recent[0][0] is state:
            return recent[0][1]
        for position, entry in enumerate(recent):
            if entry[0] is state:
                del recent[position]
                recent.insert(0, entry)
                return entry[1]
        table: dict = {}
        recent.insert(0, (state, table))
        del recent[_RECENT_STATES:]
        return table

    def view(self, state, node: int, transient: bool) -> int:
        """A number for the pods of ``node`` in ``state``: the pods on or nominated to it, by index
        (equal pods there, equal number). ``transient``: the state is judged once (a successor), so
        its number is not kept in the state's table."""
        if not transient:
            table = self.state_table(state)
            key = ("node-view", node)
            number = table.get(key)
            if number is None:
                number = table[key] = self._number(state, node)
            return number
        return self._number(state, node)

    def _number(self, state, node: int) -> int:
        view = (node, tuple(pod if pod.node == node or pod.nominated == node else None for pod in state.pods))
        number = self.views.get(view)
        if number is None:
            number = self.views[view] = len(self.views)
        return number


_ACTIVE: ContextVar = ContextVar("kepcheck-memo", default=None)


_active = _ACTIVE.get  # the decorators below call it on every call: bound once


def _memo(ctx) -> Memo | None:
    memo = _active()
    return memo if memo is not None and memo.ctx is ctx else None


@contextmanager
def caching(ctx, concrete: bool = True) -> Iterator[Memo]:
    """Memoise the model's functions for ``ctx`` inside the block (see the module docstring). Inside
    a block already caching for the same context and kind of state, the same tables are used."""
    active = _memo(ctx)
    if active is not None and active.concrete == concrete:
        yield active
        return
    token = _ACTIVE.set(Memo(ctx, concrete))
    try:
        yield _ACTIVE.get()
    finally:
        _ACTIVE.reset(token)


def per_state(function: Callable) -> Callable:
    """Memoise ``function(ctx, state, *params)`` per state object (concrete or symbolic)."""

    @wraps(function)
    def memoised(ctx, state, *params):
        memo = _active()
        if memo is None or memo.ctx is not ctx:
            return function(ctx, state, *params)
        table = memo.state_table(state)
        key = (function, params)
        value = table.get(key, _MISSING)
        if value is _MISSING:
            value = table[key] = function(ctx, state, *params)
        return value

    return memoised


def of_values(function: Callable) -> Callable:
    """Memoise ``function(ctx, *args)``, a pure function of hashable concrete values."""

    @wraps(function)
    def memoised(ctx, *args):
        memo = _active()
        if memo is None or memo.ctx is not ctx or not memo.concrete:
            return function(ctx, *args)
        table = memo.table(function)
        value = table.get(args, _MISSING)
        if value is _MISSING:
            value = table[args] = function(ctx, *args)
        return value

    return memoised


def _argument_key(args: tuple):
    """The arguments as part of a key: a ``removed`` map (pod -> condition) becomes its items."""
    for arg in args:
        if type(arg) is dict:
            return tuple(tuple(arg.items()) if type(arg) is dict else arg for arg in args)
    return args


def node_local(scope: Callable, *, transient: bool = False) -> Callable:
    """Memoise ``function(ctx, state, *args)`` whose value depends only on ``args``, the pods on or
    nominated to one node, and what else ``scope`` names: ``scope(state, *args)`` returns ``(node,
    extra)``, ``extra`` being the values read outside the node (e.g. a pending claimant's pod).
    Every pod elsewhere must contribute nothing (its contribution guarded by ``pod.node == node``
    or ``pod.nominated == node``). ``transient``: for states judged once (successors)."""

    def decorate(function: Callable) -> Callable:
        @wraps(function)
        def memoised(ctx, state, *args):
            memo = _active()
            if memo is None or memo.ctx is not ctx or not memo.concrete:
                return function(ctx, state, *args)
            node, extra = scope(state, *args)
            key = (_argument_key(args), extra, memo.view(state, node, transient))
            table = memo.table(function)
            value = table.get(key, _MISSING)
            if value is _MISSING:
                value = table[key] = function(ctx, state, *args)
            return value

        return memoised

    return decorate


def pod_values(ctx, state, function: Callable) -> list:
    """``[function(ctx, i, pod) for each pod]``, memoised per (function, index, pod) when a concrete
    cache is active: for predicates that look at one pod at a time."""
    memo = _memo(ctx)
    if memo is None or not memo.concrete:
        return [function(ctx, i, pod) for i, pod in enumerate(state.pods)]
    values = memo.table(function)
    result = []
    for i, pod in enumerate(state.pods):
        key = (i, pod)
        value = values.get(key, _MISSING)
        if value is _MISSING:
            value = values[key] = function(ctx, i, pod)
        result.append(value)
    return result


def differs(old, new) -> bool:
    """The pod changed in a step: by value for plain values. For pods holding Z3 terms the comparison
    is structural (Z3 terms are hash-consed: equal terms are one term), so a pod rewritten with the
    same terms is unchanged too. Pods holding numpy columns (``model/expr/columns.py``) have no single
    truth value: every rewritten one counts as changed (a change is then a condition per state)."""
    if old is new:
        return False
    try:
        return old != new
    except ValueError:
        return True


def changed_pods(ctx, before, after, function: Callable) -> list:
    """``[(i, function(ctx, i, old, new))]`` for every pod the step changed, in pod order; memoised
    per (function, index, old, new) when a concrete cache is active."""
    memo = _memo(ctx)
    if memo is None or not memo.concrete:
        return [(i, function(ctx, i, old, new)) for i, (old, new) in enumerate(zip(before.pods, after.pods))
                if differs(old, new)]
    last_before, last_after, pairs = memo.last_step
    if last_before is not before or last_after is not after:  # several properties judge the same step
        pairs = [(i, old, new) for i, (old, new) in enumerate(zip(before.pods, after.pods))
                 if old is not new and old != new]  # differs, inline
        memo.last_step = (before, after, pairs)
    values = memo.table(function)
    result = []
    for key in pairs:  # (index, old, new)
        i = key[0]
        value = values.get(key, _MISSING)
        if value is _MISSING:
            value = values[key] = function(ctx, *key)
        result.append((i, value))
    return result
