"""The Kubernetes objects of ``kepcheck export`` (``checks/kube/export.py``): a counterexample (or
witness) read from its ITF file and replayed (``load_export``), and its initial state as Kubernetes
v1.37 manifests (``manifests_yaml``); ``checks/kube/export_text.py`` writes the other artefacts.

The trace file is an ITF document as the review report writes it (``checks/outputs/itf.py``); its ``#meta``
names the scenario, variant and mutants, and its labels are replayed through the model
(``checks.result.replay``), so every state exported is one the model reaches. The property is the
first word of ``#meta.description`` ("NoExcessVictims violated", as ``checks/outputs/report.py`` and
``checks/outputs/trace_report.py`` write it); the breach is the property's own judgement
(``checks/breach.find_breach``).

The objects (``initial_objects``), in the shape ``kubectl get -o yaml`` prints:

* a Node per scenario node, for a fake-node setup such as KWOK: the annotation
  ``kwok.x-k8s.io/node: fake``, the taint ``kwok.x-k8s.io/node=fake:NoSchedule`` that keeps real pods
  away, and capacity = allocatable (KWOK, "Manage Nodes and Pods", "Create a Node":
  https://kwok.sigs.k8s.io/docs/user/kwok-manage-nodes-and-pods/); ``pods: 110`` so that the
  scheduler's pod-count check never decides; a node that opts out of resize preemption lists the owner
  ``kepcheck`` in ``spec.podPreemptionPolicy.disableResizePreemption`` (KEP-5836, v1.37 alpha field);
* a PriorityClass per distinct (priority, preemptionPolicy), named ``kepcheck-priority-<value>``
  (``-never`` for ``preemptionPolicy: Never``: the Priority admission plugin refuses a pod whose
  ``preemptionPolicy`` differs from its class's); the system priorities use the built-in classes
  ``system-cluster-critical`` and ``system-node-critical``, which are not written;
* a PodDisruptionBudget per budget of the scenario (``checks/kube/budgets.py``: ``minAvailable`` and a
  ``matchLabels`` selector on a label of its own, which the Pods it selects carry);
* a Pod per pod of the initial state: one container with the pod's requests (desired; for a pod the
  scenario gives containers, their totals: the containers themselves are not exported), ``nodeName``
  for a bound pod, ``priorityClassName``, ``preemptionPolicy``, the KWOK toleration, and the status the
  cluster must reach (allocated and actual resources, the resize conditions, ``nominatedNodeName``).
  The API server ignores ``status`` on create, so a comment above the pod says what the cluster must
  reach and ``steps.sh`` builds it (created at the allocated size, then resized).

Left out: limits (and so the QoS class a scenario's limits give), several containers (a pod is
written as one container with its PodRequests totals) and namespaces (the objects go to the current
namespace).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from kepcheck.spec.kep.properties import PROPERTIES, SOMETIMES
from kepcheck.spec.kep.vocabulary import Phase
from kepcheck.spec.kubernetes.api_validation import SYSTEM_PRIORITIES
from kepcheck.spec.kubernetes.quantities import format_quantity

from kepcheck.checks.kube.budgets import budget_objects, pod_budget_labels
from kepcheck.checks.outputs.breach import Breach, judge_trace
from kepcheck.checks.outputs.itf import state_values
from kepcheck.checks.result import Trace
from kepcheck.checks.traces import read_trace
from kepcheck.model.context import Context

__all__ = ["Export", "load_export", "judged", "initial_objects", "initial_pods", "pod_object",
           "quantities", "class_name", "must_reach", "to_yaml", "resize_patch", "breach_words", "manifests_yaml",
           "CONTAINER", "KWOK_KEY", "KWOK_TOLERATION", "OPT_OUT_OWNER"]

CONTAINER = "app"
IMAGE = "registry.k8s.io/pause:3.10"
KWOK_KEY = "kwok.x-k8s.io/node"  # KWOK's annotation and taint key for fake nodes
KWOK_TOLERATION = {"key": KWOK_KEY, "operator": "Exists", "effect": "NoSchedule"}
OPT_OUT_OWNER = "kepcheck"
_KINDS = {p.name: p.kind for p in PROPERTIES}
_SCOPES = {p.name: p.scope for p in PROPERTIES}


@dataclass(frozen=True)
class Export:
    """A trace file read and replayed: everything the exported files are written from."""

    source: str  # the trace file
    scenario: str  # as --scenario takes it: a shipped name or the scenario file
    ctx: Context
    labels: tuple
    trace: Trace
    property: str  # the catalog property the trace is about ("" when none is named or violated)
    kind: str  # its kind (always, sometimes, eventually), "" when unknown
    breach: Breach | None  # where an always- or eventually-property breaks (None for a witness)
    step: int | None  # the step the verdict is at: the breach's, or the first the witness holds at
    name: str  # scenario_variant_property, for file and test names


def _property_of(document: dict) -> str:
    meta = document.get("#meta") if isinstance(document.get("#meta"), dict) else {}
    words = str(meta.get("description", "")).split()
    return words[0] if words and words[0] in _KINDS else ""


def _snake(text: str) -> str:
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", text)
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def judged(ctx: Context, name: str, trace: Trace) -> tuple[str, Breach | None, int | None]:
    """(property, breach, step) of a trace (``checks.outputs.breach.judge_trace``): for a named
    always- or eventually-property its breach, for a sometimes-property the step its witness holds;
    with no name, the always-property that breaks first along the trace (as ``kepcheck replay``
    marks it), or ("", None, None) when none does."""
    if name:
        judgement = judge_trace(ctx, trace, [name])[0]
        return name, judgement.breach, judgement.step
    found = [j for j in judge_trace(ctx, trace) if j.breach is not None]
    if not found:
        return "", None, None
    first = min(found, key=lambda j: j.step)
    return first.property, first.breach, first.step


def load_export(path) -> Export:
    """Read the trace file at ``path`` through the one door (``checks.traces.read_trace``; its
    ``#meta`` must name the scenario and variant) and judge it; ``ItfError``/``SelectionError``/
    ``UsageError`` (one line, exit 2) for a file that is not a kepcheck trace or names an unknown setting."""
    read = read_trace(path, require_meta=True)
    name, breach, step = judged(read.ctx, _property_of(read.document), read.trace)
    stem = _snake(f"{read.ctx.scenario.name} {read.ctx.variant.name} {name or 'trace'}")
    return Export(read.source, read.scenario, read.ctx, tuple(a.label() for a in read.actions), read.trace, name,
                  _KINDS.get(name, ""), breach, step, stem)


# --- the objects ------------------------------------------------------------------------------------

def quantities(ctx: Context, vector) -> dict:
    """A model vector as a Kubernetes ResourceList (``{"cpu": "2", "memory": "1Gi"}``); zero entries
    are left out."""
    scenario = ctx.scenario
    return {name: format_quantity(value * unit, name)
            for name, value, unit in zip(scenario.resources, vector, scenario.units) if value}


def class_name(priority: int, policy: str) -> str:
    """The PriorityClass of a pod: ``kepcheck-priority-100``, ``kepcheck-priority-minus-5-never``."""
    if priority in SYSTEM_PRIORITIES:
        return SYSTEM_PRIORITIES[priority]
    value = f"minus-{-priority}" if priority < 0 else str(priority)
    return f"kepcheck-priority-{value}" + ("-never" if policy == "Never" else "")


def _priority_classes(ctx: Context) -> list[dict]:
    pairs = sorted({(pod.priority, pod.preemption_policy) for pod in ctx.scenario.pods
                    if pod.priority not in SYSTEM_PRIORITIES})
    return [{"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": class_name(*pair)},
             "value": pair[0], "preemptionPolicy": pair[1], "globalDefault": False,
             "description": f"kepcheck: priority {pair[0]}, preemptionPolicy {pair[1]}"} for pair in pairs]


def _node_object(ctx: Context, index: int) -> dict:
    spec = ctx.scenario.nodes[index]
    resources = {**quantities(ctx, spec.allocatable), "pods": "110"}
    node_spec: dict = {"taints": [{"key": KWOK_KEY, "value": "fake", "effect": "NoSchedule"}]}
    if spec.disable_resize_preemption:
        node_spec["podPreemptionPolicy"] = {"disableResizePreemption": [OPT_OUT_OWNER]}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": spec.name, "annotations": {"node.alpha.kubernetes.io/ttl": "0", KWOK_KEY: "fake"},
                         "labels": {"kubernetes.io/hostname": spec.name, "type": "kwok"}},
            "spec": node_spec, "status": {"capacity": dict(resources), "allocatable": dict(resources)}}


def _pod_status(ctx: Context, record) -> dict:
    if not record.node:
        status = {"phase": "Pending"}
        if record.nominatedNodeName:
            status["nominatedNodeName"] = record.nominatedNodeName
        return status
    conditions = [{"type": "PodScheduled", "status": "True"}]
    if record.podResizePending:
        conditions.append({"type": "PodResizePending", "status": "True", "reason": record.podResizePending})
    if record.podResizeInProgress:
        conditions.append({"type": "PodResizeInProgress", "status": "True"})
    container = {"name": CONTAINER, "image": IMAGE, "imageID": "", "ready": record.phase == "Running",
                 "restartCount": 0, "allocatedResources": quantities(ctx, record.allocated),
                 "resources": {"requests": quantities(ctx, record.actual)}}
    return {"phase": "Running" if record.phase == "Running" else "Pending", "conditions": conditions,
            "containerStatuses": [container]}


def pod_object(ctx: Context, index: int, requests=None, record=None) -> dict:
    """The Pod of ``ctx.names[index]`` with one container requesting ``requests`` (default: the
    scenario's desired size); bound to its node and with a status when ``record`` (the pod's
    ``checks.outputs.itf.state_values`` record) is given."""
    spec = ctx.scenario.pods[index]
    pod_spec: dict = {"containers": [{"name": CONTAINER, "image": IMAGE,
                                      "resources": {"requests": quantities(ctx, requests or spec.requests)}}],
                      "priorityClassName": class_name(spec.priority, spec.preemption_policy),
                      "preemptionPolicy": spec.preemption_policy, "tolerations": [dict(KWOK_TOLERATION)]}
    if record is not None and record.node:
        pod_spec["nodeName"] = record.node
    else:
        pod_spec["nodeSelector"] = {"type": "kwok"}
    metadata: dict = {"name": spec.name}
    labels = pod_budget_labels(ctx.scenario, spec.name)
    if labels:
        metadata["labels"] = labels
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec}
    if record is not None:
        pod["status"] = _pod_status(ctx, record)
    return pod


def initial_pods(ctx: Context, trace: Trace) -> list[tuple[int, object]]:
    """(index, ITF record) of every pod present in the trace's initial state, in declaration order."""
    init = trace.steps[0][1]
    records = state_values(ctx, init, None)["pods"]
    return [(i, records[ctx.names[i]]) for i, pod in enumerate(init.pods) if pod.phase != Phase.ABSENT]


def initial_objects(ctx: Context, trace: Trace) -> list[dict]:
    """Nodes, PriorityClasses, PodDisruptionBudgets and Pods of the trace's initial state (see the
    module's docstring)."""
    nodes = [_node_object(ctx, n) for n in ctx.node_range]
    pods = [pod_object(ctx, i, record=record) for i, record in initial_pods(ctx, trace)]
    return nodes + _priority_classes(ctx) + budget_objects(ctx.scenario) + pods


def must_reach(ctx: Context, record, name: str) -> str:
    """What the cluster must reach for a pod, in words (a manifest cannot set ``status``)."""
    if not record.node:
        nominated = f", status.nominatedNodeName {record.nominatedNodeName}" if record.nominatedNodeName else ""
        return f"{name} must be Pending (not bound){nominated}"
    allocated, actual = ctx.format(record.allocated), ctx.format(record.actual)
    words = f"{name} must be {record.phase} on {record.node} at {allocated} allocated"
    if record.actual != record.allocated:
        words += f", the runtime still at {actual} (PodResizeInProgress)"
    if record.desired != record.allocated:
        words += f", then resized to {ctx.format(record.desired)}"
        if record.podResizePending:
            words += f" and the kubelet reports PodResizePending={record.podResizePending}"
    return words


def resize_patch(ctx, vector) -> str:
    """The body of ``kubectl patch pod NAME --subresource resize --patch …`` for ``vector``."""
    container = {"name": CONTAINER, "resources": {"requests": quantities(ctx, vector)}}
    return json.dumps({"spec": {"containers": [container]}}, separators=(",", ":"))


def breach_words(export: Export) -> list[str]:
    """The trace's verdict in words: where the property breaks and its arithmetic, or where the
    witness holds."""
    if not export.property:
        return ["no property is named (#meta.description) and no always-property breaks along the trace"]
    if export.kind == SOMETIMES:
        where = f"at step {export.step}" if export.step is not None else "nowhere along the trace"
        return [f"{export.property} (a witness) holds {where}"]
    if export.breach is None:
        return [f"{export.property}: kepcheck finds no breach on this trace"]
    where = f"at step {export.step}" if export.step is not None else f"on the loop from step {export.trace.loop}"
    return [f"✗ {export.property} violated {where}:"] + [f"  {line}" for line in export.breach.lines]


def to_yaml(obj: dict) -> str:
    return yaml.safe_dump(obj, sort_keys=False, default_flow_style=False, allow_unicode=True)


def manifests_yaml(export: Export) -> str:
    """``manifests.yaml``: every initial object, one YAML document each; above each pod a comment
    saying what the cluster must reach."""
    ctx = export.ctx
    header = (f"# The initial state of {ctx.scenario.name} (variant {ctx.variant.name}) as Kubernetes v1.37 objects,\n"
              f"# exported by kepcheck from {Path(export.source).name}. Nodes are KWOK fake nodes; status is what\n"
              "# the cluster must reach (the API server ignores it on create: steps.sh builds it).\n")
    records = dict(initial_pods(ctx, export.trace))
    parts = [header]
    for obj in initial_objects(ctx, export.trace):
        comment = ""
        if obj["kind"] == "Pod":
            index = ctx.names.index(obj["metadata"]["name"])
            comment = f"# {must_reach(ctx, records[index], ctx.names[index])}\n"
        parts.append(f"---\n{comment}{to_yaml(obj)}")
    return "".join(parts)
