"""Shared fixtures: the default scenarios and one cached exploration per (scenario, variant)."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from kepcheck.spec.kep.manifest import load_manifest
from kepcheck.spec.language.loader import default_scenarios
from kepcheck.spec.kep.properties import PROPERTIES
from kepcheck.spec.kep.variants import VARIANTS, variant_by_name
from kepcheck.checks.engines.explicit import check_explicit
from kepcheck.checks.run import run_checks
from kepcheck.model.context import Context
from kepcheck.model.mutants import mutants_named

# the vector core's compiled models (checks/vector/native.py): quick builds, cached beside the checkout
os.environ.setdefault("KEPCHECK_CFLAGS", "-O0")
os.environ.setdefault("KEPCHECK_CACHE", str(Path(__file__).resolve().parent.parent / ".cache" / "compiled"))

SCENARIOS = {scenario.name: scenario for scenario in default_scenarios()}


@lru_cache(maxsize=None)
def manifest():
    return load_manifest(list(SCENARIOS))


@lru_cache(maxsize=None)
def context(scenario: str, variant: str, mutants: tuple = ()) -> Context:
    return Context.build(SCENARIOS[scenario], variant_by_name(variant), mutants_named(mutants))


@lru_cache(maxsize=None)
def results(scenario: str, variant: str, mutants: tuple = ()):
    """Every CheckResult of one exploration, keyed by property name: without mutants, those of the
    shared default matrix (``default_matrix``, computed once per test process, which the test modules
    that read the whole matrix need anyway), else a check of its own."""
    if not mutants:
        for run in default_matrix():
            if run.ctx.scenario.name == scenario and run.ctx.variant.name == variant:
                return {r.property: r for r in run.results}
    return {r.property: r for r in check_explicit(context(scenario, variant, mutants))}


@lru_cache(maxsize=None)
def default_matrix() -> tuple:
    """One check of every default scenario × variant × property, with the lifecycle recorded (the
    ``ContextRun`` values of ``run_checks``): shared by the test modules that read the whole matrix,
    computed once per test process. Read-only."""
    return tuple(run_checks(default_scenarios(), list(VARIANTS), list(PROPERTIES), record_lifecycle=True))


def assert_refused(document: dict, field: str, words: str) -> None:
    """The scenario loader refuses ``document`` (as ``t.yaml``) with one line naming ``field`` and
    saying ``words``."""
    import pytest
    from kepcheck.spec.language.loader import ScenarioError, parse_scenario
    with pytest.raises(ScenarioError) as refused:
        parse_scenario(document, "t.yaml")
    message = str(refused.value)
    assert message.startswith(f"t.yaml: {field}") and words in message and "\n" not in message, message


# The variants the cross-checks of other engines run a scenario under (tests/test_symbolic_engine.py,
# tests/test_vector.py): the two designs, the baseline and the accountings everywhere; each other
# synchronous variant (one design decision away from the alpha) where the manifest expects another
# always-verdict than the alpha's, and on deferred-upsize-one-victim. Every scenario under every
# variant agreed when last run in full (2026-12-04) but took a fifth of make test.
CROSS_CHECKED_EVERYWHERE = ("alpha-1.37", "beta-1.38", "gate-off", "kubelet-aligned", "allocated-only")


def cross_checked(scenario: str, variant: str) -> bool:
    """Whether the engines' cross-checks run ``scenario`` under the synchronous ``variant``."""
    if variant in CROSS_CHECKED_EVERYWHERE or scenario == "deferred-upsize-one-victim":
        return True
    always = [p.name for p in PROPERTIES if p.kind == "always"]
    return any(manifest().expected(scenario, variant, name).verdict
               != manifest().expected(scenario, "alpha-1.37", name).verdict for name in always)
