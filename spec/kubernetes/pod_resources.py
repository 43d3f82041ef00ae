"""How Kubernetes adds a pod's containers up: the KEP-753 formula of ``PodRequests`` (component-helpers
``resource.AggregateContainerRequests`` / ``aggregateContainerResourcesByFn``; docs/reference.md §1.4), the
pod-level override (``applyPodLevelResources``, §1.5) and the overhead (§1.4), as rules on resource maps.

Regular containers and sidecars (init containers with ``restartPolicy: Always``) run together and
are summed; each non-restartable init container runs alone beside the sidecars declared before it,
and a sidecar's start-up peak is the sidecars up to and including it; the pod needs the per-resource
maximum of the running sum and every peak. Pod-level ``spec.resources`` (cpu, memory, hugepages-*)
replace the containers' aggregate; the overhead is added last.

Values may be ints or any terms with ``+`` and a ``maximum`` the caller gives (``model/accounting/pod_requests.py``
passes the one that builds Z3 terms). A resource that is absent contributes nothing (it is not
zero-filled), as in a Kubernetes ``ResourceList``. Standalone (stdlib only), so that the scenario
loader (``spec/language/containers.py``) and the accounting of the model share one formula.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional

__all__ = ["add_into", "max_into", "aggregate", "is_pod_level_resource", "names_pod_level_resource",
           "apply_pod_level", "spec_total"]

ResourceMap = Mapping[str, Any]


def add_into(total: dict, resources: Optional[ResourceMap]) -> None:
    """``addResourceList``: add every named resource; absent resources are left alone."""
    for name, value in (resources or {}).items():
        total[name] = total[name] + value if name in total else value


def max_into(total: dict, resources: Optional[ResourceMap], maximum: Callable = max) -> None:
    """``maxResourceList``: per-resource maximum; a resource absent from ``total`` is taken as is."""
    for name, value in (resources or {}).items():
        total[name] = maximum(total[name], value) if name in total else value


def aggregate(containers: Iterable[tuple[str, Optional[ResourceMap]]], maximum: Callable = max) -> dict:
    """``aggregateContainerResourcesByFn`` over ``(kind, resources)`` pairs in declaration order, kind
    ``regular``, ``init`` or ``sidecar`` (init containers keep their order among ``spec.initContainers``)."""
    containers = list(containers)
    result: dict = {}
    for kind, resources in containers:
        if kind == "regular":
            add_into(result, resources)
    sidecars_so_far: dict = {}
    init_peak: dict = {}
    for kind, resources in containers:
        if kind == "sidecar":
            add_into(result, resources)
            add_into(sidecars_so_far, resources)
            max_into(init_peak, sidecars_so_far, maximum)
        elif kind == "init":
            during_init = dict(sidecars_so_far)
            add_into(during_init, resources)
            max_into(init_peak, during_init, maximum)
    max_into(result, init_peak, maximum)
    return result


def is_pod_level_resource(name: str) -> bool:
    """cpu, memory and hugepages-* can be set at pod level (``IsSupportedPodLevelResource``, §1.5)."""
    return name in ("cpu", "memory") or name.startswith("hugepages-")


def names_pod_level_resource(resources: Optional[ResourceMap]) -> bool:
    """``IsPodLevelRequestsSet`` (of requests) / ``IsPodLevelResourcesSet`` (of either map)."""
    return any(is_pod_level_resource(name) for name in (resources or {}))


def apply_pod_level(result: dict, effective: Optional[ResourceMap]) -> None:
    """``applyPodLevelResources``: a pod-level value replaces the container aggregate (§1.5)."""
    for name, value in (effective or {}).items():
        if is_pod_level_resource(name):
            result[name] = value


def spec_total(containers: Iterable[tuple[str, Optional[ResourceMap]]], overhead: Optional[ResourceMap] = None,
               pod_level: Optional[ResourceMap] = None) -> dict:
    """``PodRequests`` without status resources (the pod being scheduled, §1.6): the containers'
    aggregate, pod-level requests over it where set, plus the overhead."""
    result = aggregate(containers)
    if names_pod_level_resource(pod_level):
        apply_pod_level(result, pod_level)
    add_into(result, overhead)
    return result
