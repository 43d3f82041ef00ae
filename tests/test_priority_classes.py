"""PriorityClasses and ``priorityClassName`` in scenarios (``spec/language/priority_classes.py``; issue 11, the
``priorityClassName`` part of gap 8).

Sources: the Priority admission plugin (``plugin/pkg/admission/priority/admission.go``): ``admitPod``
resolves a pod's priority and preemption policy from its class (system classes first), else from the
``globalDefault`` class (``getDefaultPriorityClass``: the lowest value of several), else 0, and refuses
a pod whose own ``priority`` or ``preemptionPolicy`` differs from the computed one and a name no class
has; ``validatePriorityClass`` refuses a second global default. ``ValidatePriorityClass``
(``pkg/apis/scheduling/validation/validation.go``) reserves the ``system-`` prefix and caps a user
class at ``HighestUserDefinablePriority``.
"""

from __future__ import annotations

import pytest

from kepcheck.checks.cli.main import main
from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.model.context import Context
from kepcheck.spec.language.priority_classes import PriorityClass, resolve_class
from kepcheck.spec.language.loader import load_scenario, parse_scenario
from kepcheck.spec.kep.variants import VARIANTS

from conftest import assert_refused

NODE = {"name": "n1", "allocatable": {"cpu": "4"}}
CLASSES = [{"name": "high", "value": 100}, {"name": "quiet", "value": 50, "preemptionPolicy": "Never"},
           {"name": "default-tier", "value": 10, "globalDefault": True}]


def _pods(*pods, classes=CLASSES):
    scenario = parse_scenario({"name": "t", "priorityClasses": classes, "nodes": [NODE],
                               "pods": [{"name": f"p{i}", "requests": {"cpu": "1"}, **pod} for i, pod in enumerate(pods)]},
                              "t.yaml")
    return [(pod.priority, pod.preemption_policy) for pod in scenario.pods]


def test_a_pod_gets_its_classes_value_and_policy():
    assert _pods({"priorityClassName": "high"}, {"priorityClassName": "quiet"}) == [
        (100, "PreemptLowerPriority"), (50, "Never")]


def test_a_pod_naming_no_class_gets_the_global_default_else_zero():
    assert _pods({}) == [(10, "PreemptLowerPriority")]
    assert _pods({}, classes=[{"name": "high", "value": 100}]) == [(0, "PreemptLowerPriority")]


def test_the_built_in_system_classes_need_no_declaration():
    assert _pods({"priorityClassName": "system-node-critical"}) == [(2_000_001_000, "PreemptLowerPriority")]
    assert _pods({"priorityClassName": "system-cluster-critical"}) == [(2_000_000_000, "PreemptLowerPriority")]


def test_the_shorthand_priority_stands_for_its_own_class():
    """``priority`` without ``priorityClassName`` keeps its value and policy, beside a global default."""
    assert _pods({"priority": 7, "preemptionPolicy": "Never"}, {"priority": 7}) == [(7, "Never"), (7, "PreemptLowerPriority")]


def test_a_pod_may_repeat_what_its_class_gives():
    assert _pods({"priorityClassName": "quiet", "priority": 50, "preemptionPolicy": "Never"}) == [(50, "Never")]


def test_several_global_defaults_resolve_to_the_lowest():
    """``getDefaultPriorityClass``: a race may leave several defaults in a snapshot; the lowest wins."""
    classes = {c.name: c for c in (PriorityClass("a", 30, True), PriorityClass("b", 20, True), PriorityClass("c", 5))}
    assert resolve_class(classes, None).name == "b"


@pytest.mark.parametrize("change, field, words", [
    ({"pods": [{"name": "p", "requests": {"cpu": "1"}, "priorityClassName": "gold"}]},
     "pods[0].priorityClassName", "no PriorityClass with name gold was found"),
    ({"pods": [{"name": "p", "requests": {"cpu": "1"}, "priorityClassName": "high", "priority": 99}]},
     "pods[0].priority", "the integer value of priority (99) must not be provided in pod spec; priority admission "
                         "controller computed 100 from the given PriorityClass name"),
    ({"pods": [{"name": "p", "requests": {"cpu": "1"}, "priorityClassName": "quiet",
                "preemptionPolicy": "PreemptLowerPriority"}]},
     "pods[0].preemptionPolicy", "the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided"),
    ({"priorityClasses": CLASSES + [{"name": "another", "value": 1, "globalDefault": True}]},
     "priorityClasses[3].globalDefault", "PriorityClass default-tier is already marked as default. Only one default"),
    ({"priorityClasses": [{"name": "system-mine", "value": 1}]},
     "priorityClasses[0].name", "prefix are reserved for system use only"),
    ({"priorityClasses": [{"name": "huge", "value": 1_000_000_001}]},
     "priorityClasses[0].value", "maximum allowed value of a user defined priority is 1000000000"),
    ({"priorityClasses": [{"name": "high", "value": 1}, {"name": "high", "value": 2}]},
     "priorityClasses[1].name", "already declared"),
    ({"priorityClasses": [{"name": "High", "value": 1}]}, "priorityClasses[0].name", "RFC 1123 subdomain"),
    ({"priorityClasses": [{"name": "x", "value": 1, "globalDefault": "yes"}]},
     "priorityClasses[0].globalDefault", "expected true or false"),
    ({"priorityClasses": [{"name": "x", "value": 1, "colour": "red"}]}, "priorityClasses[0]", "colour"),
])
def test_the_loader_refuses_what_the_api_server_refuses(change, field, words):
    document = {"name": "t", "priorityClasses": CLASSES, "nodes": [NODE],
                "pods": [{"name": "p", "requests": {"cpu": "1"}}], **change}
    assert_refused(document, field, words)


def test_an_unknown_class_is_exit_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nnodes: [{name: n1, allocatable: {cpu: '4'}}]\n"
                    "pods: [{name: p, requests: {cpu: '1'}, priorityClassName: gold}]\n", encoding="utf-8")
    assert main(["check", "--scenario", str(path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "pods[0].priorityClassName: no PriorityClass with name gold was found" in error


def test_the_shipped_scenario_with_classes_is_its_shorthand():
    """Scenario 19 names its classes (db: database; batch: the global default); written with the
    shorthand priorities it is the same model: the same state count and verdicts."""
    shipped = load_scenario("spec/scenarios/19-guaranteed-resize-static-cpu.yaml")
    assert [(p.name, p.priority) for p in shipped.pods] == [("db", 100), ("batch", 10)]
    shorthand = parse_scenario({
        "name": shipped.name, "nodes": [{"name": "n1", "allocatable": {"cpu": "4", "memory": "4Gi"},
                                         "cpuManagerPolicy": "static"}],
        "pods": [{"name": "db", "node": "n1", "priority": 100, "requests": {"cpu": "2", "memory": "2Gi"},
                  "limits": {"cpu": "2", "memory": "2Gi"}},
                 {"name": "batch", "node": "n1", "priority": 10, "requests": {"cpu": "2", "memory": "1Gi"}}],
        "environment": {"resizes": [{"pod": "db", "requests": {"cpu": "3"}, "limits": {"cpu": "3"}}], "maxEvents": 1},
    }, "shorthand.yaml")
    alpha = next(v for v in VARIANTS if v.name == "alpha-1.37")
    counts = [explore(kep_system(Context.build(s, alpha, ()), [])).states for s in (shipped, shorthand)]
    assert counts[0] == counts[1] == 3
