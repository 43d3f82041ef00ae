"""Malformed scenario files are refused with one line that names the file and the field.

Every case writes a small YAML file into ``tmp_path`` and loads it with ``load_scenario``; the
``ScenarioError`` message must be a single line of the form ``FILE: FIELD: problem``. The
shipped scenarios must all load, and quantities are scaled by their common unit.
"""

from __future__ import annotations

import textwrap

import pytest

from kepcheck.spec.kubernetes.api_validation import dns1123_subdomain_problem, label_key_problem, priority_problem
from kepcheck.spec.limits import SHOWN_CHARS, shown
from kepcheck.spec.language.loader import SCENARIO_DIR, ScenarioError, default_scenarios, load_scenario, parse_scenario

GOOD = """\
name: good
nodes:
  - name: n1
    allocatable: {cpu: "4", memory: 4Gi}
pods:
  - {name: web, node: n1, priority: 100, requests: {cpu: "3"}, allocated: {cpu: "2"}, resize: Deferred}
  - {name: batch, node: n1, priority: 10, requests: {cpu: "1"}}
environment:
  resizes:
    - {pod: web, requests: {cpu: "2"}}
  deletions: [batch]
  maxEvents: 1
"""


def write(tmp_path, text: str, name: str = "scenario.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def refused(path) -> str:
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert "\n" not in message, message
    assert message.startswith(f"{path}: "), message
    assert caught.value.source == str(path)
    return message


def nodes(allocatable: str = '{cpu: "4"}') -> str:
    return f"nodes:\n  - name: n1\n    allocatable: {allocatable}\n"


# (id, file text, field named in the message, a fragment of the problem)
CASES = [
    ("unknown-top-level-field",
     "name: s\nmaxPods: 3\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1}}\n",
     "maxPods", "unknown field"),
    ("unknown-pod-field",
     "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1}}\n  - {name: b, color: red, requests: {cpu: 1}}\n",
     "pods[1].color", "unknown field"),
    ("bad-quantity",
     "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1}}\n  - {name: b, requests: {cpu: 5x}}\n",
     "pods[1].requests.cpu", "'5x' is not a Kubernetes quantity"),
    ("negative-quantity",
     "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1, memory: -1Gi}}\n",
     "pods[0].requests.memory", "negative"),
    ("zero-capacity",
     "name: s\n" + nodes('{cpu: "4", memory: "0"}') + "pods:\n  - {name: a, requests: {cpu: 1}}\n",
     "nodes[0].allocatable.memory", "positive"),
    ("negative-capacity",
     "name: s\n" + nodes('{cpu: "-4"}') + "pods:\n  - {name: a, requests: {cpu: 1}}\n",
     "nodes[0].allocatable.cpu", "negative"),
    ("pod-on-unknown-node",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n2, requests: {cpu: 1}}\n",
     "pods[0].node", "unknown node 'n2'"),
    ("duplicate-pod-names",
     "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1}}\n  - {name: a, requests: {cpu: 2}}\n",
     "pods[1].name", "duplicate pod name 'a'"),
    ("duplicate-node-names",
     "name: s\nnodes:\n  - {name: n1, allocatable: {cpu: 4}}\n  - {name: n1, allocatable: {cpu: 2}}\n"
     "pods:\n  - {name: a, requests: {cpu: 1}}\n",
     "nodes[1].name", "duplicate node name 'n1'"),
    ("invalid-preemption-policy",
     "name: s\n" + nodes() + "pods:\n  - {name: a, preemptionPolicy: Sometimes, requests: {cpu: 1}}\n",
     "pods[0].preemptionPolicy", "'Sometimes' is not one of"),
    ("invalid-resize-value",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1, requests: {cpu: 2}, allocated: {cpu: 1}, resize: Pending}\n",
     "pods[0].resize", "'Pending' is not one of"),
    ("requests-above-allocatable",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1, requests: {cpu: 5}, allocated: {cpu: 1}, resize: Deferred}\n",
     "pods[0].requests", "exceeds the node's allocatable"),
    ("deferred-with-requests-equal-to-allocated",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1, requests: {cpu: 2}, allocated: {cpu: 2}, resize: Deferred}\n",
     "pods[0].resize", "Deferred needs requests different from allocated"),
    ("resize-of-unknown-pod",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1, requests: {cpu: 1}}\n"
     "environment:\n  resizes:\n    - {pod: a, requests: {cpu: 2}}\n    - {pod: ghost, requests: {cpu: 2}}\n",
     "environment.resizes[1].pod", "unknown pod 'ghost'"),
    ("deletion-of-unknown-pod",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1, requests: {cpu: 1}}\n"
     "environment:\n  deletions: [a, ghost]\n",
     "environment.deletions[1]", "unknown pod 'ghost'"),
    ("nodes-not-a-list",
     "name: s\nnodes: {name: n1, allocatable: {cpu: 4}}\npods:\n  - {name: a, requests: {cpu: 1}}\n",
     "nodes", "expected a list"),
    ("max-events-negative",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1, requests: {cpu: 1}}\n"
     "environment:\n  deletions: [a]\n  maxEvents: -1\n",
     "environment.maxEvents", "must be at least 0"),
    # a few more that a hand-written file easily gets wrong
    ("cpu-finer-than-a-millicore",
     "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 0.0001}}\n",
     "pods[0].requests.cpu", "finer than 1m"),
    ("unknown-resource",
     "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1, gpu: 1}}\n",
     "pods[0].requests.gpu", "unknown field"),
    ("arrival-with-a-node",
     "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1}}\n"
     "environment:\n  arrivals:\n    - {name: b, node: n1, requests: {cpu: 1}}\n",
     "environment.arrivals[0].node", "unknown field"),
    ("resize-to-current-requests",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1, requests: {cpu: 1}}\n"
     "environment:\n  resizes:\n    - {pod: a, requests: {cpu: 1}}\n",
     "environment.resizes[0].requests", "not a resize"),
    ("missing-requests",
     "name: s\n" + nodes() + "pods:\n  - {name: a, node: n1}\n",
     "pods[0].requests", "required field is missing"),
]


@pytest.mark.parametrize("text, field, problem", [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_malformed_scenario_names_file_and_field(tmp_path, text, field, problem):
    path = write(tmp_path, text)
    message = refused(path)
    assert f": {field}: " in message, message
    assert problem in message, message


def test_empty_file(tmp_path):
    for text in ("", "# only a comment\n"):
        message = refused(write(tmp_path, text))
        assert "empty" in message


def test_invalid_yaml_syntax_names_the_line(tmp_path):
    path = write(tmp_path, "name: s\nnodes: [\n  - name: n1\npods: []\n")
    message = refused(path)
    assert "invalid YAML" in message
    assert ": line " in message


def test_document_that_is_not_a_mapping(tmp_path):
    message = refused(write(tmp_path, "- name: s\n"))
    assert "expected a mapping" in message


def test_missing_file(tmp_path):
    message = refused(tmp_path / "absent.yaml")
    assert "cannot read file" in message


def test_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "binary.yaml"
    path.write_bytes(b"name: s\n\xff\xfe\n")
    refused(path)


def test_duplicate_key_in_a_mapping(tmp_path):
    path = write(tmp_path, "name: s\n" + nodes() + "pods:\n  - {name: a, requests: {cpu: 1}, requests: {cpu: 2}}\n")
    message = refused(path)
    assert "line 6" in message and "duplicate key 'requests'" in message


def test_error_without_a_field_still_names_the_source():
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(None, "inline")
    assert str(caught.value) == "inline: the file is empty"


def test_the_good_base_file_loads(tmp_path):
    scenario = load_scenario(write(tmp_path, GOOD))
    assert [pod.name for pod in scenario.pods] == ["web", "batch"]
    assert scenario.max_events == 1
    assert scenario.source == str(tmp_path / "scenario.yaml")


# --- shipped scenarios and units ---------------------------------------------------------------------

def test_every_shipped_scenario_loads():
    scenarios = default_scenarios()
    files = sorted(SCENARIO_DIR.glob("*.yaml"))
    assert len(scenarios) == len(files) >= 13
    assert len({s.name for s in scenarios}) == len(scenarios)
    for scenario, path in zip(scenarios, files):
        assert scenario.source == f"spec/scenarios/{path.name}"  # clone-independent
        assert scenario.nodes and scenario.pods
        assert len(scenario.units) == len(scenario.resources)


def test_units_scale_to_the_common_divisor(tmp_path):
    path = write(tmp_path, """\
        name: units
        nodes:
          - name: n1
            allocatable: {cpu: "2", memory: 2Gi}
        pods:
          - {name: a, node: n1, requests: {cpu: 500m, memory: 512Mi}}
          - {name: b, node: n1, requests: {cpu: "1", memory: 1Gi}}
        """)
    scenario = load_scenario(path)
    assert scenario.resources == ("cpu", "memory")
    assert scenario.units == (500, 512 * 2**20)
    assert scenario.nodes[0].allocatable == (4, 4)
    assert [pod.requests for pod in scenario.pods] == [(1, 1), (2, 2)]
    assert scenario.format((1, 2)) == "cpu 500m, memory 1Gi"


def test_only_resources_used_are_modelled(tmp_path):
    path = write(tmp_path, 'name: cpu-only\nnodes:\n  - {name: n1, allocatable: {cpu: "4"}}\n'
                           "pods:\n  - {name: a, requests: {cpu: 1500m}}\n")
    scenario = load_scenario(path)
    assert scenario.resources == ("cpu",)
    assert scenario.units == (500,)
    assert scenario.pods[0].requests == (3,)


# --- Kubernetes' own rules (spec/kubernetes/api_validation.py), on Kubernetes' own test tables ----------------

# staging/src/k8s.io/apimachinery/pkg/util/validation/validation_test.go, TestIsDNS1123Subdomain
DNS1123_SUBDOMAIN_GOOD = [
    "a", "ab", "abc", "a1", "a-1", "a--1--2--b", "0", "01", "012", "1a", "1-a", "1--a--b--2",
    "a.a", "ab.a", "abc.a", "a1.a", "a-1.a", "a--1--2--b.a", "a.1", "ab.1", "abc.1", "a1.1", "a-1.1", "a--1--2--b.1",
    "0.a", "01.a", "012.a", "1a.a", "1-a.a", "0.1", "01.1", "012.1", "1a.1", "1-a.1", "1--a--b--2.1",
    "a.b.c.d.e", "aa.bb.cc.dd.ee", "1.2.3.4.5", "11.22.33.44.55", "a" * 253,
]
DNS1123_SUBDOMAIN_BAD = [
    "", "A", "ABC", "aBc", "A1", "A-1", "1-A", "-", "a-", "-a", "1-", "-1", "_", "a_", "_a", "a_b", "1_", "_1", "1_2",
    ".", "a.", ".a", "a..b", "1.", ".1", "1..2", " ", "a ", " a", "a b", "1 ", " 1", "1 2",
    "A.a", "aB.a", "ab.A", "A1.a", "a1.A", "A.1", "aB.1", "A1.1", "1A.1", "0.A", "01.A", "012.A", "1A.a", "1a.A",
    "A.B.C.D.E", "AA.BB.CC.DD.EE", "a.B.c.d.e", "aa.bB.cc.dd.ee", "a@b", "a,b", "a;b", "a:b", "a%b", "a?b", "a$b",
    "a" * 254,
    "wéb", "٣", "a\n",  # and what Go's byte-wise regexp never meets: non-ASCII letters and digits, a newline
]
# the same file, TestIsQualifiedName (content.IsLabelKey)
LABEL_KEY_GOOD = [
    "simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple", "now-with-dashes/simple",
    "now-with-dashes/now-with-dashes", "now.with.dots/simple", "now-with.dashes-and.dots/simple", "1-num.2-num/3-num",
    "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123", "example.com/Uppercase_Is_OK_123", "requests.storage-foo",
    "a" * 63, "a" * 253 + "/" + "b" * 63,
]
LABEL_KEY_BAD = [
    "nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash", "Example.com/abc",
    "example_com/abc", "example.com/", "/simple", "a" * 64, "a" * 254 + "/abc",
]


def test_pod_and_node_names_follow_is_dns1123_subdomain():
    assert [v for v in DNS1123_SUBDOMAIN_GOOD if dns1123_subdomain_problem(v)] == []
    assert [v for v in DNS1123_SUBDOMAIN_BAD if not dns1123_subdomain_problem(v)] == []


def test_opt_out_owners_follow_is_label_key():
    assert [v for v in LABEL_KEY_GOOD if label_key_problem(v)] == []
    assert [v for v in LABEL_KEY_BAD if not label_key_problem(v)] == []


def test_priorities_are_those_a_priority_class_can_have():
    good = [-(2**31), -1, 0, 10**9, 2 * 10**9, 2 * 10**9 + 1000]
    bad = [-(2**31) - 1, 10**9 + 1, 2 * 10**9 - 1, 2 * 10**9 + 1, 2**31 - 1, 2**31, 10**30]
    assert [v for v in good if priority_problem(v)] == []
    assert [v for v in bad if not priority_problem(v)] == []


def test_parse_scenario_refuses_hostile_python_values_briefly():
    """parse_scenario is also called with Python data (tests, the generator): a huge integer, a
    huge string or a tuple is refused with a short message, never printed whole."""
    base = {"name": "s", "nodes": [{"name": "n1", "allocatable": {"cpu": "4"}}]}
    for pod, field in (({"name": "a", "priority": 10**5000, "requests": {"cpu": 1}}, "pods[0].priority"),
                       ({"name": "a" * 10**6, "requests": {"cpu": 1}}, "pods[0].name"),
                       ({"name": ("a",), "requests": {"cpu": 1}}, "pods[0].name"),
                       ({"name": "a", "requests": {"cpu": 10**5000}}, "pods[0].requests.cpu")):
        with pytest.raises(ScenarioError) as caught:
            parse_scenario({**base, "pods": [pod]}, "inline")
        assert str(caught.value).startswith(f"inline: {field}: ") and len(str(caught.value)) < 300, str(caught.value)


def test_messages_quote_a_short_prefix():
    assert shown("x" * 1000) == repr("x" * SHOWN_CHARS) + "…"
    assert shown(["lol"] * 10**6) == "a list" and shown({"a": 1}) == "a mapping"
    assert shown(None) == "null" and shown(True) == "true" and shown(10**5000) == "a very large integer"
    assert str(ScenarioError("bad\nfile.yaml", "name", "x")) == "bad\\nfile.yaml: name: x"


# --- resizes as the API server takes them (issue 11, gaps 1 and 2) -------------------------------------

TWO_RESOURCES = """\
name: partial-resize
nodes:
  - {name: n1, allocatable: {cpu: "4", memory: 4Gi}}
pods:
  - {name: web, node: n1, priority: 10, requests: {cpu: "2", memory: 1Gi}}
environment:
  resizes: [RESIZES]
"""


def _two_resources(tmp_path, resizes: str):
    path = tmp_path / "partial.yaml"
    path.write_text(TWO_RESOURCES.replace("RESIZES", resizes))
    return path


def test_a_resize_naming_one_resource_keeps_the_others(tmp_path):
    """A strategic merge patch of ``/resize`` keeps the resources it leaves out (``kubectl patch``:
    "Update fields of a resource using strategic merge patch"): {memory: 2Gi} on a pod at cpu 2,
    memory 1Gi asks for cpu 2, memory 2Gi — never cpu 0."""
    from kepcheck.checks.result import replay
    from kepcheck.model.context import Context
    from kepcheck.spec.kep.variants import VARIANTS

    scenario = load_scenario(_two_resources(tmp_path, "{pod: web, requests: {memory: 2Gi}}"))
    assert scenario.format(scenario.resizes[0].requests) == "cpu 2, memory 2Gi"
    ctx = Context.build(scenario, VARIANTS[0], [])
    trace = replay(ctx, ["RequestResize(pod=web, requests=[cpu 2, memory 2Gi])"])
    assert ctx.format(trace.steps[-1][1].pods[0].desired) == "cpu 2, memory 2Gi"


@pytest.mark.parametrize("resizes, field, problem", [
    ('{pod: web, requests: {cpu: "5"}}', "environment.resizes[0].requests",
     "exceeds the allocatable of node 'n1': the API server rejects such a resize since v1.36"),
    ("{pod: web, requests: {memory: 5Gi}}", "environment.resizes[0].requests", "exceeds the allocatable of node 'n1'"),
    ('{pod: web, requests: {cpu: "3"}}, {pod: web, requests: {memory: 2Gi}}', "environment.resizes[1].requests",
     "names other resources than an earlier resize of pod 'web'"),
    ("{pod: web, requests: {memory: 1Gi}}", "environment.resizes[0].requests", "equals the pod's current requests"),
])
def test_resizes_the_api_server_rejects_are_refused(tmp_path, resizes, field, problem):
    path = _two_resources(tmp_path, resizes)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert str(caught.value).startswith(f"{path}: {field}: ") and problem in str(caught.value), str(caught.value)


def test_a_memory_only_resize_keeps_the_cpu_and_changes_a_verdict():
    """Scenario memory-resize-keeps-cpu: web's {memory: 3Gi} keeps its 2 cpu, so the pending pod late
    (2 cpu) never fits the 3-cpu node beside it. With the resize read as a whole vector — cpu 0, as the
    loader did before issue 11 — late is bound once web's resize is granted: PodAdmitted differs."""
    import dataclasses

    from kepcheck.checks.engines.explicit import check_explicit
    from kepcheck.model.context import Context
    from kepcheck.spec.kep.properties import property_by_name
    from kepcheck.spec.language.loader import default_scenarios
    from kepcheck.spec.kep.variants import variant_by_name

    scenario = next(s for s in default_scenarios() if s.name == "memory-resize-keeps-cpu")
    assert scenario.format(scenario.resizes[0].requests) == "cpu 2, memory 3Gi"
    zeroed = dataclasses.replace(scenario, resizes=(dataclasses.replace(scenario.resizes[0], requests=(0, 3)),))

    def admitted(s):
        (result,) = check_explicit(Context.build(s, variant_by_name("alpha-1.37")), [property_by_name("PodAdmitted")])
        return result.verdict
    assert admitted(scenario) == "violated"  # the witness is unreachable
    assert admitted(zeroed) == "holds"
