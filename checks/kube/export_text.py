"""The text artefacts of ``kepcheck export`` (``checks/kube/export.py``) besides the manifests:
``steps.sh`` (the user's steps as ``kubectl`` commands, every other step as the observation a real
cluster should show), the pytest regression for this project and the README of the export; the Go
test case is ``checks/kube/export_go.py``.

A real cluster cannot be forced into an interleaving: only the user's actions (``RequestResize``,
``CreatePod``, ``DeletePod``, ``RestartScheduler``; the ``user`` actor of ``spec/kep/transitions.py``)
become commands. The scheduler's and the kubelet's steps are comments that say what to observe —
the step in words (``checks/outputs/describe.py``) and the ``kubectl`` query that shows it (the pod's
conditions, ``spec.nodeName``, ``status.nominatedNodeName``, the allocated resources, its events).
The trace's breach closes the script, in the property's own arithmetic (``checks/outputs/breach.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

from kepcheck.spec.kep.vocabulary import Actor

from kepcheck.checks.kube.export_go import go_test
from kepcheck.checks.kube.manifests import (
    Export, breach_words, initial_objects, initial_pods, must_reach, pod_object, resize_patch, to_yaml,
)
from kepcheck.checks.outputs.describe import describe_trace
from kepcheck.checks.outputs.itf import state_values

__all__ = ["steps_script", "pytest_regression", "readme", "go_test", "EXPORT_HEADING"]

EXPORT_HEADING = "# kepcheck export"  # the first line of every exported README.md


def _heredoc(obj: dict) -> list[str]:
    return ["kubectl create -f - <<'EOF'", *to_yaml(obj).rstrip("\n").split("\n"), "EOF"]


def _setup(export: Export) -> list[str]:
    """Nodes and PriorityClasses, then every initial pod at the size the kubelet admitted, then the
    resizes that leave it Deferred/Infeasible (the state the trace starts from)."""
    ctx = export.ctx
    lines = ["# --- setup: the initial state (manifests.yaml), built in an order a cluster can follow ---"]
    for obj in initial_objects(ctx, export.trace):
        if obj["kind"] == "Pod":
            continue
        lines += _heredoc({key: value for key, value in obj.items() if key != "status"})
        if obj["kind"] == "Node":
            status = json.dumps({"status": obj["status"]}, separators=(",", ":"))
            lines.append(f"kubectl patch node {obj['metadata']['name']} --subresource status --type merge "
                         f"--patch '{status}'")
    resized = []
    for index, record in initial_pods(ctx, export.trace):
        name = ctx.names[index]
        pod = pod_object(ctx, index, requests=record.allocated if record.node else None, record=record)
        pod.pop("status")
        lines += [f"# {must_reach(ctx, record, name)}", *_heredoc(pod)]
        if record.node and record.desired != record.allocated:
            resized.append((name, record))
    for name, record in resized:
        lines += [f"kubectl wait --for=condition=Ready pod/{name} --timeout=120s",
                  f"kubectl patch pod {name} --subresource resize --patch '{resize_patch(ctx, record.desired)}'"]
        if record.podResizePending:
            lines.append(f"# expect: {name} gets PodResizePending={record.podResizePending} (the kubelet's decision)")
    return lines


def _user_command(export: Export, action, after) -> list[str]:
    ctx = export.ctx
    pod = action.param("pod")
    if action.name == "RequestResize":
        vector = after.pods[ctx.names.index(pod)].desired
        return [f"kubectl patch pod {pod} --subresource resize --patch '{resize_patch(ctx, vector)}'"]
    if action.name in ("CreatePod", "RecreatePod"):  # a recreation: the controller's new pod, same name
        return _heredoc(pod_object(ctx, ctx.names.index(pod)))
    if action.name == "DeletePod":
        return [f"kubectl delete pod {pod} --wait=false"]
    return ["# the scheduler restarts and loses what it held only in memory:",
            "kubectl -n kube-system delete pod -l component=kube-scheduler"]


def _observations(name: str, old, new) -> list[str]:
    """The ``kubectl`` queries that show how pod ``name`` changed from record ``old`` to ``new``."""
    get = f"kubectl get pod {name} -o jsonpath="
    found = []
    if new.preemptedFor and new.preemptedFor != old.preemptedFor:
        found.append(get + "'{.status.conditions[?(@.type==\"DisruptionTarget\")].reason}'  # PreemptionByScheduler")
    if new.podResizePending != old.podResizePending:
        found.append(get + "'{.status.conditions[?(@.type==\"PodResizePending\")].reason}'"
                     + f"  # {new.podResizePending or 'no condition'}")
    if new.podResizeInProgress != old.podResizeInProgress:
        found.append(get + "'{.status.conditions[?(@.type==\"PodResizeInProgress\")].status}'"
                     + f"  # {'True' if new.podResizeInProgress else 'no condition'}")
    if new.node != old.node:
        found.append(get + f"'{{.spec.nodeName}}'  # {new.node}")
    if new.nominatedNodeName != old.nominatedNodeName:
        found.append(get + f"'{{.status.nominatedNodeName}}'  # {new.nominatedNodeName or 'empty'}")
    if new.allocated != old.allocated or new.actual != old.actual:
        found.append(get + "'{.status.containerStatuses[0].allocatedResources}'")
    if new.phase != old.phase and new.phase == "Gone":
        found.append(f"kubectl get pod {name} --ignore-not-found  # nothing: {name} is gone")
    if new.phase != old.phase and new.phase.startswith("Failed"):
        found.append(get + "'{.status.reason}'  # OutOfcpu or OutOfmemory (kubectl get events shows the rejection)")
    return found


def _expected(export: Export, description, before, after) -> list[str]:
    ctx = export.ctx
    old, new = state_values(ctx, before, None)["pods"], state_values(ctx, after, None)["pods"]
    lines = [f"# {description.clause}"] + [f"#   {change}" for change in description.changes]
    for name in ctx.names:
        lines += [f"#   observe: {query}" for query in _observations(name, old[name], new[name])]
    return lines


def _step_lines(export: Export) -> list[str]:
    lines = ["", "# --- the trace: your steps as commands, the scheduler's and the kubelet's as what to observe ---"]
    steps = export.trace.steps
    for description in describe_trace(export.ctx, export.trace)[1:]:
        number, action = description.number, description.action
        user = description.actor == Actor.USER
        head = f"# step {number}: {action.label()} [{description.actor}]"
        lines += ["", head + ("" if user else " — expected, a cluster cannot be forced to take it")]
        lines += _expected(export, description, steps[number - 1][1], steps[number][1])
        if user:
            lines += _user_command(export, action, steps[number][1])
    if export.trace.loop is not None:
        lines.append(f"# ⟲ the last step is back in the state of step {export.trace.loop}: the steps after it repeat "
                     "forever")
    return lines


def steps_script(export: Export) -> str:
    """``steps.sh``: setup, the trace's steps, and the observation that shows the breach."""
    ctx = export.ctx
    head = ["#!/bin/sh", f"# {ctx.scenario.name} under {ctx.variant.name}: {export.property or 'trace'}, exported by "
            f"kepcheck from {Path(export.source).name}.", "# Run it against a test cluster (KWOK or kind; README.md): "
            "only your steps are commands, the rest says what to observe.", "set -eu", ""]
    tail = ["", "# --- the breach: what shows it (kepcheck's judgement, checks/outputs/breach.py) ---"]
    tail += [f"# {line}" for line in breach_words(export)]
    return "\n".join(head + _setup(export) + _step_lines(export) + tail) + "\n"


_JUDGE = {  # the regression's judgement per kind of property (checks.outputs.breach.judge_trace): same step
    "sometimes": """    (judgement,) = judge_trace(ctx, trace, [PROPERTY])
    assert judgement.step == STEP, f"the witness {PROPERTY} now holds first at step {judgement.step}, not {STEP}"
""",
    "violated": """    (judgement,) = judge_trace(ctx, trace, [PROPERTY])
    assert judgement.breach is not None, f"{PROPERTY} no longer fails along these steps"
    assert judgement.step == STEP, f"{PROPERTY} now fails at step {judgement.step}, not {STEP}"
""",
    "": """    assert len(trace) == len(LABELS)  # no property named: the steps must still replay
""",
}


def pytest_regression(export: Export) -> str:
    """``test_regression_<name>.py``: replay the labels and judge the property at the same step."""
    judge = "sometimes" if export.kind == "sometimes" else ("violated" if export.property else "")
    return f'''"""Regression: {export.property or 'a trace'} in {export.ctx.scenario.name} under {export.ctx.variant.name},
exported by kepcheck from {Path(export.source).name}. Run it from the kepcheck repository root:
    .venv/bin/python -m pytest -q PATH/test_regression_{export.name}.py
"""

{"from kepcheck.checks.outputs.breach import judge_trace" + chr(10) if judge else ""}from kepcheck.checks.result import closed_loop, replay
from kepcheck.checks.run import select_mutants, select_scenarios, select_variants
from kepcheck.model.context import Context

SCENARIO = {export.scenario!r}
VARIANT = {export.ctx.variant.name!r}
MUTANTS = {sorted(export.ctx.mutants)!r}
PROPERTY = {export.property!r}
KIND = {export.kind!r}
LABELS = {list(export.labels)!r}
LOOP = {export.trace.loop!r}
STEP = {export.step!r}


def test_regression_{export.name}():
    ctx = Context.build(select_scenarios([SCENARIO])[0], select_variants([VARIANT])[0], select_mutants(MUTANTS))
    trace = closed_loop(replay(ctx, LABELS), LOOP)
    assert trace.loop == LOOP
{_JUDGE[judge]}'''


def readme(export: Export) -> str:
    """``README.md`` of the export: what each file is, how to run it, what cannot be forced."""
    ctx = export.ctx
    verdict = "\n".join(f"    {line}" for line in breach_words(export))
    return f"""{EXPORT_HEADING}: {export.property or 'trace'} in `{ctx.scenario.name}` under `{ctx.variant.name}`

Exported by `kepcheck export {Path(export.source).name}` ({len(export.trace)} steps). kepcheck's verdict:

{verdict}

| file | what it is |
|---|---|
| `manifests.yaml` | the initial state as Kubernetes v1.37 objects: KWOK fake Nodes, PriorityClasses, Pods with the status the cluster must reach (the API server ignores `status` on create; a comment above each pod says what to reach) |
| `steps.sh` | builds that state, then runs your steps (`kubectl patch --subresource resize`, `create`, `delete`) and lists, as comments, what the scheduler and the kubelet should do and how to observe it; the breach at the end |
| `{export.name}_test.go` | a table-test case for `test/integration/scheduler/preemption/` in the shape of `TestDeferredResizePodPreemption` (`deferred_resize_preemption_test.go`): a starting point for an upstream regression test |
| `test_regression_{export.name}.py` | a pytest regression for kepcheck: replays the steps and asserts that {export.property or 'they still replay'}{' still holds first at the same step' if export.kind == 'sometimes' else (' still fails at the same step' if export.property else '')} (run it from the kepcheck repository root, or copy it into `tests/`) |

## Running it

- **KWOK** (fake nodes, no real kubelet): install KWOK in a cluster whose kube-scheduler runs with the
  feature gates `InPlacePodVerticalScaling` and `InPlacePodVerticalScalingSchedulerPreemption`
  (Kubernetes v1.37), then `sh steps.sh`. KWOK plays the kubelet with its stages (pods become
  Running, deleted pods go away); a kubelet's resize decisions (allocation, `PodResizePending`) are not
  among its default stages, so KWOK shows the scheduler's side: bindings, nominations, evictions.
- **kind** (real kubelets): give each node the allocatable of `manifests.yaml` (kubelet
  `systemReserved`/`kubeReserved`), drop the KWOK taint, toleration and annotations, and run the steps.
- **Integration test**: copy the Go file into `test/integration/scheduler/preemption/` of a
  kubernetes/kubernetes checkout; there is no kubelet there, so the case sets the status the kubelet
  would report (as `TestDeferredResizePodPreemption` does) and checks the scheduler's evictions.

## What cannot be forced

A real cluster cannot be forced into this interleaving: the scheduler's cycles, the kubelet's retries,
the 5-minute flush, admission and the end of a victim's termination happen when they happen. Only your
steps are commands; every other step is an expected observation, and the cluster may take another
(equally legal) order. `status` cannot be written by a manifest: a resize that is Deferred at the start
is reached by creating the pod at its allocated size and resizing it, and a resize still in progress
(allocated ≠ actual) only while the runtime is slow to apply it.
"""
