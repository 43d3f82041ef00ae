"""Pods with containers in scenario files (``spec/language/containers.py``, ``spec/kubernetes/pod_resources.py``;
issue 11, gap 8).

Sources, each cited where it is used: component-helpers ``PodRequests`` and its test table
(``resource/helpers_test.go``, docs/reference.md §1 "Non-resize anchors"), ``GetPodQOS``
(``pkg/apis/core/v1/helper/qos/qos.go``), KEP-1287 "Sidecars" (non-restartable init containers do not
resize) and "Atomic Resizes", ``ValidatePodResize`` (the QoS class may not change).
"""

from __future__ import annotations

import pytest

from kepcheck.checks.cli.main import main
from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.model.context import Context
from kepcheck.model.accounting.pod_requests import pod_requests
from kepcheck.model.accounting.pods import Container, Pod
from kepcheck.spec.language.loader import load_scenario, parse_scenario
from kepcheck.spec.kep.variants import VARIANTS

from conftest import assert_refused

SCENARIO = "spec/scenarios/21-sidecar-counts-in-resize.yaml"
NODE = {"name": "n1", "allocatable": {"cpu": "300", "memory": "4Gi"}}
CPU_NODE = {"name": "n1", "allocatable": {"cpu": "300"}}


def _pod(init=(), containers=({"name": "app", "requests": {"cpu": "1"}},), **fields):
    return {"name": "web", "node": "n1", "priority": 100, "initContainers": list(init), "containers": list(containers),
            **fields}


def _scenario(*pods, environment=None, nodes=(NODE,)):
    document = {"name": "t", "nodes": list(nodes), "pods": list(pods)}
    if environment is not None:
        document["environment"] = environment
    return parse_scenario(document, "t.yaml")


def _c(name, cpu, **fields):
    return {"name": name, "requests": {"cpu": str(cpu)}, **fields}


def _sidecar(name, cpu):
    return _c(name, cpu, restartPolicy="Always")


# --- the totals are PodRequests (component-helpers resource/helpers_test.go; docs/reference.md §1 anchors) -------------

ANCHORS = [  # (initContainers, containers, overhead, expected cpu, expected memory)
    ([_c("init", 4)], [_c("app", 1)], None, 4, None),  # init 4 vs container 1 -> 4
    ([_c("init", 2)], [_c("a", 2), _c("b", 3)], None, 5, None),  # init 2, containers 2 + 3 -> 5
    ([_c("init", 2)], [_c("a", 2), _c("b", 3)], {"cpu": "1", "memory": "1Gi"}, 6, 1024 ** 3),  # + overhead
    ([_sidecar("s", 1)], [_c("app", 1)], None, 2, None),  # sidecar 1 + container 1 -> 2
    ([_c("i", 5), _sidecar("s1", 1), _sidecar("s2", 2), _sidecar("s3", 3)], [_c("app", 1)], None, 7, None),
    ([_c("i1", 5), _sidecar("s1", 1), _sidecar("s2", 2), _c("i2", 5), _sidecar("s3", 3)], [_c("app", 1)], None, 8, None),
    ([_sidecar("s", 10), _c("i", 200)], [_c("app", 100)], None, 210, None),  # sidecar 10, init 200, container 100
]


@pytest.mark.parametrize("init, containers, overhead, cpu, memory", ANCHORS)
def test_a_pods_requests_are_pod_requests_of_its_containers(init, containers, overhead, cpu, memory):
    """The loader's totals are the upstream anchors, and the same as ``model/pod_requests.pod_requests``
    (the conformance-tested accounting) on the same containers: one formula."""
    fields = {"overhead": overhead} if overhead else {}
    scenario = _scenario(_pod(init, containers, **fields))
    pod = scenario.pods[0]
    totals = {r: v * u for r, v, u in zip(scenario.resources, pod.requests, scenario.units) if v}
    assert totals.get("cpu") == cpu * 1000 and totals.get("memory") == memory
    model_pod = Pod(tuple(Container(c.name, c.kind, requests=c.map("requests")) for c in pod.containers),
                    overhead=dict(pod.overhead) if pod.overhead else None)
    assert pod_requests(model_pod, use_status_resources=False) == totals


def test_pod_level_requests_replace_the_containers_aggregate():
    """``applyPodLevelResources`` (docs/reference.md §1.5): pod-level cpu 3 replaces the containers' 5."""
    scenario = _scenario(_pod([_c("init", 2)], [_c("a", 2), _c("b", 3)], resources={"requests": {"cpu": "3"}}),
                         nodes=[CPU_NODE])
    assert scenario.format(scenario.pods[0].requests) == "cpu 3"


def test_the_qos_class_counts_init_containers():
    """``GetPodQOS`` walks ``spec.containers`` and ``spec.initContainers``: an app container with equal
    requests and limits beside an init container without limits makes a Burstable pod."""
    guaranteed = {"name": "app", "limits": {"cpu": "1", "memory": "1Gi"}}
    assert _scenario(_pod((), [guaranteed])).pods[0].qos_class == "Guaranteed"
    assert _scenario(_pod([_c("init", 1)], [guaranteed])).pods[0].qos_class == "Burstable"
    with_limits = {**_c("init", 1), "limits": {"cpu": "1", "memory": "1Gi"}}
    assert _scenario(_pod([with_limits], [guaranteed])).pods[0].qos_class == "Guaranteed"


# --- resizes name containers -------------------------------------------------------------------------------------

def test_a_container_resize_keeps_the_other_containers_and_resources():
    """A PATCH naming app's cpu keeps app's memory and the sidecar's requests (strategic merge by name)."""
    app = {"name": "app", "requests": {"cpu": "1", "memory": "1Gi"}}
    scenario = _scenario(_pod([_sidecar("proxy", 1)], [app]),
                         environment={"resizes": [{"pod": "web", "containers": [{"name": "app", "requests": {"cpu": "2"}}]}]})
    assert scenario.format(scenario.pods[0].requests) == "cpu 2, memory 1Gi"
    assert scenario.format(scenario.resizes[0].requests) == "cpu 3, memory 1Gi"


def test_a_sidecar_resizes_in_place():
    scenario = _scenario(_pod([_sidecar("proxy", 1)]),
                         environment={"resizes": [{"pod": "web", "containers": [{"name": "proxy", "requests": {"cpu": "3"}}]}]},
                         nodes=[CPU_NODE])
    assert scenario.format(scenario.resizes[0].requests) == "cpu 4"


RESIZE = {"pod": "web", "containers": [{"name": "app", "requests": {"cpu": "2"}}]}


@pytest.mark.parametrize("pod, environment, field, words", [
    (_pod([_c("setup", 3)]), {"resizes": [{"pod": "web", "containers": [{"name": "setup", "requests": {"cpu": "4"}}]}]},
     "environment.resizes[0].containers[0].name", "non-restartable init container"),  # KEP-1287 "Sidecars"
    (_pod([_c("setup", 3)]), {"resizes": [RESIZE]}, "environment.resizes[0]",
     "unchanged"),  # max(2, 3) = 3: the init container already covers it
    (_pod(resources={"requests": {"cpu": "2"}}), {"resizes": [RESIZE]}, "environment.resizes[0]", "pod-level"),
    (_pod(), {"resizes": [{"pod": "web", "requests": {"cpu": "2"}}]}, "environment.resizes[0].requests",
     "a resize names them"),
    (_pod(), {"resizes": [{"pod": "web", "containers": [{"name": "db", "requests": {"cpu": "2"}}]}]},
     "environment.resizes[0].containers[0].name", "has no container"),
    (_pod(containers=[{"name": "app", "requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "1", "memory": "1Gi"}}]),
     {"resizes": [{"pod": "web", "containers": [{"name": "app", "requests": {"cpu": "500m"}}]}]},
     "environment.resizes[0]", "QoS class from Guaranteed to Burstable"),  # ValidatePodResize
    (_pod(), {"resizes": [RESIZE, {"pod": "web", "containers": [{"name": "app", "requests": {"memory": "1Gi"}}]}]},
     "environment.resizes[1].containers", "other container requests"),
    (_pod(requests={"cpu": "1"}), None, "pods[0].requests", "per container"),
    (_pod(containers=[_c("app", 1), _c("app", 2)]), None, "pods[0].containers", "used twice"),
    (_pod(containers=[_c("App", 1)]), None, "pods[0].containers[0].name", "RFC 1123 label"),
    (_pod(containers=[_c("app", 1, limits={"cpu": "500m"})]), None, "pods[0].containers[0].requests.cpu",
     "less than or equal to cpu limit"),
    (_pod(containers=[]), None, "pods[0].containers", "at least one container"),
    (_pod([_c("setup", 1, restartPolicy="OnFailure")]), None, "pods[0].initContainers[0].restartPolicy", "Always"),
    ({"name": "web", "node": "n1", "overhead": {"cpu": "1"}, "requests": {"cpu": "1"}}, None, "pods[0].overhead",
     "only a pod that gives containers"),
])
def test_the_loader_refuses_container_input_kubernetes_or_the_model_would_not_take(pod, environment, field, words):
    document = {"name": "t", "nodes": [NODE], "pods": [pod]}
    if environment is not None:
        document["environment"] = environment
    assert_refused(document, field, words)


def test_a_bad_container_resize_is_exit_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nnodes: [{name: n1, allocatable: {cpu: '4'}}]\n"
                    "pods: [{name: web, node: n1, initContainers: [{name: setup, requests: {cpu: '1'}}],\n"
                    "        containers: [{name: app, requests: {cpu: '1'}}]}]\n"
                    "environment: {resizes: [{pod: web, containers: [{name: setup, requests: {cpu: '2'}}]}]}\n",
                    encoding="utf-8")
    assert main(["check", "--scenario", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "non-restartable init container" in error


# --- the shipped scenario: the verdict the one-vector form would have given differs --------------------------------

def _preempts_for_resize(scenario, variant) -> bool:
    graph = explore(kep_system(Context.build(scenario, variant), []), keep_graph=True).graph
    return any(action.label() == "PreemptForResize(pod=web)" for _, _, action in graph.edge_triples())


@pytest.mark.parametrize("variant", ["alpha-1.37", "beta-1.38"])
def test_the_sidecar_and_init_container_make_the_resize_need_a_victim(variant):
    """web's pod grows from 4 to 4500m cpu (KEP-753), which does not fit beside batch's 2 on 6: batch is
    evicted for it. The one-vector form at the app container's requests (1 -> 3500m: 3500m + 2 <= 6)
    fits without a victim."""
    chosen = next(v for v in VARIANTS if v.name == variant)
    scenario = load_scenario(SCENARIO)
    assert [scenario.format(p.requests) for p in scenario.pods] == ["cpu 4", "cpu 2"]
    assert scenario.format(scenario.resizes[0].requests) == "cpu 4500m"
    assert _preempts_for_resize(scenario, chosen)
    one_vector = parse_scenario({"name": "t", "nodes": [{"name": "n1", "allocatable": {"cpu": "6"}}],
                                 "pods": [{"name": "web", "node": "n1", "priority": 100, "requests": {"cpu": "1"}},
                                          {"name": "batch", "node": "n1", "priority": 0, "requests": {"cpu": "2"}}],
                                 "environment": {"resizes": [{"pod": "web", "requests": {"cpu": "3500m"}}]}}, "t.yaml")
    assert not _preempts_for_resize(one_vector, chosen)
