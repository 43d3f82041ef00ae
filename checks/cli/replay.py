"""``kepcheck replay``: action labels — given on the command line or read from an ITF trace file —
replayed through the model, with every always-property judged along the way.

``judged_marks`` judges each always-property of the catalog on every state (state properties,
the initial state included) and every step (step properties) of a replayed trace, and marks the
first step at which each is violated ("✗ NoExcessVictims violated here", then the property's own
arithmetic at that step, from ``checks/outputs/breach.py``), as the engines judge it; ``breach_marks`` does
the same for one result's trace (``check --traces``). ``checks.result.closed_loop`` turns a replay that ends in a state it has been in before into a
lasso (``Trace.loop``), so that its loop is marked as the liveness checker's lassos are ("steps
3-4 repeat forever"); whether the loop is a fair run that violates an eventually-property is the
liveness checker's judgement (``kepcheck check``), not the replay's. ``replay_setting`` reads an
ITF file (``checks/outputs/itf.py``): its scenario, variant and mutants come from the file's ``#meta``
where it says, else from the flags; a flag that contradicts the file is a usage error.
"""

from __future__ import annotations

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES

from kepcheck.checks.exits import UsageError
from kepcheck.checks.outputs.breach import find_breach
from kepcheck.checks.outputs.itf import itf_action_labels, itf_loop, itf_setting, load_itf
from kepcheck.checks.outputs.report import counted
from kepcheck.checks.result import VIOLATED, CheckResult, Trace
from kepcheck.model.context import Context
from kepcheck.model.memo import caching

__all__ = ["judged_marks", "breach_marks", "replay_headline", "replay_setting", "DEFAULT_VARIANT"]

DEFAULT_VARIANT = "alpha-1.37"


def breach_marks(ctx: Context, result: CheckResult) -> dict[int, list[str]]:
    """Step number -> the lines that mark where ``result``'s trace breaks its property: "✗ NAME
    violated here" and the property's own arithmetic there (``checks/outputs/breach.py``); a lasso's lines
    go under its last step. Empty when there is no breach to show."""
    breach = find_breach(ctx, result)
    if breach is None:
        return {}
    step = len(result.trace) if breach.step is None else breach.step
    head = f"✗ {result.property} violated here" if breach.step is not None else f"✗ {result.property} violated"
    return {step: [head] + [f"  {line}" for line in breach.lines]}


def judged_marks(ctx: Context, trace: Trace, properties=PROPERTIES) -> dict[int, list[str]]:
    """``breach_marks`` of every always-property the trace violates, judged as the engines judge it."""
    marks: dict[int, list[str]] = {}
    with caching(ctx):
        for spec in properties:
            if spec.kind == ALWAYS:
                result = CheckResult(ctx.scenario.name, ctx.variant.name, spec.name, spec.kind, "replay", VIOLATED,
                                     trace=trace)
                for number, lines in breach_marks(ctx, result).items():
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




def replay_setting(options) -> tuple[str, str, list[str], list[str], int | None]:
    """(scenario, variant, mutant names, labels, loop) of ``kepcheck replay``: from the flags and
    labels, or from the ITF file of ``--itf`` (its ``#meta`` first; the flags where it says
    nothing). A usage error for labels beside ``--itf``, a flag that contradicts the file, or no
    scenario at all."""
    if options.itf is None:
        if options.scenario is None:
            raise UsageError("replay needs --scenario NAME|FILE (or --itf FILE)")
        return options.scenario, options.variant or DEFAULT_VARIANT, options.mutant or [], options.labels, None
    if options.labels:
        raise UsageError("replay takes the labels from --itf FILE or from the command line, not both")
    document = load_itf(options.itf)
    labels, loop = itf_action_labels(document), itf_loop(document)
    meta = document.get("#meta") if isinstance(document.get("#meta"), dict) else {}
    if not (meta.get("scenario") and meta.get("variant")):  # a trace of another tool: the flags say where
        if options.scenario is None:
            raise UsageError(f"--itf {options.itf}: the file's #meta names no scenario and variant; give --scenario "
                             "(and --variant)")
        return options.scenario, options.variant or DEFAULT_VARIANT, options.mutant or [], labels, loop
    scenario, variant, mutants = itf_setting(document, str(options.itf))
    for flag, given, written in (("--scenario", options.scenario, scenario), ("--variant", options.variant, variant)):
        if given is not None and given != written:
            raise UsageError(f"{flag} {given} contradicts --itf {options.itf}, whose #meta says {written}")
    if options.mutant and sorted(options.mutant) != sorted(mutants):
        raise UsageError(f"--mutant {' '.join(options.mutant)} contradicts --itf {options.itf}, whose #meta says "
                         f"{', '.join(mutants) or 'no mutant'}")
    return scenario, variant, list(mutants), labels, loop
