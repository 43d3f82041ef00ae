"""Random scenario documents: a Hypothesis strategy that builds valid scenario files.

``scenarios()`` draws a scenario document in the YAML schema of docs/scenarios.md, as
the plain Python dict that ``spec.language.loader.parse_scenario`` accepts: 1–5 nodes, 2–12 pods,
cpu (and, if drawn, memory) as Kubernetes quantity strings (``500m``, ``2``, ``1536Mi``, ``1Gi``),
2–5 priority classes, pods bound to nodes (some with a ``Deferred``, ``Infeasible`` or
``InProgress`` resize), pending pods, and an environment menu (resizes, arrivals, deletions, a
scheduler restart) with ``maxEvents``. ``write_scenario(document, path)`` writes it as YAML that
``load_scenario`` and ``kepcheck`` read.

The loader's rules are respected by construction, not by filtering: requests of a bound pod are
within its node's allocatable; the pods of a node never hold more than its allocatable (the sum of
max(allocated, actual)); ``Deferred``/``Infeasible`` pods have requests != allocated;
``InProgress`` pods have actual != allocated and requests == allocated; an environment resize
differs from the pod's requests. Sizes are drawn in steps of 500m cpu and 512Mi memory, so the
loader's common-divisor scaling keeps the state machine's integers small.

``replicate(document, copies)`` builds a larger scenario from a small one: the disjoint union of
``copies`` renamed copies (each copy on its own nodes, with its own pods and environment menu).
Every behaviour of the original stays reachable (the copies' actions interleave), and the state
space grows roughly as the original's to the power ``copies``: a scope the explicit engine does
not finish but random walks can search.

Left out: multi-container pods (init containers, sidecars, pod-level resources) are not in the
scenario schema — the state machine's pods have one container; ``model.accounting.footprints.pod_requests``
handles the general pod and is tested on its own. ``nominatedNodeName`` on pending pods, limits,
and resources other than cpu and memory are not generated.
"""

from __future__ import annotations

import copy as _copy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

__all__ = ["scenarios", "sample_scenarios", "write_scenario", "replicate", "format_cpu", "format_memory"]

CPU_STEP = 500  # millicores per generated cpu unit
MEMORY_STEP = 512  # Mi per generated memory unit


def format_cpu(units: int) -> str:
    """``units`` steps of 500m as a Kubernetes quantity: ``500m``, ``1``, ``1500m``."""
    millis = units * CPU_STEP
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def format_memory(units: int) -> str:
    """``units`` steps of 512Mi as a Kubernetes quantity: ``512Mi``, ``1Gi``, ``1536Mi``."""
    mebibytes = units * MEMORY_STEP
    return f"{mebibytes // 1024}Gi" if mebibytes % 1024 == 0 else f"{mebibytes}Mi"


_FORMAT = {"cpu": format_cpu, "memory": format_memory}
_POD_KEYS = ("name", "node", "priority", "preemptionPolicy", "requests", "allocated", "actual", "resize")


def _quantities(resources: tuple[str, ...], vector: tuple[int, ...]) -> dict[str, str]:
    return {name: _FORMAT[name](value) for name, value in zip(resources, vector)}


def _vector(draw, low: tuple[int, ...], high: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(draw(st.integers(lo, hi)) for lo, hi in zip(low, high))


def _different(draw, vector: tuple[int, ...], low: int, high: tuple[int, ...]) -> tuple[int, ...] | None:
    """A vector within [low, high] per resource that differs from ``vector``; None if none exists."""
    candidate = _vector(draw, (low,) * len(vector), high)
    if candidate != vector:
        return candidate
    for r, (value, top) in enumerate(zip(vector, high)):  # nudge one resource up or down
        for nudged in (value + 1, value - 1):
            if low <= nudged <= top:
                return candidate[:r] + (nudged,) + candidate[r + 1:]
    return None


@st.composite
def scenarios(draw, *, min_nodes: int = 1, max_nodes: int = 5, min_pods: int = 2, max_pods: int = 12,
              max_node_units: int = 8, memory: bool | None = None, name: str = "generated") -> dict[str, Any]:
    """A valid scenario document (see the module doc string).

    ``min_pods``/``max_pods`` count every pod: declared (bound or pending) and arrivals.
    ``max_node_units`` bounds a node's allocatable per resource in steps of 500m / 512Mi.
    ``memory``: include memory (True), cpu only (False) or draw it (None).
    """
    with_memory = draw(st.booleans()) if memory is None else memory
    resources = ("cpu", "memory") if with_memory else ("cpu",)
    width = len(resources)
    priorities = draw(st.lists(st.sampled_from((0, 5, 10, 50, 100, 500, 1000, 2000)), min_size=2, max_size=5,
                               unique=True))

    node_count = draw(st.integers(min_nodes, max_nodes))
    nodes, allocatable, held = [], [], []
    for n in range(node_count):
        capacity = _vector(draw, (2,) * width, (max_node_units,) * width)
        node = {"name": f"n{n + 1}", "allocatable": _quantities(resources, capacity)}
        if draw(st.integers(0, 9)) == 0:
            node["disableResizePreemption"] = True
        nodes.append(node)
        allocatable.append(capacity)
        held.append([0] * width)
    largest = tuple(max(c[r] for c in allocatable) for r in range(width))

    pod_count = draw(st.integers(min_pods, max_pods))
    arrival_count = draw(st.integers(0, min(2, pod_count - min_pods)))
    pods, bound = [], []  # bound: (pod index, node index, requests vector)
    for p in range(pod_count - arrival_count):
        pod: dict[str, Any] = {"name": f"p{p + 1}", "priority": draw(st.sampled_from(priorities))}
        if draw(st.integers(0, 9)) == 0:
            pod["preemptionPolicy"] = "Never"
        node = draw(st.integers(-1, node_count - 1))  # -1: pending
        free = tuple(c - h for c, h in zip(allocatable[node], held[node])) if node >= 0 else ()
        if node < 0 or min(free) < 1:
            pod["requests"] = _quantities(resources, _vector(draw, (1,) * width, largest))
            pods.append(pod)
            continue
        capacity = allocatable[node]
        allocated = _vector(draw, (1,) * width, free)
        actual = allocated
        requests = allocated
        kind = draw(st.sampled_from(("plain", "plain", "Deferred", "Infeasible", "InProgress")))
        if kind in ("Deferred", "Infeasible"):
            changed = _different(draw, allocated, 1, capacity)
            if changed is not None:
                requests = changed
                pod["resize"] = kind
        elif kind == "InProgress":
            changed = _different(draw, allocated, 1, free)  # max(allocated, actual) must still fit
            if changed is not None:
                actual = changed
                pod["resize"] = "InProgress"
        pod.update(node=nodes[node]["name"], requests=_quantities(resources, requests))
        if allocated != requests:
            pod["allocated"] = _quantities(resources, allocated)
        if actual != allocated:
            pod["allocated"] = _quantities(resources, allocated)
            pod["actual"] = _quantities(resources, actual)
        held[node] = [h + max(a, b) for h, a, b in zip(held[node], allocated, actual)]
        bound.append((p, node, requests))
        pods.append({key: pod[key] for key in _POD_KEYS if key in pod})

    environment: dict[str, Any] = {}
    resizes = []
    for p, node, requests in draw(st.lists(st.sampled_from(bound), max_size=3, unique_by=lambda b: b[0])) if bound else []:
        target = _different(draw, requests, 1, allocatable[node])
        if target is not None:
            resizes.append({"pod": pods[p]["name"], "requests": _quantities(resources, target)})
    arrivals = [
        {"name": f"a{a + 1}", "priority": draw(st.sampled_from(priorities)),
         "requests": _quantities(resources, _vector(draw, (1,) * width, largest))}
        for a in range(arrival_count)
    ]
    deletions = draw(st.lists(st.sampled_from([pod["name"] for pod in pods]), max_size=2, unique=True))
    restarts = draw(st.integers(0, 1))
    menu = len(resizes) + len(arrivals) + len(deletions) + restarts
    if resizes:
        environment["resizes"] = resizes
    if arrivals:
        environment["arrivals"] = arrivals
    if deletions:
        environment["deletions"] = deletions
    if restarts:
        environment["schedulerRestarts"] = restarts
    if menu:
        environment["maxEvents"] = draw(st.integers(0, min(menu, 3)))

    document: dict[str, Any] = {
        "name": name,
        "description": f"generated by checks.generate.scenarios(): {node_count} nodes, {pod_count} pods",
        "nodes": nodes,
        "pods": pods,
    }
    if environment:
        document["environment"] = environment
    return document


def replicate(document: dict[str, Any], copies: int) -> dict[str, Any]:
    """The disjoint union of ``copies`` renamed copies of a scenario document.

    Copy ``k`` (from 1) renames node ``n`` to ``n-k``, pod ``p`` to ``p-k`` and budget ``b`` to
    ``b-k``; environment menus are concatenated and ``maxEvents`` summed; PriorityClasses are
    declared once. Only one scheduler restart is kept (the schema
    allows at most one). Pods of one copy may be scheduled onto another copy's nodes: that is
    extra behaviour, never less.
    """
    if copies < 1:
        raise ValueError("copies must be at least 1")
    result: dict[str, Any] = {
        "name": f"{document['name']}-x{copies}",
        "description": f"{copies} disjoint copies of {document['name']} (checks.generate.replicate)",
        "nodes": [], "pods": [],
    }
    environment = document.get("environment") or {}
    menu = (len(environment.get("resizes") or ()) + len(environment.get("arrivals") or ())
            + len(environment.get("deletions") or ()) + environment.get("schedulerRestarts", 0))
    max_events = environment.get("maxEvents", menu)
    merged: dict[str, Any] = {"resizes": [], "arrivals": [], "deletions": []}
    if document.get("priorityClasses"):  # cluster-wide: declared once
        result["priorityClasses"] = _copy.deepcopy(document["priorityClasses"])
    budgets = []
    for k in range(1, copies + 1):
        budgets += [{**_copy.deepcopy(b), "name": f"{b['name']}-{k}", "pods": [f"{p}-{k}" for p in b["pods"]]}
                    for b in document.get("podDisruptionBudgets") or ()]
        node_name = lambda name: f"{name}-{k}"
        pod_name = lambda name: f"{name}-{k}"
        for node in document["nodes"]:
            result["nodes"].append({**_copy.deepcopy(node), "name": node_name(node["name"])})
        for pod in document["pods"]:
            renamed = {**_copy.deepcopy(pod), "name": pod_name(pod["name"])}
            for key in ("node", "nominatedNodeName"):
                if key in renamed:
                    renamed[key] = node_name(renamed[key])
            result["pods"].append(renamed)
        for resize in environment.get("resizes") or ():
            merged["resizes"].append({**_copy.deepcopy(resize), "pod": pod_name(resize["pod"])})
        for arrival in environment.get("arrivals") or ():
            merged["arrivals"].append({**_copy.deepcopy(arrival), "name": pod_name(arrival["name"])})
        merged["deletions"] += [pod_name(name) for name in environment.get("deletions") or ()]
    out = {key: value for key, value in merged.items() if value}
    if environment.get("schedulerRestarts"):
        out["schedulerRestarts"] = 1
    if out:
        out["maxEvents"] = max_events * copies if max_events else 0
    if out:
        result["environment"] = out
    if budgets:
        result["podDisruptionBudgets"] = budgets
    return result


def write_scenario(document: dict[str, Any], path: str | Path) -> Path:
    """Write a scenario document as YAML that ``spec.language.loader.load_scenario`` accepts; returns the path.

    Quantities stay strings (``"2"`` is quoted), keys keep the schema's order.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(document, sort_keys=False, default_flow_style=None, width=110),
                    encoding="utf-8")
    return path


def sample_scenarios(count: int, seed: int = 0, **bounds) -> list[dict[str, Any]]:
    """``count`` documents drawn from ``scenarios(**bounds)``, the same ones for the same seed
    (Hypothesis' generation phase with a fixed seed and no example database)."""
    from hypothesis import HealthCheck, Phase, given, seed as hypothesis_seed, settings

    drawn: list[dict[str, Any]] = []

    @hypothesis_seed(seed)
    @settings(max_examples=count, phases=(Phase.generate,), database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(scenarios(**bounds))
    def collect(document):
        drawn.append(document)

    collect()
    return drawn[:count]
