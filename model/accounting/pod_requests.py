"""Resource accounting of a whole pod: component-helpers ``PodRequests`` / ``PodLimits`` with
``UseStatusResources`` (docs/reference.md §1.2–§1.6), on pods with named containers.

The pod is a ``Pod`` of ``model/accounting/pods.py``. ``pod_requests`` and ``pod_limits`` follow
the upstream code step by step, with the v1.37 rule "max of sums" (three pod totals, desired S,
allocated A and actual R, each built with the KEP-753 init/sidecar formula, combined per resource
by ``model/accounting/footprints.combine_totals``)
and the v1.33–v1.36 rule "sum of maxes" (per container). So the state machine's pod totals
(which it combines with ``combine_totals`` on vectors) and these general pods share one rule; the
conformance tests check both against the Kubernetes test cases of docs/reference.md §7.1.

Resource maps follow Kubernetes ``ResourceList`` semantics: a resource that is absent contributes
nothing (it is not zero-filled), and a result only names resources that something contributed
(§1.2 "Missing values", case C-8). ``None`` stands for a nil map / absent status field; an empty
map is a present-but-empty one.

Left out: see ``model/accounting/footprints.py``.
"""

from __future__ import annotations

from typing import Callable, Optional

from kepcheck.spec.kubernetes.pod_resources import add_into, aggregate, apply_pod_level, names_pod_level_resource

from kepcheck.model.accounting.footprints import combine_totals
from kepcheck.model.accounting.pods import Container, Pod, ResourceMap, is_resize_infeasible
from kepcheck.model.expr.scalars import ite, max2

__all__ = ["RULES", "pod_requests", "pod_limits"]

RULES = ("v1.37", "v1.36")


# --- resource maps ---------------------------------------------------------------------------------


def _combine_maps(desired: Optional[ResourceMap], allocated: Optional[ResourceMap],
                  actual: Optional[ResourceMap], infeasible: bool) -> dict:
    """``combine_totals`` on resource maps, with absent resources contributing nothing.

    The result names every resource of ``allocated`` and ``actual``, and of ``desired`` unless
    ``infeasible``. Inside the vectors an absent entry is 0, which is the same as "no
    contribution" because quantities are never negative. ``infeasible`` is a plain bool here
    (it comes from the pod's condition); the values may be ints or Z3 terms.
    """
    names = list(dict.fromkeys([*(allocated or {}), *(actual or {}), *(() if infeasible else (desired or {}))]))
    if not names:
        return {}

    def vector(resources: Optional[ResourceMap]) -> tuple:
        resources = resources or {}
        return tuple(resources.get(name, 0) for name in names)

    combined = combine_totals(vector(desired), vector(allocated), vector(actual), infeasible)
    return dict(zip(names, combined))


def _aggregate(pod: Pod, contribution: Callable[[Container], Optional[ResourceMap]]) -> dict:
    """``aggregateContainerResourcesByFn``: the KEP-753 formula (docs/reference.md §1.4, ``spec/kubernetes/pod_resources.py``)
    over one contribution per container."""
    return aggregate(((c.kind, contribution(c)) for c in pod.containers), max2)


def _minus_overhead(resources: Optional[ResourceMap], overhead: Optional[ResourceMap]) -> Optional[ResourceMap]:
    """``subtractResourceList``: subtract overhead from the resources present, clamped at 0 (§1.5)."""
    if resources is None or overhead is None:
        return resources
    result = dict(resources)
    for name, value in overhead.items():
        if name in result:
            result[name] = max2(result[name] - value, 0)
    return result


def _check_rule(rule: str) -> None:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")


# --- requests --------------------------------------------------------------------------------------


def _allocated_requests(container: Container, infeasible: bool) -> Optional[ResourceMap]:
    """``containerAllocatedRequests``: allocated, else desired — except while Infeasible (§1.2)."""
    if container.allocated is not None:
        return container.allocated
    return None if infeasible else container.requests


def _actual_requests(container: Container, infeasible: bool) -> Optional[ResourceMap]:
    """``containerActuatedRequests``: actual, else allocated, else desired — except while Infeasible (§1.2)."""
    if container.actual is not None:
        return container.actual
    if container.allocated is not None:
        return container.allocated
    return None if infeasible else container.requests


def _container_requests_v136(container: Container, infeasible: bool) -> Optional[ResourceMap]:
    """``determineContainerReqs`` of v1.33–v1.36 (§1.2): a regular or sidecar container with
    ``status.resources`` counts at ``combine_totals`` of its own values; otherwise its desired."""
    if container.kind == "init" or not container.has_status_resources:
        return container.requests
    return _combine_maps(container.requests, container.allocated, container.actual, infeasible)


def _aggregate_requests(pod: Pod, *, use_status_resources: bool, rule: str, pod_level_vertical_scaling: bool) -> dict:
    """``AggregateContainerRequests`` (docs/reference.md §1.2, §1.4)."""
    if not use_status_resources:
        return _aggregate(pod, lambda c: c.requests)
    infeasible = is_resize_infeasible(pod)
    if rule == "v1.36":
        return _aggregate(pod, lambda c: _container_requests_v136(c, infeasible))
    desired_total = _aggregate(pod, lambda c: c.requests)
    if pod_level_vertical_scaling and pod.pod_allocated is not None and pod.pod_actual is not None:
        # The pod-level status maps already hold the aggregates over all containers (§1.2).
        allocated_total, actual_total = pod.pod_allocated, pod.pod_actual
    else:
        allocated_total = _aggregate(pod, lambda c: _allocated_requests(c, infeasible))
        actual_total = _aggregate(pod, lambda c: _actual_requests(c, infeasible))
    return _combine_maps(desired_total, allocated_total, actual_total, infeasible)


def pod_requests(pod: Pod, *, use_status_resources: bool = True, rule: str = "v1.37",
                 pod_level_vertical_scaling: bool = False, exclude_overhead: bool = False) -> dict:
    """``PodRequests``: the pod's effective requests (docs/reference.md §1.2, §1.4, §1.5).

    ``use_status_resources`` is on for assigned pods in the scheduler cache and off for the pod
    being scheduled (§1.6). ``rule`` is ``"v1.37"`` (max of sums) or ``"v1.36"`` (sum of maxes).
    ``pod_level_vertical_scaling`` is the ``InPlacePodLevelResourcesVerticalScaling`` option: with
    status resources on, pod-level status maps stand in for the container totals (v1.37 rule only)
    and pod-level requests resize in place (both rules; §1.5). Overhead is added at the end unless
    ``exclude_overhead``. Returns only resources that something contributed.
    """
    _check_rule(rule)
    result = _aggregate_requests(pod, use_status_resources=use_status_resources, rule=rule,
                                 pod_level_vertical_scaling=pod_level_vertical_scaling)
    if names_pod_level_resource(pod.pod_requests):  # IsPodLevelRequestsSet
        effective = pod.pod_requests
        if (pod_level_vertical_scaling and use_status_resources
                and (pod.has_status_resources or pod.pod_allocated is not None)):
            # effectivePodLevelResources: max(spec, status − overhead, allocated − overhead);
            # the spec is dropped while the resize is Infeasible (§1.5).
            effective = _combine_maps(pod.pod_requests,
                                      _minus_overhead(pod.pod_allocated, pod.overhead),
                                      _minus_overhead(pod.pod_actual, pod.overhead),
                                      is_resize_infeasible(pod))
        apply_pod_level(result, effective)
    if not exclude_overhead:
        add_into(result, pod.overhead)
    return result


# --- limits ----------------------------------------------------------------------------------------


def _actual_limits(container: Container, infeasible: bool) -> Optional[ResourceMap]:
    """``containerActuatedLimits``: actual limits, else desired — except while Infeasible (§1.3)."""
    if container.actual_limits is not None:
        return container.actual_limits
    return None if infeasible else container.limits


def _container_limits_v136(container: Container, infeasible: bool) -> Optional[ResourceMap]:
    """``determineContainerLimits`` of v1.33–v1.36 (§1.3): gated on ``status.resources`` like requests."""
    if container.kind == "init" or not container.has_status_resources:
        return container.limits
    return _combine_maps(container.limits, None, container.actual_limits, infeasible)


def _aggregate_limits(pod: Pod, *, use_status_resources: bool, rule: str, pod_level_vertical_scaling: bool) -> dict:
    """``AggregateContainerLimits`` (docs/reference.md §1.3): desired and actual only — allocated limits
    are not published per container, so that state contributes nothing."""
    if not use_status_resources:
        return _aggregate(pod, lambda c: c.limits)
    infeasible = is_resize_infeasible(pod)
    if rule == "v1.36":
        return _aggregate(pod, lambda c: _container_limits_v136(c, infeasible))
    desired_total = _aggregate(pod, lambda c: c.limits)
    if pod_level_vertical_scaling and pod.pod_actual_limits is not None:
        actual_total = pod.pod_actual_limits
    else:
        actual_total = _aggregate(pod, lambda c: _actual_limits(c, infeasible))
    return _combine_maps(desired_total, None, actual_total, infeasible)


def pod_limits(pod: Pod, *, use_status_resources: bool = True, rule: str = "v1.37",
               pod_level_vertical_scaling: bool = False) -> dict:
    """``PodLimits``: the pod's effective limits (docs/reference.md §1.3, §1.5; cases C-7b, C-9–C-12).

    Same scheme as ``pod_requests`` with two states (desired, actual): ``max(desired, actual)``,
    or the actual limits while Infeasible. Pod-level limits replace the aggregate when pod-level
    resources are set; overhead is added only to limits that are present and non-zero.
    """
    _check_rule(rule)
    result = _aggregate_limits(pod, use_status_resources=use_status_resources, rule=rule,
                               pod_level_vertical_scaling=pod_level_vertical_scaling)
    if names_pod_level_resource(pod.pod_requests) or names_pod_level_resource(pod.pod_limits):  # IsPodLevelResourcesSet
        effective = pod.pod_limits
        if pod_level_vertical_scaling and use_status_resources and pod.has_status_resources:
            effective = _combine_maps(pod.pod_limits, None,
                                      _minus_overhead(pod.pod_actual_limits, pod.overhead),
                                      is_resize_infeasible(pod))
        apply_pod_level(result, effective)
    for name, value in (pod.overhead or {}).items():
        if name in result:
            result[name] = ite(result[name] != 0, result[name] + value, result[name])
    return result
