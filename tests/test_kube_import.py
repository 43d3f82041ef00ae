"""``kepcheck import``: a kubectl snapshot (tests/fixtures/kubectl-snapshot.yaml) into a scenario,
field by field; the options; what is dropped; the refusals (exit 2, one line)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kepcheck.checks.cli.main import main
from kepcheck.checks.kube.snapshot import read_objects, scenario_from_objects
from kepcheck.checks.kube.objects import Fields, STATES, pod_of, state_total
from kepcheck.model.accounting.pod_requests import pod_requests
from kepcheck.spec.language.fields import ScenarioError
from kepcheck.spec.language.loader import load_scenario
from kepcheck.spec.limits import SNAPSHOT_MAX_NODES

FIXTURE = Path(__file__).parent / "fixtures" / "kubectl-snapshot.yaml"

EXPECTED_PODS = [  # declared by status.startTime: report-job-x2k9 started first
    {"name": "report-job-x2k9", "node": "node-a", "priority": 10, "requests": {"cpu": "500m", "memory": "512Mi"}},
    # app 2 cpu + sidecar 500m (the init container migrate needs 1 + 500m); allocated: app at 1 cpu
    {"name": "web-frontend-7d9f", "node": "node-a", "priority": 1000,
     "requests": {"cpu": "2500m", "memory": "1280Mi"}, "allocated": {"cpu": "1500m", "memory": "1280Mi"},
     "resize": "Deferred"},
    # no spec.priority, no class: the globalDefault class default-tier; overhead 250m / 64Mi added
    {"name": "shop.cart-5c8b", "node": "node-a", "priority": 100, "requests": {"cpu": "1250m", "memory": "2112Mi"}},
    {"name": "staging.cart-5c8b", "node": "node-b", "priority": 100, "requests": {"cpu": "2", "memory": "1Gi"},
     "actual": {"cpu": "1", "memory": "1Gi"}, "resize": "InProgress"},
    # priority and preemptionPolicy from the class never-preempt
    {"name": "sweeper-6b7c", "node": "node-b", "priority": 50, "preemptionPolicy": "Never",
     "requests": {"cpu": "1", "memory": "256Mi"}},
    {"name": "analytics-0", "priority": 100, "requests": {"cpu": "1", "memory": "1Gi"}, "nominatedNodeName": "node-b"},
]


def _import(**options):
    return scenario_from_objects(read_objects(FIXTURE), name="shop", source=str(FIXTURE), **options)


def _run(capsys, *argv):
    code = main(["import", *map(str, argv)])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_snapshot_imports_field_by_field():
    document, summary = _import()
    assert document["nodes"] == [
        {"name": "node-a", "allocatable": {"cpu": "4", "memory": "8045772Ki"}},
        {"name": "node-b", "allocatable": {"cpu": "4", "memory": "8Gi"},
         "disableResizePreemption": ["autoscaling.k8s.io/vpa-updater"]},
    ]
    assert document["pods"] == EXPECTED_PODS
    assert "environment" not in document
    assert dict(summary.dropped) == {
        "Node allocatable ephemeral-storage": 1, "Node allocatable pods": 2, "Node taints": 1, "Pod Succeeded": 1,
        "Pod limits": 3, "Pod qosClass Burstable": 5, "Pod qosClass Guaranteed": 1,
        "Pod resource ephemeral-storage": 1, "Service": 1,
        "PodDisruptionBudget without an integer minAvailable (maxUnavailable or a percentage)": 1,
    }
    # web-frontend-pdb (matchLabels app: web-frontend, namespace shop) selects the one pod with that label
    assert document["podDisruptionBudgets"] == [{"name": "web-frontend-pdb", "pods": ["web-frontend-7d9f"],
                                                 "minAvailable": 1}]
    assert summary.renamed == [("shop/cart-5c8b", "shop.cart-5c8b"), ("staging/cart-5c8b", "staging.cart-5c8b")]
    assert (summary.nodes, summary.pods, summary.pending) == (2, 6, 1)


def _pod(spec: dict, status: dict) -> dict:
    return {"kind": "Pod", "metadata": {"name": "p", "namespace": "x"}, "spec": {"nodeName": "node-a", **spec},
            "status": status}


INFEASIBLE = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
MORE_PODS = [
    # pod-level resources with overhead, resized in place and Infeasible (docs/reference.md §1.5)
    _pod({"overhead": {"cpu": "100m"}, "resources": {"requests": {"cpu": "2", "memory": "1Gi"}},
          "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}, {"name": "b"}]},
         {"allocatedResources": {"cpu": "1100m", "memory": "1Gi"}, "resources": {"requests": {"cpu": "1100m"}},
          "conditions": INFEASIBLE, "containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "1"}}]}),
    # Infeasible: a container without status contributes nothing to allocated and actual (§1.2)
    _pod({"containers": [{"name": "a", "resources": {"requests": {"cpu": "3"}}},
                         {"name": "b", "resources": {"requests": {"cpu": "1"}}}]},
         {"conditions": INFEASIBLE, "containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "2"}}]}),
    # a sidecar declared after an init container: the init container does not count it (§1.4)
    _pod({"initContainers": [{"name": "init", "resources": {"requests": {"cpu": "3"}}},
                             {"name": "side", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
          "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]},
         {"containerStatuses": [{"name": "a", "allocatedResources": {"cpu": "1"}, "resources": {"requests": {"cpu": "500m"}}}]}),
]


@pytest.mark.parametrize("spec, dropped", [
    ({"minAvailable": "50%", "selector": {"matchLabels": {"app": "web-frontend"}}},
     "PodDisruptionBudget without an integer minAvailable (maxUnavailable or a percentage)"),
    ({"minAvailable": 1, "selector": {"matchLabels": {"app": "web-frontend"},
                                      "matchExpressions": [{"key": "tier", "operator": "Exists"}]}},
     "PodDisruptionBudget with matchExpressions"),
    ({"minAvailable": 1, "selector": {}}, "PodDisruptionBudget selecting no kept pod"),  # empty: matches nothing
    ({"minAvailable": 1, "selector": {"matchLabels": {"app": "checkout"}}}, "PodDisruptionBudget selecting no kept pod"),
])
def test_budgets_the_scenario_cannot_hold_are_counted_not_kept(spec, dropped):
    objects = [o for o in read_objects(FIXTURE) if o.get("kind") != "PodDisruptionBudget"]
    objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                    "metadata": {"name": "b", "namespace": "shop"}, "spec": spec})
    document, summary = scenario_from_objects(objects, name="shop", source="snapshot.yaml")
    assert "podDisruptionBudgets" not in document and summary.dropped[dropped] == 1


def test_a_budget_in_another_namespace_selects_nothing_there():
    objects = [o for o in read_objects(FIXTURE) if o.get("kind") != "PodDisruptionBudget"]
    objects.append({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "staging"},
                    "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web-frontend"}}}})
    document, summary = scenario_from_objects(objects, name="shop", source="snapshot.yaml")
    assert "podDisruptionBudgets" not in document


def test_the_three_totals_combine_into_the_models_pod_requests():
    """max(desired, allocated, actual) of the imported totals (max(allocated, actual) while
    Infeasible), the model's scheduler count, is the model's PodRequests of the whole pod with its
    status (v1.37; pod-level in-place resize on): the decomposition loses nothing it counts."""
    fields = Fields(str(FIXTURE))
    pods = [(f"items[{i}]", o) for i, o in enumerate(read_objects(FIXTURE)) if o["kind"] == "Pod"]
    assert len(pods) == 7
    for where, obj in pods + [(f"more[{i}]", o) for i, o in enumerate(MORE_PODS)]:
        pod = pod_of(fields, obj, where)
        totals = [state_total(pod, state) for state in STATES]
        if pod.resize_reason == "Infeasible":
            totals = totals[1:]
        combined = pod_requests(pod, use_status_resources=True, pod_level_vertical_scaling=True)
        for resource in ("cpu", "memory"):
            assert max(t.get(resource, 0) for t in totals) == combined.get(resource, 0), (where, resource)
    assert [state_total(pod_of(fields, MORE_PODS[0], "p"), s)["cpu"] for s in STATES] == [2100, 1100, 1100]
    assert [state_total(pod_of(fields, MORE_PODS[1], "p"), s)["cpu"] for s in STATES] == [4000, 2000, 2000]
    assert [state_total(pod_of(fields, MORE_PODS[2], "p"), s)["cpu"] for s in STATES] == [3000, 3000, 3000]


def test_the_written_scenario_loads_and_checks(tmp_path, capsys):
    out = tmp_path / "shop.yaml"
    code, stdout, err = _run(capsys, FIXTURE, "-o", out)
    assert (code, stdout) == (0, "")
    assert err.count("\n") == 1 and err.startswith("kepcheck: import: kept 2 nodes, 6 pods (1 pending); dropped: ")
    assert "PodDisruptionBudget without an integer minAvailable (maxUnavailable or a percentage) 1" in err and "renamed" in err
    scenario = load_scenario(out)
    assert [p.name for p in scenario.pods] == [p["name"] for p in EXPECTED_PODS]
    web = scenario.pods[1]
    assert (web.resize, scenario.format(web.requests), scenario.format(web.allocated)) == (
        "Deferred", "cpu 2500m, memory 1280Mi", "cpu 1500m, memory 1280Mi")
    assert main(["check", "--scenario", str(out), "--variant", "alpha-1.37",
                 "--property", "KubeletNeverOvercommits"]) == 0


def test_stdout_is_the_same_scenario(capsys):
    code, stdout, _ = _run(capsys, FIXTURE, "--name", "shop")
    assert code == 0
    assert yaml.safe_load(stdout) == _import()[0]


def test_a_node_selection_keeps_its_pods_and_the_pending_ones():
    document, summary = _import(nodes=["node-b"])
    assert [p["name"] for p in document["pods"]] == ["cart-5c8b", "sweeper-6b7c", "analytics-0"]
    assert summary.renamed == []  # shop/cart-5c8b is not kept: the name is unique again
    assert summary.dropped["Pod on a node not kept"] == 3 and summary.dropped["Node not kept"] == 1
    document, summary = _import(nodes=["node-a"], pending=False)
    assert [p["name"] for p in document["pods"]] == ["report-job-x2k9", "web-frontend-7d9f", "cart-5c8b"]
    assert summary.dropped["Pod pending (--no-pending)"] == 1


def test_a_nomination_to_a_node_not_kept_is_dropped():
    document, summary = _import(nodes=["node-a"])
    assert document["pods"][-1] == {"name": "analytics-0", "priority": 100, "requests": {"cpu": "1", "memory": "1Gi"}}
    assert summary.dropped["Pod nominatedNodeName to a node not kept"] == 1


def test_the_environment_options(capsys):
    code, stdout, err = _run(capsys, FIXTURE, "--resize", "web-frontend-7d9f=cpu=3", "--resize",
                           "staging/cart-5c8b=cpu=3,memory=1Gi", "--arrival", "late:5:cpu=1,memory=512Mi",
                           "--arrival", "batchy:1:cpu=1:Never", "--delete", "shop/cart-5c8b", "--scheduler-restart",
                           "--recreate", "staging/cart-5c8b", "--max-events", "2")
    assert code == 0 and err.count("\n") == 1  # two events a run: small enough
    assert yaml.safe_load(stdout)["environment"] == {
        "resizes": [{"pod": "web-frontend-7d9f", "requests": {"cpu": "3"}},
                    {"pod": "staging.cart-5c8b", "requests": {"cpu": "3", "memory": "1Gi"}}],
        "arrivals": [{"name": "late", "priority": 5, "requests": {"cpu": "1", "memory": "512Mi"}},
                     {"name": "batchy", "priority": 1, "requests": {"cpu": "1"}, "preemptionPolicy": "Never"}],
        "deletions": ["shop.cart-5c8b"], "schedulerRestarts": 1, "recreations": ["staging.cart-5c8b"], "maxEvents": 2,
    }


def test_a_multi_document_stream_gives_the_same_scenario(tmp_path):
    stream = tmp_path / "stream.yaml"
    stream.write_text(yaml.safe_dump_all(read_objects(FIXTURE)))
    assert scenario_from_objects(read_objects(stream), name="shop")[0] == _import()[0]


def test_an_undecided_resize_starts_at_the_allocation_and_becomes_an_environment_resize():
    objects = read_objects(FIXTURE)
    web = next(o for o in objects if o["metadata"]["name"] == "web-frontend-7d9f")
    web["status"]["conditions"] = [{"type": "Ready", "status": "True"}]  # the kubelet has not decided yet
    document, summary = scenario_from_objects(objects, name="shop")
    assert document["pods"][1] == {"name": "web-frontend-7d9f", "node": "node-a", "priority": 1000,
                                   "requests": {"cpu": "1500m", "memory": "1280Mi"}}
    assert document["environment"] == {"resizes": [{"pod": "web-frontend-7d9f",
                                                    "requests": {"cpu": "2500m", "memory": "1280Mi"}}]}
    assert summary.moved == ["web-frontend-7d9f"]


def test_a_deferred_condition_of_an_older_generation_is_kept_and_said():
    """The kubelet has not evaluated web's current spec (observedGeneration 2 < generation 3): the
    scheduler still reads PodResizePending=Deferred (IsPodResizeDeferred reads the reason only), so
    the pod is imported Deferred at its current requests, and the summary says the condition is
    older than the spec (the scenario format cannot say the kubelet has not looked)."""
    objects = read_objects(FIXTURE)
    web = next(o for o in objects if o["metadata"]["name"] == "web-frontend-7d9f")
    web["metadata"]["generation"] = 3
    pending = next(c for c in web["status"]["conditions"] if c["type"] == "PodResizePending")
    pending["observedGeneration"] = 2
    document, summary = scenario_from_objects(objects, name="shop")
    assert document["pods"][1] == EXPECTED_PODS[1]
    assert "Pod condition PodResizePending Deferred of an older generation (taken as current) 1" in summary.line()
    pending["observedGeneration"] = 3
    assert "older generation" not in scenario_from_objects(objects, name="shop")[1].line()


def test_a_large_snapshot_says_so(tmp_path, capsys):
    objects = read_objects(FIXTURE)
    sweeper = next(o for o in objects if o["metadata"]["name"] == "sweeper-6b7c")
    for i in range(12):
        clone = copy.deepcopy(sweeper)
        clone["metadata"]["name"] = f"sweeper-{i}"
        clone["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "1m", "memory": "1Mi"}
        clone["status"]["containerStatuses"][0]["allocatedResources"] = {"cpu": "1m", "memory": "1Mi"}
        objects.append(clone)
    big = tmp_path / "big.yaml"
    big.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    code, _, err = _run(capsys, big)
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 2 and "18 pods on 2 nodes with 0 environment events" in lines[1] and "--engine random" in lines[1] and "--node" in lines[1]


def test_many_environment_events_say_so(capsys):
    deletions = [arg for name in ("report-job-x2k9", "shop/cart-5c8b", "staging/cart-5c8b", "sweeper-6b7c",
                                  "analytics-0") for arg in ("--delete", name)]
    code, _, err = _run(capsys, FIXTURE, *deletions)
    assert code == 0 and "with 5 environment events is more than" in err.splitlines()[1]
    code, _, err = _run(capsys, FIXTURE, *deletions, "--max-events", "4")
    assert code == 0 and len(err.splitlines()) == 1


def _refused(capsys, tmp_path, objects_or_text, *argv) -> str:
    path = tmp_path / "snap.yaml"
    path.write_text(objects_or_text if isinstance(objects_or_text, str)
                    else yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects_or_text}))
    code, out, err = _run(capsys, path, *argv)
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert err.startswith(f"kepcheck: error: {path}: ") or err.startswith("kepcheck: error: --")
    return err.strip()


def _with(change) -> list:
    objects = read_objects(FIXTURE)
    change(objects)
    return objects


def test_refusals_are_one_line_naming_the_field(tmp_path, capsys):
    def bad_cpu(objects):
        objects[6]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "two"
    assert _refused(capsys, tmp_path, _with(bad_cpu)).endswith(
        "items[6].spec.containers[0].resources.requests.cpu: 'two' is not a Kubernetes quantity")

    def unknown_class(objects):
        del objects[8]["spec"]["priority"]
        objects[8]["spec"]["priorityClassName"] = "gold"
    assert "items[8].spec.priorityClassName: PriorityClass 'gold' is not in the snapshot" in _refused(
        capsys, tmp_path, _with(unknown_class))

    def too_big(objects):  # an Infeasible resize above the node's allocatable: the API server refuses it
        objects[8]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "5"
        objects[8]["status"]["conditions"] = [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
    assert "items[8] (Pod batch/report-job-x2k9): scenario pods[0].requests: exceeds the node's allocatable" in _refused(
        capsys, tmp_path, _with(too_big))

    def bad_name(objects):
        objects[0]["metadata"]["name"] = "Node_A"
    assert "items[0].metadata.name: 'Node_A' is not a valid node name" in _refused(capsys, tmp_path, _with(bad_name))
    assert "--node: no Node 'node-z' in the snapshot" in _refused(capsys, tmp_path, read_objects(FIXTURE),
                                                                   "--node", "node-z")
    assert "environment.resizes[0].pod: unknown pod 'nobody'" in _refused(capsys, tmp_path, read_objects(FIXTURE),
                                                                         "--resize", "nobody=cpu=1")
    assert "--arrival 'late': expected NAME:PRIORITY" in _refused(capsys, tmp_path, read_objects(FIXTURE),
                                                                 "--arrival", "late")


def test_hostile_files_are_refused(tmp_path, capsys):
    assert "line 2: invalid YAML" in _refused(capsys, tmp_path, "items: [unclosed\n")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdef", "bcdefg"))
    assert f"more than {SNAPSHOT_MAX_NODES} YAML nodes" in _refused(capsys, tmp_path, bomb)
    assert "no Kubernetes objects in the file" in _refused(capsys, tmp_path, "---\n")
    assert "expected a Kubernetes object or List" in _refused(capsys, tmp_path, "- 1\n- 2\n")
    big = tmp_path / "huge.yaml"
    with big.open("w") as handle:
        handle.write("# " + "x" * (16 << 20) + "\n")
    code, _, err = _run(capsys, big)
    assert code == 2 and err.strip().endswith("larger than 16384 KiB, the limit for a cluster snapshot")


def test_scenario_error_is_the_api_error_type():
    with pytest.raises(ScenarioError, match=r"^<snapshot>: no Node in the snapshot"):
        scenario_from_objects([{"kind": "Service", "metadata": {"name": "x"}}], name="x")
