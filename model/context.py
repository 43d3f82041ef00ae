"""The static side of a model run: one scenario, one variant, and optional mutants.

``Context`` holds what never changes while the model runs (names, priorities, preemption
policies, node allocatable, the environment's menu, the variant's options) so that states hold
only what changes. ``initial_state`` builds the scenario's start state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from spec.scenarios import Scenario
from spec.variants import Variant
from spec.vocabulary import Phase, Queue, ResizeReason

from model.state import NO_NODE, PodState, State

__all__ = ["EnvEvent", "Context", "initial_state"]


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
    from model.actions import scheduler_observes  # the informer's start-up AddPod pass

    return scheduler_observes(ctx, None, state)
