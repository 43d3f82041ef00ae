"""A pod's QoS class, and the resizes the kubelet marks Infeasible for it (what Kubernetes says, as rules).

- **QoS class** (``GetPodQOS``, ``pkg/apis/core/helper/qos/qos.go``; its copy in
  ``pkg/apis/core/v1/helper/qos``): BestEffort when no container requests or limits cpu or memory;
  Guaranteed when every container has cpu and memory limits and its requests (defaulted to the
  limits) equal them; else Burstable. Pod-level ``spec.resources`` are not consulted here.
- **Request defaulting** (``SetDefaults_Pod``, ``pkg/apis/core/v1/defaults.go``): a container that
  sets a limit and no request for a resource gets the limit as its request.
- **Requests at most limits** (``ValidateResourceRequirements``, ``pkg/apis/core/validation``:
  "must be less than or equal to cpu limit").
- **A resize may not change the QoS class** (``ValidatePodResize``, same file: "Pod QOS Class may
  not change as a result of resizing"; docs/reference.md §2.1 step 1).
- **The kubelet's Infeasible decisions** (``podResizesAdmitHandler.Admit``,
  ``pkg/kubelet/allocation/handlers.go``; docs/reference.md §2.2): for a Guaranteed pod, a resize that
  changes the cpu request on a node whose kubelet runs the static CPU manager
  (``cpuManagerPolicy: static``), or the memory request under the static memory manager
  (``memoryManagerPolicy: Static``), is Infeasible — the feature gates that lift this
  (``InPlacePodVerticalScalingExclusiveCPUs``, ``…ExclusiveMemory``) are alpha and off by default
  (``pkg/features/kube_features.go``). The handler is the first admit handler the allocation
  manager runs (``NewMainKubelet``: ``AddPodAdmitHandlers(append([]PodAdmitHandler{resizeAdmitHandler},
  handlers...))``), so the decision comes before the fit check: such a resize is Infeasible however
  much room the node has. Left out: static pods, swap, pod-level resizes (the scenario format has
  none of them).

Standalone (stdlib only), so that the scenario loader and the importer of live objects
(``checks/kube/objects.py``) derive the class with one function.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

__all__ = ["QOS_CLASSES", "QOS_RESOURCES", "CPU_MANAGER_POLICIES", "MEMORY_MANAGER_POLICIES", "qos_class",
           "defaulted_requests", "over_limit", "infeasible_resources"]

QOS_CLASSES = ("Guaranteed", "Burstable", "BestEffort")  # the kubelet's retry order: Guaranteed first
QOS_RESOURCES = ("cpu", "memory")  # supportedQoSComputeResources
CPU_MANAGER_POLICIES = ("none", "static")  # KubeletConfiguration.cpuManagerPolicy
MEMORY_MANAGER_POLICIES = ("None", "Static")  # KubeletConfiguration.memoryManagerPolicy


def qos_class(containers: Iterable[tuple[Optional[Mapping], Optional[Mapping]]]) -> str:
    """``GetPodQOS`` of containers given as (requests, limits) maps of quantities."""
    containers = [(requests or {}, limits or {}) for requests, limits in containers]
    if not any(r.get(name) or lim.get(name) for r, lim in containers for name in QOS_RESOURCES):
        return "BestEffort"
    for requests, limits in containers:
        if any(not limits.get(name) for name in QOS_RESOURCES):
            return "Burstable"
        if any(requests.get(name, limits[name]) != limits[name] for name in QOS_RESOURCES):
            return "Burstable"
    return "Guaranteed"


def defaulted_requests(requests: Mapping, limits: Optional[Mapping]) -> dict:
    """The requests after API defaulting: a resource with a limit and no request requests its limit."""
    return {**(limits or {}), **requests}


def over_limit(requests: Mapping, limits: Optional[Mapping]) -> Optional[str]:
    """The first resource whose request exceeds its limit, or None."""
    return next((name for name, value in requests.items() if limits and name in limits and value > limits[name]),
                None)


def infeasible_resources(qos: str, cpu_manager_policy: str, memory_manager_policy: str) -> tuple[str, ...]:
    """The resources whose request a resize may not change on this node without being Infeasible."""
    if qos != "Guaranteed":
        return ()
    return tuple(name for name, static in (("cpu", cpu_manager_policy == "static"),
                                           ("memory", memory_manager_policy == "Static")) if static)
