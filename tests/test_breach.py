"""Trace reports show the breach: the violating step marked, the property's own arithmetic there
(re-evaluated here with the model's functions), each node's allocatable and counted totals at every
step, and narratives that never say "changes nothing" of a step that changed the state."""

from __future__ import annotations

import re
from functools import lru_cache

import pytest

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES
from kepcheck.spec.kubernetes.quantities import parse_quantity
from kepcheck.spec.language.loader import default_scenarios
from kepcheck.spec.kep.variants import variant_by_name
from kepcheck.checks.outputs.breach import find_breach
from kepcheck.checks.outputs.describe import describe_trace
from kepcheck.checks.engines.explicit import check_explicit
from kepcheck.checks.outputs.trace_report import trace_markdown
from kepcheck.model.accounting.footprints import kubelet_resizing_pod_requests
from kepcheck.model.context import Context
from kepcheck.model.properties.explain import EXPLAIN, Tally
from kepcheck.model.expr.vectors import vmax, vmin
from kepcheck.model.mutants import MUTANTS
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.properties.eventually import LIVENESS, Response
from kepcheck.model.properties.capacity import kubelet_grants, scheduler_grants
from kepcheck.model.accounting.views import kubelet_fits_admission, kubelet_footprint, kubelet_free

from conftest import manifest, default_matrix

SPECS = {p.name: p for p in PROPERTIES}
ALWAYS_NAMES = [p.name for p in PROPERTIES if p.kind == ALWAYS]


@lru_cache(maxsize=None)
def violations() -> tuple:
    """(ctx, result) of every violated always- and eventually-property of the default matrix."""
    found = []
    for run in default_matrix():
        found += [(run.ctx, r) for r in run.results
                  if r.kind in (ALWAYS, EVENTUALLY) and r.verdict == "violated" and r.trace is not None]
    return tuple(found)


def _manifest_violated_always() -> list[str]:
    names = {key[2] for key, expectation in manifest().exceptions().items() if expectation.verdict == "violated"}
    return [name for name in ALWAYS_NAMES if name in names]


def _first_failure(ctx: Context, name: str, trace) -> int:
    """The first state (state scope) or step (step scope) where the predicate is false."""
    predicate = PREDICATES[name]
    for number, (action, state) in enumerate(trace.steps):
        if SPECS[name].scope == "state" and not predicate(ctx, state):
            return number
        if SPECS[name].scope == "step" and number and not predicate(ctx, trace.steps[number - 1][1], action, state):
            return number
    raise AssertionError(f"{name}: the trace never breaks its property")


def _marked_steps(text: str) -> list[int]:
    return [int(m.group(1)) for m in re.finditer(r"^\| (\d+) ✗[^|]*\|", text, re.MULTILINE)]


def _explanation(ctx: Context, name: str, trace, number: int) -> list:
    state = trace.steps[number][1]
    if SPECS[name].scope == "state":
        return EXPLAIN[name](ctx, state)
    return EXPLAIN[name](ctx, trace.steps[number - 1][1], trace.steps[number][0], state)


def _term_from_model(ctx: Context, trace, number: int, t: Tally, index: int, role: str) -> tuple:
    """What the model's own functions say the term of pod ``index`` in role ``role`` is."""
    action, after = trace.steps[number]
    before = trace.steps[number - 1][1] if number else after
    pod = after.pods[index]
    if role in ("grant", "allocation"):
        grants = (scheduler_grants(ctx, action, after) if role == "grant" else kubelet_grants(ctx, before, after))
        return next(tuple(size) for c, claimant, node, size in grants if c and claimant == index)
    if role == "resize":
        return kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    if role in ("request", "bound", "nominated"):
        return tuple(pod.desired)
    if role == "promise":
        return vmax(kubelet_footprint(pod), vmin(pod.desired, pod.promised))
    if role == "kept" or t.claim == "victim-kept":
        return tuple(kubelet_footprint(before.pods[index]))
    return tuple(kubelet_footprint(pod))


def _check_tally(ctx: Context, trace, number: int, t: Tally) -> None:
    state = trace.steps[number][1]
    assert t.allocatable == tuple(ctx.allocatable[t.node])
    assert t.breached
    for index, role, vector in t.terms:
        assert tuple(vector) == tuple(_term_from_model(ctx, trace, number, t, index, role)), (index, role)
    assert tuple(map(sum, zip(*(v for _, _, v in t.terms)))) == t.total
    if ctx.mutants:  # a mutant may change what the kubelet's own admission counts (kubelet_free)
        return
    used = tuple(a - f for a, f in zip(ctx.allocatable[t.node], kubelet_free(ctx, state, t.node)))
    if t.claim == "kubelet-total":
        assert t.total == used
    if t.claim == "kubelet-admission":
        assert not kubelet_fits_admission(ctx, state, t.claimant)
        assert t.total == tuple(u + d for u, d in zip(used, state.pods[t.claimant].desired))


def _check_lines(ctx: Context, text: str) -> int:
    """Every arithmetic line of the report adds up and compares as it says; returns how many."""
    count = 0
    pattern = r"\((\w+)\): ([^=\n]+) = (\S+) ([>≤]) (\S+) allocatable"
    for resource, terms, total, sign, limit in re.findall(pattern, text):
        def amount(text: str) -> int:
            return parse_quantity(text, resource)
        values = [amount(v) for v in re.findall(r" ([0-9][0-9.]*[a-zA-Z]*)(?: \([a-z :]+\))?(?: \+|$)", " " + terms)]
        assert values and sum(values) == amount(total), terms
        assert (amount(total) > amount(limit)) == (sign == ">")
        count += 1
    return count


@pytest.mark.slow
@pytest.mark.parametrize("name", _manifest_violated_always())
def test_report_marks_the_violating_step_and_its_arithmetic_is_true(name):
    cases = [(ctx, r) for ctx, r in violations() if r.property == name]
    assert cases, f"{name} is violated in the manifest but no trace was found"
    for ctx, result in cases:
        step = _first_failure(ctx, name, result.trace)
        breach = find_breach(ctx, result)
        assert breach is not None and breach.step == step and breach.lines, (ctx.scenario.name, ctx.variant.name)
        text = trace_markdown(ctx, result)
        assert _marked_steps(text) == [step]
        parts = _explanation(ctx, name, result.trace, step)
        assert parts, (name, ctx.scenario.name, ctx.variant.name)
        tallies = [p for p in parts if isinstance(p, Tally)]
        for t in tallies:
            _check_tally(ctx, result.trace, step, t)
        assert _check_lines(ctx, text) >= len(tallies)


def test_every_always_property_the_manifest_violates_is_tested():
    assert set(_manifest_violated_always()) == {r.property for _, r in violations() if r.kind == ALWAYS}


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if SPECS[m.property].kind == ALWAYS], ids=lambda m: m.name)
def test_mutant_breach_is_explained(mutant):
    scenario = next(s for s in default_scenarios() if s.name == mutant.scenario)
    ctx = Context.build(scenario, variant_by_name(mutant.variant), [mutant])
    result = next(r for r in check_explicit(ctx, [SPECS[mutant.property]]) if r.property == mutant.property)
    breach = find_breach(ctx, result)
    assert breach is not None and breach.step == _first_failure(ctx, mutant.property, result.trace)
    assert breach.lines
    for part in _explanation(ctx, mutant.property, result.trace, breach.step):
        if isinstance(part, Tally):
            _check_tally(ctx, result.trace, breach.step, part)


def test_no_changes_nothing_on_a_step_that_changed_the_state():
    checked = 0
    for ctx, result in violations():
        steps = result.trace.steps
        for step in describe_trace(ctx, result.trace)[1:]:
            before, after = steps[step.number - 1][1], steps[step.number][1]
            if "changes nothing" in step.clause:
                checked += 1
                assert before == after, (ctx.scenario.name, ctx.variant.name, result.property, step.number)
            if not step.changes:
                assert before.pods == after.pods and before.retry_due == after.retry_due, step.label
    assert checked  # self-loops of lassos are told as changing nothing


def test_every_trace_report_shows_each_node_allocatable_and_no_negative_capacity():
    for ctx, result in violations():
        text = trace_markdown(ctx, result)
        nodes = next(line for line in text.splitlines() if line.startswith("- **Nodes:**"))
        rows = [line for line in text.splitlines() if re.match(r"^\| \d+", line)]
        assert len(rows) == len(result.trace.steps)
        for node in ctx.node_range:
            allocatable = ctx.format(ctx.allocatable[node])
            assert f"{ctx.node_names[node]}: allocatable {allocatable}" in nodes
            for row in rows:
                used = row.split(" | ")[4]
                assert used.count("scheduler ") == used.count("kubelet ") == len(ctx.node_names)
                for resource, value in zip(ctx.scenario.resources, allocatable.split(", ")):
                    assert f"/{value.split(' ')[1]}" in used
                assert not re.search(r"-\d", used)


def test_lasso_breach_names_the_goal_never_reached_on_the_loop():
    lassos = [(ctx, r) for ctx, r in violations() if r.kind == EVENTUALLY]
    assert lassos
    for ctx, result in lassos:
        breach = find_breach(ctx, result)
        liveness = LIVENESS[result.property]
        assert breach is not None and breach.step is None and breach.lines, result.property
        if isinstance(liveness, Response):
            loop = [state for _, state in result.trace.steps[result.trace.loop:]]
            for line in breach.lines:
                index = ctx.pod_index(line.split(":")[0])
                assert liveness.goal_words in line
                assert not any(liveness.goal(ctx, state, index) for state in loop)
        assert "## The breach" in trace_markdown(ctx, result)


def test_kubelet_honors_reservation_fires_on_admission_and_says_so():
    admissions = [r for _, r in violations() if r.property == "KubeletHonorsReservation"
                  and r.trace.steps[-1][0].name == "AdmitPod"]
    assert admissions  # the predicate judges admissions too (the allocation grows from 0)
    assert "admits" in SPECS["KubeletHonorsReservation"].meaning
