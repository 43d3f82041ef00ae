"""Benchmark of the symbolic engine: BMC time per depth and k-induction time per property.

    .venv/bin/python bench/bench_symbolic.py [--scenario NAME] [--variant NAME] [--depth K]
                                             [--budget SECONDS] [--max-k K]

Defaults: deferred-upsize-one-victim, alpha-1.37, depth 20, 60 s budget for BMC (it stops at the
depth reached when the budget runs out and says so), k-induction up to k 3, 120 s per property.
It is a benchmark, not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES
from kepcheck.spec.language.loader import default_scenarios
from kepcheck.spec.kep.variants import variant_by_name
from kepcheck.checks.symbolic.bmc import check_bmc
from kepcheck.checks.symbolic.induction import check_induction, prove_lemmas, prove_strengthening
from kepcheck.model.context import Context


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description="BMC time per depth and k-induction time per property.")
    parser.add_argument("--scenario", default="deferred-upsize-one-victim", help="a default scenario's name")
    parser.add_argument("--variant", default="alpha-1.37")
    parser.add_argument("--depth", type=int, default=20, help="BMC depth (default 20)")
    parser.add_argument("--budget", type=float, default=60.0, help="BMC time budget in seconds (default 60)")
    parser.add_argument("--max-k", type=int, default=3, help="largest k for k-induction (default 3)")
    args = parser.parse_args(argv)
    scenarios = {s.name: s for s in default_scenarios()}
    if args.scenario not in scenarios:
        parser.error(f"unknown scenario {args.scenario!r} (known: {', '.join(sorted(scenarios))})")
    try:
        variant = variant_by_name(args.variant)
    except KeyError:
        from kepcheck.spec.kep.variants import VARIANTS
        parser.error(f"unknown variant {args.variant!r} (known: {', '.join(v.name for v in VARIANTS)})")
    scenario_name, depth, budget = args.scenario, args.depth, args.budget
    scenario = scenarios[scenario_name]
    variant = variant.name
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
    print(f"\nk-induction {scenario_name} / {variant} (max k {args.max_k}, 120 s per property)")
    started = time.perf_counter()
    for result in check_induction(ctx, properties, args.max_k, timeout=120):
        print(f"  {result.property:30s} {result.verdict:12s} k={result.depth}  {result.seconds:6.1f} s  "
              f"{result.reason[:90]}")
    print(f"  total {time.perf_counter() - started:.1f} s (includes proving the strengthening invariants and the "
          f"preemption lemmas once)")
    started = time.perf_counter()
    proved, k, _ = prove_strengthening(ctx, args.max_k, timeout=120)
    print(f"  of which: strengthening invariants {'proved' if proved else 'NOT proved'} (k={k}) in "
          f"{time.perf_counter() - started:.1f} s", end="")
    started = time.perf_counter()
    proved, k, _ = prove_lemmas(ctx, args.max_k, timeout=120)
    print(f"; preemption lemmas with their basis {'proved' if proved else 'NOT proved'} (k={k}) in "
          f"{time.perf_counter() - started:.1f} s (strengthening proved again first)")
    print("\nparametric k-induction (sizes in [1, 64], max k 2)")
    names = ("KubeletNeverOvercommits", "VictimsStrictlyLowerPriority", "NoDoubleReservation")
    for result in check_induction(ctx, [p for p in properties if p.name in names], 2, timeout=120, parametric=(1, 64)):
        print(f"  {result.property:30s} {result.verdict:12s} k={result.depth}  {result.seconds:6.1f} s  "
              f"{result.reason[:90]}")


if __name__ == "__main__":
    main(sys.argv[1:])
