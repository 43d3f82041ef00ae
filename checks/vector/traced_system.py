"""A model traced once into an expression graph: what the vector core evaluates.

``trace_kep(ctx, properties)`` runs the model's own functions — every action instance of ``NEXT``
with the scheduler's event handlers (``model.actions.next.transitions``), and the catalog's predicates —
on a state whose fields are ``Term`` leaves (``model/expr/traced.py``). The result, a
``TracedSystem``, holds per action instance its guard and the value of every field of its
successor, per state property its value and per step property its value on each instance, all as
nodes of one hash-consed graph (or plain values where the model decides without reading the state).
Nothing of the behaviour is written again: the graph is what the functions computed.

``TracedSystem`` is generic: ``trace_system`` builds one for any model given as its fields
(``model/schema.Leaf``), a way to assemble a state from field values, its action instances and its
predicates (the SPIN toy of ``bench/toy_resize.py`` uses it too).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Callable, Iterable, Sequence

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, SOMETIMES, PropertySpec

from kepcheck.model.actions.next import transitions
from kepcheck.model.context import Context
from kepcheck.model.expr.traced import Tracer
from kepcheck.model.init import initial_state
from kepcheck.model.memo import caching
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.properties.eventually import liveness_observers
from kepcheck.model.schema import Leaf, assemble, flatten, leaves
from kepcheck.model.symmetry import symmetry_classes

__all__ = ["TracedInstance", "TracedProperty", "TracedObservation", "TracedSystem", "trace_system", "trace_kep"]


@dataclass(frozen=True)
class TracedInstance:
    action: object  # the Action value
    guard: object  # a Term or a plain bool
    successor: tuple  # per field, a Term or a plain value


@dataclass(frozen=True)
class TracedProperty:
    name: str
    always: bool  # an always-property (decided by a false value) or a sometimes one (by a true value)
    values: tuple  # state property: (value,); step property: one value per instance


@dataclass(frozen=True)
class TracedObservation:
    """A predicate an eventually-property reads, evaluated on every state (``key``: property, pod,
    ``"premise"``/``"goal"``) or on every transition (``key``: the property's name) rather than decided
    by its first hit: ``values`` as in ``TracedProperty``."""

    key: tuple | str
    values: tuple


@dataclass
class TracedSystem:
    leaves: tuple  # the state's fields (model/schema.Leaf), in order
    initial: list  # the initial state's field values
    instances: list  # TracedInstance, in the order the model tries them
    state_properties: list = field(default_factory=list)  # TracedProperty
    step_properties: list = field(default_factory=list)  # TracedProperty
    state_observations: list = field(default_factory=list)  # TracedObservation: liveness premises and goals
    step_observations: list = field(default_factory=list)  # TracedObservation: liveness steps
    tracer: Tracer = None
    seconds: float = 0.0
    # symmetry reduction (model/symmetry.py): classes of interchangeable pods (their indices); each pod
    # is `pod_fields` consecutive fields from field 0 on, its preemptor at offset `preemptor_field`
    symmetry: tuple = ()
    pod_fields: int = 0
    preemptor_field: int = -1

    def leaf_terms(self) -> list:
        return [self.tracer.field(leaf.name) for leaf in self.leaves]


def trace_system(fields: Sequence[Leaf], initial: list, make_state: Callable, flatten_state: Callable,
                 instances_of: Callable, state_predicates: Iterable = (), step_predicates: Iterable = (),
                 state_observers: Iterable = (), step_observers: Iterable = ()) -> TracedSystem:
    """Trace a model: ``make_state(values)`` builds a state from field values (terms here) and
    ``flatten_state(state)`` reads them back, in ``fields`` order; ``instances_of(state)`` yields
    ``(action, guard, successor state)``; ``state_predicates`` are ``(name, always,
    predicate(state))`` and ``step_predicates`` ``(name, always, predicate(before, action, after))``;
    ``state_observers`` are ``(key, predicate(state))`` and ``step_observers`` ``(key,
    predicate(before, after))``, evaluated everywhere (``TracedObservation``)."""
    tracer = Tracer()
    state = make_state([tracer.field(leaf.name) for leaf in fields])
    steps = list(instances_of(state))
    instances = [TracedInstance(action, guard, tuple(flatten_state(after))) for action, guard, after in steps]
    system = TracedSystem(tuple(fields), list(initial), instances, tracer=tracer)
    system.state_properties = [TracedProperty(name, always, (predicate(state),))
                               for name, always, predicate in state_predicates]
    system.step_properties = [TracedProperty(name, always, tuple(predicate(state, action, after)
                                                                 for action, _, after in steps))
                              for name, always, predicate in step_predicates]
    system.state_observations = [TracedObservation(key, (predicate(state),)) for key, predicate in state_observers]
    system.step_observations = [TracedObservation(key, tuple(predicate(state, after) for _, _, after in steps))
                                for key, predicate in step_observers]
    return system


def trace_kep(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, symmetry: bool = False) -> TracedSystem:
    """The KEP-5836 model of one context, traced: its always- and sometimes-properties among
    ``properties`` as properties, its eventually-properties as observations (``model.properties.eventually.liveness_observers``);
    ``symmetry``: with the classes of interchangeable pods, for a reduced search."""
    properties = list(properties)
    judged_kinds = [p for p in properties if p.kind in (ALWAYS, SOMETIMES)]

    def judged(scope: str):
        return [(p.name, p.kind == ALWAYS, partial(PREDICATES[p.name], ctx)) for p in judged_kinds if p.scope == scope]

    state_observers, step_observers = liveness_observers(ctx, properties)
    with caching(ctx, concrete=False):  # the actions of the traced state share their scheduling cycles
        system = trace_system(leaves(ctx), flatten(initial_state(ctx)), partial(assemble, ctx), flatten,
                              lambda state: list(transitions(ctx, state)), judged("state"), judged("step"),
                              state_observers, step_observers)
    if symmetry:
        fields = system.leaves
        system.pod_fields = next(j for j, leaf in enumerate(fields) if leaf.name.startswith(f"{ctx.names[1]}.")) \
            if len(ctx.names) > 1 else len(fields)
        system.preemptor_field = next(j for j, leaf in enumerate(fields) if leaf.name == f"{ctx.names[0]}.preempted_by")
        system.symmetry = tuple(symmetry_classes(ctx))
    return system

