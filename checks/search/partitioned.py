"""One exploration partitioned over the workers of a Dask cluster by state fingerprint (issue 17).

Each worker holds one partition: the states whose fingerprint (a hash of the state's flat values,
``model/schema.flatten``, the same in every process) falls to it, and its part of the frontier. The
search is breadth-first by layers: every partition expands its frontier with the model's
``next_steps`` and judges the step properties on each transition; the successors go to the
partitions that own them; each keeps the ones it has not seen, judges the state properties on them,
and they are its next frontier. The search ends when a layer brings no new state anywhere. So the
states explored are exactly the single-process search's (the reachable set), and so are the number of
transitions, the depth and which always-properties are violated and which sometimes-properties are
witnessed — what ``tests/test_sweep.py`` and ``bench/bench_partitioned.py`` compare. What it does
not give: traces (the parent links stay with the single-process search, which finds the shortest
one), symmetry reduction, budgets and the eventually-properties (they need the whole graph).

A partition is a Dask actor (``distributed``'s ``actor=True``): its visited set stays in its worker
between layers; only frontiers travel. The cluster is ``checks/sweep_dask.cluster_client``'s:
``local:N`` or a scheduler's address.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kepcheck.spec.kep.properties import ALWAYS, SOMETIMES, PropertySpec, property_by_name
from kepcheck.spec.kep.variants import derived_variant
from kepcheck.spec.language.loader import Scenario

from kepcheck.checks.search.cluster import cluster_client
from kepcheck.model.actions.next import next_steps
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.model.memo import caching
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.schema import flatten

__all__ = ["PartitionedExploration", "Partition", "explore_partitioned", "owner"]


def owner(state, partitions: int) -> int:
    """The partition that owns ``state``: a fingerprint of its flat values (ints hash alike everywhere)."""
    return hash(tuple(int(v) for v in flatten(state))) % partitions


@dataclass
class PartitionedExploration:
    states: int = 0
    transitions: int = 0
    depth: int = 0
    decided: set = field(default_factory=set)  # always-properties violated and sometimes-properties witnessed
    per_partition: list = field(default_factory=list)  # states held by each partition


class Partition:
    """One partition of the search (a Dask actor; a plain object works the same in one process)."""

    def __init__(self, scenario: Scenario, variant: str, properties: list[str], index: int, count: int):
        self.ctx = Context.build(scenario, derived_variant(variant), ())
        self.index, self.count = index, count
        specs = [property_by_name(name) for name in properties]
        self.state_properties = [(s.name, s.kind == ALWAYS, PREDICATES[s.name]) for s in specs
                                 if s.kind in (ALWAYS, SOMETIMES) and s.scope == "state"]
        self.step_properties = [(s.name, s.kind == ALWAYS, PREDICATES[s.name]) for s in specs
                                if s.kind in (ALWAYS, SOMETIMES) and s.scope == "step"]
        self.visited: set = set()
        self.frontier: list = []
        self.transitions = 0
        self.decided: set = set()

    def receive(self, states: list) -> int:
        """Keep the states not seen before as the next frontier, judging the state properties on them."""
        with caching(self.ctx):
            return self._receive(states)

    def _receive(self, states: list) -> int:
        for state in states:
            if state in self.visited:
                continue
            self.visited.add(state)
            self.frontier.append(state)
            for name, always, predicate in self.state_properties:
                if name not in self.decided and bool(predicate(self.ctx, state)) != always:
                    self.decided.add(name)
        return len(self.frontier)

    def expand(self) -> list[list]:
        """Expand the frontier: the successors, one list per owning partition; step properties judged."""
        with caching(self.ctx):
            return self._expand()

    def _expand(self) -> list[list]:
        routed = [{} for _ in range(self.count)]  # per owner, each successor once (dicts keep the order)
        for state in self.frontier:
            for action, after in next_steps(self.ctx, state):
                self.transitions += 1
                for name, always, predicate in self.step_properties:
                    if name not in self.decided and bool(predicate(self.ctx, state, action, after)) != always:
                        self.decided.add(name)
                routed[owner(after, self.count)][after] = None
        self.frontier = []
        return [[state for state in batch if state not in self.visited] if i == self.index else list(batch)
                for i, batch in enumerate(routed)]

    def summary(self) -> tuple[int, int, set]:
        return len(self.visited), self.transitions, self.decided


def _layers(partitions: list, call, count: int, start) -> PartitionedExploration:
    """The breadth-first layers over ``partitions`` (``call(partition, method, *args)`` returns the
    method's results for all partitions at once)."""
    call(partitions, "receive", [([start] if i == owner(start, count) else [],) for i in range(count)])
    depth = 0
    while True:
        routed = call(partitions, "expand", [() for _ in range(count)])
        incoming = [[state for batches in routed for state in batches[i]] for i in range(count)]
        if not any(incoming):
            break
        if not any(call(partitions, "receive", [[batch] for batch in incoming])):
            break
        depth += 1
    result = PartitionedExploration(depth=depth)
    for states, transitions, decided in call(partitions, "summary", [() for _ in range(count)]):
        result.states += states
        result.transitions += transitions
        result.decided |= decided
        result.per_partition.append(states)
    return result


def explore_partitioned(scenario: Scenario, variant: str, properties: list[PropertySpec],
                        cluster: str) -> PartitionedExploration:
    """Explore ``scenario`` under ``variant`` partitioned over the workers of ``cluster`` (``local:N``
    or a scheduler address), one partition per worker."""
    names = [p.name for p in properties]
    ctx = Context.build(scenario, derived_variant(variant), ())
    with cluster_client(cluster) as client, client.as_current():  # the actor proxies use the current client
        workers = sorted(client.scheduler_info()["workers"])
        count = len(workers)
        partitions = [client.submit(Partition, scenario, variant, names, i, count, actor=True, workers=[worker],
                                    pure=False).result() for i, worker in enumerate(workers)]

        def call(targets, method, arguments):
            futures = [getattr(target, method)(*args) for target, args in zip(targets, arguments)]
            return [future.result() for future in futures]

        return _layers(partitions, call, count, initial_state(ctx))


def explore_in_process(scenario: Scenario, variant: str, properties: list[PropertySpec], count: int) -> PartitionedExploration:
    """The same partitioned search with every partition in this process (the reference the tests
    compare the cluster's run with, and a check of the partitioning without Dask)."""
    names = [p.name for p in properties]
    partitions = [Partition(scenario, variant, names, i, count) for i in range(count)]

    def call(targets, method, arguments):
        return [getattr(target, method)(*args) for target, args in zip(targets, arguments)]

    return _layers(partitions, call, count, initial_state(partitions[0].ctx))
