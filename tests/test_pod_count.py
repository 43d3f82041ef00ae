"""Allocatable ``pods`` (the pod-count limit), counted as upstream ``FitsRequest`` counts it
(kubernetes/kubernetes ``pkg/scheduler/framework/plugins/helper/resource_fit.go`` at
``e6021a542a820c64e868d1d1189ce3bed9409ea4``): ``len(NodeInfo pods) + 1 > allowed`` is "Too many pods",
checked apart from the Deferred pod's delta adjustment, so a Deferred pod is counted twice. Scenario
25 (``max-pods-deferred-counted-twice``) shows the eviction that follows."""

from __future__ import annotations

import pytest

from kepcheck.model.actions.next import apply_action as step
from kepcheck.model.actions.next import next_steps
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.spec.kep.variants import variant_by_name
from kepcheck.spec.kep.vocabulary import Phase
from kepcheck.spec.language.fields import ScenarioError
from kepcheck.spec.language.loader import default_scenarios, parse_scenario


def document(pods_allowed, pods=None):
    return {
        "name": "max-pods",
        "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "pods": pods_allowed}}],
        "pods": pods if pods is not None else [
            {"name": "web", "node": "n1", "priority": 100, "requests": {"cpu": "3"}, "allocated": {"cpu": "2"},
             "resize": "Deferred"},
            {"name": "batch", "node": "n1", "priority": 10, "requests": {"cpu": "1"}}],
    }


def build(doc, variant="alpha-1.37"):
    ctx = Context.build(parse_scenario(doc, "test"), variant_by_name(variant))
    return ctx, initial_state(ctx)


def labels(ctx, state):
    return [action.label() for action, _ in next_steps(ctx, state)]


def test_pods_allocatable_loads_as_a_count_beside_the_resources():
    scenario = parse_scenario(document(2), "test")
    assert scenario.nodes[0].max_pods == 2
    assert scenario.resources == ("cpu",)
    assert parse_scenario(document("110"), "test").nodes[0].max_pods == 110
    no_limit = {"name": "t", "nodes": [{"name": "n1", "allocatable": {"cpu": "4"}}],
                "pods": [{"name": "a", "priority": 1, "requests": {"cpu": "1"}}]}
    assert parse_scenario(no_limit, "test").nodes[0].max_pods is None


@pytest.mark.parametrize("value, words", [
    (0, "at least 1 pod"), (-1, "at least 1 pod"), ("2.5", "whole number"), (1.5, "whole number"), (True, "whole number"),
    ("100m", "whole number"), (1, "2 pods are on this node, more than its 1"),
])
def test_bad_pod_counts_are_refused_naming_the_field(value, words):
    with pytest.raises(ScenarioError) as error:
        parse_scenario(document(value), "test.yaml")
    assert "nodes[0].allocatable.pods" in str(error.value) and words in str(error.value)


def test_pods_is_not_a_pod_request():
    doc = document(3)
    doc["pods"][1]["requests"]["pods"] = 1
    with pytest.raises(ScenarioError, match=r"pods\[1\]\.requests"):
        parse_scenario(doc, "test.yaml")


def test_a_deferred_pod_at_the_pod_limit_preempts_for_the_pod_count_alone():
    """cpu: web 3 + batch 1 = 4 <= 4 fits, but web is counted once in NodeInfo and once as the pod
    being evaluated: 2 + 1 > 2 pods. Its restricted cycle preempts batch (batch alone reprieved
    would leave 2 + 1 pods)."""
    ctx, state = build(document(2))
    assert "PreemptForResize(pod=web)" in labels(ctx, state)
    assert "ParkDeferredPod(pod=web)" not in labels(ctx, state)
    after = step(ctx, state, "PreemptForResize(pod=web)")
    assert after.pods[ctx.names.index("batch")].phase == Phase.TERMINATING


def test_one_pod_of_room_and_the_deferred_pod_fits_and_is_parked():
    """The absence: with 3 pods allowed, 2 + 1 <= 3, and web's cycle finds its resize fits."""
    ctx, state = build(document(3))
    assert "PreemptForResize(pod=web)" not in labels(ctx, state)
    assert "ParkDeferredPod(pod=web)" in labels(ctx, state)


def test_a_pending_pod_counts_the_pods_of_the_node_and_the_kubelet_admits_within_the_limit():
    pods = [{"name": "a", "node": "n1", "priority": 10, "requests": {"cpu": "1"}},
            {"name": "b", "priority": 100, "requests": {"cpu": "1"}}]
    ctx, state = build(document(1, pods))
    assert [l for l in labels(ctx, state) if l.startswith(("BindPod", "PreemptForPod"))] == \
        ["PreemptForPod(pod=b, node=n1)"]
    ctx, state = build(document(2, pods))
    assert "BindPod(pod=b, node=n1)" in labels(ctx, state)
    after = step(ctx, state, "BindPod(pod=b, node=n1)")
    assert any(l.startswith("AdmitPod(pod=b") for l in labels(ctx, after)), labels(ctx, after)


def test_the_shipped_scenario_is_the_pod_count_shape():
    scenario = next(s for s in default_scenarios() if s.name == "max-pods-deferred-counted-twice")
    assert scenario.nodes[0].max_pods == len(scenario.pods) == 2
