"""One large exploration partitioned over the workers of a Dask cluster against the single-process
search (issue 17): the same states, transitions, depth and verdicts, and the times of both.

    .venv/bin/python bench/bench_partitioned.py [--scenario FILE] [--variant NAME] [--cluster local:2]

Default: ``bench/scenarios/bench-two-nodes-busy.yaml`` under ``alpha-1.37`` (every always- and
sometimes-property), partitioned over ``local:2``. The single-process reference is the explicit
engine's breadth-first search without symmetry on its vector core (``checks/hybrid.explore_kep``: the
same states, transitions, depth and findings as the interpreted search, ``tests/test_vector.py``),
the search the partitions reproduce layer by layer. Needs the optional 'distributed' extra. Prints
one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, SOMETIMES
from kepcheck.spec.language.loader import load_scenario
from kepcheck.spec.kep.variants import derived_variant
from kepcheck.checks.search.partitioned import explore_partitioned
from kepcheck.checks.search.hybrid import explore_kep
from kepcheck.model.context import Context

BENCH = Path(__file__).parent / "scenarios" / "bench-two-nodes-busy.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(BENCH))
    parser.add_argument("--variant", default="alpha-1.37")
    parser.add_argument("--cluster", default="local:2")
    options = parser.parse_args()
    scenario = load_scenario(options.scenario)
    properties = [p for p in PROPERTIES if p.kind in (ALWAYS, SOMETIMES)]
    started = time.perf_counter()
    single = explore_kep(Context.build(scenario, derived_variant(options.variant)), properties, hand_over_at=0)
    single_seconds = time.perf_counter() - started
    started = time.perf_counter()
    split = explore_partitioned(scenario, options.variant, properties, options.cluster)
    split_seconds = time.perf_counter() - started
    same = (single.states, single.transitions, single.depth, set(single.found)) == \
        (split.states, split.transitions, split.depth, split.decided)
    print(json.dumps({"scenario": scenario.name, "variant": options.variant, "cluster": options.cluster,
                      "states": split.states, "transitions": split.transitions, "depth": split.depth,
                      "per_partition": split.per_partition, "same_as_single_process": same,
                      "single_seconds": round(single_seconds, 1), "partitioned_seconds": round(split_seconds, 1)}))
    if not same:
        raise SystemExit(f"differs: single {single.states}/{single.transitions}/{single.depth}/{sorted(single.found)}"
                         f" partitioned {split.states}/{split.transitions}/{split.depth}/{sorted(split.decided)}")


if __name__ == "__main__":
    main()
