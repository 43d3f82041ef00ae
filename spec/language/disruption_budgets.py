"""PodDisruptionBudgets in a scenario, and the budget the disruption controller gives them.

A scenario's ``podDisruptionBudgets`` name the pods each budget selects (the pods its label selector
matches: the scenario lists them instead of labels) and ``minAvailable``, an integer. The
disruption controller (``pkg/controller/disruption/disruption.go``) publishes
``status.disruptionsAllowed`` = currentHealthy − desiredHealthy, never below 0, where desiredHealthy
is ``minAvailable`` and currentHealthy counts the selected pods that are Ready and not being deleted
(``countHealthyPods``). The scheduler's preemption reads that status (docs/reference.md §3.3 step 4,
``filterPodsWithPDBViolation``); ``model/actions/preemption.py`` does the rest.

Left out: ``maxUnavailable`` and percentages (they need the pods' controller and its scale;
for pods without one the controller supports only an integer ``minAvailable``), label selectors
themselves, namespaces, ``status.disruptedPods`` (filled by the eviction API, which preemption does
not use: it deletes), ``unhealthyPodEvictionPolicy`` (eviction API only), and the controller's lag
(the model computes the status from the current pods).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kepcheck.spec.language.fields import FieldReader
from kepcheck.spec.limits import shown

__all__ = ["DisruptionBudget", "read_disruption_budgets"]


@dataclass(frozen=True)
class DisruptionBudget:
    name: str
    pods: tuple[str, ...]  # the pods its selector matches, in declaration order
    min_available: int


_FIELDS = {"name", "pods", "minAvailable"}


def read_disruption_budgets(reader: FieldReader, value: Any, pod_names: dict) -> tuple[DisruptionBudget, ...]:
    """A scenario's ``podDisruptionBudgets``: names distinct, pods declared (or arriving), each named once."""
    budgets = []
    for i, raw in enumerate(reader.sequence(value, "podDisruptionBudgets")):
        where = f"podDisruptionBudgets[{i}]"
        reader.mapping(raw, where, _FIELDS, ("name", "pods", "minAvailable"))
        name = reader.object_name(raw["name"], f"{where}.name", "PodDisruptionBudget")
        if any(b.name == name for b in budgets):
            reader.fail(f"{where}.name", f"duplicate PodDisruptionBudget name {shown(name)}")
        pods = []
        for k, pod in enumerate(reader.sequence(raw["pods"], f"{where}.pods")):
            pods.append(reader.reference(pod, f"{where}.pods[{k}]", pod_names, "pod"))
            if pods[-1] in pods[:-1]:
                reader.fail(f"{where}.pods[{k}]", f"pod {shown(pod)} is listed twice")
        if not pods:
            reader.fail(f"{where}.pods", "a budget selects at least one pod (an empty selector matches nothing)")
        minimum = reader.integer(raw["minAvailable"], f"{where}.minAvailable", 0)
        budgets.append(DisruptionBudget(name, tuple(sorted(pods, key=pod_names.__getitem__)), minimum))
    return tuple(budgets)
