"""The one door in for traces: a trace file (ITF, ``checks/outputs/itf.py``) read and replayed.

``read_trace`` is how every command reads a trace back — ``kepcheck replay --itf`` and ``kepcheck
export`` — so the scenario, variant and mutants are found, and flags are weighed against the
file, the same way everywhere; the trace it returns is replayed through the model (its states are
the model's, never the file's), and a lasso is closed as the file says. The one door out is
``checks.outputs.itf.trace_to_itf``; the one judgement of a trace read back is
``checks.outputs.breach.judge_trace``.
"""

from __future__ import annotations

from typing import NamedTuple

from kepcheck.spec.language.fields import ScenarioError
from kepcheck.spec.language.loader import default_scenarios, load_scenario
from kepcheck.spec.limits import shown

from kepcheck.checks.exits import UsageError
from kepcheck.checks.outputs.itf import ItfError, itf_actions, itf_loop, itf_setting, load_itf
from kepcheck.checks.result import Trace, closed_loop, replay
from kepcheck.checks.run import SelectionError, select_mutants, select_scenarios, select_variants
from kepcheck.model.context import Context

__all__ = ["TraceFile", "read_trace"]


class TraceFile(NamedTuple):
    """A trace file read and replayed through the model."""

    source: str  # the file
    scenario: str  # as ``--scenario`` takes it: a shipped scenario's name or the scenario file
    ctx: Context
    actions: tuple  # the Action of every step (a lasso's closing action last)
    trace: Trace  # replayed; a lasso when the file says so
    document: dict


def _meta_context(source: str, document: dict, scenario: str, variant: str, mutants: tuple) -> Context:
    """The context a trace file's ``#meta`` names, every name checked as a field of that file: a
    shipped scenario by name, or a scenario file (``.yaml``/``.yml``, named by ``#meta.source``) that
    loads; a known variant; known mutants. ``ItfError`` naming the file and the field otherwise, so a
    forged ``#meta`` never makes kepcheck read some other file as a scenario unannounced."""
    meta = document["#meta"]
    shipped = {s.name for s in default_scenarios()}
    field = "#meta.scenario" if scenario == meta.get("scenario") else "#meta.source"
    if field == "#meta.scenario" and scenario not in shipped:
        raise ItfError(source, field, f"unknown scenario {shown(scenario)}: not a shipped scenario (kepcheck list names "
                                      "them); a trace of a scenario file names that file in #meta.source")
    try:
        if field == "#meta.source":
            if not scenario.endswith((".yaml", ".yml")):
                raise ItfError(source, field, f"{shown(scenario)} is not a scenario file (.yaml or .yml)")
            chosen = load_scenario(scenario)
        else:
            chosen = select_scenarios([scenario])[0]
    except ScenarioError as error:
        if isinstance(error, ItfError):
            raise
        raise ItfError(source, field, f"the scenario file it names does not load ({error})") from None
    try:
        named_variant = select_variants([variant])[0]
    except SelectionError as error:
        raise ItfError(source, "#meta.variant", str(error)) from None
    try:
        named_mutants = select_mutants(list(mutants))
    except SelectionError as error:
        raise ItfError(source, "#meta.mutants", str(error)) from None
    return Context.build(chosen, named_variant, named_mutants)


def read_trace(path, *, scenario: str | None = None, variant: str | None = None, mutants=None,
               default_variant: str = "alpha-1.37", require_meta: bool = False) -> TraceFile:
    """Read the ITF file at ``path`` and replay it: the one way every command reads a trace back
    (``kepcheck replay --itf``, ``kepcheck export``). The scenario, variant and mutants come from the
    file's ``#meta``; a given flag that contradicts it is a ``UsageError``. A file whose ``#meta``
    does not say (a trace of another tool) takes them from the flags, unless ``require_meta``
    (``ItfError`` then). ``ItfError``/``SelectionError``/``UsageError`` are one line each (exit 2)."""
    document = load_itf(path)
    meta = document.get("#meta") if isinstance(document.get("#meta"), dict) else {}
    if require_meta or (meta.get("scenario") and meta.get("variant")):
        chosen, variant_name, mutant_names = itf_setting(document, str(path))
        for flag, given, written in (("--scenario", scenario, chosen), ("--variant", variant, variant_name)):
            if given is not None and given != written:
                raise UsageError(f"{flag} {given} contradicts {path}, whose #meta says {written}")
        if mutants and sorted(mutants) != sorted(mutant_names):
            raise UsageError(f"--mutant {' '.join(mutants)} contradicts {path}, whose #meta says "
                             f"{', '.join(mutant_names) or 'no mutant'}")
    elif scenario is None:
        raise UsageError(f"{path}: the file's #meta names no scenario and variant; give --scenario (and --variant)")
    else:
        chosen, variant_name, mutant_names = scenario, variant or default_variant, tuple(mutants or ())
    from_meta = require_meta or bool(meta.get("scenario") and meta.get("variant"))
    if from_meta:
        ctx = _meta_context(str(path), document, chosen, variant_name, mutant_names)
    else:
        ctx = Context.build(select_scenarios([chosen])[0], select_variants([variant_name])[0],
                            select_mutants(list(mutant_names)))
    actions = tuple(itf_actions(document))
    try:
        trace = closed_loop(replay(ctx, actions), itf_loop(document))
    except ValueError as error:
        raise UsageError(f"{path}: {error}") from None
    return TraceFile(str(path), chosen, ctx, actions, trace, document)
