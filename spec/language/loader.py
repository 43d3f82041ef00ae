"""Scenarios: YAML files in Kubernetes vocabulary, loaded into plain data.

A scenario names nodes (allocatable, optionally with a ``pods`` count, the ``disableResizePreemption`` opt-out of docs/reference.md §4.3
(11)), pods (priority or ``priorityClassName`` of a declared PriorityClass, ``spec.language.priority_classes``;
``preemptionPolicy``, requests/allocated/actual, an initial resize condition) and the environment's menu: what users and controllers may do, each at most once,
and how many of those events one run may use (``maxEvents``). The schema is documented in the
docs/scenarios.md ("Scenario files").

Quantities use Kubernetes notation (``500m``, ``2``, ``1Gi``). The loader scales each resource
down by the greatest common divisor of every quantity of that resource in the scenario, so the
state machine works on small integers; ``Scenario.units`` keeps the scale for display.

Bad input raises ``ScenarioError`` naming the file and the field; nothing is guessed. The file
is read and parsed within fixed limits (``spec.language.yaml_safe``, ``spec.limits``: size, nesting, alias
expansion, YAML 1.2 core scalars); each field is validated by ``spec.language.fields``, with
Kubernetes' own rules for names, opt-out owners and priorities (``spec.kubernetes.api_validation``); every
collection is checked for duplicates (node names, pod names with arrivals, deletions, owners;
mapping keys in the parser). A resize may repeat (resize, revert, resize again) when something else
can change the pod's requests in between.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kepcheck.spec.kep.vocabulary import RESOURCE_NAMES
from kepcheck.spec.kubernetes.qos import CPU_MANAGER_POLICIES, MEMORY_MANAGER_POLICIES
from kepcheck.spec.kubernetes.quantities import format_quantity
from kepcheck.spec.language.containers import CONTAINER_FIELDS, read_containers, read_resize
from kepcheck.spec.language.disruption_budgets import read_disruption_budgets
from kepcheck.spec.language.fields import FieldReader, ScenarioError
from kepcheck.spec.language.pod_limits import check_not_deferred_if_infeasible, check_resizes_keep_qos, read_requests_and_limits
from kepcheck.spec.language.priority_classes import PREEMPTION_POLICIES, read_priority, read_priority_classes
from kepcheck.spec.language.yaml_safe import InputError, load_document, read_text
from kepcheck.spec.limits import shown

__all__ = [
    "ScenarioError", "NodeSpec", "PodSpec", "ResizeEvent", "Scenario", "load_scenario",
    "default_scenarios", "SCENARIO_DIR",
]

SCENARIO_DIR = Path(__file__).parent.parent / "scenarios"
INITIAL_RESIZES = ("Deferred", "Infeasible", "InProgress")


@dataclass(frozen=True)
class NodeSpec:
    name: str
    allocatable: tuple[int, ...]
    disable_resize_preemption: bool = False
    cpu_manager_policy: str = "none"  # the node's kubelet: KubeletConfiguration.cpuManagerPolicy
    memory_manager_policy: str = "None"  # KubeletConfiguration.memoryManagerPolicy
    max_pods: int | None = None  # allocatable ``pods`` (the kubelet's maxPods); None: no pod-count limit


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
    qos_class: str = "Burstable"  # GetPodQOS of its requests and limits (spec/kubernetes/qos.py)
    # a pod that gives containers (spec/language/containers.py; requests/allocated/actual are their totals),
    # in quantities: its containers, overhead and pod-level requests as sorted (resource, quantity) pairs
    containers: tuple = ()
    overhead: tuple | None = None
    pod_requests: tuple | None = None


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
    recreations: tuple[str, ...] = ()  # pods a controller recreates (same name, pending) once they are gone
    budgets: tuple = ()  # PodDisruptionBudgets (spec/language/disruption_budgets.py)

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


_TOP = {"name", "description", "nodes", "pods", "environment", "priorityClasses", "podDisruptionBudgets"}
_NODE = {"name", "allocatable", "disableResizePreemption", "cpuManagerPolicy", "memoryManagerPolicy"}
_POD = {"name", "node", "priority", "priorityClassName", "preemptionPolicy", "requests", "limits", "allocated",
        "actual", "resize", "nominatedNodeName", *CONTAINER_FIELDS}
_ARRIVAL = {"name", "priority", "priorityClassName", "preemptionPolicy", "requests", "limits", *CONTAINER_FIELDS}
_ENV = {"resizes", "arrivals", "deletions", "schedulerRestarts", "maxEvents", "recreations"}


def load_scenario(path: str | Path) -> Scenario:
    """Load and validate one scenario file (read and parsed within the limits of ``spec.limits``:
    see ``spec.language.yaml_safe``).

    A shipped scenario's source is written relative to the project (``spec/scenarios/…``) so that
    reports and traces are identical in every clone; any other file keeps the path it was given.
    """
    path = Path(path)
    source = _source_name(path)
    try:
        document = load_document(read_text(path))
    except InputError as error:
        raise ScenarioError(source, error.where, error.problem) from None
    return parse_scenario(document, source)


def _source_name(path: Path) -> str:
    try:  # os.path.realpath, unlike Path.resolve in Python 3.11, does not raise on a symbolic-link loop
        shipped = os.path.dirname(os.path.realpath(path)) == os.path.realpath(SCENARIO_DIR)
    except (OSError, ValueError):
        shipped = False
    return f"spec/scenarios/{path.name}" if shipped else str(path)


def parse_scenario(document: Any, source: str = "<scenario>") -> Scenario:
    """A scenario from a parsed YAML document; ``ScenarioError`` naming ``source`` and the field."""
    reader = FieldReader(source)
    if document is None:
        reader.fail("", "the file is empty")
    top = reader.mapping(document, "", _TOP, ("name", "nodes", "pods"))
    name = reader.scenario_name(top["name"], "name")
    description = top.get("description", "")
    if not isinstance(description, str):
        reader.fail("description", "expected a string")
    if not description.isprintable():  # it is printed in tables and reports: no newline, no terminal escape
        reader.fail("description", "must be one line of printable text (no newline, tab or control character)")
    node_fields = _read_nodes(reader, top["nodes"])
    node_names = {fields[0]: i for i, fields in enumerate(node_fields)}
    environment = reader.mapping(top.get("environment") or {}, "environment", _ENV)
    classes = read_priority_classes(reader, top.get("priorityClasses"))
    pod_fields, arrivals = _read_pods(reader, top["pods"], environment, node_names, classes)
    pod_names = {p["name"]: i for i, p in enumerate(pod_fields)}
    resize_fields, deletions, restarts, recreations, max_events = _read_environment(reader, environment, pod_fields,
                                                                                    arrivals)
    resources, scale = _scale(node_fields, pod_fields, resize_fields)
    nodes = tuple(NodeSpec(n, scale(a), d, *policies) for n, a, d, policies in node_fields)
    pods = []
    for pod in pod_fields:
        spec = PodSpec(
            name=pod["name"], priority=pod["priority"], requests=scale(pod["requests"]), node=pod["node"],
            allocated=scale(pod["allocated"]), actual=scale(pod["actual"]),
            preemption_policy=pod["policy"], resize=pod["resize"], nominated_node=pod["nominated"],
            arrival=pod["arrival"], qos_class=pod["qos"], containers=pod.get("containers", ()),
            overhead=pod.get("overhead"), pod_requests=pod.get("pod_requests"),
        )
        _check_pod(reader, spec, pod["where"], nodes[node_names[spec.node]] if spec.node is not None else None)
        check_not_deferred_if_infeasible(reader, spec, pod["where"], nodes, resources)
        pods.append(spec)
    _check_nodes_hold(reader, nodes, pods, len(resources))
    resizes = _resize_events(reader, resize_fields, resources, scale, pods, pod_names, nodes, recreations)
    check_resizes_keep_qos(reader, resize_fields, pod_fields, pod_names)
    budgets = read_disruption_budgets(reader, top.get("podDisruptionBudgets"), pod_names)
    return Scenario(name, description, resources, scale.units, nodes, tuple(pods), resizes,
                    tuple(deletions), restarts, max_events, source, tuple(recreations), budgets)


def _resize_events(reader: FieldReader, resize_fields: list, resources: tuple, scale, pods: list, pod_names: dict,
                   nodes: tuple, recreations: list) -> tuple[ResizeEvent, ...]:
    """The environment's resizes as the pod's whole requests after the PATCH.

    A resize PATCHes ``/resize`` with a strategic merge patch: the resources it leaves out keep
    their value (``kubectl patch``: "Update fields of a resource using strategic merge patch"). The
    value kept is the pod's request when the PATCH lands; when every resize of a pod names the same
    resources, that is the scenario's request, so the event is resolved here, exactly. Resizes of
    one pod that name different resources (the kept value would depend on their order) are refused:
    not modelled. A resize whose requests exceed the allocatable of the pod's node (of any node, for
    a pending pod) is refused as the API server refuses it since v1.36 (``PodResizeValidator``,
    docs/reference.md §2.1 step 1): it never reaches the pod. A resize that could never happen is refused:
    one to the pod's declared requests, or a repeat of an earlier one (resize, revert, resize again),
    when no other resize of the pod asks for something else (a recreation, which puts the declared
    requests back, also lets a repeat happen). Metadata.generation is not a field of the model: the
    kubelet's decisions and ``IsPodResizeDeferred`` read the spec and the condition's reason, never
    its ``observedGeneration`` (``model/actions/kubelet.py``)."""
    named: dict[str, set] = {}
    events = []
    wanted = [(name, tuple(given if resource in raw else kept for resource, given, kept
                           in zip(resources, scale(raw), pods[pod_names[name]].requests)))
              for name, raw, _ in resize_fields]
    asked: dict[str, set] = {}  # per pod, the requests its resizes ask for
    first: dict[tuple, int] = {}  # per (pod, requests), its first resize
    for i, entry in enumerate(wanted):
        asked.setdefault(entry[0], set()).add(entry[1])
        first.setdefault(entry, i)
    for i, (pod_name, raw, _) in enumerate(resize_fields):
        pod = pods[pod_names[pod_name]]
        where = f"environment.resizes[{i}]." + ("containers" if pod.containers else "requests")
        if named.setdefault(pod_name, set(raw)) != set(raw):
            reader.fail(where, f"names other resources than an earlier resize of pod {shown(pod_name)}: resizes of "
                        "one pod that name different resources are not modelled (the resources a PATCH leaves out "
                        "keep their value at that moment, which would depend on the order)")
        requests = wanted[i][1]
        changed_between = len(asked[pod_name]) > 1  # another resize of the pod asks for something else
        if requests == pod.requests and not changed_between:
            reader.fail(where, "equals the pod's current requests: not a resize")
        earlier = first[(pod_name, requests)]
        if earlier < i and not changed_between and pod_name not in recreations:
            reader.fail(where, f"repeats environment.resizes[{earlier}] and nothing else changes the requests "
                        f"of pod {shown(pod_name)} in between: it could never happen")
        for node in (n for n in nodes if pod.node is None or n.name == pod.node):
            if any(v > c for v, c in zip(requests, node.allocatable)):
                reader.fail(where, f"exceeds the allocatable of node {shown(node.name)}"
                            + (" (where the pending pod may be bound)" if pod.node is None else "")
                            + ": the API server rejects such a resize since v1.36 (PodResizeValidator)")
        events.append(ResizeEvent(pod_name, requests))
    return tuple(events)


def _read_nodes(reader: FieldReader, value: Any) -> list[tuple]:
    """(name, allocatable, resize preemption disabled) per node, in order; names are distinct."""
    raw_nodes = reader.sequence(value, "nodes")
    if not raw_nodes:
        reader.fail("nodes", "at least one node is required")
    node_fields = []
    for i, raw in enumerate(raw_nodes):
        where = f"nodes[{i}]"
        reader.mapping(raw, where, _NODE, ("name", "allocatable"))
        node_name = reader.object_name(raw["name"], f"{where}.name", "node")
        raw_allocatable = raw["allocatable"]
        max_pods = None
        if isinstance(raw_allocatable, dict) and "pods" in raw_allocatable:
            raw_allocatable = {k: v for k, v in raw_allocatable.items() if k != "pods"}
            max_pods = _read_max_pods(reader, raw["allocatable"]["pods"], f"{where}.allocatable.pods")
        allocatable = reader.resources(raw_allocatable, f"{where}.allocatable")
        if not allocatable:
            reader.fail(f"{where}.allocatable", "at least one resource is required")
        for resource, amount in allocatable.items():
            if amount <= 0:
                reader.fail(f"{where}.allocatable.{resource}", "capacity must be positive")
        disabled = reader.opt_out(raw.get("disableResizePreemption", False), f"{where}.disableResizePreemption")
        policies = (reader.one_of(raw.get("cpuManagerPolicy", "none"), f"{where}.cpuManagerPolicy", CPU_MANAGER_POLICIES),
                    reader.one_of(raw.get("memoryManagerPolicy", "None"), f"{where}.memoryManagerPolicy",
                                  MEMORY_MANAGER_POLICIES))
        node_fields.append((node_name, allocatable, disabled, policies + (max_pods,)))
    names = [fields[0] for fields in node_fields]
    _unique(reader, names, [f"nodes[{i}].name" for i in range(len(names))], "duplicate node name")
    return node_fields


def _read_pods(reader: FieldReader, value: Any, environment: dict, node_names: dict,
               classes: dict) -> tuple[list[dict], int]:
    """The pods' fields (the declared pods, then the environment's arrivals) and the number of
    arrivals; pod names are distinct across both."""
    raw_pods = reader.sequence(value, "pods")
    raw_arrivals = reader.sequence(environment.get("arrivals"), "environment.arrivals")
    pod_fields = []
    for i, raw in enumerate(raw_pods):
        where = f"pods[{i}]"
        reader.mapping(raw, where, _POD, ("name",))
        pod_fields.append(_read_pod(reader, raw, where, node_names, classes, arrival=False))
    for i, raw in enumerate(raw_arrivals):
        where = f"environment.arrivals[{i}]"
        reader.mapping(raw, where, _ARRIVAL, ("name",))
        pod_fields.append(_read_pod(reader, raw, where, node_names, classes, arrival=True))
    if not pod_fields:
        reader.fail("pods", "at least one pod is required")
    _unique(reader, [p["name"] for p in pod_fields], [f"{p['where']}.name" for p in pod_fields], "duplicate pod name")
    return pod_fields, len(raw_arrivals)


def _read_environment(reader: FieldReader, environment: dict, pod_fields: list, arrivals: int) -> tuple:
    """(resizes as (pod, requests), deletions, scheduler restarts, recreations, maxEvents) of the
    environment. Each menu entry happens at most once, so a repeated deletion or recreation is
    refused; a repeated resize is a second PATCH (``_resize_events``). A recreation is a controller (a StatefulSet keeps
    the name) creating the pod again, pending at its declared requests, once it is gone."""
    pod_names, by_name, named = {p["name"]: i for i, p in enumerate(pod_fields)}, {p["name"]: p for p in pod_fields}, {}
    resize_fields = [read_resize(reader, raw, f"environment.resizes[{i}]", by_name, named)
                     for i, raw in enumerate(reader.sequence(environment.get("resizes"), "environment.resizes"))]
    raw_deletions = reader.sequence(environment.get("deletions"), "environment.deletions")
    deletions = [reader.reference(raw, f"environment.deletions[{i}]", pod_names, "pod")
                 for i, raw in enumerate(raw_deletions)]
    _unique(reader, deletions, [f"environment.deletions[{i}]" for i in range(len(deletions))], "duplicate deletion of pod")
    restarts = reader.integer(environment.get("schedulerRestarts", 0), "environment.schedulerRestarts", 0)
    if restarts > 1:
        reader.fail("environment.schedulerRestarts", "at most 1 scheduler restart is supported")
    raw_recreations = reader.sequence(environment.get("recreations"), "environment.recreations")
    recreations = [reader.reference(raw, f"environment.recreations[{i}]", pod_names, "pod")
                   for i, raw in enumerate(raw_recreations)]
    _unique(reader, recreations, [f"environment.recreations[{i}]" for i in range(len(recreations))],
            "duplicate recreation of pod")
    menu = len(resize_fields) + arrivals + len(deletions) + restarts + len(recreations)
    max_events = reader.integer(environment.get("maxEvents", menu), "environment.maxEvents", 0)
    return resize_fields, deletions, restarts, recreations, max_events


class _Scale:
    """Quantities in model units: each resource used anywhere, in canonical order, divided by the
    greatest common divisor of its quantities."""

    def __init__(self, resources: tuple, units: tuple):
        self.resources, self.units = resources, units

    def __call__(self, vector: dict[str, int] | None):
        if vector is None:
            return None
        return tuple(vector.get(r, 0) // u for r, u in zip(self.resources, self.units))


def _read_max_pods(reader: FieldReader, value, where: str) -> int:
    """A node's allocatable ``pods``: a whole, positive count (an int, or a quantity string such as
    ``"110"``), as the kubelet's ``maxPods`` sets it."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        reader.fail(where, f"expected a whole number of pods, got {shown(value)}")
    if value <= 0:
        reader.fail(where, "must be at least 1 pod")
    if value > 10_000:
        reader.fail(where, "at most 10000 pods (a scenario holds a handful)")
    return value


def _scale(node_fields: list, pod_fields: list, resize_fields: list) -> tuple[tuple, _Scale]:
    vectors: list[dict[str, int]] = [fields[1] for fields in node_fields]
    for pod in pod_fields:
        vectors += [v for v in (pod["requests"], pod["allocated"], pod["actual"]) if v is not None]
    vectors += [r for _, r, _ in resize_fields]
    resources = tuple(r for r in RESOURCE_NAMES if any(r in v for v in vectors))
    units = tuple(math.gcd(*(v.get(r, 0) for v in vectors)) or 1 for r in resources)
    return resources, _Scale(resources, units)


def _check_nodes_hold(reader: FieldReader, nodes: tuple, pods: list, width: int) -> None:
    """The pods on each node hold (max of allocated and actual) at most its allocatable."""
    held = {node.name: [0] * width for node in nodes}
    for pod in pods:
        if pod.node is not None:
            allocated = pod.allocated if pod.allocated is not None else pod.requests
            actual = pod.actual if pod.actual is not None else allocated
            held[pod.node] = [h + max(a, b) for h, a, b in zip(held[pod.node], allocated, actual)]
    for n, node in enumerate(nodes):
        count = sum(1 for pod in pods if pod.node == node.name)
        if node.max_pods is not None and count > node.max_pods:
            reader.fail(f"nodes[{n}].allocatable.pods", f"{count} pods are on this node, more than its {node.max_pods}; "
                        "the kubelet would not have admitted them")
        if any(h > c for h, c in zip(held[node.name], node.allocatable)):
            reader.fail(f"nodes[{n}].allocatable", "the pods on this node already hold more than its allocatable "
                        "(max of allocated and actual); the kubelet would not have admitted them")


def _read_pod(reader: FieldReader, raw: dict, where: str, node_names: dict, classes: dict, arrival: bool) -> dict:
    name = reader.object_name(raw["name"], f"{where}.name", "pod")
    node = raw.get("node")
    if node is not None:
        reader.reference(node, f"{where}.node", node_names, "node")
    nominated = raw.get("nominatedNodeName")
    if nominated is not None:
        reader.reference(nominated, f"{where}.nominatedNodeName", node_names, "node")
    priority, policy = read_priority(reader, raw, where, classes)
    resize = raw.get("resize")
    if resize is not None:
        reader.one_of(resize, f"{where}.resize", INITIAL_RESIZES)
    fields = {"name": name, "node": node, "priority": priority, "policy": policy, "resize": resize,
              "nominated": nominated, "arrival": arrival, "where": where}
    shape = read_containers(reader, raw, where, running=node is not None)
    if shape is not None:
        return {**fields, **shape}
    if "requests" not in raw:
        reader.fail(f"{where}.requests", "required field is missing (or give containers)")
    requests, limits, qos = read_requests_and_limits(reader, raw, where)
    allocated = reader.resources(raw["allocated"], f"{where}.allocated") if "allocated" in raw else None
    actual = reader.resources(raw["actual"], f"{where}.actual") if "actual" in raw else None
    return {**fields, "requests": requests, "allocated": allocated, "actual": actual, "limits": limits, "qos": qos}


def _check_pod(reader: FieldReader, pod: PodSpec, where: str, node: NodeSpec | None) -> None:
    """A pod's sizes and resize condition agree with each other and with its node (``None``: pending)."""
    if node is None:
        for key, value in (("allocated", pod.allocated), ("actual", pod.actual), ("resize", pod.resize)):
            if value is not None:
                reader.fail(f"{where}.{key}", "only a pod with a node can have " + key)
        if pod.nominated_node is not None and pod.arrival:
            reader.fail(f"{where}.nominatedNodeName", "an arrival cannot start nominated")
        return
    if pod.nominated_node is not None:
        reader.fail(f"{where}.nominatedNodeName", "a pod with a node is not nominated")
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


def _unique(reader: FieldReader, names: list[str], paths: list[str], problem: str) -> None:
    """Refuses the second of two equal names (``problem`` says what is duplicated)."""
    seen = set()
    for name, where in zip(names, paths):
        if name in seen:
            reader.fail(where, f"{problem} {shown(name)}")
        seen.add(name)


def default_scenarios() -> list[Scenario]:
    """Every scenario shipped in ``spec/scenarios/``, in file-name order."""
    return [load_scenario(path) for path in sorted(SCENARIO_DIR.glob("*.yaml"))]
