"""Traces in ITF, the Informal Trace Format of Apalache and Quint (Apalache ADR-015): written for
every trace kepcheck reports, and read back for ``kepcheck replay --itf FILE``.

The values are encoded by itf-py (``itf_py.value_to_json``, the ITF library of the format's
authors), so every file loads with it; the shape is:

* ``vars``: ``pods``, ``kubeletRetryDue``, ``mbt::actionTaken``, ``mbt::nondetPicks``;
* ``pods``: a ``#map`` from pod name to a record (``phase``, ``node``, ``desired``, ``allocated``,
  ``actual``, ``podResizePending``, ``podResizeInProgress``, ``queue``, ``nominatedNodeName``,
  ``preemptedFor``); ``kubeletRetryDue``: a ``#map`` from node name to a boolean. Kubernetes names
  (``web-frontend``, ``node-a``) are map keys, never record fields: a record's fields are
  identifiers;
* resource vectors are ``#tup`` s of ``#bigint`` in ``#meta.resources`` order, in the model units
  of ``#meta.units`` (millicores or bytes per unit);
* one sentinel, ``""`` (``UNSET``), for a field that is not set — the way the API server leaves
  ``spec.nodeName`` and ``status.nominatedNodeName`` empty: ``node``, ``nominatedNodeName``,
  ``preemptedFor`` (no ``DisruptionTarget`` condition) and ``podResizePending`` (no condition);
* the action that led to a state, where Quint's model-based-testing tools read it:
  ``mbt::actionTaken`` is the action's name (``init`` for the first state) and
  ``mbt::nondetPicks`` a record of its parameters, each as Quint's ``Option``
  (``{"tag": "Some", "value": "web"}``; a resize's requests as a record from resource name to
  Kubernetes quantity, ``{"tag": "Some", "value": {"cpu": "5"}}``). Quint also lists the parameters an action did not pick,
  as ``None``; itf-py 0.5.0 cannot load that tag (``None`` is a Python keyword), so they are left
  out: an absent field is a parameter not picked. The whole label
  (``PreemptForResize(pod=web)``) is also in the state's ``#meta.action``;
* ``loop`` for a lasso: the index of the state the loop starts from; the loop ends in the last
  state (ADR-015), whose successor is ``states[loop]``. A kepcheck ``Trace`` repeats
  ``states[loop]`` as its last state; that repetition is not written, and the action that leads
  from the last state back to ``states[loop]`` is ``#meta.loopAction``. A run that stays in its
  last state forever (no successor) has ``loop`` = the last index and no ``loopAction``;
* ``#meta``: scenario, its source file, variant, mutants, resources, units and a description.

Left out of the state: what only the scheduler's memory or the properties' ghost history holds
(``assumed``, ``tracking``, ``promised``, ``observed``) and the environment's budget; a replay
rebuilds every field from the actions (``itf_actions``).
"""

from __future__ import annotations

import json
from collections import namedtuple
from functools import lru_cache
from itf_py import itf_variant, trace_from_json, value_to_json

from kepcheck.spec.kep.vocabulary import Phase, Queue, ResizeReason
from kepcheck.spec.language.loader import ScenarioError
from kepcheck.spec.language.yaml_safe import InputError, read_text

from kepcheck.checks.result import Trace
from kepcheck.model.actions.next import ACTION_NAMES
from kepcheck.model.context import Context
from kepcheck.model.state import NO_NODE, NO_POD, State
from kepcheck.model.step import Action, Requests

__all__ = ["trace_to_itf", "itf_state", "state_values", "load_itf", "itf_actions", "itf_loop", "itf_setting",
           "ItfError", "UNSET", "INIT", "ACTION_TAKEN", "NONDET_PICKS", "ITF_VARS", "MAX_ITF_BYTES"]

UNSET = ""  # the one sentinel: a field that is not set
INIT = "init"  # mbt::actionTaken and #meta.action of the first state
ACTION_TAKEN = "mbt::actionTaken"
NONDET_PICKS = "mbt::nondetPicks"
ITF_VARS = ("pods", "kubeletRetryDue", ACTION_TAKEN, NONDET_PICKS)
MAX_ITF_BYTES = 8 * 1024 * 1024  # a trace file larger than this is refused unread

# The words of the pod fields, also the step-describer's (checks/outputs/describe.py, where no condition reads "none").
PHASE_WORDS = {Phase.ABSENT: "Absent", Phase.PENDING: "Pending", Phase.BOUND: "Bound", Phase.RUNNING: "Running",
               Phase.TERMINATING: "Terminating", Phase.GONE: "Gone",
               Phase.REJECTED: "Failed (OutOfcpu/OutOfmemory)"}
QUEUE_WORDS = {Queue.NOT_QUEUED: "not queued", Queue.ACTIVE: "activeQ", Queue.UNSCHEDULABLE: "unschedulable pool"}
REASON_WORDS = {ResizeReason.NONE: UNSET, ResizeReason.DEFERRED: "Deferred", ResizeReason.INFEASIBLE: "Infeasible"}

PodRecord = namedtuple("PodRecord", ["phase", "node", "desired", "allocated", "actual", "podResizePending",
                                     "podResizeInProgress", "queue", "nominatedNodeName", "preemptedFor"])
Some = itf_variant(namedtuple("Some", ["value"]))  # Quint's Option: a parameter the action picked


class ItfError(ScenarioError):
    """A file that is not a kepcheck ITF trace. ``str()`` is one line: ``FILE: WHERE: problem``
    (a ``ScenarioError``, so the command line exits 2 with that line)."""


# --- writing -----------------------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _picks_record(fields: tuple):
    return namedtuple("Picks", fields)


@lru_cache(maxsize=None)
def _some_record(fields: tuple):
    return itf_variant(namedtuple("Some", fields))


def _pick(value):
    """A parameter's value as Quint's ``Some``: a name as a string; a resize's ``Requests`` as a record
    from resource name to Kubernetes quantity, as ``resources.requests`` spells it (``{"cpu": "5"}``;
    itf-py loads a variant's record payload as the variant's own fields, so it is built that way)."""
    if isinstance(value, Requests):
        mapping = value.mapping()
        return _some_record(tuple(mapping))(*mapping.values())
    return Some(value)


def _picks(action: Action | None):
    """The action's parameters as ``mbt::nondetPicks``: a record of ``Some(value)``."""
    params = action.params if action is not None else ()
    return _picks_record(tuple(name for name, _ in params))(*(_pick(value) for _, value in params))


def _name_or_unset(names: tuple, index: int, none: int) -> str:
    return names[index] if index != none else UNSET


def state_values(ctx: Context, state: State, action: Action | None) -> dict:
    """The state's ITF variables as Python values (what itf-py loads the written state back as)."""
    pods = {}
    for i, pod in enumerate(state.pods):
        pods[ctx.names[i]] = PodRecord(
            phase=PHASE_WORDS[pod.phase], node=_name_or_unset(ctx.node_names, pod.node, NO_NODE),
            desired=tuple(pod.desired), allocated=tuple(pod.allocated), actual=tuple(pod.actual),
            podResizePending=REASON_WORDS[pod.resize], podResizeInProgress=bool(pod.in_progress),
            queue=QUEUE_WORDS[pod.queue], nominatedNodeName=_name_or_unset(ctx.node_names, pod.nominated, NO_NODE),
            preemptedFor=_name_or_unset(ctx.names, pod.preempted_by, NO_POD))
    return {
        "pods": pods,
        "kubeletRetryDue": {ctx.node_names[n]: bool(state.retry_due[n]) for n in ctx.node_range},
        ACTION_TAKEN: action.name if action is not None else INIT,
        NONDET_PICKS: _picks(action),
    }


def itf_state(ctx: Context, state: State, action: Action | None, index: int) -> dict:
    """The state as an ITF state object; the action that led there (``init`` first) in
    ``mbt::actionTaken``/``mbt::nondetPicks`` and, as its label, in ``#meta.action``."""
    meta = {"index": index, "action": action.label() if action is not None else INIT}
    return {"#meta": meta, **{name: value_to_json(value) for name, value in state_values(ctx, state, action).items()}}


def trace_to_itf(ctx: Context, trace: Trace, description: str = "") -> dict:
    """The trace as an ITF document (see the module's docstring for the shape). ValueError for a
    lasso whose last state is not the state its loop starts from (an engine bug)."""
    steps = list(trace.steps)
    meta = {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": ctx.scenario.source or ctx.scenario.name,
        "description": description,
        "scenario": ctx.scenario.name,
        "variant": ctx.variant.name,
        "mutants": sorted(ctx.mutants),
        "resources": list(ctx.scenario.resources),
        "units": list(ctx.scenario.units),
    }
    if trace.loop is not None and trace.loop < len(steps) - 1:
        closing, back = steps.pop()
        if back != steps[trace.loop][1]:
            raise ValueError(f"the lasso's last state is not the state of step {trace.loop}, where its loop starts")
        meta["loopAction"] = closing.label()
    document = {"#meta": meta, "vars": list(ITF_VARS),
                "states": [itf_state(ctx, state, action, index) for index, (action, state) in enumerate(steps)]}
    if trace.loop is not None:
        document["loop"] = trace.loop
    return document


# --- reading -----------------------------------------------------------------------------------------

def load_itf(path) -> dict:
    """The ITF document in the file at ``path``, checked: JSON, loadable by itf-py, every state
    defines every variable, ``loop`` indexes a state, and every state after the first names a
    known action. ``ItfError`` (one line naming the file and the problem) otherwise."""
    source = str(path)
    try:
        text = read_text(path, MAX_ITF_BYTES)
    except InputError as error:
        raise ItfError(source, error.where, error.problem.replace("a scenario file", "a trace file")) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ItfError(source, f"line {error.lineno}", f"not JSON ({error.msg})") from None
    except RecursionError:
        raise ItfError(source, "", "not JSON this tool reads (nested too deeply)") from None
    _check_document(document, source)
    _actions(document, source)
    return document


def _check_document(document, source: str) -> None:
    if not isinstance(document, dict):
        raise ItfError(source, "", "not ITF: the file holds no JSON object")
    for field, kind in (("vars", list), ("states", list)):
        if not isinstance(document.get(field), kind):
            raise ItfError(source, field, "missing (an ITF trace has vars and states)")
    if not document["states"]:
        raise ItfError(source, "states", "empty (a trace has at least its initial state)")
    try:
        trace_from_json(document)
    except (KeyError, TypeError, ValueError, AttributeError, RecursionError) as error:
        raise ItfError(source, "", f"not ITF (itf-py cannot load it: {error})") from None
    for index, state in enumerate(document["states"]):
        if not isinstance(state, dict):
            raise ItfError(source, f"states[{index}]", "not an object")
        missing = [name for name in document["vars"] if name not in state]
        if missing:
            raise ItfError(source, f"states[{index}]", f"no value for {', '.join(map(str, missing))}")
    loop = document.get("loop")
    if loop is not None and (not isinstance(loop, int) or isinstance(loop, bool)
                             or not 0 <= loop < len(document["states"])):
        raise ItfError(source, "loop", f"{loop!r} is not the index of a state (0..{len(document['states']) - 1})")


def _picked(picks, source: str, where: str) -> tuple:
    """The parameters ``((key, value), ...)`` of a ``mbt::nondetPicks`` record (``None`` picks left
    out): names as strings, a record of quantities as ``Requests``."""
    if not isinstance(picks, dict):
        raise ItfError(source, where, f"{NONDET_PICKS} is not a record")
    params = []
    for name, option in picks.items():
        if not (isinstance(option, dict) and option.get("tag") in ("Some", "None") and "value" in option):
            raise ItfError(source, where, f"{NONDET_PICKS}.{name} is not an Option ({{\"tag\": \"Some\", \"value\": …}})")
        if option["tag"] != "Some":
            continue
        value = option["value"]
        if isinstance(value, dict):
            try:
                value = Requests.from_mapping(value)
            except (ValueError, TypeError) as error:
                raise ItfError(source, where, f"{NONDET_PICKS}.{name}: {error}") from None
        elif not isinstance(value, str):
            raise ItfError(source, where, f"{NONDET_PICKS}.{name} is neither a name nor a record of quantities")
        params.append((name, value))
    return tuple(params)


def _parsed(label, source: str, where: str) -> Action:
    if not isinstance(label, str):
        raise ItfError(source, where, "the action is not a label")
    try:
        return Action.parse(label)
    except ValueError as error:
        raise ItfError(source, where, str(error)) from None


def _state_action(state: dict, source: str, where: str) -> Action:
    """The action that led to ``state``: from ``mbt::actionTaken`` and ``mbt::nondetPicks`` when the
    state has them, else from ``#meta.action``; the two must agree."""
    meta = state.get("#meta") if isinstance(state.get("#meta"), dict) else {}
    written = meta.get("action")
    if ACTION_TAKEN not in state:
        if not isinstance(written, str):
            raise ItfError(source, where, f"no action ({ACTION_TAKEN} or #meta.action)")
        return _parsed(written, source, where)
    taken = state[ACTION_TAKEN]
    if not isinstance(taken, str):
        raise ItfError(source, where, f"{ACTION_TAKEN} is not a string")
    action = Action(taken, _picked(state.get(NONDET_PICKS, {}), source, where))
    if written is not None and _parsed(written, source, where) != action:
        raise ItfError(source, where, f"{ACTION_TAKEN} and {NONDET_PICKS} say {action.label()} but #meta.action says "
                       f"{written}")
    return action


def _known(action: Action, source: str, where: str) -> Action:
    if action.name not in ACTION_NAMES:
        raise ItfError(source, where, f"unknown action {action.name!r} (known: {', '.join(ACTION_NAMES)})")
    return action


def _actions(document: dict, source: str) -> list[Action]:
    states = document["states"]
    first_meta = states[0].get("#meta") if isinstance(states[0].get("#meta"), dict) else {}
    if ACTION_TAKEN in states[0] or "action" in first_meta:  # a trace of another tool may say nothing
        first = _state_action(states[0], source, "states[0]")
        if first.label() != INIT:
            raise ItfError(source, "states[0]", f"the initial state's action is {first.label()!r}, not {INIT!r}")
    actions = [_known(_state_action(state, source, f"states[{i}]"), source, f"states[{i}]")
               for i, state in enumerate(states[1:], start=1)]
    meta = document.get("#meta") if isinstance(document.get("#meta"), dict) else {}
    closing = meta.get("loopAction")
    if closing is not None:
        if not isinstance(closing, str) or document.get("loop") is None:
            raise ItfError(source, "#meta.loopAction", "must be an action label, and only in a lasso (with loop)")
        actions.append(_known(_parsed(closing, source, "#meta.loopAction"), source, "#meta.loopAction"))
    return actions


def itf_actions(document: dict) -> list[Action]:
    """The actions of the trace's steps after ``init``, in order, followed for a lasso by
    ``#meta.loopAction``: replayed from the scenario's initial state (``checks.result.replay``) they
    rebuild the trace written, the lasso's return to ``states[loop]`` included. ``ItfError`` if a
    state names no known action."""
    return _actions(document, "ITF document")


def itf_loop(document: dict) -> int | None:
    """The index of the step a lasso's loop starts from (``Trace.loop`` of the replayed trace), or
    None for a finite trace."""
    loop = document.get("loop")
    return loop if isinstance(loop, int) and not isinstance(loop, bool) else None


def itf_setting(document: dict, source: str = "ITF document") -> tuple[str, str, tuple[str, ...]]:
    """``(scenario, variant, mutants)`` the trace was found in, from ``#meta``: the scenario is the
    shipped scenario's name or the file it was loaded from (as ``--scenario`` takes it). ``ItfError``
    naming ``source`` (the file) when ``#meta`` does not say."""
    meta = document.get("#meta") if isinstance(document.get("#meta"), dict) else {}
    name, scenario_file, variant = meta.get("scenario"), meta.get("source", ""), meta.get("variant")
    mutants = meta.get("mutants", [])
    for field, value in (("scenario", name), ("variant", variant)):
        if not isinstance(value, str) or not value:
            raise ItfError(source, f"#meta.{field}", "missing: the trace does not say where it was found")
    if not isinstance(mutants, list) or not all(isinstance(m, str) for m in mutants):
        raise ItfError(source, "#meta.mutants", "not a list of mutant names")
    shipped = not isinstance(scenario_file, str) or not scenario_file or scenario_file.startswith("spec/scenarios/")
    return (name if shipped else scenario_file), variant, tuple(mutants)
