"""The property catalog, its predicates, witnesses and mutants fit together."""

from __future__ import annotations

import pytest

from spec.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES, property_by_name
from spec.variants import DECISIONS, VARIANTS
from model.mutants import MUTANTS
from model.properties import PREDICATES

from conftest import SCENARIOS, results


def test_names_match_in_both_directions():
    checked = {p.name for p in PROPERTIES if p.kind != EVENTUALLY}
    assert set(PREDICATES) == checked


def test_every_always_has_a_sometimes_witness_in_the_catalog():
    for spec in PROPERTIES:
        if spec.kind == ALWAYS:
            assert spec.witnesses, spec.name
            for witness in spec.witnesses:
                assert property_by_name(witness).kind == SOMETIMES


@pytest.mark.parametrize("spec", [p for p in PROPERTIES if p.kind == ALWAYS], ids=lambda p: p.name)
def test_always_property_is_not_vacuous_under_alpha(spec):
    """Each witness of each always-property is reachable in some default scenario under alpha-1.37."""
    for witness in spec.witnesses:
        seen = [s for s in SCENARIOS if results(s, "alpha-1.37")[witness].verdict == "holds"]
        assert seen, f"{spec.name}: witness {witness} is never reached under alpha-1.37"


def test_every_always_property_has_a_mutant():
    covered = {m.property for m in MUTANTS}
    missing = [p.name for p in PROPERTIES if p.kind == ALWAYS and p.name not in covered]
    assert not missing


def test_variants_are_distinct_and_alpha_is_first_options():
    options = [tuple(v.options().items()) for v in VARIANTS]
    assert len(set(options)) == len(options)
    alpha = VARIANTS[0]
    assert alpha.name == "alpha-1.37"
    assert all(getattr(alpha, d.field) == d.options[0] for d in DECISIONS)
    for decision in DECISIONS:  # every option of every decision is used by some variant
        for option in decision.options:
            assert any(getattr(v, decision.field) == option for v in VARIANTS), (decision.field, option)
