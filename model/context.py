"""The static side of a model run: one scenario, one variant and the mutants applied, as immutable
configuration.

``Context`` holds what never changes while the model runs (names, priorities, preemption
policies, node allocatable, the environment's menu, the variant's options, the functions mutants
replace) so that states hold only what changes. It holds no cache: the engines own the model's
caches (``model/memo.py``). The initial state of a scenario is built by ``model/init.py``.

Mutants (``model/mutants.py``) are not switches in the model: a function of the model that a
mutant may replace or wrap is marked ``@overridable``, and a context built with that mutant calls
the mutant's version instead. Production code never names a mutant.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import wraps
from types import MappingProxyType
from typing import Callable, Mapping

from kepcheck.spec.kep.variants import Variant
from kepcheck.spec.kubernetes.qos import infeasible_resources
from kepcheck.spec.language.loader import Scenario

__all__ = ["EnvEvent", "Context", "overridable"]


@dataclass(frozen=True)
class EnvEvent:
    """One entry of the environment's menu; each can happen at most once per run. Two equal entries
    (a resize repeated: resize, revert, resize again) are taken in menu order (``previous_twins``)."""

    kind: str  # "resize", "arrival", "deletion", "restart", "recreation"
    pod: int = -1
    requests: tuple = ()


def _menu(scenario: Scenario) -> tuple[EnvEvent, ...]:
    """The environment's menu: the scenario's resizes, arrivals, deletions, restarts and recreations, in
    that order."""
    events = [EnvEvent("resize", scenario.pod_index(resize.pod), resize.requests) for resize in scenario.resizes]
    events += [EnvEvent("arrival", i) for i, pod in enumerate(scenario.pods) if pod.arrival]
    events += [EnvEvent("deletion", scenario.pod_index(name)) for name in scenario.deletions]
    events += [EnvEvent("restart") for _ in range(scenario.scheduler_restarts)]
    events += [EnvEvent("recreation", scenario.pod_index(name)) for name in scenario.recreations]
    return tuple(events)


def _previous_twins(events: tuple) -> tuple:
    """Per menu entry: the last earlier entry equal to it, or -1. Equal entries are interchangeable,
    so offering one only after the one before it is used loses no behaviour and keeps runs that
    differ only in which of them was used from being explored twice."""
    last: dict = {}
    twins = []
    for i, event in enumerate(events):
        twins.append(last.get(event, -1))
        last[event] = i
    return tuple(twins)


def _pinned_resources(scenario: Scenario) -> tuple:
    """Per pod, per node: the indices of the resources ``infeasible_resources`` pins there."""
    return tuple(tuple(tuple(r for r, name in enumerate(scenario.resources) if name in infeasible_resources(
        pod.qos_class, node.cpu_manager_policy, node.memory_manager_policy)) for node in scenario.nodes)
        for pod in scenario.pods)


@dataclass(frozen=True)
class Context:
    scenario: Scenario
    variant: Variant
    mutants: frozenset = frozenset()  # names of the mutants applied (for reports and records)
    # function name -> replacement(original, ctx, *args), from the mutants applied
    overrides: Mapping = field(default_factory=lambda: MappingProxyType({}), compare=False, hash=False, repr=False)
    names: tuple = ()
    priorities: tuple = ()
    never_preempts: tuple = ()  # preemptionPolicy: Never
    # PodDisruptionBudgets: (indices of the pods each selects, minAvailable), spec/language/disruption_budgets.py
    budgets: tuple = ()
    qos_classes: tuple = ()  # per pod: Guaranteed, Burstable or BestEffort (spec/kubernetes/qos.py)
    # per pod, per node: the resources (indices) whose request a resize may not change there without
    # the kubelet marking it Infeasible (a Guaranteed pod beside a static CPU or memory manager)
    pinned_resources: tuple = ()
    node_names: tuple = ()
    allocatable: tuple = ()
    max_pods: tuple = ()  # per node: allocatable ``pods``, or None (no pod-count limit)
    resize_preemption_disabled: tuple = ()  # per node: spec.podPreemptionPolicy.disableResizePreemption
    width: int = 1
    events: tuple = ()  # EnvEvent menu
    previous_twins: tuple = ()  # per menu entry: the last earlier equal entry, -1 when none
    max_events: int = 0

    @staticmethod
    def build(scenario: Scenario, variant: Variant, mutants=()) -> "Context":
        """The context of a scenario and a variant, with ``mutants`` (``model.mutants.Mutant``
        values) applied."""
        overrides: dict = {}
        for mutant in mutants:
            if isinstance(mutant, str):
                raise TypeError(f"mutants are Mutant values (model.mutants.mutant_by_name({mutant!r}))")
            overrides.update(mutant.overrides)
        return Context._assemble(scenario, variant, frozenset(m.name for m in mutants), MappingProxyType(overrides))

    @staticmethod
    def _assemble(scenario: Scenario, variant: Variant, mutants: frozenset, overrides: Mapping) -> "Context":
        events = _menu(scenario)
        return Context(
            scenario=scenario,
            variant=variant,
            mutants=mutants,
            overrides=overrides,
            names=tuple(p.name for p in scenario.pods),
            priorities=tuple(p.priority for p in scenario.pods),
            never_preempts=tuple(p.preemption_policy == "Never" for p in scenario.pods),
            budgets=tuple((tuple(scenario.pod_index(name) for name in b.pods), b.min_available)
                          for b in scenario.budgets),
            qos_classes=tuple(p.qos_class for p in scenario.pods),
            pinned_resources=_pinned_resources(scenario),
            node_names=tuple(n.name for n in scenario.nodes),
            allocatable=tuple(n.allocatable for n in scenario.nodes),
            max_pods=tuple(n.max_pods for n in scenario.nodes),
            resize_preemption_disabled=tuple(n.disable_resize_preemption for n in scenario.nodes),
            width=len(scenario.resources),
            events=events,
            previous_twins=_previous_twins(events),
            max_events=scenario.max_events,
        )

    def with_scenario(self, scenario: Scenario) -> "Context":
        """The same variant and mutants on another scenario (e.g. one with the sizes Z3 chose)."""
        return Context._assemble(scenario, self.variant, self.mutants, self.overrides)

    def pod_index(self, name: str) -> int:
        return self.names.index(name)

    def node_index(self, name: str) -> int:
        return self.node_names.index(name)

    @property
    def pod_range(self) -> range:
        return range(len(self.names))

    @property
    def node_range(self) -> range:
        return range(len(self.node_names))

    def format(self, vector) -> str:
        return self.scenario.format(vector)


def overridable(function: Callable) -> Callable:
    """Marks a model function ``f(ctx, *args)`` that a mutant may replace or wrap: in a context whose
    ``overrides`` name it, ``replacement(f, ctx, *args)`` is called instead (the original is passed
    so that a mutant can wrap it)."""
    name = function.__name__

    @wraps(function)
    def dispatch(ctx, *args):
        if not ctx.mutants:  # the production model: no replacement
            return function(ctx, *args)
        replacement = ctx.overrides.get(name)
        if replacement is None:
            return function(ctx, *args)
        return replacement(function, ctx, *args)

    return dispatch
