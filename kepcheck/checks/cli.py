"""The command line: ``kepcheck`` (also ``python -m checks``).

Subcommands:
  list     scenarios, variants, properties and mutants (``--json`` for machines)
  check    check a selection (default: every scenario, variant and property of the manifest)
  replay   replay action labels through the model and print the trace

Exit codes: 0 every verdict matches the manifest (or has no expectation); 1 some verdict differs;
2 bad input or usage; 3 some verdict is inconclusive within the budget (and none differs).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from kepcheck.spec.fairness import DEFAULT_FAIRNESS, FAIRNESS_GROUPS
from kepcheck.spec.manifest import load_manifest
from kepcheck.spec.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.scenarios import Scenario, ScenarioError, default_scenarios, load_scenario
from kepcheck.spec.variants import DECISIONS, VARIANTS

from kepcheck.checks.explicit import check_explicit
from kepcheck.checks.report import counted, format_trace, result_record
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, NOT_CHECKED, PROVED, VIOLATED, CheckResult, replay
from kepcheck.model.context import Context
from kepcheck.model.mutants import MUTANTS
from kepcheck.model.symmetry import make_representative

__all__ = ["main"]

EXIT_OK, EXIT_DIFFERS, EXIT_USAGE, EXIT_INCONCLUSIVE = 0, 1, 2, 3
SYMBOLS = {HOLDS: "✓", VIOLATED: "✗", INCONCLUSIVE: "≈", NOT_CHECKED: "–", PROVED: "∎"}


class UsageError(Exception):
    pass


def _console(stream):
    from rich.console import Console

    return Console(file=stream, highlight=False, soft_wrap=False, width=200 if not stream.isatty() else None)


def _select(names: list[str] | None, known: dict, kind: str):
    if not names:
        return list(known.values())
    chosen = []
    for name in names:
        if name not in known:
            raise UsageError(f"unknown {kind} {name!r} (known: {', '.join(known)})")
        chosen.append(known[name])
    return chosen


def _scenarios(arguments: list[str] | None) -> list[Scenario]:
    shipped = {s.name: s for s in default_scenarios()}
    if not arguments:
        return list(shipped.values())
    chosen = []
    for argument in arguments:
        if argument in shipped:
            chosen.append(shipped[argument])
        elif argument.endswith((".yaml", ".yml")) or Path(argument).exists():
            chosen.append(load_scenario(argument))
        else:
            raise UsageError(f"unknown scenario {argument!r} (a shipped name or a YAML file; known: {', '.join(shipped)})")
    return chosen


def command_list(options) -> int:
    scenarios = default_scenarios()
    if options.json:
        document = {
            "scenarios": [{"name": s.name, "description": s.description, "file": s.source} for s in scenarios],
            "variants": [{"name": v.name, "description": v.description, **v.options()} for v in VARIANTS],
            "properties": [{"name": p.name, "kind": p.kind, "scope": p.scope, "meaning": p.meaning, "ref": p.ref,
                            "fairness": list(p.fairness)} for p in PROPERTIES],
            "fairness": [{"name": g.name, "actions": list(g.actions), "mechanism": g.mechanism, "ref": g.ref}
                         for g in FAIRNESS_GROUPS],
            "mutants": [{"name": m.name, "breaks": m.breaks, "property": m.property, "variant": m.variant,
                         "scenario": m.scenario} for m in MUTANTS],
        }
        print(json.dumps(document, indent=2, ensure_ascii=False))
        return EXIT_OK
    from rich.table import Table

    console = _console(sys.stdout)
    table = Table(title="Scenarios", show_lines=False)
    table.add_column("name")
    table.add_column("description")
    for s in scenarios:
        table.add_row(s.name, s.description)
    console.print(table)
    table = Table(title="Variants (first option of each decision = v1.37 alpha)")
    table.add_column("name")
    for decision in DECISIONS:
        table.add_column(decision.field)
    for v in VARIANTS:
        table.add_row(v.name, *(getattr(v, d.field) for d in DECISIONS))
    console.print(table)
    table = Table(title="Properties")
    for column in ("name", "kind", "meaning", "ref"):
        table.add_column(column)
    for p in PROPERTIES:
        table.add_row(p.name, p.kind + (" (step)" if p.scope == "step" else ""), p.meaning, p.ref)
    console.print(table)
    table = Table(title="Fairness groups (assumed weakly fair by the eventually-properties unless --fairness says otherwise)")
    for column in ("group", "actions", "mechanism"):
        table.add_column(column)
    for group in FAIRNESS_GROUPS:
        table.add_row(group.name, ", ".join(group.actions), group.mechanism)
    console.print(table)
    table = Table(title="Mutants (deliberately broken models the checks must catch)")
    for column in ("name", "breaks", "must violate", "where"):
        table.add_column(column)
    for m in MUTANTS:
        table.add_row(m.name, m.breaks, m.property, f"{m.variant} / {m.scenario}")
    console.print(table)
    return EXIT_OK


ENGINES = ("explicit", "bmc", "induction", "random")


def _engine_results(ctx, properties, engine, *, max_states, timeout, symmetry, fairness, engine_options):
    options = engine_options or {}
    if engine == "explicit":
        representative = make_representative(ctx) if symmetry else None
        results = check_explicit(ctx, properties, max_states=max_states, timeout=timeout, symmetry=representative,
                                 fairness=fairness)
        if representative is not None:
            _rebuild_traces(ctx, results)
        return results
    if engine == "bmc":
        from kepcheck.checks.bmc import check_bmc

        return check_bmc(ctx, properties, options.get("depth", 10), timeout=timeout,
                         parametric=options.get("parametric"))
    if engine == "induction":
        from kepcheck.checks.bmc import check_induction

        return check_induction(ctx, properties, options.get("max_k", 3), timeout=timeout,
                               parametric=options.get("parametric"))
    from kepcheck.checks.random_walk import check_random

    return check_random(ctx, properties, examples=options.get("examples"), steps=options.get("steps"),
                        seed=options.get("seed", 0), profile=options.get("profile", "ci"))


def run_checks(scenarios, variants, properties, *, mutants=(), max_states=None, timeout=None, symmetry=True,
               progress=None, fairness=None, engine="explicit", engine_options=None):
    """Check every scenario x variant; yields (ctx, [CheckResult]) with expectations filled in.

    The manifest's expectations assume the shipped scenarios, no mutant and each property's own
    fairness: any other run has no expectation (``expected`` is None)."""
    manifest = load_manifest([s.name for s in default_scenarios()])
    shipped = {s.name: s for s in default_scenarios()}
    for scenario in scenarios:
        in_manifest = shipped.get(scenario.name) == scenario and not mutants and fairness is None
        for variant in variants:
            ctx = Context.build(scenario, variant, mutants)
            results = _engine_results(ctx, properties, engine, max_states=max_states, timeout=timeout,
                                      symmetry=symmetry, fairness=fairness, engine_options=engine_options)
            for result in results:
                expectation = manifest.expected(scenario.name, variant.name, result.property) if in_manifest else None
                if expectation is not None:
                    result.expected = expectation.verdict
                    if expectation.reason and not result.reason:
                        result.reason = expectation.reason
                    if expectation.ref:
                        result.ref = expectation.ref
            if progress is not None:
                progress()
            yield ctx, results


def _rebuild_traces(ctx: Context, results: list[CheckResult]) -> None:
    """Traces found on canonical representatives are re-found without symmetry, so that they
    replay label by label (a short search: the property is already known to fail or be witnessed)."""
    wanted = [r for r in results if r.trace is not None]
    if not wanted:
        return
    specs = [p for p in PROPERTIES if p.name in {r.property for r in wanted}]
    plain = {r.property: r for r in check_explicit(ctx, specs)}
    for result in wanted:
        result.trace = plain[result.property].trace


def _matrix_tables(console, outcome, properties):
    from rich.table import Table

    by_scenario: dict[str, list] = {}
    for ctx, results in outcome:
        by_scenario.setdefault(ctx.scenario.name, []).append((ctx, results))
    for scenario, rows in by_scenario.items():
        variants = [ctx.variant.name for ctx, _ in rows]
        table = Table(title=f"{scenario}", title_justify="left")
        table.add_column("property")
        for name in variants:
            table.add_column(name, justify="center")
        for prop in properties:
            cells = []
            for ctx, results in rows:
                result = next(r for r in results if r.property == prop.name)
                cell = SYMBOLS[result.verdict]
                if prop.kind == SOMETIMES:
                    cell = {HOLDS: "seen", VIOLATED: "never", INCONCLUSIVE: "≈"}.get(result.verdict, cell)
                if result.differs:
                    cell = f"[bold red]{cell} (expected {result.expected})[/]"
                cells.append(cell)
            suffix = {SOMETIMES: " (sometimes)", EVENTUALLY: " (eventually)"}.get(prop.kind, "")
            table.add_row(prop.name + suffix, *cells)
        if all(results[0].engine == "explicit" for _, results in rows):
            states = [str(results[0].states) for _, results in rows]
            table.add_row("[dim]distinct states[/]", *(f"[dim]{s}[/]" for s in states))
        console.print(table)


def command_check(options) -> int:
    scenarios = _scenarios(options.scenario)
    variants = _select(options.variant, {v.name: v for v in VARIANTS}, "variant")
    properties = _select(options.property, {p.name: p for p in PROPERTIES}, "property")
    mutants = _select(options.mutant, {m.name: m for m in MUTANTS}, "mutant") if options.mutant else []
    fairness = _fairness(options.fairness)
    if options.engine not in ENGINES:
        raise UsageError(f"unknown engine {options.engine!r} (available: {', '.join(ENGINES)})")
    engine_options = {"depth": options.depth, "max_k": options.max_k, "examples": options.examples,
                      "steps": options.steps, "seed": options.seed, "profile": options.profile,
                      "parametric": _parametric(options.parametric)}
    started = time.perf_counter()
    outcome = _run_all(scenarios, variants, properties, mutants=[m.name for m in mutants],
                       max_states=options.max_states, timeout=options.timeout, symmetry=not options.no_symmetry,
                       fairness=fairness, engine=options.engine, engine_options=engine_options)
    results = [r for _, rs in outcome for r in rs]
    differs = _differs(results)
    inconclusive = [r for r in results if r.verdict == INCONCLUSIVE]
    if options.report:
        index = _write_review(outcome, options.report, not options.no_times)
        print(f"kepcheck: wrote the design review report {index}", file=sys.stderr)
    if options.json:
        records = [result_record(ctx, r) for ctx, rs in outcome for r in rs]
        print(json.dumps(records, indent=2, ensure_ascii=False))
    else:
        console = _console(sys.stdout)
        _matrix_tables(console, outcome, properties)
        contexts = {(ctx.scenario.name, ctx.variant.name): ctx for ctx, _ in outcome}
        shown = differs if not options.traces else [r for r in results if r.trace is not None and r.kind != SOMETIMES]
        for result in shown:
            ctx = contexts[(result.scenario, result.variant)]
            headline = f"{result.property} {result.verdict} in {result.scenario} under {result.variant}"
            if result.expected is not None and result.verdict != result.expected:
                headline += f" (expected {result.expected})"
            console.print(f"\n[bold]{headline}[/]")
            if result.fairness:
                console.print(f"fairness assumed: {', '.join(result.fairness) or 'none'}", markup=False)
            if result.reason:
                console.print(f"why: {result.reason}  [{result.ref}]", markup=False)
            if result.trace is not None:
                console.print(format_trace(ctx, result.trace), markup=False)
        matched = sum(1 for r in results if r.matches)
        expectation = "as expected" if any(r.expected is not None for r in results) else "without expectation"
        console.print(
            f"\n{counted(len(results), 'check')} on {counted(len(scenarios), 'scenario')} × {counted(len(variants), 'variant')}: "
            f"{matched} {expectation}, "
            f"{len(differs)} differ, {len(inconclusive)} inconclusive. {time.perf_counter() - started:.1f} s"
        )
    if differs:
        return EXIT_DIFFERS
    if inconclusive:
        return EXIT_INCONCLUSIVE
    return EXIT_OK


def _run_all(scenarios, variants, properties, **options) -> list:
    """Run the checks with a progress bar on stderr (when it is a terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    outcome = []
    with Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=_console(sys.stderr), transient=True, disable=not sys.stderr.isatty()) as bar:
        task = bar.add_task("check", total=len(scenarios) * len(variants))
        for item in run_checks(scenarios, variants, properties, progress=lambda: bar.advance(task), **options):
            outcome.append(item)
    return outcome


def _write_review(outcome, out_dir: str, include_times: bool) -> Path:
    from kepcheck.checks.review import write_review

    return write_review(outcome, Path(out_dir), include_times=include_times)


def command_report(options) -> int:
    scenarios = _scenarios(options.scenario)
    variants = _select(options.variant, {v.name: v for v in VARIANTS}, "variant")
    outcome = _run_all(scenarios, variants, list(PROPERTIES))
    index = _write_review(outcome, options.out, not options.no_times)
    print(f"wrote {index}")
    return _exit_code([r for _, rs in outcome for r in rs])


def command_diff(options) -> int:
    from kepcheck.checks.review import variant_diff

    known = {v.name: v for v in VARIANTS}
    variants = _select([options.variant_a, options.variant_b], known, "variant")
    scenarios = _scenarios(options.scenario)
    outcome = _run_all(scenarios, variants, list(PROPERTIES))
    print(variant_diff(outcome, options.variant_a, options.variant_b, trace_links=None))
    return EXIT_OK


def _differs(results) -> list:
    return [r for r in results if r.differs]


def _exit_code(results) -> int:
    if _differs(results):
        return EXIT_DIFFERS
    if any(r.verdict == INCONCLUSIVE for r in results):
        return EXIT_INCONCLUSIVE
    return EXIT_OK


def _parametric(value):
    """``--parametric 1..64`` -> (1, 64)."""
    if value is None:
        return None
    try:
        low, high = (int(part) for part in value.split(".."))
    except ValueError:
        raise UsageError(f"--parametric takes a range LOW..HIGH of model units, got {value!r}") from None
    if not 0 <= low <= high:
        raise UsageError(f"--parametric range {value!r} must satisfy 0 <= LOW <= HIGH")
    return low, high


def _fairness(values):
    """``--fairness a,b --fairness c`` -> ("a", "b", "c"); ``none`` -> (); absent -> None (defaults)."""
    if not values:
        return None
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    if names == ["none"]:
        return ()
    known = [group.name for group in FAIRNESS_GROUPS]
    for name in names:
        if name not in known:
            raise UsageError(f"unknown fairness group {name!r} (known: {', '.join(known)}, or none)")
    return tuple(names)


def command_replay(options) -> int:
    scenarios = _scenarios([options.scenario])
    variant = _select([options.variant], {v.name: v for v in VARIANTS}, "variant")[0]
    mutants = _select(options.mutant, {m.name: m for m in MUTANTS}, "mutant") if options.mutant else []
    ctx = Context.build(scenarios[0], variant, [m.name for m in mutants])
    try:
        trace = replay(ctx, options.labels)
    except ValueError as error:
        raise UsageError(str(error)) from None
    print(format_trace(ctx, trace))
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kepcheck", description="Model checker for KEP-5836: scheduler "
                                     "preemption for in-place pod resize.")
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list scenarios, variants, properties and mutants")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    check = sub.add_parser("check", help="check properties (default: the whole manifest)")
    check.add_argument("--scenario", action="append", metavar="NAME|FILE", help="a shipped scenario or a YAML file")
    check.add_argument("--variant", action="append", metavar="NAME")
    check.add_argument("--property", action="append", metavar="NAME")
    check.add_argument("--mutant", action="append", metavar="NAME", help="check a deliberately broken model")
    check.add_argument("--engine", default="explicit",
                       help="explicit (default: breadth-first, safety and liveness), bmc (bounded model checking "
                            "with Z3), induction (k-induction proofs with Z3), random (Hypothesis random walks)")
    check.add_argument("--depth", type=int, default=10, metavar="K", help="bmc: unrolling depth (default 10)")
    check.add_argument("--max-k", type=int, default=3, metavar="K", help="induction: largest k tried (default 3)")
    check.add_argument("--parametric", metavar="LOW..HIGH",
                       help="bmc/induction: leave node allocatable and pod sizes symbolic in this range of model units")
    check.add_argument("--examples", type=int, metavar="N", help="random: walks (default: the profile's, ci 100)")
    check.add_argument("--steps", type=int, metavar="N", help="random: steps per walk (default: the profile's, ci 50)")
    check.add_argument("--seed", type=int, default=0, metavar="S", help="random: seed (default 0)")
    check.add_argument("--profile", default="ci", choices=("ci", "deep"), help="random: Hypothesis settings profile")
    check.add_argument("--max-states", type=int, metavar="N", help="state budget (verdicts become inconclusive)")
    check.add_argument("--timeout", type=float, metavar="S", help="time budget per scenario and variant, seconds")
    check.add_argument("--no-symmetry", action="store_true", help="explore without symmetry reduction "
                       "(never applied when eventually-properties are checked)")
    check.add_argument("--fairness", action="append", metavar="GROUP[,GROUP]",
                       help="the action groups assumed weakly fair for eventually-properties (default: "
                            + ",".join(DEFAULT_FAIRNESS) + "; 'none' for none); the run then has no expectation")
    check.add_argument("--traces", action="store_true", help="print the trace of every violation, expected or not")
    check.add_argument("--json", action="store_true", help="print one JSON record per check on stdout")
    check.add_argument("--report", metavar="DIR", help="also write the design review report (index.md, trace "
                       "reports, ITF files, lifecycle diagram) under DIR")
    check.add_argument("--no-times", action="store_true", help="leave times out of the report (byte-identical reruns)")
    report = sub.add_parser("report", help="check the selection and write the design review report")
    report.add_argument("--out", required=True, metavar="DIR")
    report.add_argument("--scenario", action="append", metavar="NAME|FILE")
    report.add_argument("--variant", action="append", metavar="NAME")
    report.add_argument("--no-times", action="store_true", help="leave times out (byte-identical reruns)")
    diff = sub.add_parser("diff", help="which verdicts change between two variants, and the traces that explain it")
    diff.add_argument("variant_a", metavar="VARIANT_A")
    diff.add_argument("variant_b", metavar="VARIANT_B")
    diff.add_argument("--scenario", action="append", metavar="NAME|FILE")
    again = sub.add_parser("replay", help="replay action labels and print the trace")
    again.add_argument("--scenario", required=True, metavar="NAME|FILE")
    again.add_argument("--variant", default="alpha-1.37", metavar="NAME")
    again.add_argument("--mutant", action="append", metavar="NAME")
    again.add_argument("labels", nargs="*", metavar="LABEL", help='e.g. "PreemptForResize(pod=web)"')
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    options = parser.parse_args(argv)
    for name in ("max_states", "timeout", "depth", "max_k", "examples", "steps"):
        value = getattr(options, name, None)
        if value is not None and value <= 0:
            print(f"kepcheck: error: --{name.replace('_', '-')} must be positive", file=sys.stderr)
            return EXIT_USAGE
    commands = {"list": command_list, "check": command_check, "replay": command_replay, "report": command_report,
                "diff": command_diff}
    try:
        return commands[options.command](options)
    except (ScenarioError, UsageError) as error:
        print(f"kepcheck: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
