"""One exploration partitioned over workers by state fingerprint (``checks/search/partitioned.py``, issue 17):
the same states, transitions, depth and verdicts (always violated, sometimes witnessed) as the
single-process breadth-first search, whether the partitions live in this process or on the workers of
a local two-worker Dask cluster."""

from __future__ import annotations

import pytest

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, SOMETIMES
from kepcheck.checks.search.partitioned import explore_in_process, explore_partitioned
from kepcheck.checks.search.breadth_first import explore, kep_system

from conftest import SCENARIOS, context

SAFETY = [p for p in PROPERTIES if p.kind in (ALWAYS, SOMETIMES)]


def _single(scenario: str, variant: str):
    found = explore(kep_system(context(scenario, variant), SAFETY))
    return found.states, found.transitions, found.depth, set(found.found)


@pytest.mark.parametrize("scenario,variant,count", [("deferred-upsize-one-victim", "alpha-1.37", 2),
                                                    ("competing-resizes", "kubelet-aligned", 3),
                                                    ("later-competing-resize", "beta-1.38-stale", 4)])
def test_partitions_in_one_process_explore_what_one_search_does(scenario, variant, count):
    result = explore_in_process(SCENARIOS[scenario], variant, SAFETY, count)
    assert (result.states, result.transitions, result.depth, result.decided) == _single(scenario, variant)
    assert len(result.per_partition) == count and sum(result.per_partition) == result.states


@pytest.mark.slow
def test_a_two_worker_dask_cluster_explores_what_one_search_does():
    pytest.importorskip("distributed", reason="the optional 'distributed' extra is not installed")
    scenario, variant = "resize-lowered-while-victims-terminate", "alpha-1.37-stale"
    result = explore_partitioned(SCENARIOS[scenario], variant, SAFETY, "local:2")
    assert (result.states, result.transitions, result.depth, result.decided) == _single(scenario, variant)
    assert len(result.per_partition) == 2 and min(result.per_partition) > 0
