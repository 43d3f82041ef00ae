"""The Go table-test case of ``kepcheck export`` (``checks/kube/export.py``): a starting point for an
upstream regression test, in the shape of the scheduler's integration test for KEP-5836,
``TestDeferredResizePodPreemption`` in kubernetes/kubernetes
``test/integration/scheduler/preemption/deferred_resize_preemption_test.go``: a table of cases (nodes
and their capacity, the node's ``podPreemptionPolicy``, existing pods built with ``initPausePod``, the
expected evictions), one API server and scheduler for the table, the feature gates
``InPlacePodVerticalScaling`` and ``InPlacePodVerticalScalingSchedulerPreemption``.

An integration test has no kubelet, so, as the upstream test does, the case writes the status the
kubelet would report (``podStatuses``: allocated and actual resources, ``PodResizePending``) with
``UpdateStatus``; the user's steps become API calls (the ``resize`` subresource, create, delete);
the scheduler's and the kubelet's steps are logged expectations; the evictions are the pods the trace
evicts, waited for with ``podIsGettingEvicted``. The text is gofmt's canonical form (checked by the
tests with Debian's gofmt): keyed elements on single lines are aligned in runs, as go/printer aligns
them.

Left out: the design variants that upstream does not have (the case says which variant it comes
from); a restarted scheduler (logged: the test's scheduler runs in process).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from kepcheck.checks.kube.manifests import Export, breach_words, initial_pods, quantities, resize_patch
from kepcheck.checks.outputs.describe import describe_trace

__all__ = ["go_test", "go_string", "test_function_name"]

_RESOURCES = {"cpu": "v1.ResourceCPU", "memory": "v1.ResourceMemory"}


def go_string(text: str) -> str:
    """A Go interpreted string literal (JSON's escapes are Go's; UTF-8 stays as it is)."""
    return json.dumps(text, ensure_ascii=False)


def test_function_name(export: Export) -> str:
    return "TestKepcheck" + "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", export.name) if part)


def _keyed(entries: list, indent: int) -> list[str]:
    """``key: value,`` lines; a value is a string (one line) or a list of lines (a multi-line value
    whose first line follows the key). Runs of one-line entries are aligned, as gofmt aligns them."""
    tabs = "\t" * indent
    lines, run = [], []

    def flush():
        width = max((len(key) for key, _ in run), default=0) + 1
        lines.extend(f"{tabs}{(key + ':').ljust(width)} {value}," for key, value in run)
        run.clear()

    for key, value in entries:
        if isinstance(value, str):
            run.append((key, value))
            continue
        flush()
        lines.append(f"{tabs}{key}: {value[0]}")
        lines.extend(value[1:-1])
        lines.append(f"{value[-1]},")
    flush()
    return lines


def _resource_list(ctx, vector) -> str:
    items = ", ".join(f"{_RESOURCES[name]}: resource.MustParse({go_string(q)})"
                      for name, q in quantities(ctx, vector).items())
    return f"v1.ResourceList{{{items}}}"


def _node_entries(export: Export) -> list[str]:
    ctx = export.ctx
    lines = []
    for node in ctx.scenario.nodes:
        capacity = ", ".join([f"v1.ResourcePods: {go_string('110')}"] + [
            f"{_RESOURCES[name]}: {go_string(q)}" for name, q in quantities(ctx, node.allocatable).items()])
        opt_out = ', disableResizePreemption: []string{"kepcheck"}' if node.disable_resize_preemption else ""
        lines.append(f"\t\t\t\t{{name: {go_string(node.name)}, capacity: map[v1.ResourceName]string{{{capacity}}}"
                     f"{opt_out}}},")
    return lines


def _pause_pod(export: Export, index: int, record, indent: int) -> list[str]:
    ctx = export.ctx
    spec = ctx.scenario.pods[index]
    tabs = "\t" * indent
    requests = record.desired if record is not None else spec.requests
    entries = [("Name", go_string(spec.name))]
    if record is not None and record.node:
        entries.append(("NodeName", go_string(record.node)))
    policy = "v1.PreemptNever" if spec.preemption_policy == "Never" else "v1.PreemptLowerPriority"
    entries += [("Priority", f"ptr.To[int32]({spec.priority})"), ("PreemptionPolicy", f"ptr.To({policy})"),
                ("Resources", f"&v1.ResourceRequirements{{Requests: {_resource_list(ctx, requests)}}}")]
    return [f"{tabs}initPausePod(&testutils.PausePodConfig{{", *_keyed(entries, indent + 1), f"{tabs}}}),"]


def _status_entries(export: Export) -> list[str]:
    ctx = export.ctx
    lines = []
    for index, record in initial_pods(ctx, export.trace):
        if not record.node:
            continue
        conditions = []
        if record.podResizePending:
            conditions.append(f"{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: "
                              f"{go_string(record.podResizePending)}}}")
        if record.podResizeInProgress:
            conditions.append("{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue}")
        lines.append(f"\t\t\t\t{{pod: {go_string(ctx.names[index])}, "
                     f"allocated: {_resource_list(ctx, record.allocated)}, actual: {_resource_list(ctx, record.actual)}, "
                     f"conditions: []v1.PodCondition{{{', '.join(conditions)}}}}},")
    return lines


def _step_entries(export: Export) -> list[str]:
    ctx = export.ctx
    lines = []
    for description in describe_trace(ctx, export.trace)[1:]:
        action, after = description.action, export.trace.steps[description.number][1]
        pod = action.param("pod") or ""
        patch = ""
        if action.name == "RequestResize":
            patch = resize_patch(ctx, after.pods[ctx.names.index(pod)].desired)
        expect = "; ".join([description.clause, *description.changes])
        lines.append(f"\t\t\t\t{{actor: {go_string(str(description.actor))}, action: {go_string(action.name)}, "
                     f"pod: {go_string(pod)}, patch: {go_string(patch)}, expect: {go_string(expect)}}},")
    return lines


def _evicted(export: Export) -> list[str]:
    names = []
    for _, state in export.trace.steps:
        names += [export.ctx.names[i] for i, pod in enumerate(state.pods)
                  if pod.preempted_by >= 0 and export.ctx.names[i] not in names]
    return names


def _block(opening: str, lines: list[str]):
    """A multi-line composite value for ``_keyed``, or ``nil`` when it has no element."""
    return [opening, *lines, "\t\t\t}"] if lines else "nil"


def _case(export: Export) -> list[str]:
    ctx = export.ctx
    existing = [line for index, record in initial_pods(ctx, export.trace)
                for line in _pause_pod(export, index, record, 4)]
    arrivals = [line for index, pod in enumerate(ctx.scenario.pods) if pod.arrival
                for line in _pause_pod(export, index, None, 4)]
    evicted = ", ".join(go_string(name) for name in _evicted(export))
    entries = [("name", go_string(f"{ctx.scenario.name} under {ctx.variant.name}: {export.property or 'trace'}")),
               ("variant", go_string(ctx.variant.name)),
               ("nodes", _block("[]nodeSpec{", _node_entries(export))),
               ("existingPods", _block("[]*v1.Pod{", existing)),
               ("podStatuses", _block("[]statusSpec{", _status_entries(export))),
               ("arrivals", _block("[]*v1.Pod{", arrivals)),
               ("steps", _block("[]stepSpec{", _step_entries(export))),
               ("expectEvictedNames", f"[]string{{{evicted}}}")]
    return ["\t\t{", *_keyed(entries, 3), "\t\t},"]


_HEADER = """/*
{comment}
*/

package preemption

import (
\t"testing"
\t"time"

\tv1 "k8s.io/api/core/v1"
\t"k8s.io/apimachinery/pkg/api/resource"
\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
\t"k8s.io/apimachinery/pkg/types"
\t"k8s.io/apimachinery/pkg/util/wait"
\tutilfeature "k8s.io/apiserver/pkg/util/feature"
\tfeaturegatetesting "k8s.io/component-base/featuregate/testing"
\t"k8s.io/kubernetes/pkg/features"
\tst "k8s.io/kubernetes/pkg/scheduler/testing"
\ttestutils "k8s.io/kubernetes/test/integration/util"
\t"k8s.io/utils/ptr"
)

// {function} replays a trace kepcheck found: the user's steps are API calls, the
// scheduler's and the kubelet's are logged expectations, and the evictions the trace shows are
// waited for. There is no kubelet in an integration test: podStatuses is the status it reported.
func {function}(t *testing.T) {{
\tfeaturegatetesting.SetFeatureGatesDuringTest(t, utilfeature.DefaultFeatureGate, featuregatetesting.FeatureOverrides{{
\t\tfeatures.InPlacePodVerticalScaling:                    true,
\t\tfeatures.InPlacePodVerticalScalingSchedulerPreemption: {gate},
\t}})

\ttype nodeSpec struct {{
\t\tname                    string
\t\tcapacity                map[v1.ResourceName]string
\t\tdisableResizePreemption []string
\t}}
\ttype statusSpec struct {{
\t\tpod        string
\t\tallocated  v1.ResourceList
\t\tactual     v1.ResourceList
\t\tconditions []v1.PodCondition
\t}}
\ttype stepSpec struct {{
\t\tactor  string
\t\taction string
\t\tpod    string
\t\tpatch  string
\t\texpect string
\t}}
{breach}
\ttests := []struct {{
\t\tname               string
\t\tvariant            string
\t\tnodes              []nodeSpec
\t\texistingPods       []*v1.Pod
\t\tpodStatuses        []statusSpec
\t\tarrivals           []*v1.Pod
\t\tsteps              []stepSpec
\t\texpectEvictedNames []string
\t}}{{
"""

_BODY = """\t}

\ttestCtx := testutils.InitTestSchedulerWithOptions(t, testutils.InitTestAPIServer(t, "kepcheck", nil), 0)
\tdefer testCtx.SchedulerCloseFn()
\ttestutils.SyncSchedulerInformerFactory(testCtx)
\tgo testCtx.Scheduler.Run(testCtx.Ctx)
\tcs := testCtx.ClientSet
\tns := testCtx.NS.Name

\tfor _, tt := range tests {
\t\tt.Run(tt.name, func(t *testing.T) {
\t\t\tfor _, n := range tt.nodes {
\t\t\t\tnode := st.MakeNode().Name(n.name).Capacity(n.capacity).Obj()
\t\t\t\tif len(n.disableResizePreemption) > 0 {
\t\t\t\t\tnode.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{DisableResizePreemption: n.disableResizePreemption}
\t\t\t\t}
\t\t\t\tif _, err := cs.CoreV1().Nodes().Create(testCtx.Ctx, node, metav1.CreateOptions{}); err != nil {
\t\t\t\t\tt.Fatalf("Failed to create node %s: %v", n.name, err)
\t\t\t\t}
\t\t\t}
\t\t\tfor _, p := range tt.existingPods {
\t\t\t\tp.Namespace = ns
\t\t\t\tif _, err := cs.CoreV1().Pods(ns).Create(testCtx.Ctx, p, metav1.CreateOptions{}); err != nil {
\t\t\t\t\tt.Fatalf("Failed to create pod %s: %v", p.Name, err)
\t\t\t\t}
\t\t\t}
\t\t\t// The status the kubelet would report: allocated and actual resources, the resize conditions.
\t\t\tfor _, s := range tt.podStatuses {
\t\t\t\tpod, err := cs.CoreV1().Pods(ns).Get(testCtx.Ctx, s.pod, metav1.GetOptions{})
\t\t\t\tif err != nil {
\t\t\t\t\tt.Fatalf("Failed to get pod %s: %v", s.pod, err)
\t\t\t\t}
\t\t\t\tpod.Status.Phase = v1.PodRunning
\t\t\t\tpod.Status.Conditions = append([]v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionTrue}}, s.conditions...)
\t\t\t\tpod.Status.ContainerStatuses = []v1.ContainerStatus{{
\t\t\t\t\tName:               pod.Spec.Containers[0].Name,
\t\t\t\t\tAllocatedResources: s.allocated,
\t\t\t\t\tResources:          &v1.ResourceRequirements{Requests: s.actual},
\t\t\t\t}}
\t\t\t\tif _, err := cs.CoreV1().Pods(ns).UpdateStatus(testCtx.Ctx, pod, metav1.UpdateOptions{}); err != nil {
\t\t\t\t\tt.Fatalf("Failed to update the status of pod %s: %v", s.pod, err)
\t\t\t\t}
\t\t\t}
\t\t\tfor i, step := range tt.steps {
\t\t\t\tswitch step.action {
\t\t\t\tcase "RequestResize":
\t\t\t\t\tif _, err := cs.CoreV1().Pods(ns).Patch(testCtx.Ctx, step.pod, types.StrategicMergePatchType, []byte(step.patch), metav1.PatchOptions{}, "resize"); err != nil {
\t\t\t\t\t\tt.Fatalf("step %d: failed to resize pod %s: %v", i+1, step.pod, err)
\t\t\t\t\t}
\t\t\t\tcase "CreatePod":
\t\t\t\t\tfor _, p := range tt.arrivals {
\t\t\t\t\t\tif p.Name == step.pod {
\t\t\t\t\t\t\tp.Namespace = ns
\t\t\t\t\t\t\tif _, err := cs.CoreV1().Pods(ns).Create(testCtx.Ctx, p, metav1.CreateOptions{}); err != nil {
\t\t\t\t\t\t\t\tt.Fatalf("step %d: failed to create pod %s: %v", i+1, p.Name, err)
\t\t\t\t\t\t\t}
\t\t\t\t\t\t}
\t\t\t\t\t}
\t\t\t\tcase "DeletePod":
\t\t\t\t\tif err := cs.CoreV1().Pods(ns).Delete(testCtx.Ctx, step.pod, metav1.DeleteOptions{}); err != nil {
\t\t\t\t\t\tt.Fatalf("step %d: failed to delete pod %s: %v", i+1, step.pod, err)
\t\t\t\t\t}
\t\t\t\tdefault:
\t\t\t\t\tt.Logf("step %d (%s %s), expected: %s", i+1, step.actor, step.action, step.expect)
\t\t\t\t}
\t\t\t}
\t\t\tfor _, name := range tt.expectEvictedNames {
\t\t\t\terr := wait.PollUntilContextTimeout(testCtx.Ctx, 50*time.Millisecond, 10*time.Second, false,
\t\t\t\t\tpodIsGettingEvicted(cs, ns, name))
\t\t\t\tif err != nil {
\t\t\t\t\tt.Errorf("Expected pod %q to be evicted, but it was not", name)
\t\t\t\t}
\t\t\t}
\t\t})
\t}
}
"""


def _comment(export: Export) -> str:
    ctx = export.ctx
    return "\n".join([
        f"Exported by kepcheck from {Path(export.source).name}: {export.property or 'a trace'} in scenario",
        f"{ctx.scenario.name} under variant {ctx.variant.name} (KEP-5836 model). A starting point for a",
        "regression test in test/integration/scheduler/preemption/, in the shape of",
        "TestDeferredResizePodPreemption (deferred_resize_preemption_test.go).",
        f"Replay: kepcheck replay --scenario {export.scenario} --variant {ctx.variant.name} "
        + " ".join(go_string(label) for label in export.labels)] + [""] + breach_words(export))


def go_test(export: Export) -> str:
    """``<name>_test.go``: the file's text, in gofmt's canonical form."""
    breach = "\n".join(f"\t// {line}".rstrip() for line in ["kepcheck's verdict on this trace:", *breach_words(export)])
    gate = "false" if export.ctx.variant.name == "gate-off" else "true"
    head = _HEADER.format(comment=_comment(export).replace("*/", "* /"), function=test_function_name(export),
                          gate=gate, breach=breach)
    return head + "\n".join(_case(export)) + "\n" + _BODY
