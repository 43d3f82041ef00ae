"""The property catalog, its predicates, witnesses and mutants fit together."""

from __future__ import annotations

import pytest

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES, property_by_name
from kepcheck.spec.kep.variants import DECISIONS, VARIANTS
from kepcheck.model.mutants import MUTANTS
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.properties.eventually import LIVENESS

from conftest import SCENARIOS, results


def test_names_match_in_both_directions():
    assert set(PREDICATES) == {p.name for p in PROPERTIES if p.kind != EVENTUALLY}
    assert set(LIVENESS) == {p.name for p in PROPERTIES if p.kind == EVENTUALLY}


def test_eventually_properties_state_their_fairness():
    from kepcheck.spec.kep.fairness import FAIRNESS_GROUPS

    known = {group.name for group in FAIRNESS_GROUPS}
    for spec in PROPERTIES:
        if spec.kind == EVENTUALLY:
            assert spec.fairness and set(spec.fairness) <= known, spec.name
    fair_actions = {a for group in FAIRNESS_GROUPS for a in group.actions}
    from kepcheck.model.actions.next import ACTOR_OF

    # every scheduler and kubelet action is in some fairness group; no user action is
    assert fair_actions == {name for name, actor in ACTOR_OF.items() if actor != "user"}


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


def test_every_always_property_and_the_main_liveness_property_have_a_mutant():
    covered = {m.property for m in MUTANTS}
    missing = [p.name for p in PROPERTIES if p.kind == ALWAYS and p.name not in covered]
    assert not missing
    assert len([m for m in MUTANTS if m.property == "DeferredResizeResolved"]) >= 2


def test_variants_are_distinct_and_alpha_is_first_options():
    options = [tuple(v.options().items()) for v in VARIANTS]
    assert len(set(options)) == len(options)
    alpha = VARIANTS[0]
    assert alpha.name == "alpha-1.37"
    assert all(getattr(alpha, d.field) == d.options[0] for d in DECISIONS)
    for decision in DECISIONS:  # every option of every decision is used by some variant
        for option in decision.options:
            assert any(getattr(v, decision.field) == option for v in VARIANTS), (decision.field, option)
