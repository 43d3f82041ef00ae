"""``kepcheck replay``: action labels — given on the command line or read from an ITF trace file —
replayed through the model, with every always-property judged along the way.

``judged_marks`` judges each always-property of the catalog on every state (state properties,
the initial state included) and every step (step properties) of a replayed trace, and marks the
first step at which each is violated ("✗ NoExcessVictims violated here", then the property's own
arithmetic at that step, from ``checks/outputs/breach.py``), as the engines judge it; ``breach_marks`` does
the same for one result's trace (``check --traces``). ``checks.result.closed_loop`` turns a replay that ends in a state it has been in before into a
lasso (``Trace.loop``), so that its loop is marked as the liveness checker's lassos are ("steps
3-4 repeat forever"); whether the loop is a fair run that violates an eventually-property is the
liveness checker's judgement (``kepcheck check``), not the replay's. ``replayed`` takes the
labels from the command line or reads the ITF file through the one door
(``checks.traces.read_trace``).
"""

from __future__ import annotations

from kepcheck.checks.exits import UsageError
from kepcheck.checks.outputs.breach import Breach, find_breach, judge_trace
from kepcheck.checks.outputs.report import counted
from kepcheck.checks.result import CheckResult, Trace, closed_loop, replay
from kepcheck.checks.run import select_mutants, select_scenarios, select_variants
from kepcheck.checks.traces import read_trace
from kepcheck.model.context import Context
from kepcheck.model.memo import caching

__all__ = ["judged_marks", "breach_marks", "replay_headline", "replayed", "DEFAULT_VARIANT"]

DEFAULT_VARIANT = "alpha-1.37"


def _marks(name: str, breach: Breach, length: int) -> dict[int, list[str]]:
    """"✗ NAME violated here" and the property's own arithmetic there, at the breach's step (a
    lasso's lines go under its last step)."""
    step = length if breach.step is None else breach.step
    head = f"✗ {name} violated here" if breach.step is not None else f"✗ {name} violated"
    return {step: [head] + [f"  {line}" for line in breach.lines]}


def breach_marks(ctx: Context, result: CheckResult) -> dict[int, list[str]]:
    """Step number -> the lines that mark where ``result``'s trace breaks its property
    (``checks/outputs/breach.py``). Empty when there is no breach to show."""
    breach = find_breach(ctx, result)
    return {} if breach is None else _marks(result.property, breach, len(result.trace))


def judged_marks(ctx: Context, trace: Trace) -> dict[int, list[str]]:
    """The marks of every always-property the trace violates, judged as the engines judge it
    (``checks.outputs.breach.judge_trace``)."""
    marks: dict[int, list[str]] = {}
    with caching(ctx):
        for judgement in judge_trace(ctx, trace):
            if judgement.breach is not None:
                for number, lines in _marks(judgement.property, judgement.breach, len(trace)).items():
                    marks.setdefault(number, []).extend(lines)
    return marks


def replay_headline(trace: Trace, marks: dict[int, list[str]]) -> str:
    """One line above a replayed trace: which always-properties it violates, at which step, and
    whether it ends in a loop."""
    found = [f"{mark.split()[1]} at step {number}" for number, lines in sorted(marks.items()) for mark in lines
             if mark.startswith("✗ ")]
    head = ("violated: " + ", ".join(found)) if found else "no always-property is violated along these steps"
    if trace.loop is not None:
        head += f"; the last step returns to the state of step {trace.loop} (a loop, marked ⟲)"
    return f"{counted(len(trace), 'step')} replayed; {head}"


def replayed(options) -> tuple[Context, Trace]:
    """(context, trace) of ``kepcheck replay``: the labels on the command line replayed in the flags'
    scenario, or the ITF file of ``--itf`` read by ``checks.traces.read_trace`` (its ``#meta``
    first; the flags where it says nothing). A usage error for labels beside ``--itf``, a flag that
    contradicts the file, no scenario at all, or an action that is not enabled where it is taken."""
    if options.itf is not None:
        if options.labels:
            raise UsageError("replay takes the labels from --itf FILE or from the command line, not both")
        read = read_trace(options.itf, scenario=options.scenario, variant=options.variant, mutants=options.mutant,
                          default_variant=DEFAULT_VARIANT)
        return read.ctx, read.trace
    if options.scenario is None:
        raise UsageError("replay needs --scenario NAME|FILE (or --itf FILE)")
    ctx = Context.build(select_scenarios([options.scenario])[0],
                        select_variants([options.variant or DEFAULT_VARIANT])[0], select_mutants(options.mutant or []))
    try:
        return ctx, closed_loop(replay(ctx, options.labels))
    except ValueError as error:
        raise UsageError(str(error)) from None
