"""The command line: ``kepcheck`` (also ``python -m kepcheck``).

Subcommands:
  list     scenarios, variants, properties, fairness groups and mutants (``--json`` for machines)
  check    check a selection (default: every scenario, variant and property of the manifest)
  report   check the selection and write the design review report
  diff     which verdicts change between two variants, and the traces that explain it
  replay   replay action labels (or an ITF trace file) through the model and print the trace
  import   a ``kubectl get … -o yaml`` snapshot to a scenario file (``checks/kube/import_command.py``)
  sweep    every scenario within bounds, up to isomorphism (``checks/sweep/command.py``)

This module parses arguments and prints; the checking itself is ``checks/run.py``, the terminal's
tables ``checks/cli/terminal.py``, the progress on stderr and the closing statistics
``checks/outputs/progress.py``, the replay's judgement ``checks/cli/replay.py``. Streams: results (tables,
traces, statistics) on stdout, or the JSON records alone with ``--json`` (the mutant verdicts and
statistics then go to stderr); progress, "wrote the report" and errors on stderr.

Exit codes: ``checks/exits.py`` (0 as expected, 1 differs, 2 usage or input, 3 inconclusive, 4
internal error, 128 + signal when interrupted). Every error is one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace

from kepcheck.spec.kep.fairness import DEFAULT_FAIRNESS, FAIRNESS_GROUPS
from kepcheck.spec.kep.properties import PROPERTIES, SOMETIMES
from kepcheck.spec.kep.variants import DECISIONS, VARIANTS
from kepcheck.spec.language.loader import ScenarioError, default_scenarios

from kepcheck.checks.cli.replay import DEFAULT_VARIANT, judged_marks, replay_headline, replayed
from kepcheck.checks.cli.terminal import mutant_verdicts, print_listing, print_matrix, print_text, print_traces
from kepcheck.checks.engine import Budget, Deadline, EngineOptions, process_started
from kepcheck.checks.exits import (
    EXIT_DIFFERS, EXIT_INCONCLUSIVE, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, OUTPUT_FLAGS, UsageError, internal_error,
    validate_options,
)
from kepcheck.checks.kube.export import add_export_parser, command_export
from kepcheck.checks.kube.import_command import add_import_parser, command_import
from kepcheck.checks.outputs.files import (
    OutputError, ascii_only, console as _console, quiet_stdout, say as _say, tolerant_streams,
)
from kepcheck.checks.outputs.progress import PLAIN_SECONDS, Reporter, statistics
from kepcheck.checks.outputs.signals import (
    Interrupted, install_interrupt_handlers, interrupt_handled, restore_handlers, swallowed_interrupt,
)
from kepcheck.checks.outputs.report import counted, format_trace, result_record
from kepcheck.checks.outputs.review import variant_diff, write_review
from kepcheck.checks.result import INCONCLUSIVE
from kepcheck.checks.run import (
    SelectionError, run_checks, select_checks, select_engine, select_fairness, select_mutants, select_scenarios,
    select_variants,
)
from kepcheck.checks.sweep.command import add_sweep_parser, command_sweep
from kepcheck.model.mutants import MUTANTS

__all__ = ["main", "build_parser"]

# --timeout: the share of the command's budget kept back for printing the results and writing the
# report after the checks (at most OUTPUT_RESERVE_MAX seconds)
OUTPUT_RESERVE, OUTPUT_RESERVE_MAX = 0.2, 1.0

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
    print_listing(console, "Scenarios", ("name", "description"),
                  ((s.name, s.description) for s in default_scenarios()))
    print_listing(console, "Decisions (first option = v1.37 alpha as implemented)", ("decision", "options"),
                  ((d.field, " | ".join(d.options)) for d in DECISIONS))
    print_listing(console, "Variants (the decisions where each differs from the v1.37 alpha; switch one with "
                  "NAME+decision=option)", ("name", "differs from alpha-1.37"),
                  ((v.name, ", ".join(f"{d.field}={getattr(v, d.field)}" for d in DECISIONS
                                      if getattr(v, d.field) != d.options[0]) or "—") for v in VARIANTS))
    print_listing(console, "Properties", ("name", "kind", "meaning", "ref"),
                  ((p.name, p.kind + (" (step)" if p.scope == "step" else ""), p.meaning, p.ref) for p in PROPERTIES))
    print_listing(console, "Fairness groups (assumed weakly fair by the eventually-properties unless --fairness says "
                  "otherwise)", ("group", "actions", "mechanism"),
                  ((g.name, ", ".join(g.actions), g.mechanism) for g in FAIRNESS_GROUPS))
    print_listing(console, "Mutants (deliberately broken models the checks must catch)",
                  ("name", "breaks", "must violate", "where"),
                  ((m.name, m.breaks, m.property, f"{m.variant} / {m.scenario}") for m in MUTANTS))
    return EXIT_OK


def _print_check(options, outcome, scenarios, variants, started: float) -> None:
    results = [r for run in outcome for r in run.results]
    differs = [r for r in results if r.differs]
    console = _console(sys.stdout)
    print_matrix(console, outcome)
    shown = differs if not options.traces else [r for r in results if r.trace is not None and r.kind != SOMETIMES]
    print_traces(console, outcome, shown)
    matched = sum(1 for r in results if r.matches)
    expectation = "as expected" if any(r.expected is not None for r in results) else "without expectation"
    inconclusive = sum(1 for r in results if r.verdict == INCONCLUSIVE)
    console.print()
    print_text(console, f"{counted(len(results), 'check')} on {counted(len(scenarios), 'scenario')} × "
                        f"{counted(len(variants), 'variant')}: {matched} {expectation}, {len(differs)} differ, "
                        f"{inconclusive} inconclusive. {time.perf_counter() - started:.1f} s")


def _engine_options(options, differential) -> EngineOptions:
    workers = {"workers": options.workers} if options.workers else {}
    return EngineOptions(symmetry=not options.no_symmetry, fairness=select_fairness(options.fairness), core=options.core,
                         **workers,
                         depth=options.depth, max_k=options.max_k, parametric=_parametric(options.parametric),
                         examples=options.examples, steps=options.steps, seed=options.seed, profile=options.profile,
                         differential=differential)


def command_check(options) -> int:
    scenarios = select_scenarios(options.scenario)
    variants = select_variants(options.variant)
    engine_name = select_engine(options.engine)
    properties, differential = select_checks(options.property, engine_name)
    mutants = select_mutants(options.mutant)
    started = time.perf_counter()
    budget = Budget(options.max_states, options.timeout_per_check, until=_checking_deadline(options))
    outcome = _run_all(scenarios, variants, properties, engine_name=engine_name, mutants=mutants,
                       budget=budget, options=_engine_options(options, differential),
                       record_lifecycle=options.report is not None)
    options.outcome_code = _exit_code([r for run in outcome for r in run.results])
    if options.report is not None:
        try:
            _wrote(write_review(outcome, options.report, include_times=not options.no_times))
        except OutputError as error:  # the records are still printed; the run then exits 2
            _say(f"kepcheck: error: --report {error}")
            options.outcome_code = EXIT_USAGE
    if options.json:
        print(json.dumps([result_record(run.ctx, r) for run in outcome for r in run.results], indent=2,
                         ensure_ascii=ascii_only(sys.stdout)))
    else:
        _print_check(options, outcome, scenarios, variants, started)
    _print_after_check(options, outcome, mutants, time.perf_counter() - started)
    return options.outcome_code


def _print_after_check(options, outcome, mutants, seconds: float) -> None:
    """Whether each mutant was caught, and the statistics: on stdout after the tables; with --json on
    stderr (stdout stays JSON), the statistics there only on a terminal or after a run of at least
    ``PLAIN_SECONDS`` (as progress lines), so that a quick scripted run's stderr holds only errors.
    Nothing after an error (exit 2), which stays one line."""
    if options.outcome_code == EXIT_USAGE:
        return
    lines = mutant_verdicts(outcome, mutants)
    if not options.json or sys.stderr.isatty() or seconds >= PLAIN_SECONDS:
        lines += statistics(outcome, seconds)
    if options.json:
        for line in lines:
            _say(f"kepcheck: {line}")
    elif lines:
        console = _console(sys.stdout)
        for line in lines:
            print_text(console, line)


def _wrote(index) -> None:
    _say(f"kepcheck: wrote the design review report {index}")


def _run_all(scenarios, variants, properties, *, engine_name: str = "explicit", budget: Budget = Budget(),
             options: EngineOptions = EngineOptions(), **more) -> list:
    """Run the checks with their progress on stderr (``checks/outputs/progress.py``)."""
    with Reporter(sys.stderr, len(scenarios) * len(variants), engine_name, budget) as reporter:
        return list(run_checks(scenarios, variants, properties, engine_name=engine_name, budget=budget,
                               options=replace(options, progress=reporter.update), starting=reporter.starting,
                               **more))


def command_report(options) -> int:
    outcome = _run_all(select_scenarios(options.scenario), select_variants(options.variant), list(PROPERTIES),
                       record_lifecycle=True)
    index = write_review(outcome, options.out, include_times=not options.no_times)
    options.outcome_code = _exit_code([r for run in outcome for r in run.results])
    _wrote(index)
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
    ctx, trace = replayed(options)
    marks = judged_marks(ctx, trace)
    console = _console(sys.stdout)
    print_text(console, replay_headline(trace, marks), style="bold")
    print_text(console, format_trace(ctx, trace, marks))
    return EXIT_OK


def _check_parser(sub) -> None:
    check = sub.add_parser("check", help="check properties (default: the whole manifest)")
    check.add_argument("--scenario", action="append", metavar="NAME|FILE", help="a shipped scenario or a YAML file")
    check.add_argument("--variant", action="append", metavar="NAME")
    check.add_argument("--property", action="append", metavar="NAME", help="a catalog property; with --engine random "
                       "also a differential check (SchedulerConservative, AccountingAgrees)")
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
    check.add_argument("--max-states", type=int, metavar="N", help="state budget of each scenario × variant (each "
                       "search keeps at most N states; a search that reaches it is inconclusive)")
    check.add_argument("--timeout", type=float, metavar="S", help="time budget of the whole command, seconds: every "
                       "engine and phase, report writing included, shares one deadline; what it does not reach is "
                       "inconclusive")
    check.add_argument("--timeout-per-check", type=float, metavar="S", help="time budget of each scenario × variant, "
                       "seconds (with --timeout the nearer deadline counts)")
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
    parser.add_argument("--version", action="version", version=f"kepcheck {_version()}")
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
    again = sub.add_parser("replay", help="replay action labels (or an ITF trace file) and print the trace, each "
                           "always-property's first violation and a lasso's loop marked")
    again.add_argument("--scenario", metavar="NAME|FILE", help="required unless --itf names it")
    again.add_argument("--variant", metavar="NAME", help=f"default {DEFAULT_VARIANT} (or the ITF file's)")
    again.add_argument("--mutant", action="append", metavar="NAME")
    again.add_argument("--itf", metavar="FILE", help="replay the trace of an ITF file (.itf.json); its #meta names the "
                       "scenario, variant and mutants")
    again.add_argument("labels", nargs="*", metavar="LABEL", help='e.g. "PreemptForResize(pod=web)"')
    add_import_parser(sub)
    add_export_parser(sub)
    add_sweep_parser(sub)
    for command in sub.choices.values():  # --debug after the subcommand too (the default stays the global one)
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    return parser


def _command_deadline(options) -> Deadline | None:
    """``--timeout S`` as one deadline for the whole command, counted from the start of the process
    (``checks.engine.process_started``); a value ``validate_options`` will refuse gives none."""
    seconds = getattr(options, "timeout", None)
    if not (isinstance(seconds, float) and 0 < seconds < float("inf")):
        return None
    return Deadline.after(seconds, start=process_started())


def _checking_deadline(options) -> Deadline | None:
    """The deadline of the checks themselves: the command's, less the time kept back for printing the
    results and writing the report (``OUTPUT_RESERVE``)."""
    if options.deadline is None:
        return None
    return options.deadline.sooner(min(OUTPUT_RESERVE_MAX, OUTPUT_RESERVE * options.deadline.seconds))


def _version() -> str:
    """The installed package's version (its metadata, from pyproject.toml)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kepcheck")
    except PackageNotFoundError:
        return "(not installed: no package metadata)"


_DEBUG_HELP = "on an internal error show the Python traceback (otherwise one line, exit 4)"
COMMANDS = {"list": command_list, "check": command_check, "replay": command_replay, "report": command_report,
            "diff": command_diff, "import": command_import,
            "export": command_export, "sweep": command_sweep}


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
        return _interrupted(error)
    except BrokenPipeError:
        quiet_stdout()
        return getattr(options, "outcome_code", EXIT_OK)
    except Exception as error:  # noqa: BLE001 - the last resort: one line, exit 4
        swallowed = swallowed_interrupt()  # a signal whose exception another one wrapped on its way up
        return internal_error(options, error) if swallowed is None else _interrupted(swallowed)


def _interrupted(error: KeyboardInterrupt) -> int:
    interrupt_handled()
    _say("kepcheck: interrupted" + (f" ({error})" if isinstance(error, Interrupted) else ""))
    return error.code if isinstance(error, Interrupted) else EXIT_INTERRUPTED


def main(argv: list[str] | None = None) -> int:
    """``kepcheck`` with ``argv`` (default: the command line); returns the exit code (argparse's own
    errors and ``--help`` exit through ``SystemExit``, code 2 and 0)."""
    tolerant_streams()
    options = build_parser().parse_args(argv)
    options.deadline = _command_deadline(options)
    handlers = install_interrupt_handlers()
    try:
        return _run_command(options)
    finally:
        restore_handlers(handlers)


if __name__ == "__main__":
    sys.exit(main())
