"""Pods with containers in scenario files: the scenario loader's reading of ``containers``,
``initContainers`` (``restartPolicy: Always``: a sidecar), ``overhead`` and pod-level ``resources``, and of
resizes that name containers.

The model's state machine holds one request vector per pod state (desired, allocated, actual): the
pod's ``PodRequests`` totals, each built from its containers with the KEP-753 formula, pod-level
resources and overhead (``spec/kubernetes/pod_resources.py``; docs/reference.md §1.2, §1.4, §1.5). Per container:
``requests`` and ``limits`` (requests default to the limits and may not exceed them), and on a running
pod ``allocated`` (``status.containerStatuses[].allocatedResources``, default: the requests) and
``actual`` (``…resources.requests``, default: the allocation). The QoS class is ``GetPodQOS`` over every
init and regular container (``pkg/apis/core/v1/helper/qos/qos.go``; pod-level resources are not
consulted there).

A resize names containers (``environment.resizes[].containers``, each ``name``, ``requests``, ``limits``):
as a PATCH of ``/resize``, the containers and resources it leaves out keep their values. Only regular
containers and sidecars resize in place; a non-restartable init container cannot (KEP-1287 "Sidecars").
Refused, as not modelled: resizing a pod that sets pod-level resources (``InPlacePodLevelResources
VerticalScaling``, and the kubelet's Infeasible for it), resizes of one pod that name different
(container, resource) pairs (the value a PATCH keeps would depend on their order), and a resize that
leaves the pod's totals unchanged (the kubelet allocates it with no room needed and the scheduler's
view does not change: there is nothing for the model to decide).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kepcheck.spec.kubernetes.api_validation import dns1123_label_problem
from kepcheck.spec.kubernetes.pod_resources import spec_total
from kepcheck.spec.kubernetes.qos import defaulted_requests, qos_class
from kepcheck.spec.language.fields import FieldReader
from kepcheck.spec.language.pod_limits import check_within_limits
from kepcheck.spec.limits import shown

__all__ = ["ContainerSpec", "CONTAINER_FIELDS", "read_containers", "container_resize"]

CONTAINER_FIELDS = ("containers", "initContainers", "overhead", "resources")
ONE_VECTOR_FIELDS = ("requests", "limits", "allocated", "actual")
_CONTAINER = {"name", "requests", "limits", "allocated", "actual"}
_INIT = {"name", "requests", "limits", "restartPolicy"}
_SIDECAR = _CONTAINER | {"restartPolicy"}
_RESIZED = {"name", "requests", "limits"}
_POD_LEVEL = {"requests", "limits"}


def _items(resources: dict | None) -> tuple | None:
    return None if resources is None else tuple(sorted(resources.items()))


@dataclass(frozen=True)
class ContainerSpec:
    """One container as the scenario declares it, in quantities (millicores, bytes); maps are kept as
    sorted ``(resource, quantity)`` pairs so that a scenario stays a value. ``kind``: ``regular``,
    ``init`` or ``sidecar``."""

    name: str
    kind: str
    requests: tuple
    limits: tuple | None = None
    allocated: tuple | None = None
    actual: tuple | None = None

    def map(self, field: str) -> dict | None:
        value = getattr(self, field)
        return None if value is None else dict(value)


def _read_container(reader: FieldReader, raw: Any, where: str, kind: str) -> ContainerSpec:
    if kind == "init" and isinstance(raw, dict) and "restartPolicy" in raw:
        reader.one_of(raw["restartPolicy"], f"{where}.restartPolicy", ("Always",))
        kind = "sidecar"
    reader.mapping(raw, where, {"regular": _CONTAINER, "init": _INIT, "sidecar": _SIDECAR}[kind], ("name",))
    name = raw["name"]
    problem = dns1123_label_problem(name) if isinstance(name, str) else f"expected a container name, got {shown(name)}"
    if problem:
        reader.fail(f"{where}.name", problem if not isinstance(name, str) else f"{shown(name)} is not a valid container name: {problem}")
    limits = reader.resources(raw["limits"], f"{where}.limits") if "limits" in raw else None
    requests = defaulted_requests(reader.resources(raw.get("requests") or {}, f"{where}.requests"), limits)
    check_within_limits(reader, requests, limits, f"{where}.requests")
    status = {key: reader.resources(raw[key], f"{where}.{key}") if key in raw else None for key in ("allocated", "actual")}
    return ContainerSpec(name, kind, _items(requests), _items(limits), _items(status["allocated"]), _items(status["actual"]))


def _totals(containers: tuple, overhead: dict | None, pod_level: dict | None) -> tuple[dict, dict, dict]:
    """The desired, allocated and actual ``PodRequests`` of the containers (a missing status: the
    state before it)."""
    def total(pick) -> dict:
        return spec_total(((c.kind, pick(c)) for c in containers), overhead, pod_level)

    def allocated(c):
        return c.map("allocated") if c.allocated is not None else c.map("requests")

    return (total(lambda c: c.map("requests")), total(allocated),
            total(lambda c: c.map("actual") if c.actual is not None else allocated(c)))


def read_containers(reader: FieldReader, raw: dict, where: str, running: bool) -> dict | None:
    """The fields of a pod that gives ``containers`` (None when it uses the one-vector shorthand):
    requests/allocated/actual as pod totals (quantities), the QoS class, the containers, overhead and
    pod-level requests."""
    if "containers" not in raw:
        for key in CONTAINER_FIELDS:
            if key in raw:
                reader.fail(f"{where}.{key}", "only a pod that gives containers can have " + key)
        return None
    for key in ONE_VECTOR_FIELDS:
        if key in raw:
            reader.fail(f"{where}.{key}", f"a pod with containers gives its {key} per container (containers[].{key})")
    containers = []
    for key, kind in (("initContainers", "init"), ("containers", "regular")):
        for i, item in enumerate(reader.sequence(raw.get(key), f"{where}.{key}")):
            containers.append(_read_container(reader, item, f"{where}.{key}[{i}]", kind))
    if not any(c.kind == "regular" for c in containers):
        reader.fail(f"{where}.containers", "a pod needs at least one container")
    seen = set()
    for c in containers:
        if c.name in seen:
            reader.fail(f"{where}.containers", f"container name {shown(c.name)} is used twice")
        seen.add(c.name)
        if not running and (c.allocated is not None or c.actual is not None):
            reader.fail(f"{where}.containers", f"container {shown(c.name)}: only a pod with a node has allocated or actual")
    overhead = reader.resources(raw["overhead"], f"{where}.overhead") if "overhead" in raw else None
    pod_level = reader.mapping(raw.get("resources") or {}, f"{where}.resources", _POD_LEVEL)
    limits = reader.resources(pod_level["limits"], f"{where}.resources.limits") if "limits" in pod_level else None
    requests = defaulted_requests(reader.resources(pod_level.get("requests") or {}, f"{where}.resources.requests"), limits)
    check_within_limits(reader, requests, limits, f"{where}.resources.requests")
    desired, allocated, actual = _totals(tuple(containers), overhead, requests or None)
    given = {key: any(getattr(c, key) is not None for c in containers) for key in ("allocated", "actual")}
    return {"requests": desired, "allocated": allocated if given["allocated"] else None,
            "actual": actual if given["actual"] else None,
            "limits": None, "qos": qos_class((c.map("requests"), c.map("limits")) for c in containers),
            "containers": tuple(containers), "overhead": _items(overhead), "pod_requests": _items(requests or None)}


def container_resize(reader: FieldReader, raw: dict, where: str, pod: dict) -> tuple[dict, frozenset]:
    """The pod's desired totals after a resize that names containers, and the (container, resource)
    pairs it names; refused where API validation refuses it or where it is not modelled."""
    name = pod["name"]
    if pod.get("pod_requests"):
        reader.fail(where, f"pod {shown(name)} sets pod-level resources: their in-place resize "
                    "(InPlacePodLevelResourcesVerticalScaling) is not modelled")
    by_name = {c.name: c for c in pod["containers"]}
    changed = dict(by_name)
    named = set()
    for i, item in enumerate(reader.sequence(raw["containers"], f"{where}.containers")):
        path = f"{where}.containers[{i}]"
        reader.mapping(item, path, _RESIZED, ("name",))
        container = by_name.get(item["name"]) if isinstance(item["name"], str) else None
        if container is None:
            reader.fail(f"{path}.name", f"pod {shown(name)} has no container {shown(item['name'])}")
        if container.kind == "init":
            reader.fail(f"{path}.name", f"{shown(container.name)} is a non-restartable init container: only regular "
                        "containers and sidecars resize in place (KEP-1287 \"Sidecars\")")
        requests = reader.resources(item.get("requests") or {}, f"{path}.requests")
        limits = reader.resources(item["limits"], f"{path}.limits") if "limits" in item else {}
        if not requests and not limits:
            reader.fail(path, "names no requests or limits to change")
        new_limits = {**(container.map("limits") or {}), **limits} or None
        new_requests = {**container.map("requests"), **requests}
        check_within_limits(reader, new_requests, new_limits, f"{path}.requests")
        changed[container.name] = ContainerSpec(container.name, container.kind, _items(new_requests), _items(new_limits),
                                                container.allocated, container.actual)
        named |= {(container.name, resource) for resource in requests}
    if not named:
        reader.fail(f"{where}.containers", "names no container requests to change")
    containers = tuple(changed[c.name] for c in pod["containers"])
    new_class = qos_class((c.map("requests"), c.map("limits")) for c in containers)
    if new_class != pod["qos"]:
        reader.fail(where, f"would change pod {shown(name)}'s QoS class from {pod['qos']} to {new_class}: "
                    "API validation refuses it (Pod QOS Class may not change as a result of resizing)")
    desired = _totals(containers, dict(pod["overhead"] or ()) or None, None)[0]
    if desired == pod["requests"]:
        reader.fail(where, f"leaves the requests of pod {shown(name)} (PodRequests of its containers) unchanged: the "
                    "kubelet allocates it with no room needed and the scheduler's view does not change, so there is "
                    "nothing for the model to decide")
    return desired, frozenset(named)


def read_resize(reader: FieldReader, raw: Any, where: str, pods: dict, named: dict) -> tuple:
    """One ``environment.resizes`` entry as ``(pod, requests, limits)``: the one-vector form's PATCH, or
    for a pod with containers its desired totals (limits None: ``container_resize`` checked them).
    ``pods``: the pods' fields by name; ``named``: the (container, resource) pairs each pod's first
    container resize named, which every later one must name too."""
    reader.mapping(raw, where, {"pod", "requests", "limits", "containers"}, ("pod",))
    pod = pods[reader.reference(raw["pod"], f"{where}.pod", pods, "pod")]
    if not pod.get("containers"):
        if "containers" in raw:
            reader.fail(f"{where}.containers", f"pod {shown(pod['name'])} gives no containers: give requests")
        reader.mapping(raw, where, {"pod", "requests", "limits"}, ("pod", "requests"))
        limits = reader.resources(raw["limits"], f"{where}.limits") if "limits" in raw else None
        return pod["name"], reader.resources(raw["requests"], f"{where}.requests"), limits
    for key in ("requests", "limits"):
        if key in raw:
            reader.fail(f"{where}.{key}", f"pod {shown(pod['name'])} gives containers: a resize names them "
                        f"(containers[].{key})")
    reader.mapping(raw, where, {"pod", "containers"}, ("pod", "containers"))
    desired, pairs = container_resize(reader, raw, where, pod)
    if named.setdefault(pod["name"], pairs) != pairs:
        reader.fail(f"{where}.containers", f"names other container requests than an earlier resize of pod "
                    f"{shown(pod['name'])}: resizes of one pod that name different ones are not modelled (what a "
                    "PATCH leaves out keeps its value at that moment, which would depend on the order)")
    return pod["name"], desired, None
