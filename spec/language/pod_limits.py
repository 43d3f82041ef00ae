"""The scenario loader's limits and QoS classes: a pod's limits (in the one-vector
form; a pod with containers: ``spec/language/containers.py``), the QoS class they give it, and the API and kubelet rules that follow (``spec/kubernetes/qos.py``).

- ``limits`` on a pod or an arrival: requests default to the limits where absent, and may not exceed
  them; the pod's QoS class is derived (``GetPodQOS``) and fixed for its life.
- ``limits`` on a resize: the PATCH's limits (those it leaves out keep their value); a resize whose
  requests and limits would give another QoS class is refused, as API validation refuses it.
- A pod that starts ``resize: Deferred`` although the kubelet would mark that resize Infeasible (a
  Guaranteed pod changing a resource its node's static CPU or memory manager pins) is refused.

Limits are read only for the class: the scheduler and the kubelet's fit use requests alone.
"""

from __future__ import annotations

from kepcheck.spec.kubernetes.qos import defaulted_requests, infeasible_resources, over_limit, qos_class
from kepcheck.spec.language.fields import FieldReader
from kepcheck.spec.limits import shown

__all__ = ["read_requests_and_limits", "check_within_limits", "check_resizes_keep_qos", "check_not_deferred_if_infeasible"]


def read_requests_and_limits(reader: FieldReader, raw: dict, where: str) -> tuple[dict, dict | None, str]:
    """(requests after defaulting, limits or None, QoS class) of a pod's fields."""
    limits = reader.resources(raw["limits"], f"{where}.limits") if "limits" in raw else None
    requests = defaulted_requests(reader.resources(raw["requests"], f"{where}.requests"), limits)
    check_within_limits(reader, requests, limits, f"{where}.requests")
    return requests, limits, qos_class([(requests, limits)])


def check_within_limits(reader: FieldReader, requests: dict, limits: dict | None, where: str) -> None:
    name = over_limit(requests, limits)
    if name is not None:
        reader.fail(f"{where}.{name}", f"must be less than or equal to {name} limit (API validation)")


def check_resizes_keep_qos(reader: FieldReader, resize_fields: list, pod_fields: list, pod_names: dict) -> None:
    """Each resize's requests and limits, the pod's where the PATCH leaves them out, keep the pod's class
    (a pod with containers: ``spec/language/containers.py`` checks its resizes container by container)."""
    for i, (pod_name, requests, limits) in enumerate(resize_fields):
        where, pod = f"environment.resizes[{i}]", pod_fields[pod_names[pod_name]]
        if pod.get("containers"):
            continue
        new_limits = {**(pod["limits"] or {}), **(limits or {})} or None
        new_requests = {**pod["requests"], **requests}
        check_within_limits(reader, new_requests, new_limits, f"{where}.requests")
        new_class = qos_class([(new_requests, new_limits)])
        if new_class != pod["qos"]:
            reader.fail(where, f"would change pod {shown(pod_name)}'s QoS class from {pod['qos']} to {new_class}: "
                        "API validation refuses it (Pod QOS Class may not change as a result of resizing)")


def check_not_deferred_if_infeasible(reader: FieldReader, pod, where: str, nodes: tuple, resources: tuple) -> None:
    """A pod cannot start Deferred with a resize its kubelet marks Infeasible (``spec/kubernetes/qos.py``)."""
    if pod.resize != "Deferred" or pod.node is None:
        return
    node = next(n for n in nodes if n.name == pod.node)
    pinned = infeasible_resources(pod.qos_class, node.cpu_manager_policy, node.memory_manager_policy)
    allocated = pod.allocated if pod.allocated is not None else pod.requests
    if any(pod.requests[r] != allocated[r] for r, name in enumerate(resources) if name in pinned):
        reader.fail(f"{where}.resize", f"a {pod.qos_class} pod on a node whose kubelet runs a static resource "
                    f"manager changes {'/'.join(pinned)}: the kubelet marks that resize Infeasible, never Deferred "
                    "(podResizesAdmitHandler)")
