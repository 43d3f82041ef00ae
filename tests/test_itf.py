"""ITF files (checks/outputs/itf.py) that the format's own tools load: every trace of the default matrix
written as ``.itf.json``, loaded with itf-py (the ITF library of the format's authors) and compared
value by value with the model's states; Kubernetes names that are not record fields
(``web-frontend``, ``node-a``); lassos whose loop ends at the last state (Apalache ADR-015); the one
sentinel; Quint's ``mbt::actionTaken``/``mbt::nondetPicks``; and the reader ``load_itf`` with
``itf_actions``, whose actions replay to the trace that was written.

The matrix is checked once per module (about 10 s) and every trace with one (violations and
witnesses, a superset of the files the review report writes) is written with ``write_itf``.
"""

from __future__ import annotations

import json
from pathlib import Path

import itf_py
import pytest

from kepcheck.spec.kep.properties import PROPERTIES
from kepcheck.spec.language.loader import ScenarioError, default_scenarios, load_scenario
from kepcheck.spec.kep.variants import variant_by_name
from kepcheck.spec.kep.vocabulary import ResizeReason

from kepcheck.checks.outputs import describe
from kepcheck.checks.outputs.itf import (ACTION_TAKEN, INIT, ITF_VARS, NONDET_PICKS, PHASE_WORDS, QUEUE_WORDS, REASON_WORDS,
                                 UNSET, ItfError, itf_actions, itf_loop, itf_setting, load_itf, state_values,
                                 trace_to_itf)
from kepcheck.checks.result import replay
from kepcheck.checks.run import run_checks
from kepcheck.checks.outputs.trace_report import trace_file_name, write_itf
from kepcheck.model.actions.next import find_step
from kepcheck.model.step import Action, Requests
from kepcheck.model.context import Context

from conftest import default_matrix

NAMED_SCENARIO = """\
name: hyphenated-names
description: later-competing-resize on node-a, with Kubernetes names that are not record field names.
nodes:
  - name: node-a
    allocatable: {cpu: "5"}
  - name: node-b
    allocatable: {cpu: "2"}
pods:
  - {name: web-frontend, node: node-a, priority: 100, requests: {cpu: "4"}, allocated: {cpu: "2"}, resize: Deferred}
  - {name: log-helper, node: node-a, priority: 50, requests: {cpu: "1"}}
  - {name: batch-victim, node: node-a, priority: 10, requests: {cpu: "1"}}
  - {name: idle-b, node: node-b, priority: 10, requests: {cpu: "1"}}
environment:
  resizes:
    - {pod: log-helper, requests: {cpu: "2"}}
  arrivals:
    - {name: late-arrival, priority: 5, requests: {cpu: "1"}}
  maxEvents: 1
"""


def _written(outcome, out: Path) -> list:
    """(ctx, result, path) for every result with a trace, its ITF written under ``out``."""
    written = []
    for run in outcome:
        for result in run.results:
            if result.trace is not None:
                written.append((run.ctx, result, write_itf(run.ctx, result, out / trace_file_name(result))))
    return written


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    outcome = default_matrix()
    return _written(outcome, tmp_path_factory.mktemp("itf"))


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    folder = tmp_path_factory.mktemp("named")
    (folder / "hyphenated.yaml").write_text(NAMED_SCENARIO, encoding="utf-8")
    scenario = load_scenario(folder / "hyphenated.yaml")
    outcome = run_checks([scenario], [variant_by_name("alpha-1.37")], list(PROPERTIES))
    return _written(outcome, folder / "traces")


def _plain(value):
    """An itf-py value (or one of ``state_values``) as plain dicts, tuples and scalars, with record
    field names and variant tags kept (tuple equality alone would ignore them)."""
    if hasattr(value, "_fields"):
        fields = {name: _plain(item) for name, item in value._asdict().items()}
        return {"#variant": type(value).__name__, **fields} if hasattr(type(value), "_itf_variant") else fields
    if isinstance(value, dict):
        return {"#map": {_plain(k): _plain(v) for k, v in value.items()}}
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return value


def _assert_loads_and_round_trips(ctx: Context, result, path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    loaded = itf_py.trace_from_json(document)
    steps = list(result.trace.steps)[:len(document["states"])]
    assert loaded.vars == list(ITF_VARS) and loaded.loop == result.trace.loop, path.name
    for index, (state, (action, expected)) in enumerate(zip(loaded.states, steps)):
        assert set(state.values) == set(ITF_VARS), (path.name, index)
        assert _plain(state.values) == _plain(state_values(ctx, expected, action)), (path.name, index)
        assert itf_py.state_to_json(state) == document["states"][index], (path.name, index)  # encodes back the same


@pytest.mark.slow
def test_every_itf_file_of_the_matrix_loads_with_itf_py_and_round_trips(matrix):
    lassos = 0
    for ctx, result, path in matrix:
        _assert_loads_and_round_trips(ctx, result, path)
        lassos += result.trace.loop is not None
    assert len(matrix) > 500 and lassos > 50  # the whole matrix, its liveness counterexamples included


def test_names_that_are_not_field_names_are_map_keys(named):
    assert named, "the hyphenated scenario reports no trace"
    for ctx, result, path in named:
        _assert_loads_and_round_trips(ctx, result, path)
        document = load_itf(path)
        pods = dict(document["states"][0]["pods"]["#map"])
        assert set(pods) == {"web-frontend", "log-helper", "batch-victim", "idle-b", "late-arrival"}
        assert pods["web-frontend"]["node"] == "node-a"
        assert dict(document["states"][0]["kubeletRetryDue"]["#map"]) == {"node-a": False, "node-b": False}
        scenario, variant, mutants = itf_setting(document, str(path))
        again = replay(Context.build(load_scenario(scenario), variant_by_name(variant)), itf_actions(document))
        assert again.steps == result.trace.steps, path.name


@pytest.mark.slow
def test_labels_read_back_replay_to_the_same_trace(matrix):
    for ctx, result, path in matrix:
        document = load_itf(path)
        assert itf_setting(document) == (ctx.scenario.name, ctx.variant.name, ())
        again = replay(ctx, itf_actions(document))
        assert again.steps == result.trace.steps, path.name
        assert itf_loop(document) == result.trace.loop, path.name


@pytest.mark.slow
def test_a_lasso_ends_its_loop_at_the_last_state(matrix):
    """ADR-015: ``loop`` is the index of the state the loop starts from and the loop ends in the last
    state, so the last state's successor (by ``#meta.loopAction``) is ``states[loop]``; no state is
    repeated to close the loop."""
    closed = 0
    for ctx, result, path in matrix:
        trace, document = result.trace, load_itf(path)
        if trace.loop is None:
            assert "loop" not in document and len(document["states"]) == len(trace.steps), path.name
            continue
        assert document["loop"] == trace.loop, path.name
        if trace.loop == len(trace.steps) - 1:  # stays in its last state forever: no action closes it
            assert len(document["states"]) == len(trace.steps) and "loopAction" not in document["#meta"]
            continue
        closed += 1
        assert len(document["states"]) == len(trace.steps) - 1, path.name
        last = trace.steps[len(document["states"]) - 1][1]
        _, successor = find_step(ctx, last, document["#meta"]["loopAction"])
        assert successor == trace.steps[trace.loop][1], path.name
    assert closed > 0


def _string_values(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _string_values(item)
    elif isinstance(value, list):
        for item in value:
            yield from _string_values(item)


@pytest.mark.slow
def test_one_sentinel_for_a_field_not_set(matrix):
    unset = dict.fromkeys(("node", "nominatedNodeName", "preemptedFor", "podResizePending"), 0)
    for ctx, _, path in matrix:
        document = load_itf(path)
        nodes, pods = set(ctx.node_names) | {UNSET}, set(ctx.names) | {UNSET}
        for state in document["states"]:
            assert "none" not in set(_string_values({k: v for k, v in state.items() if k != "#meta"})), path.name
            for _, pod in state["pods"]["#map"]:
                assert pod["node"] in nodes and pod["nominatedNodeName"] in nodes and pod["preemptedFor"] in pods
                assert pod["podResizePending"] in {UNSET, "Deferred", "Infeasible"}
                for field in unset:
                    unset[field] += pod[field] == UNSET
    assert all(unset.values()), unset  # every sentinel field is unset somewhere: the check has teeth


def _actions_of(state: dict) -> Action:
    return itf_actions({"states": [{ACTION_TAKEN: INIT, NONDET_PICKS: {}}, state]})[0]


@pytest.mark.slow
def test_action_taken_and_nondet_picks_as_quint_writes_them(matrix):
    for _, result, path in matrix:
        states = load_itf(path)["states"]
        assert states[0][ACTION_TAKEN] == INIT and states[0][NONDET_PICKS] == {}
        assert states[0]["#meta"]["action"] == INIT
        for state, (action, _) in zip(states[1:], result.trace.steps[1:]):
            assert state[ACTION_TAKEN] == action.name, path.name
            assert state[NONDET_PICKS] == {k: {"tag": "Some", "value": v.mapping() if isinstance(v, Requests) else v}
                                           for k, v in action.params}, path.name
            assert _actions_of(state) == action  # read back to the same value
            assert list(state[NONDET_PICKS]) == [k for k, _ in action.params]
            assert state["#meta"]["action"] == action.label()


def test_itf_words_are_the_step_describers_words():
    assert PHASE_WORDS == describe.PHASES and QUEUE_WORDS == describe.QUEUES
    assert REASON_WORDS == {**describe.REASONS, ResizeReason.NONE: UNSET}


# --- the reader's errors -------------------------------------------------------------------------------

def _good_document() -> dict:
    scenario = next(s for s in default_scenarios() if s.name == "deferred-upsize-one-victim")
    ctx = Context.build(scenario, variant_by_name("alpha-1.37"))
    return trace_to_itf(ctx, replay(ctx, ["PreemptForResize(pod=web)", "FinishTermination(pod=batch)"]))


def _set_first_pod_key(document: dict, key: str) -> dict:
    document["states"][0]["pods"] = {key: document["states"][0]["pods"]["#map"][0][1]}
    return document


def _take(state: dict, name: str, label: str) -> None:
    state[ACTION_TAKEN] = name
    state["#meta"]["action"] = label


def _edit(change):
    document = _good_document()
    change(document)
    return json.dumps(document)


BAD_FILES = {
    "not JSON": ("{\"vars\": [", "not JSON"),
    "not an object": ("[1, 2]", "no JSON object"),
    "missing states": (json.dumps({"vars": ["pods"]}), "states: missing"),
    "empty states": (json.dumps({"vars": [], "states": []}), "states: empty"),
    "record keyed by a name": (json.dumps(_set_first_pod_key(_good_document(), "low-a")), "itf-py cannot load"),
    "variable missing": (_edit(lambda d: d["states"][1].pop("pods")), "states[1]: no value for pods"),
    "loop out of range": (_edit(lambda d: d.update(loop=7)), "loop: 7 is not the index"),
    "unknown action": (_edit(lambda d: _take(d["states"][2], "EvictEverything", "EvictEverything(pod=batch)")),
                       "states[2]: unknown action 'EvictEverything'"),
    "actions disagree": (_edit(lambda d: d["states"][1]["#meta"].update(action="PreemptForResize(pod=batch)")),
                         "say PreemptForResize(pod=web) but #meta.action says"),
    "loopAction without loop": (_edit(lambda d: d["#meta"].update(loopAction="FinishTermination(pod=batch)")),
                                "#meta.loopAction"),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_load_itf_refuses_a_bad_file_in_one_line(case, tmp_path):
    text, problem = BAD_FILES[case]
    path = tmp_path / "trace.itf.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ItfError) as raised:
        load_itf(path)
    message = str(raised.value)
    assert isinstance(raised.value, ScenarioError) and "\n" not in message
    assert message.startswith(str(path)) and problem in message, message


def test_load_itf_refuses_what_is_not_a_file(tmp_path):
    for path in (tmp_path, tmp_path / "missing.itf.json"):
        with pytest.raises(ItfError, match=str(path)):
            load_itf(path)


def test_the_good_document_loads(tmp_path):
    path = tmp_path / "trace.itf.json"
    path.write_text(json.dumps(_good_document()), encoding="utf-8")
    assert [a.label() for a in itf_actions(load_itf(path))] == ["PreemptForResize(pod=web)", "FinishTermination(pod=batch)"]
    assert itf_loop(load_itf(path)) is None


def test_a_run_that_stays_in_its_last_state_has_no_loop_action():
    scenario = next(s for s in default_scenarios() if s.name == "deferred-upsize-one-victim")
    ctx = Context.build(scenario, variant_by_name("alpha-1.37"))
    finite = replay(ctx, ["PreemptForResize(pod=web)", "FinishTermination(pod=batch)"])
    stays = type(finite)(finite.steps, loop=len(finite.steps) - 1)
    document = trace_to_itf(ctx, stays)
    assert document["loop"] == 2 and len(document["states"]) == 3 and "loopAction" not in document["#meta"]
    assert itf_actions(document) == finite.actions and itf_loop(document) == stays.loop
    with pytest.raises(ValueError, match="is not the state of step 0"):
        trace_to_itf(ctx, type(finite)(finite.steps, loop=0))
