"""The command line: ``kepcheck`` (also ``python -m kepcheck``).

Subcommands:
  list     scenarios, variants, properties, fairness groups and mutants (``--json`` for machines)
  check    check a selection (default: every scenario, variant and property of the manifest)
  report   check the selection and write the design review report
  diff     which verdicts change between two variants, and the traces that explain it
  replay   replay action labels through the model and print the trace

This module parses arguments and prints; the checking itself is ``checks/run.py``.

Exit codes: ``checks/exits.py`` (0 as expected, 1 differs, 2 usage or input, 3 inconclusive, 4
internal error, 128 + signal when interrupted). Every error is one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

from kepcheck.spec.fairness import DEFAULT_FAIRNESS, FAIRNESS_GROUPS
from kepcheck.spec.properties import EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.scenarios import ScenarioError, default_scenarios
from kepcheck.spec.variants import DECISIONS, VARIANTS

from kepcheck.checks.engine import Budget, EngineOptions
from kepcheck.checks.exits import (
    EXIT_DIFFERS, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, OUTPUT_FLAGS, UsageError, internal_error,
    validate_options,
)
from kepcheck.checks.output import (
    Interrupted, OutputError, ascii_only, console as _console, install_interrupt_handlers,
    interrupt_handled, quiet_stdout, restore_handlers, say as _say, table as _table, tolerant_streams,
)
from kepcheck.checks.report import counted, format_trace, result_record
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, SYMBOLS, VIOLATED, replay
from kepcheck.checks.review import variant_diff, write_review
from kepcheck.checks.run import (
    SelectionError, run_checks, select_engine, select_fairness, select_mutants, select_properties, select_scenarios,
    select_variants,
)
from kepcheck.model.context import Context
from kepcheck.model.mutants import MUTANTS

__all__ = ["main", "build_parser"]

class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (exit 2, as argparse does)."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {' '.join(message.split())} (see {self.prog} --help)\n")


def _list_document() -> dict:
    return {
        "scenarios": [{"name": s.name, "description": s.description, "file": s.source} for s in default_scenarios()],
        "variants": [{"name": v.name, "description": v.description, **v.options()} for v in VARIANTS],
        "properties": [{"name": p.name, "kind": p.kind, "scope": p.scope, "meaning": p.meaning, "ref": p.ref,
                        "fairness": list(p.fairness)} for p in PROPERTIES],
        "fairness": [{"name": g.name, "actions": list(g.actions), "mechanism": g.mechanism, "ref": g.ref}
                     for g in FAIRNESS_GROUPS],
        "mutants": [{"name": m.name, "breaks": m.breaks, "property": m.property, "variant": m.variant,
                     "scenario": m.scenario} for m in MUTANTS],
    }


def command_list(options) -> int:
    if options.json:
        print(json.dumps(_list_document(), indent=2, ensure_ascii=ascii_only(sys.stdout)))
        return EXIT_OK
    console = _console(sys.stdout)
    console.print(_table("Scenarios", ("name", "description"), ((s.name, s.description) for s in default_scenarios())))
    console.print(_table("Variants (first option of each decision = v1.37 alpha)", ["name"] + [d.field for d in DECISIONS],
                         ((v.name, *(getattr(v, d.field) for d in DECISIONS)) for v in VARIANTS)))
    console.print(_table("Properties", ("name", "kind", "meaning", "ref"),
                         ((p.name, p.kind + (" (step)" if p.scope == "step" else ""), p.meaning, p.ref)
                          for p in PROPERTIES)))
    console.print(_table("Fairness groups (assumed weakly fair by the eventually-properties unless --fairness says "
                         "otherwise)", ("group", "actions", "mechanism"),
                         ((g.name, ", ".join(g.actions), g.mechanism) for g in FAIRNESS_GROUPS)))
    console.print(_table("Mutants (deliberately broken models the checks must catch)",
                         ("name", "breaks", "must violate", "where"),
                         ((m.name, m.breaks, m.property, f"{m.variant} / {m.scenario}") for m in MUTANTS)))
    return EXIT_OK


def _cell(prop, result) -> str:
    cell = SYMBOLS[result.verdict]
    if prop.kind == SOMETIMES:
        cell = {HOLDS: "seen", VIOLATED: "never", INCONCLUSIVE: "≈"}.get(result.verdict, cell)
    if result.differs:
        cell = f"[bold red]{cell} (expected {result.expected})[/]"
    return cell


def _matrix_tables(console, outcome, properties) -> None:
    from rich.table import Table

    by_scenario: dict[str, list] = {}
    for run in outcome:
        by_scenario.setdefault(run.ctx.scenario.name, []).append(run)
    for scenario, runs in by_scenario.items():
        table = Table(title=f"{scenario}", title_justify="left")
        table.add_column("property")
        for run in runs:
            table.add_column(run.ctx.variant.name, justify="center")
        for prop in properties:
            cells = [_cell(prop, next(r for r in run.results if r.property == prop.name)) for run in runs]
            suffix = {SOMETIMES: " (sometimes)", EVENTUALLY: " (eventually)"}.get(prop.kind, "")
            table.add_row(prop.name + suffix, *cells)
        if all(run.results[0].engine == "explicit" for run in runs):
            table.add_row("[dim]distinct states[/]", *(f"[dim]{run.results[0].states}[/]" for run in runs))
        console.print(table)


def _print_traces(console, outcome, shown) -> None:
    contexts = {(run.ctx.scenario.name, run.ctx.variant.name): run.ctx for run in outcome}
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


def _print_check(options, outcome, properties, scenarios, variants, started: float) -> None:
    results = [r for run in outcome for r in run.results]
    differs = [r for r in results if r.differs]
    console = _console(sys.stdout)
    _matrix_tables(console, outcome, properties)
    shown = differs if not options.traces else [r for r in results if r.trace is not None and r.kind != SOMETIMES]
    _print_traces(console, outcome, shown)
    matched = sum(1 for r in results if r.matches)
    expectation = "as expected" if any(r.expected is not None for r in results) else "without expectation"
    inconclusive = sum(1 for r in results if r.verdict == INCONCLUSIVE)
    console.print(
        f"\n{counted(len(results), 'check')} on {counted(len(scenarios), 'scenario')} × {counted(len(variants), 'variant')}: "
        f"{matched} {expectation}, "
        f"{len(differs)} differ, {inconclusive} inconclusive. {time.perf_counter() - started:.1f} s"
    )


def _engine_options(options) -> EngineOptions:
    workers = {"workers": options.workers} if options.workers else {}
    return EngineOptions(symmetry=not options.no_symmetry, fairness=select_fairness(options.fairness), core=options.core,
                         **workers,
                         depth=options.depth, max_k=options.max_k, parametric=_parametric(options.parametric),
                         examples=options.examples, steps=options.steps, seed=options.seed, profile=options.profile)


def command_check(options) -> int:
    scenarios = select_scenarios(options.scenario)
    variants = select_variants(options.variant)
    properties = select_properties(options.property)
    mutants = select_mutants(options.mutant)
    engine_name = select_engine(options.engine)
    started = time.perf_counter()
    outcome = _run_all(scenarios, variants, properties, engine_name=engine_name, mutants=mutants,
                       budget=Budget(options.max_states, options.timeout), options=_engine_options(options),
                       record_lifecycle=options.report is not None)
    options.outcome_code = _exit_code([r for run in outcome for r in run.results])
    if options.report is not None:
        try:
            index = write_review(outcome, options.report, include_times=not options.no_times)
            _say(f"kepcheck: wrote the design review report {index}")
        except OutputError as error:  # the records are still printed; the run then exits 2
            _say(f"kepcheck: error: --report {error}")
            options.outcome_code = EXIT_USAGE
    if options.json:
        print(json.dumps([result_record(run.ctx, r) for run in outcome for r in run.results], indent=2,
                         ensure_ascii=ascii_only(sys.stdout)))
    else:
        _print_check(options, outcome, properties, scenarios, variants, started)
    return options.outcome_code


def _run_all(scenarios, variants, properties, **options) -> list:
    """Run the checks with a progress bar on stderr (when it is a terminal): checks done, and where
    the running search is (states, states/s, transitions, depth, frontier, peak memory)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    shown = sys.stderr.isatty()
    with Progress(TextColumn("checking"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[search]}"), console=_console(sys.stderr), transient=True,
                  disable=not shown) as bar:
        task = bar.add_task("check", total=len(scenarios) * len(variants), search="")

        def searching(ctx, where) -> None:
            bar.update(task, search=f"{ctx.scenario.name} × {ctx.variant.name}: {where.describe()}, "
                                    f"peak memory {_peak_mib():,.0f} MiB")

        engine_options = replace(options.pop("options", EngineOptions()), progress=searching if shown else None)
        return list(run_checks(scenarios, variants, properties, options=engine_options,
                               progress=lambda: bar.update(task, advance=1, search=""), **options))


def _peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


def command_report(options) -> int:
    outcome = _run_all(select_scenarios(options.scenario), select_variants(options.variant), list(PROPERTIES),
                       record_lifecycle=True)
    index = write_review(outcome, options.out, include_times=not options.no_times)
    options.outcome_code = _exit_code([r for run in outcome for r in run.results])
    print(f"wrote {index}")
    return options.outcome_code


def command_diff(options) -> int:
    variants = select_variants([options.variant_a, options.variant_b])
    outcome = _run_all(select_scenarios(options.scenario), variants, list(PROPERTIES))
    print(variant_diff(outcome, options.variant_a, options.variant_b, trace_links=None))
    return EXIT_OK


def _exit_code(results) -> int:
    if any(r.differs for r in results):
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


def command_replay(options) -> int:
    scenario = select_scenarios([options.scenario])[0]
    variant = select_variants([options.variant])[0]
    ctx = Context.build(scenario, variant, select_mutants(options.mutant))
    try:
        trace = replay(ctx, options.labels)
    except ValueError as error:
        raise UsageError(str(error)) from None
    print(format_trace(ctx, trace))
    return EXIT_OK


def _check_parser(sub) -> None:
    check = sub.add_parser("check", help="check properties (default: the whole manifest)")
    check.add_argument("--scenario", action="append", metavar="NAME|FILE", help="a shipped scenario or a YAML file")
    check.add_argument("--variant", action="append", metavar="NAME")
    check.add_argument("--property", action="append", metavar="NAME")
    check.add_argument("--mutant", action="append", metavar="NAME", help="check a deliberately broken model")
    check.add_argument("--engine", default="explicit",
                       help="explicit (default: breadth-first, safety and liveness), liveness (the same search, "
                            "eventually-properties only), bmc (bounded model checking with Z3), induction (k-induction "
                            "proofs with Z3), random (Hypothesis random walks)")
    check.add_argument("--depth", type=int, default=10, metavar="K", help="bmc: unrolling depth (default 10)")
    check.add_argument("--max-k", type=int, default=3, metavar="K", help="induction: largest k tried (default 3)")
    check.add_argument("--parametric", metavar="LOW..HIGH",
                       help="bmc/induction: leave node allocatable and pod sizes symbolic in this range of model units")
    check.add_argument("--examples", type=int, metavar="N", help="random: walks (default: the profile's, ci 100)")
    check.add_argument("--steps", type=int, metavar="N", help="random: steps per walk (default: the profile's, ci 50)")
    check.add_argument("--seed", type=int, default=0, metavar="S", help="random: seed (default 0)")
    check.add_argument("--profile", default="ci", choices=("ci", "deep"), help="random: Hypothesis settings profile")
    check.add_argument("--core", default="auto", choices=("auto", "interpreted", "vector"),
                       help="explicit: the search core: interpreted, vector (the model compiled and evaluated over "
                            "whole layers of states) or auto (default: interpreted, vector past 20,000 states)")
    check.add_argument("--workers", type=int, metavar="N", help="explicit: cores the vector core uses (default: all)")
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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kepcheck", description="Model checker for KEP-5836: scheduler preemption for in-place pod "
                     "resize.")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    listing = sub.add_parser("list", help="list scenarios, variants, properties and mutants")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    _check_parser(sub)
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
    for command in sub.choices.values():  # --debug after the subcommand too (the default stays the global one)
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    return parser


_DEBUG_HELP = "on an internal error show the Python traceback (otherwise one line, exit 4)"
COMMANDS = {"list": command_list, "check": command_check, "replay": command_replay, "report": command_report,
            "diff": command_diff}


def _run_command(options) -> int:
    """Run the subcommand and turn every way it can end into an exit code and at most one line."""
    try:
        validate_options(options)
        code = COMMANDS[options.command](options)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
        return code
    except (ScenarioError, SelectionError, UsageError) as error:
        _say(f"kepcheck: error: {error}")
        return EXIT_USAGE
    except OutputError as error:
        _say(f"kepcheck: error: {OUTPUT_FLAGS['report' if options.command == 'check' else 'out']} {error}")
        return EXIT_USAGE
    except KeyboardInterrupt as error:
        interrupt_handled()
        _say("kepcheck: interrupted" + (f" ({error})" if isinstance(error, Interrupted) else ""))
        return error.code if isinstance(error, Interrupted) else EXIT_INTERRUPTED
    except BrokenPipeError:
        quiet_stdout()
        return getattr(options, "outcome_code", EXIT_OK)
    except Exception as error:  # noqa: BLE001 - the last resort: one line, exit 4
        return internal_error(options, error)


def main(argv: list[str] | None = None) -> int:
    """``kepcheck`` with ``argv`` (default: the command line); returns the exit code (argparse's own
    errors and ``--help`` exit through ``SystemExit``, code 2 and 0)."""
    tolerant_streams()
    options = build_parser().parse_args(argv)
    handlers = install_interrupt_handlers()
    try:
        return _run_command(options)
    finally:
        restore_handlers(handlers)


if __name__ == "__main__":
    sys.exit(main())
