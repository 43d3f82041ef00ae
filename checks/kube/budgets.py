"""PodDisruptionBudgets between scenarios and Kubernetes objects: written by ``kepcheck export``
(``checks/kube/manifests.py``) and read by ``kepcheck import`` (``checks/kube/snapshot.py``).

A scenario's budget lists the pods it selects (``spec/language/disruption_budgets.py``). Exported, each budget
is a ``policy/v1`` PodDisruptionBudget with ``spec.minAvailable`` and a ``matchLabels`` selector on
one label of its own (``pdb.kepcheck.io/<budget>: selected``), which the Pods it selects carry.
Imported, a budget with an integer ``minAvailable`` and a ``matchLabels`` selector selects the kept
pods of its namespace whose labels include every pair; the others are left out and counted in the
import's summary: ``maxUnavailable`` or a percentage, ``matchExpressions``, an empty selector
(it matches nothing), and a budget that selects no kept pod.
"""

from __future__ import annotations

from kepcheck.spec.kubernetes.api_validation import dns1123_subdomain_problem
from kepcheck.spec.limits import shown

__all__ = ["BUDGET_LABEL_PREFIX", "budget_label", "pod_budget_labels", "budget_objects", "budgets_from_objects"]

BUDGET_LABEL_PREFIX = "pdb.kepcheck.io/"
SELECTED = "selected"
_LABEL_NAME_MAX = 63


def budget_label(scenario, index: int) -> str:
    """The label key of the scenario's ``index``-th budget: its name when that fits a label's name
    part (63 characters), else ``budget-<index>``."""
    name = scenario.budgets[index].name
    return BUDGET_LABEL_PREFIX + (name if len(name) <= _LABEL_NAME_MAX else f"budget-{index}")


def pod_budget_labels(scenario, pod_name: str) -> dict:
    """The budget labels a pod carries: one per budget that selects it."""
    return {budget_label(scenario, b): SELECTED for b, budget in enumerate(scenario.budgets) if pod_name in budget.pods}


def budget_objects(scenario) -> list[dict]:
    """One PodDisruptionBudget per budget of the scenario."""
    return [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": budget.name},
             "spec": {"minAvailable": budget.min_available,
                      "selector": {"matchLabels": {budget_label(scenario, b): SELECTED}}}}
            for b, budget in enumerate(scenario.budgets)]


def budgets_from_objects(fields, budgets: list, pods: list, summary) -> list[dict]:
    """The scenario's ``podDisruptionBudgets`` from the snapshot's ``(where, object)`` budgets and the
    kept pods as ``(namespace, labels, scenario name)``, in file order; what cannot be held is counted
    in ``summary.dropped``."""
    entries, taken = [], set()
    for where, obj in budgets:
        metadata = fields.mapping(obj, "metadata", where, True)
        name = fields.string(metadata, "name", f"{where}.metadata", True)
        problem = dns1123_subdomain_problem(name)
        if problem:
            fields.fail(f"{where}.metadata.name", f"{shown(name)} is not a valid PodDisruptionBudget name: {problem}")
        namespace = fields.string(metadata, "namespace", f"{where}.metadata") or "default"
        spec = fields.mapping(obj, "spec", where)
        selector = fields.mapping(spec, "selector", f"{where}.spec")
        minimum = spec.get("minAvailable")
        why = None
        if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 0 or "maxUnavailable" in spec:
            why = "PodDisruptionBudget without an integer minAvailable (maxUnavailable or a percentage)"
        elif selector.get("matchExpressions"):
            why = "PodDisruptionBudget with matchExpressions"
        match = fields.mapping(selector, "matchLabels", f"{where}.spec.selector")
        selected = [pod for ns, labels, pod in pods
                    if ns == namespace and match and all(labels.get(k) == v for k, v in match.items())]
        if why is None and not selected:
            why = "PodDisruptionBudget selecting no kept pod"
        if why is not None:
            summary.dropped[why] += 1
            continue
        scenario_name = name if name not in taken else f"{namespace}.{name}"
        taken.add(scenario_name)
        entries.append({"name": scenario_name, "pods": selected, "minAvailable": minimum})
    return entries
