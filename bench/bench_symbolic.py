"""Benchmark of the symbolic engine: BMC time per depth and k-induction time per property.

    PYTHONPATH=. .venv/bin/python bench/bench_symbolic.py [scenario] [variant] [max_depth] [budget_seconds]

Defaults: deferred-upsize-one-victim, alpha-1.37, depth 20, 60 s budget for BMC (it stops at the
depth reached when the budget runs out and says so).
"""

from __future__ import annotations

import sys
import time

from spec.properties import ALWAYS, PROPERTIES
from spec.scenarios import default_scenarios
from spec.variants import variant_by_name
from checks.bmc import check_bmc, check_induction
from model.context import Context


def main(argv: list[str]) -> None:
    scenario_name = argv[0] if argv else "deferred-upsize-one-victim"
    variant = argv[1] if len(argv) > 1 else "alpha-1.37"
    depth = int(argv[2]) if len(argv) > 2 else 20
    budget = float(argv[3]) if len(argv) > 3 else 60.0
    scenario = next(s for s in default_scenarios() if s.name == scenario_name)
    ctx = Context.build(scenario, variant_by_name(variant))
    properties = [p for p in PROPERTIES if p.kind == ALWAYS]
    print(f"BMC {scenario_name} / {variant}, every always property, depth <= {depth}, budget {budget:g} s")
    per_depth: list = []
    started = time.perf_counter()
    results = check_bmc(ctx, properties, depth, timeout=budget, per_depth=per_depth)
    total = 0.0
    for k, seconds in per_depth:
        total += seconds
        print(f"  depth {k:2d}: {seconds:7.2f} s  (cumulative {total:7.2f} s)")
    reached = per_depth[-1][0] if per_depth else -1
    print(f"  reached depth {reached} of {depth} in {time.perf_counter() - started:.1f} s")
    for result in results:
        print(f"  {result.property:30s} {result.verdict:12s} depth {result.depth:2d}  {result.reason[:70]}")
    print(f"\nk-induction {scenario_name} / {variant} (max k 3, 120 s per property)")
    started = time.perf_counter()
    for result in check_induction(ctx, properties, 3, timeout=120):
        print(f"  {result.property:30s} {result.verdict:12s} k={result.depth}  {result.seconds:6.1f} s  "
              f"{result.reason[:90]}")
    print(f"  total {time.perf_counter() - started:.1f} s (includes proving the strengthening invariants once)")
    print("\nparametric k-induction (sizes in [1, 64], max k 2)")
    names = ("KubeletNeverOvercommits", "VictimsStrictlyLowerPriority", "NoDoubleReservation")
    for result in check_induction(ctx, [p for p in properties if p.name in names], 2, timeout=120, parametric=(1, 64)):
        print(f"  {result.property:30s} {result.verdict:12s} k={result.depth}  {result.seconds:6.1f} s  "
              f"{result.reason[:90]}")


if __name__ == "__main__":
    main(sys.argv[1:])
