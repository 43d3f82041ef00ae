"""Scenarios: YAML files in Kubernetes vocabulary, loaded into plain data.

A scenario names nodes (allocatable, the ``disableResizePreemption`` opt-out of reference §4.3
(11)), pods (priority, ``preemptionPolicy``, requests/allocated/actual, an initial resize
condition) and the environment's menu: what users and controllers may do, each at most once,
and how many of those events one run may use (``maxEvents``). The schema is documented in the
README ("Scenario files").

Quantities use Kubernetes notation (``500m``, ``2``, ``1Gi``). The loader scales each resource
down by the greatest common divisor of every quantity of that resource in the scenario, so the
state machine works on small integers; ``Scenario.units`` keeps the scale for display.

Bad input raises ``ScenarioError`` naming the file and the field; nothing is guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kepcheck.spec.quantities import format_quantity, parse_quantity
from kepcheck.spec.vocabulary import RESOURCE_NAMES

__all__ = [
    "ScenarioError", "NodeSpec", "PodSpec", "ResizeEvent", "Scenario", "load_scenario",
    "default_scenarios", "SCENARIO_DIR",
]

SCENARIO_DIR = Path(__file__).parent / "scenarios"
PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")
INITIAL_RESIZES = ("Deferred", "Infeasible", "InProgress")


class ScenarioError(ValueError):
    """A scenario file is malformed. ``str()`` is one line: ``FILE: FIELD: problem``."""

    def __init__(self, source: str, where: str, problem: str):
        self.source, self.where, self.problem = source, where, problem
        super().__init__(f"{source}: {where}: {problem}" if where else f"{source}: {problem}")


@dataclass(frozen=True)
class NodeSpec:
    name: str
    allocatable: tuple[int, ...]
    disable_resize_preemption: bool = False


@dataclass(frozen=True)
class PodSpec:
    name: str
    priority: int
    requests: tuple[int, ...]
    node: str | None = None  # None: pending (or an arrival)
    allocated: tuple[int, ...] | None = None
    actual: tuple[int, ...] | None = None
    preemption_policy: str = "PreemptLowerPriority"
    resize: str | None = None  # initial: Deferred, Infeasible or InProgress
    nominated_node: str | None = None
    arrival: bool = False  # created by the environment, absent at the start


@dataclass(frozen=True)
class ResizeEvent:
    pod: str
    requests: tuple[int, ...]


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    resources: tuple[str, ...]
    units: tuple[int, ...]  # one model unit of each resource, in millicores / bytes
    nodes: tuple[NodeSpec, ...]
    pods: tuple[PodSpec, ...]  # declared pods, then arrivals
    resizes: tuple[ResizeEvent, ...] = ()
    deletions: tuple[str, ...] = ()
    scheduler_restarts: int = 0
    max_events: int = 0
    source: str = ""

    def format(self, vector) -> str:
        """``cpu 2, memory 1Gi`` for a vector of model units."""
        return ", ".join(
            f"{name} {format_quantity(value * unit, name)}"
            for name, value, unit in zip(self.resources, vector, self.units)
        )

    def node_index(self, name: str) -> int:
        return [node.name for node in self.nodes].index(name)

    def pod_index(self, name: str) -> int:
        return [pod.name for pod in self.pods].index(name)


_TOP = {"name", "description", "nodes", "pods", "environment"}
_NODE = {"name", "allocatable", "disableResizePreemption"}
_POD = {"name", "node", "priority", "preemptionPolicy", "requests", "allocated", "actual", "resize",
        "nominatedNodeName"}
_ARRIVAL = {"name", "priority", "preemptionPolicy", "requests"}
_ENV = {"resizes", "arrivals", "deletions", "schedulerRestarts", "maxEvents"}
_RESIZE = {"pod", "requests"}


class _StrictLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses a key given twice in one mapping (the last would silently win)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class _Reader:
    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, problem: str):
        raise ScenarioError(self.source, where, problem)

    def mapping(self, value: Any, where: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            self.fail(where, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                self.fail(f"{where}.{key}" if where else str(key), f"unknown field (allowed: {', '.join(sorted(allowed))})")
        for key in required:
            if key not in value:
                self.fail(f"{where}.{key}" if where else key, "required field is missing")
        return value

    def sequence(self, value: Any, where: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(where, f"expected a list, got {type(value).__name__}")
        return value

    def name(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value or not value.replace("-", "").replace(".", "").isalnum():
            self.fail(where, f"{value!r} is not a valid name")
        return value

    def integer(self, value: Any, where: str, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"expected an integer, got {value!r}")
        if minimum is not None and value < minimum:
            self.fail(where, f"must be at least {minimum}, got {value}")
        return value

    def boolean(self, value: Any, where: str) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, list):  # the API field is a list of owners; non-empty = disabled
            return bool(value)
        self.fail(where, f"expected true/false or a list of owners, got {value!r}")

    def resources(self, value: Any, where: str) -> dict[str, int]:
        self.mapping(value, where, set(RESOURCE_NAMES))
        result = {}
        for resource, quantity in value.items():
            try:
                result[resource] = parse_quantity(quantity, resource)
            except ValueError as error:
                self.fail(f"{where}.{resource}", str(error))
        return result


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate one scenario file.

    A shipped scenario's source is written relative to the project (``spec/scenarios/…``) so that
    reports and traces are identical in every clone; any other file keeps the path it was given.
    """
    path = Path(path)
    source = str(path)
    if path.resolve().parent == SCENARIO_DIR.resolve():
        source = f"spec/scenarios/{path.name}"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ScenarioError(source, "", f"cannot read file ({error.strerror})") from None
    except UnicodeDecodeError:
        raise ScenarioError(source, "", "not UTF-8 text") from None
    try:
        document = yaml.load(text, Loader=_StrictLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else ""
        problem = " ".join(str(getattr(error, "problem", None) or "invalid YAML").split())
        raise ScenarioError(source, where, f"invalid YAML: {problem}") from None
    return parse_scenario(document, source)


def parse_scenario(document: Any, source: str = "<scenario>") -> Scenario:
    """A scenario from a parsed YAML document; ``ScenarioError`` naming ``source`` and the field."""
    reader = _Reader(source)
    if document is None:
        reader.fail("", "the file is empty")
    top = reader.mapping(document, "", _TOP, ("name", "nodes", "pods"))
    name = reader.name(top["name"], "name")
    description = top.get("description", "")
    if not isinstance(description, str):
        reader.fail("description", "expected a string")
    node_fields = _read_nodes(reader, top["nodes"])
    node_names = [n for n, _, _ in node_fields]
    environment = reader.mapping(top.get("environment") or {}, "environment", _ENV)
    pod_fields, arrivals = _read_pods(reader, top["pods"], environment, node_names)
    pod_names = [p["name"] for p in pod_fields]
    resize_fields, deletions, restarts, max_events = _read_environment(reader, environment, pod_names, arrivals)
    resources, scale = _scale(node_fields, pod_fields, resize_fields)
    nodes = tuple(NodeSpec(n, scale(a), d) for n, a, d in node_fields)
    pods = []
    for pod in pod_fields:
        spec = PodSpec(
            name=pod["name"], priority=pod["priority"], requests=scale(pod["requests"]), node=pod["node"],
            allocated=scale(pod["allocated"]), actual=scale(pod["actual"]),
            preemption_policy=pod["policy"], resize=pod["resize"], nominated_node=pod["nominated"],
            arrival=pod["arrival"],
        )
        _check_pod(reader, spec, pod["where"], nodes)
        pods.append(spec)
    _check_nodes_hold(reader, nodes, pods, len(resources))
    resizes = tuple(ResizeEvent(p, scale(r)) for p, r in resize_fields)
    for i, event in enumerate(resizes):
        if event.requests == pods[pod_names.index(event.pod)].requests:
            reader.fail(f"environment.resizes[{i}].requests", "equals the pod's current requests: not a resize")
    return Scenario(name, description, resources, scale.units, nodes, tuple(pods), resizes,
                    tuple(deletions), restarts, max_events, source)


def _read_nodes(reader: _Reader, value: Any) -> list[tuple]:
    """(name, allocatable, resize preemption disabled) per node, in order."""
    raw_nodes = reader.sequence(value, "nodes")
    if not raw_nodes:
        reader.fail("nodes", "at least one node is required")
    node_fields = []
    for i, raw in enumerate(raw_nodes):
        where = f"nodes[{i}]"
        reader.mapping(raw, where, _NODE, ("name", "allocatable"))
        node_name = reader.name(raw["name"], f"{where}.name")
        allocatable = reader.resources(raw["allocatable"], f"{where}.allocatable")
        if not allocatable:
            reader.fail(f"{where}.allocatable", "at least one resource is required")
        for resource, amount in allocatable.items():
            if amount <= 0:
                reader.fail(f"{where}.allocatable.{resource}", "capacity must be positive")
        disabled = reader.boolean(raw.get("disableResizePreemption", False), f"{where}.disableResizePreemption")
        node_fields.append((node_name, allocatable, disabled))
    names = [n for n, _, _ in node_fields]
    _unique(reader, names, [f"nodes[{i}].name" for i in range(len(names))], "node")
    return node_fields


def _read_pods(reader: _Reader, value: Any, environment: dict, node_names: list[str]) -> tuple[list[dict], int]:
    """The pods' fields (the declared pods, then the environment's arrivals) and the number of arrivals."""
    raw_pods = reader.sequence(value, "pods")
    raw_arrivals = reader.sequence(environment.get("arrivals"), "environment.arrivals")
    pod_fields = []
    for i, raw in enumerate(raw_pods):
        where = f"pods[{i}]"
        reader.mapping(raw, where, _POD, ("name", "requests"))
        pod_fields.append(_read_pod(reader, raw, where, node_names, arrival=False))
    for i, raw in enumerate(raw_arrivals):
        where = f"environment.arrivals[{i}]"
        reader.mapping(raw, where, _ARRIVAL, ("name", "requests"))
        pod_fields.append(_read_pod(reader, raw, where, node_names, arrival=True))
    if not pod_fields:
        reader.fail("pods", "at least one pod is required")
    _unique(reader, [p["name"] for p in pod_fields], [f"{p['where']}.name" for p in pod_fields], "pod")
    return pod_fields, len(raw_arrivals)


def _read_environment(reader: _Reader, environment: dict, pod_names: list[str], arrivals: int) -> tuple:
    """(resizes as (pod, requests), deletions, scheduler restarts, maxEvents) of the environment."""
    resize_fields = []
    for i, raw in enumerate(reader.sequence(environment.get("resizes"), "environment.resizes")):
        where = f"environment.resizes[{i}]"
        reader.mapping(raw, where, _RESIZE, ("pod", "requests"))
        if raw["pod"] not in pod_names:
            reader.fail(f"{where}.pod", f"unknown pod {raw['pod']!r}")
        resize_fields.append((raw["pod"], reader.resources(raw["requests"], f"{where}.requests")))
    deletions = []
    for i, raw in enumerate(reader.sequence(environment.get("deletions"), "environment.deletions")):
        if raw not in pod_names:
            reader.fail(f"environment.deletions[{i}]", f"unknown pod {raw!r}")
        deletions.append(raw)
    restarts = reader.integer(environment.get("schedulerRestarts", 0), "environment.schedulerRestarts", 0)
    if restarts > 1:
        reader.fail("environment.schedulerRestarts", "at most 1 scheduler restart is supported")
    menu = len(resize_fields) + arrivals + len(deletions) + restarts
    max_events = reader.integer(environment.get("maxEvents", menu), "environment.maxEvents", 0)
    return resize_fields, deletions, restarts, max_events


class _Scale:
    """Quantities in model units: each resource used anywhere, in canonical order, divided by the
    greatest common divisor of its quantities."""

    def __init__(self, resources: tuple, units: tuple):
        self.resources, self.units = resources, units

    def __call__(self, vector: dict[str, int] | None):
        if vector is None:
            return None
        return tuple(vector.get(r, 0) // u for r, u in zip(self.resources, self.units))


def _scale(node_fields: list, pod_fields: list, resize_fields: list) -> tuple[tuple, _Scale]:
    vectors: list[dict[str, int]] = [a for _, a, _ in node_fields]
    for pod in pod_fields:
        vectors += [v for v in (pod["requests"], pod["allocated"], pod["actual"]) if v is not None]
    vectors += [r for _, r in resize_fields]
    resources = tuple(r for r in RESOURCE_NAMES if any(r in v for v in vectors))
    units = tuple(math.gcd(*(v.get(r, 0) for v in vectors)) or 1 for r in resources)
    return resources, _Scale(resources, units)


def _check_nodes_hold(reader: _Reader, nodes: tuple, pods: list, width: int) -> None:
    """The pods on each node hold (max of allocated and actual) at most its allocatable."""
    for n, node in enumerate(nodes):
        held = [0] * width
        for pod in pods:
            if pod.node == node.name:
                allocated = pod.allocated if pod.allocated is not None else pod.requests
                actual = pod.actual if pod.actual is not None else allocated
                held = [h + max(a, b) for h, a, b in zip(held, allocated, actual)]
        if any(h > c for h, c in zip(held, node.allocatable)):
            reader.fail(f"nodes[{n}].allocatable", "the pods on this node already hold more than its allocatable "
                        "(max of allocated and actual); the kubelet would not have admitted them")


def _read_pod(reader: _Reader, raw: dict, where: str, node_names: list[str], arrival: bool) -> dict:
    name = reader.name(raw["name"], f"{where}.name")
    node = raw.get("node")
    if node is not None and node not in node_names:
        reader.fail(f"{where}.node", f"unknown node {node!r}")
    nominated = raw.get("nominatedNodeName")
    if nominated is not None and nominated not in node_names:
        reader.fail(f"{where}.nominatedNodeName", f"unknown node {nominated!r}")
    policy = raw.get("preemptionPolicy", "PreemptLowerPriority")
    if policy not in PREEMPTION_POLICIES:
        reader.fail(f"{where}.preemptionPolicy", f"{policy!r} is not one of {', '.join(PREEMPTION_POLICIES)}")
    resize = raw.get("resize")
    if resize is not None and resize not in INITIAL_RESIZES:
        reader.fail(f"{where}.resize", f"{resize!r} is not one of {', '.join(INITIAL_RESIZES)}")
    requests = reader.resources(raw["requests"], f"{where}.requests")
    allocated = reader.resources(raw["allocated"], f"{where}.allocated") if "allocated" in raw else None
    actual = reader.resources(raw["actual"], f"{where}.actual") if "actual" in raw else None
    return {
        "name": name, "node": node, "priority": reader.integer(raw.get("priority", 0), f"{where}.priority"),
        "policy": policy, "resize": resize, "requests": requests, "allocated": allocated, "actual": actual,
        "nominated": nominated, "arrival": arrival, "where": where,
    }


def _check_pod(reader: _Reader, pod: PodSpec, where: str, nodes: tuple[NodeSpec, ...]) -> None:
    if pod.node is None:
        for key, value in (("allocated", pod.allocated), ("actual", pod.actual), ("resize", pod.resize)):
            if value is not None:
                reader.fail(f"{where}.{key}", "only a pod with a node can have " + key)
        if pod.nominated_node is not None and pod.arrival:
            reader.fail(f"{where}.nominatedNodeName", "an arrival cannot start nominated")
        return
    if pod.nominated_node is not None:
        reader.fail(f"{where}.nominatedNodeName", "a pod with a node is not nominated")
    node = next(n for n in nodes if n.name == pod.node)
    allocated = pod.allocated if pod.allocated is not None else pod.requests
    actual = pod.actual if pod.actual is not None else allocated
    if any(v > c for v, c in zip(pod.requests, node.allocatable)):
        reader.fail(f"{where}.requests", "exceeds the node's allocatable (the API server rejects such a resize since v1.36)")
    if pod.resize == "Deferred" and allocated == pod.requests:
        reader.fail(f"{where}.resize", "Deferred needs requests different from allocated")
    if pod.resize == "InProgress" and allocated == actual:
        reader.fail(f"{where}.resize", "InProgress needs actual different from allocated")
    if pod.resize in (None, "InProgress") and allocated != pod.requests:
        reader.fail(f"{where}.resize", "requests differ from allocated: say Deferred or Infeasible")


def _unique(reader: _Reader, names: list[str], paths: list[str], kind: str) -> None:
    seen = set()
    for name, where in zip(names, paths):
        if name in seen:
            reader.fail(where, f"duplicate {kind} name {name!r}")
        seen.add(name)


def default_scenarios() -> list[Scenario]:
    """Every scenario shipped in ``spec/scenarios/``, in file-name order."""
    return [load_scenario(path) for path in sorted(SCENARIO_DIR.glob("*.yaml"))]
