"""The symbolic engine (checks/symbolic/bmc.py) against the explicit engine (docs/style.md R12).

* BMC finds a violation of an ``always`` property iff the explicit engine does, at the same depth
  as the explicit engine's shortest counterexample, and every BMC trace replays (``check_bmc``
  replays before it reports; a trace that does not replay raises ``EngineError``).
* Every mutant registered against an ``always`` property is caught by BMC at its shortest length.
* k-induction proves every always property that holds on deferred-upsize-one-victim / alpha-1.37
  (and on the other default scenarios, except those listed in ``NOT_PROVED_ELSEWHERE``), with the
  strengthening invariants and preemption lemmas of ``model/properties/strengthening.py``, which themselves
  hold on every explored state of every scenario under every variant and are proved.
* Parametric mode: sizes symbolic in [1, 64] (KubeletNeverOvercommits, VictimsStrictlyLowerPriority,
  NoDoubleReservation proved).
* BMC assuming the proved invariants at every step gives the same verdicts as without.
"""

from __future__ import annotations

import pytest

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, property_by_name
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.checks.symbolic.bmc import check_bmc
from kepcheck.checks.symbolic.induction import check_induction, prove_lemmas, prove_strengthening
from kepcheck.checks.result import PROVED
from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.checks.result import replay
from kepcheck.model.context import Context
from kepcheck.model.mutants import MUTANTS
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.properties.strengthening import PREEMPTION_LEMMAS, STRENGTHENING

from conftest import SCENARIOS, context, cross_checked, results

ALWAYS_PROPERTIES = [p for p in PROPERTIES if p.kind == ALWAYS]

# The synchronous pairs of conftest.cross_checked, and a sample under the stale variants (whose
# unrollings are deeper and wider: resize-superseded alone takes a minute there).
SYNCHRONOUS = [v.name for v in VARIANTS if v.synchronous]
MATRIX = [(s, v) for v in SYNCHRONOUS for s in SCENARIOS if cross_checked(s, v)] + [
    ("later-competing-resize", "alpha-1.37-stale"), ("higher-priority-arrival", "beta-1.38-stale")]
HOLDING_DEPTH = 3  # BMC depth for a scenario where the explicit engine finds no violation at all
# The holding properties are unrolled as deep as the scenario's longest violation, but at most this
# deep: each step deeper roughly doubles the cost of proving no violation (deferred-resize-requested-
# again's 8-step violation made it 23 s at depth 8, 4 s at 6), and the explicit engine and induction
# prove them anyway.
HOLDING_DEPTH_CAP = 6


def _cross_check(scenario, variant, mutants=()):
    ctx = context(scenario, variant, mutants)
    explicit = results(scenario, variant, mutants)
    violated = [p for p in ALWAYS_PROPERTIES if explicit[p.name].verdict == "violated"]
    holding = [p for p in ALWAYS_PROPERTIES if p not in violated]
    depth = max((len(explicit[p.name].trace) for p in violated), default=HOLDING_DEPTH)
    bmc = check_bmc(ctx, violated, depth, strengthen=False) if violated else []  # see test_bmc_with_assumed_invariants
    bmc += check_bmc(ctx, holding, min(depth, HOLDING_DEPTH_CAP), strengthen=False) if holding else []
    for result in bmc:
        reference = explicit[result.property]
        if reference.verdict == "violated":
            assert result.verdict == "violated", result.property
            assert result.depth == len(reference.trace) == len(result.trace), result.property
            again = replay(ctx, result.trace.labels)
            assert again.steps[-1][1] == result.trace.steps[-1][1]
        else:
            assert reference.verdict == "holds", result.property
            assert result.verdict == "inconclusive" and "no violation" in result.reason, result.property


@pytest.mark.parametrize("scenario,variant", [case if i == 0 else pytest.param(*case, marks=pytest.mark.slow) for i, case in enumerate(MATRIX)],
                         ids=[f"{s}/{v}" for s, v in MATRIX])
def test_bmc_agrees_with_explicit(scenario, variant):
    _cross_check(scenario, variant)


ALWAYS_MUTANTS = [m for m in MUTANTS if property_by_name(m.property).kind == ALWAYS]


@pytest.mark.parametrize("mutant", [value if i == 0 else pytest.param(value, marks=pytest.mark.slow) for i, value in enumerate(ALWAYS_MUTANTS)], ids=lambda m: m.name)
def test_bmc_catches_mutant(mutant):
    ctx = context(mutant.scenario, mutant.variant, (mutant.name,))
    result, = check_bmc(ctx, [property_by_name(mutant.property)], mutant.shortest)
    assert result.verdict == "violated"
    assert result.depth == mutant.shortest == len(result.trace)


def test_no_double_reservation_violation_allocated_only():
    ctx = context("deferred-upsize-one-victim", "allocated-only")
    result, = check_bmc(ctx, [property_by_name("NoDoubleReservation")], 6)
    assert result.verdict == "violated" and result.depth == 5


def test_parametric_violation_replays_with_chosen_sizes():
    ctx = context("deferred-upsize-one-victim", "allocated-only")
    result, = check_bmc(ctx, [property_by_name("NoDoubleReservation")], 5, parametric=(1, 64))
    assert result.verdict == "violated"
    assert "sizes chosen:" in result.reason and "[1, 64]" in result.reason
    # rebuild the concrete scenario from the reported sizes and replay the labels there
    chosen = dict(part.split("=") for part in result.reason.split(";")[0][len("sizes chosen: "):].split(", "))
    scenario = SCENARIOS["deferred-upsize-one-victim"]
    from dataclasses import replace

    def size(name):
        return (int(chosen[f"{name}.cpu"]),)
    pods = tuple(replace(p, requests=size(f"{p.name}.requests"),
                         allocated=size(f"{p.name}.allocated") if p.allocated is not None else None)
                 for p in scenario.pods)
    nodes = tuple(replace(n, allocatable=size(f"allocatable.{n.name}")) for n in scenario.nodes)
    concrete = Context.build(replace(scenario, pods=pods, nodes=nodes), ctx.variant)
    trace = replay(concrete, result.trace.labels)
    before, after = trace.steps[-2][1], trace.steps[-1][1]
    from kepcheck.model.actions.next import next_steps

    action = next(a for a, _ in next_steps(concrete, before) if a.label() == result.trace.labels[-1])
    assert not PREDICATES["NoDoubleReservation"](concrete, before, action, after)


@pytest.mark.parametrize("variant", [value if i == 0 else pytest.param(value, marks=pytest.mark.slow) for i, value in enumerate(SYNCHRONOUS)])
def test_strengthening_holds_on_every_explored_state(variant):
    """Every strengthening invariant (including those conditional on the variant or the menu, which
    are then trivially true) holds on every state the explicit engine explores, and every
    preemption lemma does except where ``LEMMA_FAILS`` says (the lemma is then not proved, below)."""
    failing = set()
    for name in SCENARIOS:
        ctx = context(name, variant)
        states = explore(kep_system(ctx, []), keep_graph=True).graph.explored
        for state in states:
            for invariant_name, invariant in STRENGTHENING.items():
                assert invariant(ctx, state), (name, invariant_name, state)
            failing |= {(name, lemma) for lemma, claim in PREEMPTION_LEMMAS.items() if not claim(ctx, state)}
    assert failing <= LEMMA_FAILS, failing


# (scenario, lemma) where a preemption lemma is false on some reachable state (under alpha-1.37 at
# least): a resize lowered below the request its victims were evicted for, but still above the
# allocation, makes such a victim fit again while a smaller running pod below it does not.
LEMMA_FAILS = {("resize-lowered-while-victims-terminate", "ReprieveNeverTrades")}


@pytest.mark.slow
@pytest.mark.parametrize("scenario,lemma", sorted(LEMMA_FAILS))
def test_a_false_lemma_is_not_proved_nor_assumed(scenario, lemma):
    """Soundness of the second tier: where a lemma is false, its proof fails (the base case finds the
    reachable state), and check_induction says so instead of assuming it."""
    ctx = context(scenario, "alpha-1.37")
    proved, _, reason = prove_lemmas(ctx, 3)
    assert not proved, reason
    result, = check_induction(ctx, [property_by_name("ConditionsTruthful"), property_by_name("NoVictimWithoutNeed")], 3)[1:]
    assert result.verdict == PROVED and "preemption lemmas not proved" in result.reason, result.reason


@pytest.mark.parametrize("scenario,variant", [("deferred-upsize-one-victim", "alpha-1.37"),
                                              ("deferred-upsize-one-victim", "allocated-only"),
                                              ("resize-superseded", "alpha-1.37")])
def test_strengthening_is_inductive(scenario, variant):
    proved, k, reason = prove_strengthening(context(scenario, variant), 2)
    assert proved, reason


@pytest.mark.parametrize("scenario", ["resize-superseded", "resize-races-binding"])
def test_strengthening_lemmas_are_inductive(scenario):
    """The preemption lemmas, with the catalog state properties they rest on, are proved assuming the
    strengthening invariants (the scenarios where each part of the basis is needed)."""
    proved, k, reason = prove_lemmas(context(scenario, "alpha-1.37"), 3)
    assert proved, reason


def test_no_strengthening_is_claimed_for_the_stale_view():
    """The invariants describe the synchronous scheduler: under a stale variant they are neither
    proved nor assumed, and induction says so."""
    ctx = context("deferred-upsize-one-victim", "alpha-1.37-stale")
    proved, _, reason = prove_strengthening(ctx, 2)
    assert not proved and "no strengthening invariants" in reason
    for result in check_induction(ctx, [property_by_name("KubeletNeverOvercommits")], 1):
        assert result.verdict != PROVED or "strengthening" not in result.reason, result.reason


@pytest.mark.slow
def test_bmc_with_assumed_invariants_agrees_without():
    """Assuming the proved invariants at every step changes no BMC verdict or depth."""
    ctx = context("deferred-upsize-one-victim", "allocated-only")
    with_inv = check_bmc(ctx, ALWAYS_PROPERTIES, 5)
    without = check_bmc(ctx, ALWAYS_PROPERTIES, 5, strengthen=False)
    assert [(r.verdict, r.depth) for r in with_inv] == [(r.verdict, r.depth) for r in without]


# Every always property that holds on deferred-upsize-one-victim under alpha-1.37 (spec/kep/manifest.yaml)
# is proved by 1-induction with the strengthening invariants of model/properties/strengthening.py.
HOLDING_HERE = tuple(p.name for p in ALWAYS_PROPERTIES)


@pytest.mark.slow
def test_induction_proves():
    ctx = context("deferred-upsize-one-victim", "alpha-1.37")
    for result in check_induction(ctx, [property_by_name(n) for n in HOLDING_HERE], 2):
        assert result.verdict == PROVED, (result.property, result.reason)
        assert f"{result.depth}-induction" in result.reason


# (scenario, properties not proved by k <= 3 under alpha-1.37): every other always property that the
# manifest says holds there is proved (measured; see bench/bench_symbolic.py). The preemption lemma
# ReprieveNeverTrades (model/properties/strengthening/) closed the gaps of the scenarios without budgets; with a
# PodDisruptionBudget the reprieve order depends on the budget's status when the victims were chosen,
# which no state keeps, so the lemmas that carry NoDoublePreemption are not stated there
# (history.resize_preemptors_under_max_accounting) and its induction step has a counterexample at k = 3.
# In older-deferred-resize-first KubeletHonorsReservation rests on the kubelet retrying the older
# PodResizePending condition first, and no lemma yet relates the conditions' ages to the scheduler's
# resize promises: its induction step has a counterexample at k = 3 (a state where the younger of two
# equal-priority Deferred pods holds the promise).
NOT_PROVED_ELSEWHERE: dict = {"budget-protected-deferred-pod": ("NoDoublePreemption",),
                              "older-deferred-resize-first": ("KubeletHonorsReservation",)}


@pytest.mark.parametrize("scenario", [value if i == 0 else pytest.param(value, marks=pytest.mark.slow) for i, value in enumerate(sorted(SCENARIOS))])
def test_induction_proves_what_holds_elsewhere(scenario):
    ctx = context(scenario, "alpha-1.37")
    explicit = results(scenario, "alpha-1.37")
    holding = [p for p in ALWAYS_PROPERTIES if explicit[p.name].verdict == "holds"
               and p.name not in NOT_PROVED_ELSEWHERE.get(scenario, ())]
    for result in check_induction(ctx, holding, 3, timeout=120):
        assert result.verdict == PROVED, (result.property, result.reason)


def test_parametric_induction_proves():
    ctx = context("deferred-upsize-one-victim", "alpha-1.37")
    names = ("KubeletNeverOvercommits", "VictimsStrictlyLowerPriority", "NoDoubleReservation")
    for result in check_induction(ctx, [property_by_name(n) for n in names], 1, parametric=(1, 64)):
        assert result.verdict == PROVED, (result.property, result.reason)
        assert "[1, 64]" in result.reason


def test_non_always_properties_are_not_checked():
    ctx = context("deferred-upsize-one-victim", "alpha-1.37")
    result, = check_bmc(ctx, [property_by_name("ResizeDeferred")], 1)
    assert result.verdict == "not-checked"
