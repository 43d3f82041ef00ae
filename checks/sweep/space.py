"""Every scenario within sweep bounds, once per isomorphism class, in a fixed order.

A scenario of a sweep is a ``Point``: the nodes (allocatable, opt-out) in order, the declared pods
in declaration order (priority, ``preemptionPolicy``, node or pending, requests, allocated, initial
resize) and the environment's menu (resizes and deletions name a pod by position; arrivals carry
their own priority, policy and requests). The point is its own canonical form (``Point.key``): the
sweep enumerates only canonical points, so two scenarios that differ by a renaming are checked once.

What is an isomorphism of the model, and what is not (so what the canonical form keeps):

* Names: pods and nodes are named ``p1``…, ``a1``… (arrivals), ``n1``… in order; the model never
  reads a name.
* Declaration order of pods of different priorities: the model reads declaration order as age
  (``model/actions/preemption.py`` reprieve, ``model/actions/kubelet.py`` ``retry_order_key`` among conditions of equal
  age) and compares ages
  only between pods of equal priority, so the canonical order lists pods by priority, highest first,
  keeping every order within a priority class (ages of equal-priority pods do matter). Under a
  variant whose kubelet retries in declaration order (``kubelet_order: fifo``) ages are compared
  across priorities: every order is then kept (``ordered_classes=False``).
* Node order is kept: the scheduler breaks ties between candidate nodes by the first node
  (``pickOneNodeForPreemption``, ``model/actions/preemption.py``), so swapping two nodes is a different run.
* Priority values are kept: the node choice compares sums of victim priorities, which an
  order-preserving renaming of priorities does not preserve.
* The loader divides each resource by the greatest common divisor of its quantities
  (``spec/language/loader.py``): a scenario whose quantities all share a divisor is the model of the one
  divided by it; it is skipped when that one is within the bounds too.
* A menu of at most ``maxEvents`` events with a budget of ``maxEvents`` covers every run of a larger
  menu with that budget (a run uses at most that many of its events), so menus have at most
  ``maxEvents`` entries, each used at most once; arrivals of a menu are kept in every order (their
  order is their age).

Order: fewest pods (declared and arriving), then fewest nodes, then fewest events, then the key.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from itertools import combinations, combinations_with_replacement, permutations, product
from typing import Iterator

from kepcheck.checks.sweep.bounds import SweepBounds

__all__ = ["Point", "enumerate_points", "point_document", "distinct_orders", "canonical", "scenario_bound",
           "largest_factor", "MAX_SCENARIO_BOUND"]

NO_NODE = -1  # a pending pod's node


@dataclass(frozen=True, order=True)
class Point:
    """One scenario of a sweep in canonical form (see the module's doc string)."""

    nodes: tuple  # ((allocatable..., ), opted_out) per node, in order
    pods: tuple  # (priority, policy, node or NO_NODE, requests, allocated, resize or "") in declaration order
    menu: tuple  # ("resize", pod, requests) / ("deletion", pod) sorted, then ("arrival", priority, policy, requests)

    @property
    def size(self) -> tuple[int, int, int]:
        """(pods, nodes, events): the order of "smallest"."""
        arrivals = sum(1 for event in self.menu if event[0] == "arrival")
        return len(self.pods) + arrivals, len(self.nodes), len(self.menu)

    @property
    def key(self) -> str:
        """The canonical form as text: the results store's key."""
        return json.dumps([self.nodes, self.pods, self.menu], separators=(",", ":"))

    @property
    def name(self) -> str:
        pods, nodes, events = self.size
        return f"sweep-{pods}p{nodes}n{events}e-{hashlib.sha256(self.key.encode()).hexdigest()[:10]}"


def distinct_orders(items) -> list[tuple]:
    """Every distinct order of ``items`` (a multiset), sorted."""
    return sorted(set(permutations(items)))


def _vectors(ranges) -> list[tuple]:
    return list(product(*(r.values() for r in ranges)))


def _pod_kinds(bounds: SweepBounds) -> list[tuple]:
    """(priority, policy, requests, allocated, resize) of a bound pod: no resize, or a Deferred
    resize that increases some request (the kubelet never defers one that increases none)."""
    kinds = []
    sizes = _vectors(bounds.sizes)
    for priority, policy in product(bounds.priorities, bounds.preemption_policies):
        if "none" in bounds.initial_resizes:
            kinds += [(priority, policy, size, size, "") for size in sizes]
        if "Deferred" in bounds.initial_resizes:
            kinds += [(priority, policy, requests, allocated, "Deferred") for allocated in sizes for requests in sizes
                      if any(r > a for r, a in zip(requests, allocated))]
    return kinds


def _fits(node: tuple, pods: tuple) -> bool:
    """The pods' allocations fit the node, and each pod's requests do (the loader's rules)."""
    allocatable = node[0]
    held = [sum(pod[3][r] for pod in pods) for r in range(len(allocatable))]
    return all(h <= c for h, c in zip(held, allocatable)) and all(
        all(q <= c for q, c in zip(pod[2], allocatable)) for pod in pods)


def _node_loads(bounds: SweepBounds, node: tuple, kinds: list) -> list[tuple]:
    """Every multiset of bound pod kinds that fits ``node``."""
    loads = []
    for count in bounds.pods_per_node.values():
        loads += [load for load in combinations_with_replacement(kinds, count) if _fits(node, load)]
    return loads


def _clusters(bounds: SweepBounds, nodes: tuple, kinds: list, pending_kinds: list) -> Iterator[list]:
    """Every multiset of placed pods (kind with its node) on these nodes within the pod bounds."""
    per_node = [_node_loads(bounds, node, kinds) for node in nodes]
    for loads in product(*per_node):
        bound = [(k[0], k[1], n, k[2], k[3], k[4]) for n, load in enumerate(loads) for k in load]
        if sum(1 for pod in bound if pod[5]) not in bounds.deferred_pods:
            continue
        for count in bounds.pending_pods.values():
            if len(bound) + count not in bounds.pods:
                continue
            for pending in combinations_with_replacement(pending_kinds, count):
                yield bound + [(p, policy, NO_NODE, size, size, "") for p, policy, size in pending]


def _orders(pods: list, ordered_classes: bool) -> Iterator[tuple]:
    """The canonical declaration orders of a multiset of pods: by priority, highest first, every order
    within a class (``ordered_classes``); or every order at all."""
    if not ordered_classes:
        yield from distinct_orders(pods)
        return
    classes = [[pod for pod in pods if pod[0] == priority] for priority in sorted({p[0] for p in pods}, reverse=True)]
    for parts in product(*(distinct_orders(members) for members in classes)):
        yield tuple(pod for part in parts for pod in part)


def _menu_entries(bounds: SweepBounds, nodes: tuple, pods: tuple) -> list[tuple]:
    """The events the menu may hold: each kind of event the bounds allow, every value in range."""
    sizes = _vectors(bounds.sizes)
    entries = []
    if "resize" in bounds.events:
        for i, pod in enumerate(pods):
            room = [nodes[pod[2]]] if pod[2] != NO_NODE else list(nodes)
            entries += [("resize", i, size) for size in sizes if size != pod[3]
                        and all(all(q <= c for q, c in zip(size, node[0])) for node in room)]
    if "deletion" in bounds.events:
        entries += [("deletion", i) for i in range(len(pods))]
    if "arrival" in bounds.events:
        entries += [("arrival", p, policy, size)
                    for p, policy, size in product(bounds.priorities, bounds.preemption_policies, sizes)]
    return entries


def _menus(bounds: SweepBounds, entries: list) -> Iterator[tuple]:
    for count in range(bounds.max_events + 1):
        for chosen in combinations(entries, count):
            others = tuple(e for e in chosen if e[0] != "arrival")
            arrivals = [e for e in chosen if e[0] == "arrival"]
            for order in distinct_orders(arrivals):
                yield others + order


def _quantities(point: Point, resource: int) -> list[int]:
    values = [node[0][resource] for node in point.nodes]
    values += [v for pod in point.pods for v in (pod[3][resource], pod[4][resource])]
    values += [event[-1][resource] for event in point.menu if event[0] != "deletion"]
    return values


def _scaled_within_bounds(bounds: SweepBounds, point: Point) -> bool:
    """The loader would divide some resource by a common divisor > 1, and the divided scenario is
    within the bounds too (so it is enumerated, and this one is the same model)."""
    for r, (allocatable, sizes) in enumerate(zip(bounds.allocatable, bounds.sizes)):
        values = _quantities(point, r)
        divisor = math.gcd(*values)
        if divisor > 1 and all(node[0][r] // divisor in allocatable for node in point.nodes) and all(
                v // divisor in sizes for v in values[len(point.nodes):]):
            return True
    return False


MAX_SCENARIO_BOUND = 10**10  # the most scenarios (before isomorphism reduction) a bounds file may admit


def _multisets(kinds: int, counts) -> int:
    return sum(math.comb(kinds + count - 1, count) for count in counts)


def scenario_bound(bounds: SweepBounds) -> int:
    """An upper bound of the scenarios ``enumerate_points`` examines, computed without enumerating:
    node kinds to the number of nodes × the pod multisets on each node × the pending pods × every
    declaration order × every menu. The shipped bounds of ``bench/sweeps/`` admit about 2·10⁹ (23,174
    canonical scenarios); an enumeration near ``MAX_SCENARIO_BOUND`` would not end in a working day."""
    sizes = math.prod(len(r.values()) for r in bounds.sizes)
    classes = len(bounds.priorities) * len(bounds.preemption_policies)
    kinds = classes * sizes * (("none" in bounds.initial_resizes) + ("Deferred" in bounds.initial_resizes) * sizes)
    node_kinds = math.prod(len(r.values()) for r in bounds.allocatable) * len(bounds.opt_outs)
    entries = bounds.pods.high * (sizes + 1) + classes * sizes
    menus = sum(math.perm(entries, count) for count in range(bounds.max_events + 1))
    pending = _multisets(classes * sizes, bounds.pending_pods.values())
    orders = math.factorial(bounds.pods.high)
    return sum((node_kinds * _multisets(kinds, bounds.pods_per_node.values())) ** count
               for count in bounds.nodes.values()) * pending * orders * menus


def largest_factor(bounds: SweepBounds) -> str:
    """The field of the bounds file whose narrowing to its least value cuts ``scenario_bound`` most."""
    def least(r):
        return type(r)(r.low, r.low)
    narrowed = {
        "nodes": replace(bounds, nodes=least(bounds.nodes)),
        "podsPerNode": replace(bounds, pods_per_node=least(bounds.pods_per_node)),
        "pendingPods": replace(bounds, pending_pods=least(bounds.pending_pods)),
        "pods": replace(bounds, pods=least(bounds.pods)),
        "priorities": replace(bounds, priorities=bounds.priorities[:1]),
        "environment.maxEvents": replace(bounds, max_events=0),
    }
    for i, resource in enumerate(bounds.resources):
        narrowed[f"resources.{resource}.sizes"] = replace(
            bounds, sizes=bounds.sizes[:i] + (least(bounds.sizes[i]),) + bounds.sizes[i + 1:])
    return min(narrowed, key=lambda field: scenario_bound(narrowed[field]))


def enumerate_points(bounds: SweepBounds, ordered_classes: bool = True) -> list[Point]:
    """Every canonical scenario within ``bounds``, smallest first (see the module's doc string)."""
    kinds = _pod_kinds(bounds)
    pending_kinds = sorted({(k[0], k[1], k[2]) for k in kinds})
    node_kinds = [(size, opted) for size in _vectors(bounds.allocatable) for opted in bounds.opt_outs]
    points = set()
    for count in bounds.nodes.values():
        for nodes in product(node_kinds, repeat=count):
            for cluster in _clusters(bounds, nodes, kinds, pending_kinds):
                for pods in _orders(cluster, ordered_classes):
                    for menu in _menus(bounds, _menu_entries(bounds, nodes, pods)):
                        point = Point(nodes, pods, menu)
                        if not _scaled_within_bounds(bounds, point):
                            points.add(point)
    return sorted(points, key=lambda p: (p.size, p))


def canonical(point: Point, ordered_classes: bool = True) -> Point:
    """The canonical form of a point whose pods may be in any declaration order: pods by priority,
    highest first, keeping the order within each priority class (``ordered_classes``; else the point
    itself), the menu's pod references renumbered and its resizes and deletions sorted."""
    if not ordered_classes:
        return point
    order = sorted(range(len(point.pods)), key=lambda i: -point.pods[i][0])
    position = {old: new for new, old in enumerate(order)}
    others = sorted((event[0], position[event[1]]) + event[2:] for event in point.menu if event[0] != "arrival")
    arrivals = tuple(event for event in point.menu if event[0] == "arrival")
    return Point(point.nodes, tuple(point.pods[i] for i in order), tuple(others) + arrivals)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _quantity(value: int, resource: str) -> str:
    return f"{value}Gi" if resource == "memory" else str(value)


def _vector(bounds: SweepBounds, vector: tuple) -> dict:
    return {r: _quantity(v, r) for r, v in zip(bounds.resources, vector)}


def point_document(bounds: SweepBounds, point: Point) -> dict:
    """The scenario file of ``point`` (the document ``spec.language.loader.parse_scenario`` reads)."""
    nodes = [{"name": f"n{n + 1}", "allocatable": _vector(bounds, node[0]), "disableResizePreemption": node[1]}
             for n, node in enumerate(point.nodes)]
    pods = []
    for i, (priority, policy, node, requests, allocated, resize) in enumerate(point.pods):
        pod = {"name": f"p{i + 1}", "priority": priority, "preemptionPolicy": policy,
               "requests": _vector(bounds, requests)}
        if node != NO_NODE:
            pod["node"] = f"n{node + 1}"
        if resize:
            pod.update(allocated=_vector(bounds, allocated), resize=resize)
        pods.append(pod)
    environment: dict = {"resizes": [], "arrivals": [], "deletions": []}
    for event in point.menu:
        if event[0] == "resize":
            environment["resizes"].append({"pod": f"p{event[1] + 1}", "requests": _vector(bounds, event[2])})
        elif event[0] == "deletion":
            environment["deletions"].append(f"p{event[1] + 1}")
        else:
            environment["arrivals"].append({"name": f"a{len(environment['arrivals']) + 1}", "priority": event[1],
                                            "preemptionPolicy": event[2], "requests": _vector(bounds, event[3])})
    environment = {key: value for key, value in environment.items() if value}
    environment["maxEvents"] = len(point.menu)
    pods_count, nodes_count, events_count = point.size
    description = (f"swept within bounds {bounds.name}: {_plural(pods_count, 'pod')}, {_plural(nodes_count, 'node')}, "
                   f"{_plural(events_count, 'event')}")
    return {"name": point.name, "description": description, "nodes": nodes, "pods": pods, "environment": environment}
