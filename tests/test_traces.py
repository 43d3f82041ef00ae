"""Every trace the explicit engine reports replays through the model, and symmetry reduction
changes no verdict."""

from __future__ import annotations

import pytest

from kepcheck.spec.kep.properties import EVENTUALLY, PROPERTIES
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.checks.engines.explicit import check_explicit
from kepcheck.checks.result import replay
from kepcheck.model.symmetry import make_representative

from conftest import SCENARIOS, context, results

PAIRS = [(s, v.name) for s in SCENARIOS for v in VARIANTS]


@pytest.mark.parametrize("scenario,variant", PAIRS, ids=[f"{s}/{v}" for s, v in PAIRS])
def test_traces_replay(scenario, variant):
    ctx = context(scenario, variant)
    for result in results(scenario, variant).values():
        if result.trace is None:
            continue
        again = replay(ctx, result.trace.labels)
        assert again.steps[-1][1] == result.trace.steps[-1][1], (result.property, result.trace.labels)


SYMMETRIC = [(s, v) for s, v in PAIRS if make_representative(context(s, v)) is not None]


def test_some_default_scenario_has_interchangeable_pods():
    assert SYMMETRIC


@pytest.mark.parametrize("scenario,variant", SYMMETRIC, ids=[f"{s}/{v}" for s, v in SYMMETRIC])
def test_symmetry_changes_no_verdict(scenario, variant):
    ctx = context(scenario, variant)
    representative = make_representative(ctx)
    safety = [p for p in PROPERTIES if p.kind != EVENTUALLY]
    reduced = {r.property: r.verdict for r in check_explicit(ctx, safety, symmetry=representative)}
    assert reduced == {p.name: results(scenario, variant)[p.name].verdict for p in safety}


def test_a_reduced_path_no_concrete_run_follows_is_searched_again_without_symmetry():
    """A scenario a sweep found (tests/fixtures/symmetry-age-tie-break.yaml): with interchangeable
    p2 and p4 the reduced search reports NoExcessVictims violated along a path of representatives that
    no concrete run follows (the age tie-break). The engine searches again without the reduction:
    the verdict and the trace are the model's, and the same as with symmetry off."""
    from pathlib import Path

    from kepcheck.checks.engine import Budget, EngineOptions
    from kepcheck.checks.engines.explicit import ENGINE
    from kepcheck.checks.result import replay
    from kepcheck.model.context import Context
    from kepcheck.spec.kep.properties import property_by_name
    from kepcheck.spec.language.loader import load_scenario
    from kepcheck.spec.kep.variants import variant_by_name

    scenario = load_scenario(Path(__file__).parent / "fixtures" / "symmetry-age-tie-break.yaml")
    ctx = Context.build(scenario, variant_by_name("alpha-1.37"))
    spec = [property_by_name("NoExcessVictims")]
    reduced, = ENGINE.check(ctx, spec, budget=Budget(), options=EngineOptions(symmetry=True))
    full, = ENGINE.check(ctx, spec, budget=Budget(), options=EngineOptions(symmetry=False))
    assert reduced.verdict == full.verdict == "violated"
    assert reduced.trace.labels == full.trace.labels
    assert replay(ctx, reduced.trace.labels).steps[-1][1] == reduced.trace.steps[-1][1]
