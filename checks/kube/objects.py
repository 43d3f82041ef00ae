"""Kubernetes objects as ``kubectl get -o yaml`` prints them, read into what a scenario holds.

What is read (the API shapes of ``k8s.io/api/core/v1`` and ``scheduling/v1``):

- a **Node**'s ``status.allocatable`` (cpu, memory) and KEP-5836's resize opt-out
  ``spec.podPreemptionPolicy.disableResizePreemption`` (the owners' list);
- a **Pod**'s containers (``spec.containers``, ``spec.initContainers``: a sidecar is an init
  container with ``restartPolicy: Always``), ``spec.overhead`` and pod-level ``spec.resources``,
  with what ``status.containerStatuses`` / ``status.initContainerStatuses`` report per container
  (``allocatedResources``, ``resources``) and the pod-level ``status.allocatedResources`` /
  ``status.resources``, into the model's ``Pod`` (``model/accounting/pod_requests.py``); its desired, allocated
  and actual totals are that same ``pod_requests`` (``PodRequests``) applied to each state alone:
  each container contributes the state's value with upstream's fall-backs
  (``containerAllocatedRequests``: allocated, else desired; ``containerActuatedRequests``: actual,
  else allocated, else desired; nothing while Infeasible), then the KEP-753 init/sidecar formula,
  pod-level resources and overhead (docs/reference.md §1.2, §1.4, §1.5). So max(desired, allocated,
  actual) of the three is ``pod_requests`` of the pod with its status, the scheduler's count
  (tested);
- the resize conditions ``PodResizePending`` (its reason, docs/reference.md §2.4) and ``PodResizeInProgress``;
- a **PriorityClass**'s ``value``, ``globalDefault`` and ``preemptionPolicy``.

What is not used is for the caller to report: resources other than cpu and memory (by name,
``Fields.other_resources``), limits and the QoS class (``status.qosClass``, else derived as
``GetPodQOS`` derives it from the containers' requests and limits; pod-level resources are not
consulted for it). Every malformed field is refused with ``ScenarioError`` naming its path, e.g.
``items[3].spec.containers[0].resources.requests.cpu``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from kepcheck.spec.kep.vocabulary import RESOURCE_NAMES
from kepcheck.spec.kubernetes.pod_resources import spec_total
from kepcheck.spec.kubernetes.qos import qos_class as pod_qos_class
from kepcheck.spec.kubernetes.quantities import parse_quantity
from kepcheck.spec.language.fields import ScenarioError
from kepcheck.spec.limits import cut, shown

# Upstream's per-container fall-backs, reused rather than restated (no second formula):
from kepcheck.model.accounting.pod_requests import _actual_requests, _allocated_requests, _minus_overhead
from kepcheck.model.accounting.pods import Container, Pod

__all__ = ["Fields", "PodSizes", "STATES", "read_pod_sizes", "pod_of", "state_total", "qos_class", "RESIZE_PENDING",
           "RESIZE_IN_PROGRESS"]

RESIZE_PENDING = "PodResizePending"
RESIZE_IN_PROGRESS = "PodResizeInProgress"
STATES = ("desired", "allocated", "actual")


class Fields:
    """Reads fields of the snapshot loaded from ``source``; ``where`` is a field's path in it, and
    every refusal is one line ``source: where: problem``. Absent optional fields read as empty."""

    def __init__(self, source: str):
        self.source = source
        self.other_resources: set[str] = set()  # names of resources read and not used, since the last reset

    def fail(self, where: str, problem: str) -> NoReturn:
        raise ScenarioError(self.source, where, problem)

    def mapping(self, parent: dict, key: str, where: str, required: bool = False) -> dict:
        value = parent.get(key)
        if value is None and not required:
            return {}
        if not isinstance(value, dict):
            self.fail(f"{where}.{key}", "required field is missing" if value is None
                      else f"expected a mapping, got {shown(value)}")
        return value

    def sequence(self, parent: dict, key: str, where: str) -> list:
        value = parent.get(key)
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(f"{where}.{key}", f"expected a list, got {shown(value)}")
        return value

    def item(self, value: Any, where: str) -> dict:
        if not isinstance(value, dict):
            self.fail(where, f"expected a mapping, got {shown(value)}")
        return value

    def string(self, parent: dict, key: str, where: str, required: bool = False) -> str | None:
        value = parent.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            self.fail(f"{where}.{key}", "required field is missing" if value is None
                      else f"expected a non-empty string, got {shown(value)}")
        return value

    def integer(self, parent: dict, key: str, where: str) -> int | None:
        value = parent.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            self.fail(f"{where}.{key}", f"expected an integer, got {shown(value)}")
        return value

    def resources(self, parent: dict, key: str, where: str) -> dict[str, int] | None:
        """A ``ResourceList`` (``None`` when absent): cpu and memory in model units; every other
        resource is checked to be a quantity (as precise as a milli-unit) and its name noted in
        ``other_resources``."""
        if parent.get(key) is None:
            return None
        raw = self.mapping(parent, key, where)
        result = {}
        for name, quantity in raw.items():
            path = f"{where}.{key}.{cut(name) if isinstance(name, str) else shown(name)}"
            if not isinstance(name, str):
                self.fail(path, "expected a resource name")
            try:
                amount = parse_quantity(quantity, name if name in RESOURCE_NAMES else "cpu")
            except ValueError as error:
                self.fail(path, str(error))
            if name in RESOURCE_NAMES:
                result[name] = amount
            else:
                self.other_resources.add(cut(name))
        return result


@dataclass(frozen=True)
class PodSizes:
    """A pod's three totals (cpu and memory in model units; only resources something named) and
    the reason of its ``PodResizePending`` condition (``None``: none) and whether
    ``PodResizeInProgress`` is present."""

    desired: dict
    allocated: dict
    actual: dict
    pending_reason: str | None
    in_progress: bool
    has_limits: bool
    qos: str
    pending_behind: bool = False  # PodResizePending's observedGeneration is older than metadata.generation


def _statuses(fields: Fields, status: dict, where: str) -> dict[str, tuple[dict, str]]:
    """Container name -> (its status, the status's path), over regular and init containers."""
    found = {}
    for key in ("initContainerStatuses", "containerStatuses"):
        for j, raw in enumerate(fields.sequence(status, key, f"{where}.status")):
            path = f"{where}.status.{key}[{j}]"
            entry = fields.item(raw, path)
            found[fields.string(entry, "name", path, required=True)] = (entry, path)
    return found


def _container(fields: Fields, raw: Any, where: str, kind: str, statuses: dict) -> Container:
    """One container with its spec resources and what its status reports (docs/reference.md §1.1)."""
    spec = fields.item(raw, where)
    name = fields.string(spec, "name", where, required=True)
    if kind == "init" and spec.get("restartPolicy") == "Always":
        kind = "sidecar"
    resources = fields.mapping(spec, "resources", where)
    requests = fields.resources(resources, "requests", f"{where}.resources")
    limits = fields.resources(resources, "limits", f"{where}.resources")
    status, path = statuses.get(name, ({}, ""))
    allocated = fields.resources(status, "allocatedResources", path)
    reported = fields.mapping(status, "resources", path)
    actual = fields.resources(reported, "requests", f"{path}.resources")
    actual_limits = fields.resources(reported, "limits", f"{path}.resources")
    return Container(name, kind, requests=requests, allocated=allocated, actual=actual, limits=limits,
                     actual_limits=actual_limits)


def _resize_conditions(fields: Fields, status: dict, where: str) -> tuple[str | None, bool, int | None]:
    """The first ``PodResizePending`` condition's reason (``IsPodResizeDeferred`` reads the first) and
    ``observedGeneration``, and whether ``PodResizeInProgress`` is there with status True."""
    reason, in_progress, observed = None, False, None
    for k, raw in enumerate(fields.sequence(status, "conditions", f"{where}.status")):
        path = f"{where}.status.conditions[{k}]"
        condition = fields.item(raw, path)
        kind = fields.string(condition, "type", path, required=True)
        if kind == RESIZE_PENDING and reason is None:
            reason = fields.string(condition, "reason", path) or ""
            observed = fields.integer(condition, "observedGeneration", path)
        elif kind == RESIZE_IN_PROGRESS and condition.get("status", "True") == "True":
            in_progress = True
    return reason, in_progress, observed


def pod_of(fields: Fields, pod: dict, where: str) -> Pod:
    """The model's ``Pod`` of a Pod object: its containers (init containers and sidecars first, in
    declaration order), overhead, pod-level resources and their status, and the resize reason."""
    spec = fields.mapping(pod, "spec", where, required=True)
    status = fields.mapping(pod, "status", where)
    statuses = _statuses(fields, status, where)
    containers = []
    for key, kind in (("initContainers", "init"), ("containers", "regular")):
        for i, raw in enumerate(fields.sequence(spec, key, f"{where}.spec")):
            containers.append(_container(fields, raw, f"{where}.spec.{key}[{i}]", kind, statuses))
    if not any(c.kind == "regular" for c in containers):
        fields.fail(f"{where}.spec.containers", "a pod needs at least one container")
    names = [c.name for c in containers]
    for i, name in enumerate(names):
        if name in names[:i]:
            fields.fail(f"{where}.spec", f"container name {shown(name)} is used twice")
    pod_level = fields.mapping(spec, "resources", f"{where}.spec")
    reported = fields.mapping(status, "resources", f"{where}.status")
    reason, _, _ = _resize_conditions(fields, status, where)
    return Pod(tuple(containers), overhead=fields.resources(spec, "overhead", f"{where}.spec"), resize_reason=reason,
               pod_requests=fields.resources(pod_level, "requests", f"{where}.spec.resources"),
               pod_limits=fields.resources(pod_level, "limits", f"{where}.spec.resources"),
               pod_allocated=fields.resources(status, "allocatedResources", f"{where}.status"),
               pod_actual=fields.resources(reported, "requests", f"{where}.status.resources"),
               pod_actual_limits=fields.resources(reported, "limits", f"{where}.status.resources"))


def _state_requests(container: Container, state: str, infeasible: bool):
    if state == "desired":
        return container.requests
    if state == "allocated":
        return _allocated_requests(container, infeasible)
    return _actual_requests(container, infeasible)


def _pod_level(pod: Pod, state: str):
    """The pod-level requests of one state: the spec's, or (with pod-level resources set) the
    pod-level status map of that state less the overhead ``pod_requests`` adds back (§1.5)."""
    status = {"desired": None, "allocated": pod.pod_allocated, "actual": pod.pod_actual}[state]
    if pod.pod_requests is None or status is None:
        return pod.pod_requests
    return _minus_overhead(status, pod.overhead)


def state_total(pod: Pod, state: str) -> dict:
    """``PodRequests`` of the pod as it would be if ``state`` (desired, allocated or actual) were its
    only one: the KEP-753 formula, pod-level resources and overhead over that state's values."""
    infeasible = pod.resize_reason == "Infeasible"
    return spec_total(((c.kind, _state_requests(c, state, infeasible)) for c in pod.containers), pod.overhead,
                      _pod_level(pod, state))


def read_pod_sizes(fields: Fields, pod: dict, where: str) -> PodSizes:
    """The desired, allocated and actual totals of a Pod object, and its resize conditions."""
    model_pod = pod_of(fields, pod, where)
    reason, in_progress, observed = _resize_conditions(fields, fields.mapping(pod, "status", where), where)
    generation = fields.integer(fields.mapping(pod, "metadata", where), "generation", f"{where}.metadata")
    has_limits = any(c.limits for c in model_pod.containers) or bool(model_pod.pod_limits)
    desired, allocated, actual = (state_total(model_pod, state) for state in STATES)
    # PodResizePending written for an older spec: the kubelet has not evaluated the current one yet
    behind = generation is not None and observed is not None and observed < generation
    return PodSizes(desired, allocated, actual, reason, in_progress, has_limits,
                    qos_class(fields, pod, where, model_pod), behind)


def qos_class(fields: Fields, pod: dict, where: str, model_pod: Pod) -> str:
    """``status.qosClass``, else ``GetPodQOS`` over the containers (``spec/kubernetes/qos.py``)."""
    reported = fields.string(fields.mapping(pod, "status", where), "qosClass", f"{where}.status")
    if reported is not None:
        return reported
    return pod_qos_class((c.requests, c.limits) for c in model_pod.containers)
