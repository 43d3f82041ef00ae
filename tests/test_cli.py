"""The command line: JSON schema, exit codes, errors on bad input, deterministic output."""

from __future__ import annotations

import json

import pytest

from kepcheck.spec.kep.manifest import Expectation, Manifest
from kepcheck.checks import run as run_module
from kepcheck.checks.cli import main as cli

RECORD_KEYS = {"scenario", "variant", "property", "kind", "engine", "verdict", "expected", "states", "transitions",
               "depth", "seconds", "reason", "trace"}


def run(capsys, *argv):
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_list_json(capsys):
    code, out, _ = run(capsys, "list", "--json")
    document = json.loads(out)
    assert code == 0
    assert {"scenarios", "variants", "properties", "mutants"} <= set(document)
    assert "alpha-1.37" in [v["name"] for v in document["variants"]]


def test_check_json_schema_and_itf_trace(capsys):
    code, out, _ = run(capsys, "check", "--scenario", "deferred-upsize-one-victim", "--variant", "allocated-only",
                       "--json")
    assert code == 0
    records = json.loads(out)
    assert records and all(set(r) == RECORD_KEYS for r in records)
    violation = next(r for r in records if r["property"] == "NoDoubleReservation")
    assert violation["verdict"] == violation["expected"] == "violated"
    itf = violation["trace"]
    assert set(itf) >= {"#meta", "vars", "states"}
    assert itf["states"][0]["#meta"]["action"] == "init"
    assert itf["states"][-1]["#meta"]["action"].startswith("BindPod(pod=late")
    assert all(set(state) >= set(itf["vars"]) | {"#meta"} for state in itf["states"])


def test_every_default_scenario_prints_records(capsys):
    code, out, _ = run(capsys, "check", "--variant", "alpha-1.37", "--json")
    assert code == 0
    records = json.loads(out)
    assert {r["scenario"] for r in records} >= {"deferred-upsize-one-victim", "two-nodes"}
    assert {r["verdict"] for r in records} <= {"holds", "violated", "inconclusive", "not-checked"}


def test_scenario_file_outside_the_manifest_has_no_expectation(capsys, tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: mine\nnodes: [{name: n1, allocatable: {cpu: 2}}]\npods: [{name: a, node: n1, requests: {cpu: 1}}]\n")
    code, out, _ = run(capsys, "check", "--scenario", str(path), "--variant", "alpha-1.37", "--json")
    assert code == 0
    assert all(r["expected"] is None for r in json.loads(out))


@pytest.mark.parametrize("text,field", [
    ("name: bad\nnodes: [{name: n1, allocatable: {cpu: 5x}}]\npods: [{name: a, requests: {cpu: 1}}]\n",
     "nodes[0].allocatable.cpu"),
    ("name: bad\nnodes: [{name: n1, allocatable: {cpu: 0}}]\npods: [{name: a, requests: {cpu: 1}}]\n",
     "nodes[0].allocatable.cpu"),
    ("name: bad\nnodes: [{name: n1, allocatable: {cpu: 2}}]\npods: [{name: a, node: n9, requests: {cpu: 1}}]\n",
     "pods[0].node"),
    ("name: bad\nnodes: [{name: n1, allocatable: {cpu: 2}}]\npods: [{name: a, colour: red, requests: {cpu: 1}}]\n",
     "pods[0].colour"),
])
def test_malformed_scenario_file_exits_2_with_one_line(capsys, tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    code, out, err = run(capsys, "check", "--scenario", str(path))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and field in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [["check", "--variant", "nope"], ["check", "--property", "Nope"],
                                  ["check", "--scenario", "nope"], ["check", "--engine", "nope"],
                                  ["check", "--max-states", "0"], ["replay", "--scenario", "two-nodes", "Nope(pod=x)"]])
def test_usage_errors_exit_2(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_unknown_subcommand_exits_2(capsys):
    with pytest.raises(SystemExit) as caught:
        cli.main(["frobnicate"])
    assert caught.value.code == 2


def test_differing_verdict_exits_1(capsys, monkeypatch):
    wrong = Manifest(["deferred-upsize-one-victim"],
                     {("deferred-upsize-one-victim", "alpha-1.37", "NoDoubleReservation"): Expectation("violated", "x", "y")})
    monkeypatch.setattr(run_module, "load_manifest", lambda names: wrong)
    run_module._shipped.cache_clear()  # the shipped scenarios and their manifest are read once per process
    try:
        code, out, _ = run(capsys, "check", "--scenario", "deferred-upsize-one-victim", "--variant", "alpha-1.37")
    finally:
        run_module._shipped.cache_clear()
    assert code == 1
    assert "expected violated" in out


def test_budget_hit_is_inconclusive_and_exits_3(capsys):
    code, out, _ = run(capsys, "check", "--scenario", "resize-superseded", "--variant", "alpha-1.37",
                       "--max-states", "3", "--json")
    assert code == 3
    verdicts = {r["property"]: r["verdict"] for r in json.loads(out)}
    assert "holds" not in {v for k, v in verdicts.items() if k in ("KubeletNeverOvercommits", "NoDoubleReservation")}


@pytest.mark.slow
def test_output_is_deterministic(capsys):
    def once():
        _, out, _ = run(capsys, "check", "--variant", "alpha-1.37", "--variant", "allocated-only", "--json")
        records = json.loads(out)
        for record in records:
            record.pop("seconds")
        return records

    assert once() == once()


def test_replay_prints_the_trace(capsys):
    code, out, _ = run(capsys, "replay", "--scenario", "additional-preemption", "PreemptForResize(pod=pod1)")
    assert code == 0
    assert "pod2: Running → Terminating (DisruptionTarget: preempted for pod1)" in out
    assert out.strip().splitlines()[-1] == ('replay: kepcheck replay --scenario additional-preemption --variant '
                                            'alpha-1.37 "PreemptForResize(pod=pod1)"')
