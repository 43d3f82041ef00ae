"""The SPIN toy of ``bench/toy-resize.pml``, in this project's modelling style.

``NP`` pods on two nodes of capacity 6; pod ``i`` has priority ``i`` and starts unplaced with size 1.
One step picks a pod and one enabled branch (the Promela model's ``atomic`` block):

* ``Place(pod, node)``: an unplaced pod goes to the node if it fits (otherwise nothing changes);
* ``AskResize(pod, size)``: a placed pod without a pending resize asks for size 2 or 3 (nothing
  changes if that is its size);
* ``ApplyResize(pod)``: a pending resize that fits its node is applied;
* ``EvictFor(pod, victim)``: a pending resize that does not fit may evict a lower-priority pod of
  its node (any other choice of victim changes nothing);
* ``Remove(pod)``: a placed pod is deleted (its pending resize dropped).

Like the KEP model, each action is a function yielding ``(Action, guard, successor)`` per instance,
guards and effects written with ``kepcheck.model.expr.scalars`` helpers, so the same functions run on
plain ints (the interpreted search of ``kepcheck.checks.search.breadth_first``) and on traced terms (the vector
core). ``used[n]`` is derived from the pods, not stored. The state space for ``NP = 5`` is the one
the bench README gives: 1,037,149 states and 13,720,870 transitions (SPIN counts one more state and
two more transitions: the state before its initial ``d_step``).
"""

from __future__ import annotations

from collections import namedtuple

from kepcheck.checks.search.breadth_first import TransitionSystem
from kepcheck.checks.vector.traced_system import TracedSystem, trace_system
from kepcheck.model.expr.scalars import and_, ite, not_
from kepcheck.model.expr.vectors import vsum_where
from kepcheck.model.schema import Leaf
from kepcheck.model.step import Action

__all__ = ["ToyState", "toy_leaves", "toy_initial", "toy_steps", "toy_system", "toy_traced", "CAPACITY"]

CAPACITY = 6
NODES = (1, 2)
ToyState = namedtuple("ToyState", ["node", "req", "want"])  # per pod: its node (0: unplaced), size, pending size


def toy_leaves(pods: int) -> tuple:
    return tuple(Leaf(f"{field}.{i}", low, high) for field, low, high in (("node", 0, 2), ("req", 1, 3), ("want", 0, 3))
                 for i in range(pods))


def toy_initial(pods: int) -> ToyState:
    return ToyState((0,) * pods, (1,) * pods, (0,) * pods)


def _flatten(state: ToyState) -> list:
    return list(state.node) + list(state.req) + list(state.want)


def _assemble(pods: int, values) -> ToyState:
    values = list(values)
    return ToyState(tuple(values[:pods]), tuple(values[pods:2 * pods]), tuple(values[2 * pods:]))


def _used(state: ToyState, node: int):
    return vsum_where(((state.node[k] == node, (state.req[k],)) for k in range(len(state.node))), 1)[0]


def _with(state: ToyState, condition, **changes) -> ToyState:
    """``state`` with ``changes`` (field -> {pod: value}) where ``condition`` holds."""
    fields = {}
    for name, values in changes.items():
        column = list(getattr(state, name))
        for pod, value in values.items():
            column[pod] = ite(condition, value, column[pod])
        fields[name] = tuple(column)
    return state._replace(**fields)


def _place(state: ToyState, i: int):
    for node in NODES:
        fits = _used(state, node) + state.req[i] <= CAPACITY
        yield Action("Place", (("pod", i), ("node", node))), state.node[i] == 0, _with(state, fits, node={i: node})


def _ask_resize(state: ToyState, i: int):
    guard = and_(state.node[i] != 0, state.want[i] == 0)
    for size in (2, 3):
        yield Action("AskResize", (("pod", i), ("size", size))), guard, _with(state, size != state.req[i], want={i: size})


def _resize_fits(state: ToyState, i: int):
    used = ite(state.node[i] == 1, _used(state, 1), _used(state, 2))
    return used - state.req[i] + state.want[i] <= CAPACITY


def _resize(state: ToyState, i: int):
    pending = and_(state.node[i] != 0, state.want[i] != 0)
    fits = _resize_fits(state, i)
    yield (Action("ApplyResize", (("pod", i),)), and_(pending, fits),
           _with(state, True, req={i: state.want[i]}, want={i: 0}))
    for victim in range(len(state.node)):
        evicts = and_(state.node[victim] == state.node[i]) if victim < i else False
        yield (Action("EvictFor", (("pod", i), ("victim", victim))), and_(pending, not_(fits)),
               _with(state, evicts, node={victim: 0}, want={victim: 0}))


def _remove(state: ToyState, i: int):
    yield Action("Remove", (("pod", i),)), state.node[i] != 0, _with(state, True, node={i: 0}, want={i: 0})


def toy_steps(state: ToyState):
    """Every action instance ``(Action, guard, successor)``, pod by pod."""
    for i in range(len(state.node)):
        yield from _place(state, i)
        yield from _ask_resize(state, i)
        yield from _resize(state, i)
        yield from _remove(state, i)


def _no_overcommit(state: ToyState):
    return and_(*(_used(state, node) <= CAPACITY for node in NODES))


def toy_system(pods: int = 5) -> TransitionSystem:
    """The toy for the interpreted search (``kepcheck.checks.search.breadth_first.explore``)."""
    def successors(state):
        for action, guard, after in toy_steps(state):
            if guard is True:
                yield action, after
    return TransitionSystem(initial=lambda: [toy_initial(pods)], successors=successors,
                            state_properties=[("NoOvercommit", "always", _no_overcommit)])


def toy_traced(pods: int = 5) -> TracedSystem:
    """The toy traced for the vector core, with its invariant ``used[1] <= 6 and used[2] <= 6``."""
    return trace_system(toy_leaves(pods), _flatten(toy_initial(pods)), lambda values: _assemble(pods, values),
                        _flatten, lambda state: list(toy_steps(state)), [("NoOvercommit", True, _no_overcommit)])
