"""Every mutant (a deliberately broken model) is caught by the property it is registered with, at
the registered shortest length, while the unbroken model satisfies that property there."""

from __future__ import annotations

import pytest

from kepcheck.model.mutants import MUTANTS

from conftest import results


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_mutant_is_caught(mutant):
    broken = results(mutant.scenario, mutant.variant, (mutant.name,))[mutant.property]
    sound = results(mutant.scenario, mutant.variant)[mutant.property]
    assert sound.verdict == "holds", f"{mutant.property} must hold without the mutant"
    assert broken.verdict == "violated", f"mutant {mutant.name} went undetected"
    assert len(broken.trace) == mutant.shortest
