"""Shared fixtures: the default scenarios and one cached exploration per (scenario, variant)."""

from __future__ import annotations

from functools import lru_cache

from kepcheck.spec.manifest import load_manifest
from kepcheck.spec.scenarios import default_scenarios
from kepcheck.spec.variants import variant_by_name
from kepcheck.checks.explicit import check_explicit
from kepcheck.model.context import Context
from kepcheck.model.mutants import mutants_named

SCENARIOS = {scenario.name: scenario for scenario in default_scenarios()}


@lru_cache(maxsize=None)
def manifest():
    return load_manifest(list(SCENARIOS))


@lru_cache(maxsize=None)
def context(scenario: str, variant: str, mutants: tuple = ()) -> Context:
    return Context.build(SCENARIOS[scenario], variant_by_name(variant), mutants_named(mutants))


@lru_cache(maxsize=None)
def results(scenario: str, variant: str, mutants: tuple = ()):
    """Every CheckResult of one exploration, keyed by property name."""
    return {r.property: r for r in check_explicit(context(scenario, variant, mutants))}
