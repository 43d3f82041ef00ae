"""Where and why a trace breaks its property, in words: the marked step and its arithmetic.

``find_breach(ctx, result)`` re-judges the trace with the property's own predicate
(``model/properties.PREDICATES``): for an always-property of states the breach is the first state
where the predicate is false, for one of steps the first step where it is false; the lines are the
terms the predicate compared there (``model/explain.EXPLAIN``), e.g. "kubelet total on n1 (cpu):
pod1 4 + pod2 2 = 6 > 5 allocatable". For an eventually-property (a lasso) the lines say which
pod's goal is never reached on the loop, or which step the loop keeps taking
(``model/properties.LIVENESS``).

``judge_trace(ctx, trace, names)`` is the one judgement of a trace read back (``kepcheck replay``,
``kepcheck export``): each property's breach, or a witness's first step.

``node_loads(ctx, state)`` is what the trace table shows per node at every step: the allocatable
and each side's counted total — the scheduler's NodeInfo.Requested (``model/views.scheduler_requested``)
and the kubelet's allocations as KubeletNeverOvercommits counts them (max(allocated, actual) of
every admitted pod) — never a difference that could be negative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.kubernetes.quantities import format_quantity

from kepcheck.checks.outputs.describe import REASONS, describe_pod
from kepcheck.checks.result import CheckResult, Trace
from kepcheck.model.accounting.copies import scheduler_view
from kepcheck.model.accounting.views import scheduler_requested
from kepcheck.model.context import Context
from kepcheck.model.properties.capacity import kubelet_node_terms, tally
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.properties.eventually import LIVENESS, EventuallyNever
from kepcheck.model.properties.explain import EXPLAIN, Fact, Tally
from kepcheck.model.state import State

__all__ = ["Breach", "Judgement", "NodeLoad", "find_breach", "judge_trace", "witness_step", "node_loads", "load_text", "used_text", "allocatable_text",
           "tally_lines"]

_SPECS = {p.name: p for p in PROPERTIES}


@dataclass(frozen=True)
class Breach:
    step: int | None  # the step (or state) where the property fails; None for a lasso
    lines: tuple  # the property's arithmetic (or, for a lasso, the goal never reached), in words


@dataclass(frozen=True)
class NodeLoad:
    node: int
    allocatable: tuple
    scheduler: tuple  # NodeInfo.Requested
    kubelet: tuple  # Σ max(allocated, actual) of the admitted pods


def node_loads(ctx: Context, state: State) -> tuple:
    """Per node: allocatable, NodeInfo.Requested as the scheduler's cache has it (with the stale view,
    from the copies its informer delivered), and the kubelet's count."""
    cache = scheduler_view(ctx, state)
    return tuple(NodeLoad(node, tuple(ctx.allocatable[node]), tuple(scheduler_requested(ctx, cache, node)),
                          tuple(tally(ctx, kubelet_node_terms(ctx, state, node)))) for node in ctx.node_range)


def _quantity(ctx: Context, resource: int, value: int) -> str:
    name = ctx.scenario.resources[resource]
    return format_quantity(value * ctx.scenario.units[resource], name)


def _used_of(ctx: Context, used: tuple, allocatable: tuple) -> str:
    text = ", ".join(f"{name} {_quantity(ctx, r, u)}/{_quantity(ctx, r, a)}"
                     for r, (name, u, a) in enumerate(zip(ctx.scenario.resources, used, allocatable)))
    return text + (" ⚠ over" if any(u > a for u, a in zip(used, allocatable)) else "")


def load_text(ctx: Context, load: NodeLoad) -> list[str]:
    """``scheduler cpu 4/5`` and ``kubelet cpu 6/5 ⚠ over`` (prefixed by the node's
    name when there are several nodes)."""
    prefix = f"{ctx.node_names[load.node]} " if len(ctx.node_names) > 1 else ""
    return [f"{prefix}scheduler {_used_of(ctx, load.scheduler, load.allocatable)}",
            f"{prefix}kubelet {_used_of(ctx, load.kubelet, load.allocatable)}"]


def used_text(ctx: Context, state: State) -> str:
    """Every node's used / allocatable on one line, for the terminal trace."""
    return "; ".join(f"{ctx.node_names[load.node]}: scheduler {_used_of(ctx, load.scheduler, load.allocatable)}, "
                     f"kubelet {_used_of(ctx, load.kubelet, load.allocatable)}" for load in node_loads(ctx, state))


def allocatable_text(ctx: Context) -> str:
    return "; ".join(f"{ctx.node_names[n]}: allocatable {ctx.format(ctx.allocatable[n])}" for n in ctx.node_range)


# --- the arithmetic in words ----------------------------------------------------------------------------

_ROLES = {"grant": " (grant)", "allocation": " (allocation)", "resize": " (resize)", "request": " (request)",
          "bound": " (bound: desired)", "promise": " (resize promise)", "nominated": " (nominated)", "kept": " (kept)",
          "allocated": ""}


def _subject(ctx: Context, t: Tally) -> str:
    node = ctx.node_names[t.node]
    claimant = ctx.names[t.claimant] if t.claimant >= 0 else ""
    return {"kubelet-total": f"kubelet total on {node}",
            "scheduler-grant": f"scheduler's grant to {claimant} on {node}",
            "kubelet-grant": f"kubelet's allocation to {claimant} on {node}",
            "kubelet-admission": f"kubelet's admission count for {claimant} on {node}",
            "victim-kept": f"without evicting {_kept(ctx, t)}, the kubelet's count for {claimant}'s resize on {node}"}[
        t.claim]


def _kept(ctx: Context, t: Tally) -> str:
    return next((ctx.names[i] for i, role, _ in t.terms if role == "kept"), "the victim")


def tally_lines(ctx: Context, t: Tally) -> list[str]:
    """One line per resource that decides the comparison: the terms, the sum and allocatable."""
    over = [r for r in range(ctx.width) if t.total[r] > t.allocatable[r]]
    resources = over if t.must_fit and over else range(ctx.width)
    lines = []
    for r in resources:
        terms = [f"{ctx.names[i]} {_quantity(ctx, r, v[r])}{_ROLES.get(role, '')}"
                 for k, (i, role, v) in enumerate(t.terms) if v[r] or (k == 0 and role != "allocated")]
        sign = ">" if t.total[r] > t.allocatable[r] else "≤"
        lines.append(f"{_subject(ctx, t)} ({ctx.scenario.resources[r]}): {' + '.join(terms) or '0'} = "
                     f"{_quantity(ctx, r, t.total[r])} {sign} {_quantity(ctx, r, t.allocatable[r])} allocatable")
    return lines


def _compared(ctx: Context, a_name: str, a: tuple, b_name: str, b: tuple) -> str:
    return f"{a_name} {ctx.format(a)} {'=' if tuple(a) == tuple(b) else '≠'} {b_name} {ctx.format(b)}"


def _fact_line(ctx: Context, f: Fact, state: State) -> str:
    pod, others, more = ctx.names[f.pod], [ctx.names[i] for i in f.others], [ctx.names[i] for i in f.more]
    p = state.pods[f.pod]
    return {
        "rejected": f"{pod} was bound by the scheduler and rejected by the kubelet (phase Failed, "
                    f"{'/'.join('OutOf' + name for name in ctx.scenario.resources)})",
        "victim-priority": (f"{pod} (priority {ctx.priorities[f.pod]}) was evicted for {''.join(others)} "
                            f"(priority {ctx.priorities[f.others[0]] if f.others else '?'}): not strictly lower"),
        "waiting-victims": (f"{pod}'s resize evicts {', '.join(more)} while {', '.join(others)}, evicted for it "
                            f"earlier, {'is' if len(others) == 1 else 'are'} still terminating"),
        "in-progress": (f"{pod}: PodResizeInProgress {'set' if p.in_progress else 'not set'} while "
                        + _compared(ctx, "allocated", p.allocated, "actual", p.actual)),
        "pending": (f"{pod}: PodResizePending={REASONS[p.resize]} after the kubelet evaluated the spec, while "
                    + _compared(ctx, "desired", p.desired, "allocated", p.allocated)),
        "nominated": (f"{pod}: nominatedNodeName={ctx.node_names[p.nominated]} on a running pod, and "
                      f"`{ctx.variant.name}` does not use nominations for resizes"),
        "not-claiming": (f"{pod} no longer asked for room in the API (its resize was granted or reverted, or it was "
                         f"deleted) when the scheduler evicted for it"),
        "already-fit": f"{pod} already fitted {_judged_view(ctx)} before the eviction",
        "victim-not-needed": f"with {''.join(others)} kept, {pod} fits {_judged_view(ctx)}",
        "kubelet-spares-victim": (f"{pod}'s preemption evicts {''.join(others)}, which the same victim selection with "
                                  f"the node's pods counted at the kubelet's allocations would not pick (it picks "
                                  f"{', '.join(more) or 'no one'})"),
    }[f.claim]


def _judged_view(ctx: Context) -> str:
    """What NoVictimWithoutNeed judges fit on: the scheduler's accounting of the API state, which the
    scheduler itself saw only with the synchronous view."""
    if ctx.variant.scheduler_view == "stale":
        return "the scheduler's accounting of the API state (its own view was behind)"
    return "the scheduler's view"


def _explain_lines(ctx: Context, parts: list, state: State) -> tuple:
    lines = []
    for part in parts:
        lines += tally_lines(ctx, part) if isinstance(part, Tally) else [_fact_line(ctx, part, state)]
    return tuple(lines)


# --- finding the breach -----------------------------------------------------------------------------------

def _always_breach(ctx: Context, name: str, trace: Trace) -> Breach | None:
    predicate, explain, scope = PREDICATES[name], EXPLAIN[name], _SPECS[name].scope
    for number, (action, state) in enumerate(trace.steps):
        if scope == "state" and not predicate(ctx, state):
            return Breach(number, _explain_lines(ctx, explain(ctx, state), state))
        if scope == "step" and number > 0:
            before = trace.steps[number - 1][1]
            if not predicate(ctx, before, action, state):
                return Breach(number, _explain_lines(ctx, explain(ctx, before, action, state), state))
    return None


def _loop_words(trace: Trace) -> str:
    last = len(trace.steps) - 1
    return f"in the state of step {last}, where the run stays" if trace.loop == last else \
        f"on the loop (steps {trace.loop}–{last})"


def _response_lines(ctx: Context, liveness, trace: Trace) -> tuple:
    states = [state for _, state in trace.steps]
    lines = []
    for i in ctx.pod_range:
        if any(liveness.goal(ctx, s, i) for s in states[trace.loop:]):
            continue
        reached = [n for n, s in enumerate(states) if liveness.goal(ctx, s, i)]
        after = reached[-1] if reached else -1
        since = [n for n, s in enumerate(states) if n > after and liveness.premise(ctx, s, i)]
        if not since:
            continue
        lines.append(f"{ctx.names[i]}: from step {since[0]} {liveness.premise_words}, and {_loop_words(trace)} "
                     f"the goal is never reached: {liveness.goal_words}. At step {trace.loop}: "
                     + describe_pod(ctx, i, states[trace.loop].pods[i]))
    return tuple(lines)


def _lasso_breach(ctx: Context, name: str, trace: Trace) -> Breach | None:
    liveness = LIVENESS.get(name)
    if liveness is None or trace.loop is None:
        return None
    if isinstance(liveness, EventuallyNever):
        steps = [n for n in range(trace.loop + 1, len(trace.steps))
                 if liveness.step(ctx, trace.steps[n - 1][1], trace.steps[n][1])]
        return Breach(None, (f"{liveness.step_words} at step {', '.join(map(str, steps))} of the loop, on every "
                             f"round",) if steps else ())
    return Breach(None, _response_lines(ctx, liveness, trace))


def find_breach(ctx: Context, result: CheckResult) -> Breach | None:
    """The breach of ``result``'s trace: the failing step and its arithmetic (always), or the goal
    never reached on the loop (eventually); None for a witness or an unknown property."""
    spec = _SPECS.get(result.property)
    if result.trace is None or spec is None:
        return None
    if spec.kind == ALWAYS:
        return _always_breach(ctx, spec.name, result.trace)
    if spec.kind == EVENTUALLY:
        return _lasso_breach(ctx, spec.name, result.trace)
    return None


class Judgement(NamedTuple):
    """One property judged on a trace: where an always- or eventually-property breaks (``breach``,
    None when it does not along this trace), or the first step a sometimes-property's witness holds."""

    property: str
    kind: str
    breach: Breach | None
    step: int | None  # the breach's step, or the witness's; None when neither is on the trace


def witness_step(ctx: Context, name: str, trace: Trace) -> int | None:
    """The first step at which the sometimes-property ``name`` holds on ``trace`` (a state property
    on the state, a step property on the step), judged by its predicate; None if it never does."""
    predicate, scope = PREDICATES[name], _SPECS[name].scope
    for number, (action, state) in enumerate(trace.steps):
        if scope == "state" and predicate(ctx, state):
            return number
        if scope == "step" and number > 0 and predicate(ctx, trace.steps[number - 1][1], action, state):
            return number
    return None


def judge_trace(ctx: Context, trace: Trace, names=None) -> list[Judgement]:
    """Each property of ``names`` (default: every always-property of the catalog) judged on
    ``trace`` by its own predicate, in catalog order of ``names``."""
    specs = [_SPECS[name] for name in names] if names is not None else [p for p in PROPERTIES if p.kind == ALWAYS]
    judged = []
    for spec in specs:
        if spec.kind == SOMETIMES:
            judged.append(Judgement(spec.name, spec.kind, None, witness_step(ctx, spec.name, trace)))
            continue
        breach = find_breach(ctx, CheckResult(ctx.scenario.name, ctx.variant.name, spec.name, spec.kind, "replay",
                                              "violated", trace=trace))
        judged.append(Judgement(spec.name, spec.kind, breach, None if breach is None else breach.step))
    return judged
