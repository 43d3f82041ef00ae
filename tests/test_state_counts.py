"""Pinned distinct-state, transition and depth counts of every default scenario × variant (a
regression oracle, as tlaplus/Examples' manifest and Stateright's examples pin theirs). A change
in the model that changes a count must update ``state_counts.json`` deliberately."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kepcheck.checks.search.breadth_first import explore, kep_system

from conftest import context

PINNED = json.loads((Path(__file__).parent / "state_counts.json").read_text())


@pytest.mark.parametrize("key", [pytest.param(key, marks=pytest.mark.slow) if key.endswith("-stale") else key
                                 for key in sorted(PINNED)])
def test_state_counts(key):
    scenario, variant = key.split("/")
    exploration = explore(kep_system(context(scenario, variant), []))
    assert [exploration.states, exploration.transitions, exploration.depth] == PINNED[key]
