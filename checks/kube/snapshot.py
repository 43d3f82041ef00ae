"""From a real cluster in: a ``kubectl get nodes,pods,priorityclasses,pdb -A -o yaml`` snapshot
turned into a scenario (docs/scenarios.md, "From your cluster"; issue 16).

What is imported: Nodes (``status.allocatable`` cpu and memory, the KEP-5836 opt-out
``spec.podPreemptionPolicy.disableResizePreemption``), Pods (desired, allocated and actual totals
computed by the model's own ``PodRequests``, ``checks/kube/objects.py``; ``spec.nodeName``; a
pending pod's ``status.nominatedNodeName``; the resize conditions ``PodResizePending``
Deferred/Infeasible and ``PodResizeInProgress``; priority from ``spec.priority``, else its
``priorityClassName``'s value, else the ``globalDefault`` class's, else 0, as the Priority admission
plugin resolves it; ``preemptionPolicy`` from the pod, else its class) and PriorityClasses (only
to resolve those). Pods are declared in order of ``status.startTime`` (then file order), since the
model breaks start-time ties by declaration order. Pods of every owner are kept (DaemonSet and static
pods hold capacity on their node as any other).

PodDisruptionBudgets with an integer ``minAvailable`` and a ``matchLabels`` selector become the
scenario's budgets (``checks/kube/budgets.py``).

Left out, and reported in ``ImportSummary.line()`` rather than dropped silently: every other kind
(Services, ...), budgets the scenario cannot hold (``checks/kube/budgets.py``), pods that ended (Succeeded, Failed)
or are terminating, pods on nodes not kept, limits and QoS classes (the scenario format has no
field for them), resources other than cpu and memory, a node's taints and ``unschedulable``, stale
resize conditions the sizes contradict, and a nomination to a node not kept. A resize the kubelet
has not decided yet (spec requests differ from the allocation and no ``PodResizePending``) starts
at the allocation, and the request becomes an environment resize.

A snapshot has no future: the caller adds the environment (resizes, arrivals, deletions, recreations, maxEvents)
in the scenario format; a pod may be named there by its scenario name or as ``namespace/name``. A
pod name used in several namespaces becomes ``namespace.name`` (a DNS-1123 subdomain may hold a dot).
The result is checked by the scenario loader, so what is written always loads.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from kepcheck.spec.kubernetes.api_validation import dns1123_subdomain_problem
from kepcheck.spec.kubernetes.quantities import format_quantity
from kepcheck.spec.language.fields import ScenarioError
from kepcheck.spec.language.loader import parse_scenario
from kepcheck.spec.language.priority_classes import DEFAULT_PREEMPTION_POLICY, PriorityClass, resolve_class
from kepcheck.spec.language.yaml_safe import InputError, load_documents, read_text
from kepcheck.spec.limits import SNAPSHOT_MAX_BYTES, SNAPSHOT_MAX_NODES, cut, shown

from kepcheck.checks.kube.budgets import budgets_from_objects
from kepcheck.checks.kube.objects import Fields, read_pod_sizes

__all__ = ["ImportSummary", "read_objects", "scenario_from_objects", "EXHAUSTIVE_PODS", "EXHAUSTIVE_NODES",
           "EXHAUSTIVE_EVENTS"]

# What the explicit engine explores well within a minute on the 2-core machine (docs/scenarios.md, "From your
# cluster"; measured 2026-12-03, all properties under alpha-1.37, other jobs on the machine): 12 pods
# on 4 nodes with 4 environment events, 21,888 states in 15 s; 16 pods on 4 nodes, 94,376 states and
# not finished at a 60 s budget.
EXHAUSTIVE_PODS, EXHAUSTIVE_NODES, EXHAUSTIVE_EVENTS = 12, 4, 4
ENDED_PHASES = ("Succeeded", "Failed")


@dataclass
class ImportSummary:
    """What was kept, and what was left out (counts by kind or field), renamed or moved."""

    nodes: int = 0
    pods: int = 0
    pending: int = 0
    arrivals: int = 0  # pods the environment may create
    events: int = 0  # environment events one run may use
    dropped: Counter = field(default_factory=Counter)
    renamed: list = field(default_factory=list)  # (namespace/name, scenario name)
    moved: list = field(default_factory=list)  # scenario names of pods whose undecided resize became an environment resize

    def line(self) -> str:
        """One line: kept, dropped (sorted by what), renamed and moved."""
        kept = f"kept {self.nodes} node{'s' * (self.nodes != 1)}, {self.pods} pod{'s' * (self.pods != 1)}"
        parts = [kept + (f" ({self.pending} pending)" if self.pending else "")]
        dropped = ", ".join(f"{what} {count}" for what, count in sorted(self.dropped.items()) if count)
        parts.append(f"dropped: {dropped}" if dropped else "dropped: nothing")
        if self.renamed:
            parts.append("renamed (name used in several namespaces): "
                         + ", ".join(f"{old} -> {new}" for old, new in self.renamed))
        if self.moved:
            parts.append("undecided resize moved to environment.resizes: " + ", ".join(self.moved))
        return "; ".join(parts)

    def too_big(self) -> bool:
        """More pods (arrivals included) or nodes than the explicit engine explores in about a minute."""
        return (self.pods + self.arrivals > EXHAUSTIVE_PODS or self.nodes > EXHAUSTIVE_NODES
                or self.events > EXHAUSTIVE_EVENTS)


def read_objects(path: str | Path) -> list[dict]:
    """The Kubernetes objects of a snapshot file: a ``List`` (``items``), a multi-document YAML
    stream of objects, or both; read within ``spec.limits.SNAPSHOT_*``. ``ScenarioError`` naming the
    file and where for anything else."""
    source = str(path)
    try:
        documents = load_documents(read_text(path, SNAPSHOT_MAX_BYTES, "a cluster snapshot"), SNAPSHOT_MAX_NODES)
    except InputError as error:
        raise ScenarioError(source, error.where, error.problem) from None
    objects: list[dict] = []
    for d, document in enumerate(documents):
        where = f"document {d + 1}" if len(documents) > 1 else ""
        if document is None:
            continue
        if not isinstance(document, dict):
            raise ScenarioError(source, where, f"expected a Kubernetes object or List, got {shown(document)}")
        kind = document.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and "items" in document:
            items = document["items"] or []
            if not isinstance(items, list):
                raise ScenarioError(source, f"{where} items".strip(), f"expected a list, got {shown(items)}")
            objects.extend(items)
        else:
            objects.append(document)
    if not objects:
        raise ScenarioError(source, "", "no Kubernetes objects in the file")
    return objects


@dataclass
class _Snapshot:
    """The objects sorted by kind, each with its path (``items[i]``)."""

    nodes: list
    pods: list
    classes: dict  # PriorityClass name -> spec.language.priority_classes.PriorityClass
    budgets: list = field(default_factory=list)  # (where, PodDisruptionBudget)


def _sort(fields: Fields, objects: list, summary: ImportSummary) -> _Snapshot:
    snapshot = _Snapshot([], [], {})
    for i, raw in enumerate(objects):
        where = f"items[{i}]"
        obj = fields.item(raw, where)
        kind = fields.string(obj, "kind", where, required=True)
        if kind == "Node":
            snapshot.nodes.append((where, obj))
        elif kind == "Pod":
            snapshot.pods.append((where, obj))
        elif kind == "PodDisruptionBudget":
            snapshot.budgets.append((where, obj))
        elif kind == "PriorityClass":
            name = fields.string(fields.mapping(obj, "metadata", where, True), "name", f"{where}.metadata", True)
            value = fields.integer(obj, "value", where)
            if value is None:
                fields.fail(f"{where}.value", "required field is missing")
            policy = fields.string(obj, "preemptionPolicy", where) or DEFAULT_PREEMPTION_POLICY
            snapshot.classes[name] = PriorityClass(name, value, obj.get("globalDefault") is True, policy)
        else:
            summary.dropped[cut(kind)] += 1
    return snapshot


def _name(fields: Fields, obj: dict, where: str, kind: str) -> str:
    name = fields.string(fields.mapping(obj, "metadata", where, True), "name", f"{where}.metadata", True)
    problem = dns1123_subdomain_problem(name)
    if problem:
        fields.fail(f"{where}.metadata.name", f"{shown(name)} is not a valid {kind} name: {problem}")
    return name


def _quantities(vector: dict) -> dict:
    return {resource: format_quantity(amount, resource) for resource, amount in vector.items()}


def _node_entry(fields: Fields, where: str, node: dict, summary: ImportSummary) -> dict:
    """A scenario node: allocatable (cpu, memory) and the resize opt-out's owners."""
    name = _name(fields, node, where, "node")
    fields.other_resources.clear()
    allocatable = fields.resources(fields.mapping(node, "status", where), "allocatable", f"{where}.status")
    if not allocatable:
        fields.fail(f"{where}.status.allocatable", "no cpu or memory allocatable")
    for resource in sorted(fields.other_resources):
        summary.dropped[f"Node allocatable {resource}"] += 1
    spec = fields.mapping(node, "spec", where)
    for what in ("taints", "unschedulable"):
        if spec.get(what):
            summary.dropped[f"Node {what}"] += 1
    policy = fields.mapping(spec, "podPreemptionPolicy", f"{where}.spec")
    owners = fields.sequence(policy, "disableResizePreemption", f"{where}.spec.podPreemptionPolicy")
    entry = {"name": name, "allocatable": _quantities(allocatable)}
    if owners:
        entry["disableResizePreemption"] = list(owners)
    return entry


def _priority(fields: Fields, spec: dict, where: str, classes: dict) -> tuple[int, str]:
    """``spec.priority`` (set by the Priority admission plugin), else the value of the pod's
    ``priorityClassName`` (or of a built-in system class), else of the ``globalDefault`` class (the
    lowest value if several are), else 0; ``preemptionPolicy`` from the pod, else its class."""
    class_name = fields.string(spec, "priorityClassName", f"{where}.spec")
    found = resolve_class(classes, class_name)
    priority = fields.integer(spec, "priority", f"{where}.spec")
    if priority is None and class_name is not None and found is None:
        fields.fail(f"{where}.spec.priorityClassName", f"PriorityClass {shown(class_name)} is not in the snapshot "
                    "and the pod has no spec.priority")
    if priority is None:
        priority = found.value if found else 0
    policy = fields.string(spec, "preemptionPolicy", f"{where}.spec") or (found.preemption_policy if found else DEFAULT_PREEMPTION_POLICY)
    return priority, policy


def _same(a: dict, b: dict) -> bool:
    """Equal as vectors (an absent resource is 0)."""
    return all(a.get(r, 0) == b.get(r, 0) for r in set(a) | set(b))


def _resize_fields(sizes, entry: dict, summary: ImportSummary) -> dict | None:
    """Fill a bound pod's ``allocated``, ``actual`` and ``resize``; returns the desired requests of
    a resize the kubelet has not decided yet (the pod then starts at its allocation)."""
    requests, allocated, actual = sizes.desired, sizes.allocated, sizes.actual
    undecided, resize = None, None
    if sizes.pending_reason in ("Deferred", "Infeasible") and not _same(requests, allocated):
        resize = sizes.pending_reason  # for an older generation too: the scheduler reads the reason only
        if sizes.pending_behind:
            summary.dropped[f"Pod condition PodResizePending {resize} of an older generation (taken as current)"] += 1
    elif sizes.pending_reason is not None:
        reason = cut(sizes.pending_reason) or "without reason"
        summary.dropped[f"Pod condition PodResizePending {reason} (stale or undecided)"] += 1
    if resize is None and not _same(requests, allocated):
        undecided, requests = requests, allocated
    if resize is None and not _same(allocated, actual):
        resize = "InProgress"
    elif sizes.in_progress and _same(allocated, actual):
        summary.dropped["Pod condition PodResizeInProgress (stale)"] += 1
    entry["requests"] = _quantities(requests)
    if not _same(allocated, requests):
        entry["allocated"] = _quantities(allocated)
    if not _same(actual, allocated):
        entry["actual"] = _quantities(actual)
    if resize is not None:
        entry["resize"] = resize
    return undecided


def _dropped_pod(fields: Fields, pod: dict, where: str, node: str | None, kept_nodes: set, pending: bool) -> str | None:
    """Why a pod is left out (``None``: kept)."""
    phase = fields.string(fields.mapping(pod, "status", where), "phase", f"{where}.status")
    if phase in ENDED_PHASES:
        return f"Pod {phase}"
    if fields.mapping(pod, "metadata", where).get("deletionTimestamp") is not None:
        return "Pod terminating"
    if node is not None and node not in kept_nodes:
        return "Pod on a node not kept"
    if node is None and not pending:
        return "Pod pending (--no-pending)"
    return None


def _pod_entry(fields: Fields, where: str, pod: dict, context: dict, summary: ImportSummary):
    """(namespace, name, scenario entry without its name, undecided resize), or ``None`` if dropped."""
    name = _name(fields, pod, where, "pod")
    namespace = fields.string(fields.mapping(pod, "metadata", where), "namespace", f"{where}.metadata") or "default"
    problem = dns1123_subdomain_problem(namespace) or ("a namespace is a DNS-1123 label: no '.'" if "." in namespace
                                                       else None)
    if problem:
        fields.fail(f"{where}.metadata.namespace", f"{shown(namespace)} is not a valid namespace: {problem}")
    spec = fields.mapping(pod, "spec", where, True)
    node = fields.string(spec, "nodeName", f"{where}.spec")
    why = _dropped_pod(fields, pod, where, node, context["nodes"], context["pending"])
    if why is not None:
        summary.dropped[why] += 1
        return None
    fields.other_resources.clear()
    sizes = read_pod_sizes(fields, pod, where)
    for resource in sorted(fields.other_resources):
        summary.dropped[f"Pod resource {resource}"] += 1
    summary.dropped["Pod limits"] += sizes.has_limits
    summary.dropped[f"Pod qosClass {sizes.qos}"] += 1
    priority, policy = _priority(fields, spec, where, context["classes"])
    entry: dict = {"node": node} if node is not None else {}
    entry["priority"] = priority
    if policy != DEFAULT_PREEMPTION_POLICY:
        entry["preemptionPolicy"] = policy
    undecided = None
    if node is not None:
        undecided = _resize_fields(sizes, entry, summary)
    else:
        entry["requests"] = _quantities(sizes.desired)
        nominated = fields.string(fields.mapping(pod, "status", where), "nominatedNodeName", f"{where}.status")
        if nominated in context["nodes"]:
            entry["nominatedNodeName"] = nominated
        elif nominated is not None:
            summary.dropped["Pod nominatedNodeName to a node not kept"] += 1
    return namespace, name, entry, undecided


def _start_key(pod: dict) -> tuple:
    started = (pod.get("status") or {}).get("startTime") if isinstance(pod.get("status"), dict) else None
    return (0, started) if isinstance(started, str) else (1, "")


def _scenario_names(fields: Fields, kept: list, summary: ImportSummary) -> dict:
    """``namespace/name`` -> scenario name: the pod's own name, or ``namespace.name`` when the name
    is used in several namespaces among the pods kept."""
    namespaces: dict[str, set] = {}
    for namespace, name, _, _, _ in kept:
        namespaces.setdefault(name, set()).add(namespace)
    names, taken = {}, set()
    for namespace, name, _, _, where in kept:
        scenario_name = name if len(namespaces[name]) == 1 else f"{namespace}.{name}"
        problem = dns1123_subdomain_problem(scenario_name)
        if problem or scenario_name in taken:
            fields.fail(f"{where}.metadata.name", f"cannot name pod {namespace}/{name} uniquely in the scenario "
                        f"({scenario_name!r}: {problem or 'already used'})")
        if scenario_name != name:
            summary.renamed.append((f"{namespace}/{name}", scenario_name))
        names[f"{namespace}/{name}"] = scenario_name
        taken.add(scenario_name)
    return names


def _environment(environment: dict | None, names: dict, undecided: list) -> dict:
    """The caller's environment with ``namespace/name`` references turned into scenario names, and
    the undecided resizes added (unless the caller already offers the same one)."""
    result = {key: (list(value) if isinstance(value, list) else value) for key, value in (environment or {}).items()}
    if isinstance(result.get("resizes"), list):
        result["resizes"] = [dict(r, pod=names.get(r.get("pod"), r.get("pod"))) if isinstance(r, dict) else r
                             for r in result["resizes"]]
    for key in ("deletions", "recreations"):
        if isinstance(result.get(key), list):
            result[key] = [names.get(d, d) if isinstance(d, str) else d for d in result[key]]
    for pod, requests in undecided:
        resizes = result.setdefault("resizes", [])
        offered = {"pod": pod, "requests": _quantities(requests)}
        if isinstance(resizes, list) and offered not in resizes:
            resizes.append(offered)
    return result


def _menu(environment: dict) -> tuple[int, int]:
    """(arrivals, events one run may use) of a valid environment."""
    arrivals = len(environment.get("arrivals") or ())
    menu = (arrivals + len(environment.get("resizes") or ()) + len(environment.get("deletions") or ())
            + int(environment.get("schedulerRestarts") or 0) + len(environment.get("recreations") or ()))
    return arrivals, min(menu, environment.get("maxEvents", menu))


def _kept_nodes(fields: Fields, snapshot: _Snapshot, nodes: list[str] | None, summary: ImportSummary) -> list:
    """The scenario's nodes: those named (in the order given), else every Node of the snapshot."""
    entries = [(where, _node_entry(fields, where, node, summary)) for where, node in snapshot.nodes]
    if not entries:
        fields.fail("", "no Node in the snapshot (kubectl get nodes,pods,priorityclasses,pdb -A -o yaml)")
    if nodes is None:
        return entries
    by_name = {entry["name"]: (where, entry) for where, entry in entries}
    for name in nodes:
        if name not in by_name:
            fields.fail("--node", f"no Node {shown(name)} in the snapshot (it has {', '.join(sorted(by_name))})")
    summary.dropped["Node not kept"] += len(set(by_name) - set(nodes))
    return [by_name[name] for name in dict.fromkeys(nodes)]


def scenario_from_objects(objects: list[dict], *, name: str, nodes: list[str] | None = None,
                          environment: dict | None = None, pending: bool = True,
                          source: str = "<snapshot>") -> tuple[dict, ImportSummary]:
    """The scenario (a YAML-ready dict in the format of ``spec/language/loader.py``) of a snapshot's
    objects, and what was left out. ``nodes``: the nodes to keep (default all); ``environment``: the
    scenario's ``environment`` mapping; ``pending``: keep pending pods. ``ScenarioError`` naming
    ``source`` and the object's path (``items[i]...``) for anything the scenario cannot hold."""
    summary = ImportSummary()
    fields = Fields(source)
    snapshot = _sort(fields, objects, summary)
    node_entries = _kept_nodes(fields, snapshot, nodes, summary)
    context = {"nodes": {entry["name"] for _, entry in node_entries}, "pending": pending, "classes": snapshot.classes}
    kept = []
    for where, pod in sorted(snapshot.pods, key=lambda wp: _start_key(wp[1])):
        found = _pod_entry(fields, where, pod, context, summary)
        if found is not None:
            kept.append((*found, where))
    names = _scenario_names(fields, kept, summary)
    pods, undecided, origins = [], [], {}
    for namespace, pod_name, entry, requests, where in kept:
        scenario_name = names[f"{namespace}/{pod_name}"]
        origins[f"pods[{len(pods)}]"] = f"{where} (Pod {namespace}/{pod_name})"
        pods.append({"name": scenario_name, **entry})
        if requests is not None:
            undecided.append((scenario_name, requests))
            summary.moved.append(scenario_name)
    origins.update({f"nodes[{k}]": f"{where} (Node {entry['name']})" for k, (where, entry) in enumerate(node_entries)})
    summary.nodes, summary.pods = len(node_entries), len(pods)
    summary.pending = sum(1 for pod in pods if "node" not in pod)
    document = {"name": name, "description": f"Imported from a cluster snapshot: {summary.nodes} node(s), "
                f"{summary.pods} pod(s).", "nodes": [entry for _, entry in node_entries], "pods": pods}
    objects_at = dict(snapshot.pods)
    labelled = [(namespace, fields.mapping(fields.mapping(objects_at[where], "metadata", where), "labels",
                                           f"{where}.metadata"), names[f"{namespace}/{pod_name}"])
                for namespace, pod_name, _, _, where in kept]
    budgets = budgets_from_objects(fields, snapshot.budgets, labelled, summary)
    if budgets:
        document["podDisruptionBudgets"] = budgets
    env = _environment(environment, names, undecided)
    if env:
        document["environment"] = env
        summary.arrivals, summary.events = _menu(env)
    _check_loads(document, source, origins)
    return document, summary


def _check_loads(document: dict, source: str, origins: dict) -> None:
    """The scenario loader's verdict on the result, its field traced back to the snapshot's object."""
    try:
        parse_scenario(document, source)
    except ScenarioError as error:
        head = error.where.split(".")[0]
        where = f"{origins[head]}: scenario {error.where}" if head in origins else f"scenario {error.where}"
        raise ScenarioError(source, where, error.problem) from None
