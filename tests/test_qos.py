"""QoS classes, limits, and the resizes the kubelet marks Infeasible (``spec/kubernetes/qos.py``,
``spec/language/pod_limits.py``, ``model/kubelet.resize_infeasible``; issue 11, gap 3 and the QoS part of
gaps 4 and 8).

Sources, each cited where it is used: ``GetPodQOS`` and its test table (``pkg/apis/core/helper/qos``),
API defaulting (``SetDefaults_Pod``) and validation (``ValidateResourceRequirements``,
``ValidatePodResize``), ``podResizesAdmitHandler.Admit`` (``pkg/kubelet/allocation/handlers.go``) and
its place as the first admit handler (``NewMainKubelet``), ``sortPendingResizes``
(``TestSortPendingResizes``, docs/reference.md §7 K-11).
"""

from __future__ import annotations

import pytest

from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.checks.cli.main import main
from kepcheck.spec.kubernetes.qos import qos_class
from kepcheck.spec.language.loader import load_scenario, parse_scenario
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.kep.vocabulary import ResizeReason
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state

from conftest import assert_refused
from test_actions import build, enabled, get, names_enabled, run

GI = 1024 ** 3


# --- GetPodQOS (pkg/apis/core/helper/qos/qos_test.go, TestGetPodQOS) -----------------------------------

@pytest.mark.parametrize("containers, expected", [
    ([({}, {})], "BestEffort"),  # "best-effort": no requests, no limits
    ([({"cpu": 100, "memory": GI}, {"cpu": 100, "memory": GI})], "Guaranteed"),  # requests = limits
    ([({}, {"cpu": 100, "memory": GI})], "Guaranteed"),  # limits only: requests default to them
    ([({"cpu": 100}, {})], "Burstable"),  # requests only
    ([({"cpu": 100, "memory": GI}, {"cpu": 200, "memory": GI})], "Burstable"),  # requests below limits
    ([({"cpu": 100, "memory": GI}, {"cpu": 100})], "Burstable"),  # no memory limit
    ([({"cpu": 100, "memory": GI}, {"cpu": 100, "memory": GI}), ({"cpu": 100}, {})], "Burstable"),  # one burstable container
])
def test_qos_class_is_get_pod_qos(containers, expected):
    assert qos_class(containers) == expected


# --- the loader: limits, defaulting, validation -------------------------------------------------------------

NODE = {"name": "n1", "allocatable": {"cpu": "4", "memory": "4Gi"}}
GUARANTEED = {"name": "db", "node": "n1", "priority": 100, "requests": {"cpu": "2", "memory": "2Gi"},
              "limits": {"cpu": "2", "memory": "2Gi"}}
BATCH = {"name": "batch", "node": "n1", "priority": 10, "requests": {"cpu": "2", "memory": "2Gi"}}


def _scenario(nodes=(NODE,), pods=(GUARANTEED, BATCH), environment=None):
    document = {"name": "t", "nodes": list(nodes), "pods": list(pods)}
    if environment is not None:
        document["environment"] = environment
    return parse_scenario(document, "t.yaml")


def test_limits_give_the_qos_class_and_requests_default_to_limits():
    scenario = _scenario(pods=[{**GUARANTEED, "requests": {"cpu": "2"}}, BATCH])  # memory request defaulted
    assert [p.qos_class for p in scenario.pods] == ["Guaranteed", "Burstable"]
    assert scenario.pods[0].requests == scenario.pods[0].requests and scenario.format(scenario.pods[0].requests) \
        == "cpu 2, memory 2Gi"


@pytest.mark.parametrize("document_change, field, words", [
    ({"pods": [{**GUARANTEED, "limits": {"cpu": "1", "memory": "2Gi"}}, BATCH]}, "pods[0].requests.cpu",
     "must be less than or equal to cpu limit"),
    ({"nodes": [{**NODE, "cpuManagerPolicy": "Static"}]}, "nodes[0].cpuManagerPolicy", "static"),
    ({"nodes": [{**NODE, "memoryManagerPolicy": "static"}]}, "nodes[0].memoryManagerPolicy", "Static"),
    ({"environment": {"resizes": [{"pod": "db", "requests": {"cpu": "1"}}]}}, "environment.resizes[0]",
     "QoS class from Guaranteed to Burstable"),  # requests below the limits kept
    ({"environment": {"resizes": [{"pod": "db", "requests": {"cpu": "3"}}]}}, "environment.resizes[0].requests.cpu",
     "must be less than or equal to cpu limit"),  # the limits kept are below
    ({"environment": {"resizes": [{"pod": "batch", "requests": {"cpu": "1", "memory": "1Gi"},
                                   "limits": {"cpu": "1", "memory": "1Gi"}}]}},
     "environment.resizes[0]", "QoS class from Burstable to Guaranteed"),
    ({"nodes": [{**NODE, "cpuManagerPolicy": "static"}],
      "pods": [{**GUARANTEED, "requests": {"cpu": "3", "memory": "2Gi"}, "limits": {"cpu": "3", "memory": "2Gi"},
                "allocated": {"cpu": "2", "memory": "2Gi"}, "resize": "Deferred"}, BATCH]},
     "pods[0].resize", "Infeasible, never Deferred"),
])
def test_the_loader_refuses_what_the_api_server_or_the_kubelet_would(document_change, field, words, tmp_path):
    """Requests above limits (``ValidateResourceRequirements``), a policy the kubelet does not know,
    a resize that changes the QoS class (``ValidatePodResize``: "Pod QOS Class may not change as a
    result of resizing"), and a pod that starts Deferred with a resize its kubelet marks Infeasible."""
    document = {"name": "t", "nodes": [NODE], "pods": [GUARANTEED, BATCH], **document_change}
    assert_refused(document, field, words)


def test_a_qos_changing_resize_is_exit_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(
        "name: bad\nnodes: [{name: n1, allocatable: {cpu: '4', memory: 4Gi}}]\n"
        "pods: [{name: db, node: n1, requests: {cpu: '2', memory: 2Gi}, limits: {cpu: '2', memory: 2Gi}}]\n"
        "environment: {resizes: [{pod: db, requests: {cpu: '1'}}]}\n", encoding="utf-8")
    assert main(["check", "--scenario", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "QoS class from Guaranteed to Burstable" in error


def test_a_resize_keeps_the_limits_it_leaves_out():
    """A PATCH of cpu requests and limits keeps memory's: db stays Guaranteed at cpu 3, memory 2Gi."""
    scenario = _scenario(environment={"resizes": [{"pod": "db", "requests": {"cpu": "3"}, "limits": {"cpu": "3"}}]})
    assert scenario.format(scenario.resizes[0].requests) == "cpu 3, memory 2Gi"


# --- the kubelet's Infeasible decision (podResizesAdmitHandler) ---------------------------------------------

CPU_RESIZE = {"resizes": [{"pod": "db", "requests": {"cpu": "3"}, "limits": {"cpu": "3"}}], "maxEvents": 1}
MEMORY_RESIZE = {"resizes": [{"pod": "db", "requests": {"memory": "3Gi"}, "limits": {"memory": "3Gi"}}],
                 "maxEvents": 1}


def _after_the_kubelet_looks(node_fields, environment, pods=(GUARANTEED, BATCH), variant="alpha-1.37"):
    ctx, state = build([{**NODE, **node_fields}], list(pods), environment, variant=variant)
    label = enabled(ctx, state)[0]
    assert label.startswith("RequestResize(pod=db")
    state = run(ctx, state, label, "RetryPendingResizes(node=n1)")
    return ctx, state


@pytest.mark.parametrize("node_fields, environment, reason", [
    ({"cpuManagerPolicy": "static"}, CPU_RESIZE, ResizeReason.INFEASIBLE),
    ({"cpuManagerPolicy": "none"}, CPU_RESIZE, ResizeReason.DEFERRED),  # no static manager: it waits for room
    ({"memoryManagerPolicy": "Static"}, MEMORY_RESIZE, ResizeReason.INFEASIBLE),
    ({"memoryManagerPolicy": "Static"}, CPU_RESIZE, ResizeReason.DEFERRED),  # memory pinned, cpu is not
    ({"cpuManagerPolicy": "static"}, MEMORY_RESIZE, ResizeReason.DEFERRED),  # cpu pinned, memory is not
])
def test_a_guaranteed_pod_resizing_a_pinned_resource_is_infeasible(node_fields, environment, reason):
    """``podResizesAdmitHandler.Admit``: Guaranteed, the static CPU manager (cpuManagerPolicy ==
    "static") and ``guaranteedPodResourceResizeRequired(pod, cpu)`` — or the memory manager's
    "Static" and memory — is Infeasible; otherwise the fit decides (here: no room, Deferred)."""
    ctx, state = _after_the_kubelet_looks(node_fields, environment)
    assert get(ctx, state, "db").resize == reason


def test_the_infeasible_decision_comes_before_the_fit():
    """The resize handler is the allocation manager's first admit handler (``NewMainKubelet``:
    ``append([]PodAdmitHandler{resizeAdmitHandler}, handlers...)``): with room to spare the resize
    is still Infeasible, and the pod is not in the kubelet's pending list any more (no periodic retry)."""
    ctx, state = _after_the_kubelet_looks({"cpuManagerPolicy": "static", "allocatable": {"cpu": "8", "memory": "4Gi"}},
                                          CPU_RESIZE)
    db = get(ctx, state, "db")
    assert db.resize == ResizeReason.INFEASIBLE and db.allocated != db.desired
    assert "PeriodicRetryPendingResizes" not in names_enabled(ctx, state)


def test_a_burstable_pod_on_a_static_node_is_not_pinned():
    ctx, state = _after_the_kubelet_looks({"cpuManagerPolicy": "static"},
                                          {"resizes": [{"pod": "db", "requests": {"cpu": "3"}}], "maxEvents": 1},
                                          pods=[{**GUARANTEED, "limits": {"cpu": "4", "memory": "2Gi"}}, BATCH])
    assert ctx.qos_classes[0] == "Burstable" and get(ctx, state, "db").resize == ResizeReason.DEFERRED


@pytest.mark.parametrize("variant", [v.name for v in VARIANTS])
def test_an_infeasible_resize_is_never_preempted_for(variant):
    """Under every variant: no reachable step preempts for db's Infeasible resize, and the same
    scenario without the static CPU manager (the old model's behaviour) does preempt batch for it."""
    scenario = load_scenario("spec/scenarios/19-guaranteed-resize-static-cpu.yaml")
    chosen = next(v for v in VARIANTS if v.name == variant)
    graph = explore(kep_system(Context.build(scenario, chosen), []), keep_graph=True).graph
    assert not any(action.name == "PreemptForResize" for _, _, action in graph.edge_triples())
    unpinned = parse_scenario({"name": "t", "nodes": [{**NODE}], "pods": [GUARANTEED, BATCH],
                               "environment": CPU_RESIZE}, "t.yaml")
    graph = explore(kep_system(Context.build(unpinned, chosen), []), keep_graph=True).graph
    preempts = any(action.label() == "PreemptForResize(pod=db)" for _, _, action in graph.edge_triples())
    assert preempts == (chosen.gate_on and chosen.name != "gate-off")


# --- the kubelet's retry order: Guaranteed before Burstable (sortPendingResizes) --------------------------

def test_guaranteed_resizes_are_retried_before_burstable_ones_of_equal_priority():
    """``TestSortPendingResizes`` (docs/reference.md §7 K-11): at equal priority a Guaranteed pod's resize is
    tried before a Burstable one's, whatever their ages. Room for one: the Guaranteed one is granted
    although the Burstable pod is older (declared first)."""
    burstable = {"name": "older", "node": "n1", "requests": {"cpu": "2", "memory": "1Gi"},
                 "allocated": {"cpu": "1", "memory": "1Gi"}, "resize": "Deferred"}
    guaranteed = {"name": "younger", "node": "n1", "requests": {"cpu": "2", "memory": "1Gi"},
                  "limits": {"cpu": "2", "memory": "1Gi"}, "allocated": {"cpu": "1", "memory": "1Gi"},
                  "resize": "Deferred"}
    ctx, state = build([{"name": "n1", "allocatable": {"cpu": "3", "memory": "4Gi"}}], [burstable, guaranteed])
    state = run(ctx, state, "PeriodicRetryPendingResizes(node=n1)")
    assert get(ctx, state, "younger").resize == ResizeReason.NONE
    assert get(ctx, state, "older").resize == ResizeReason.DEFERRED


def test_the_shipped_scenario_starts_as_documented():
    scenario = load_scenario("spec/scenarios/19-guaranteed-resize-static-cpu.yaml")
    ctx = Context.build(scenario, VARIANTS[0])
    assert ctx.qos_classes == ("Guaranteed", "Burstable") and ctx.pinned_resources[0] == ((0,),)
    assert initial_state(ctx).pods[0].resize == ResizeReason.NONE
