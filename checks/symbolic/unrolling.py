"""The formula pieces of the symbolic engines, one small function each (pySMT's ``model_checking.py``,
docs/style.md R13), and the decoding of a counterexample.

The transition relation is not written here: it is the model's own ``model.actions.next.transitions``
evaluated on states whose fields are Z3 constants (``checks/symbolic/states.py``). At every step ``t`` an
integer selector ``action@t`` picks one action instance; the instance's guard must hold and the
next state must equal the successor the model computed (every field: frame conditions come for
free because the model returns whole states). Properties are the predicates of
``model/properties/catalog.py``, also evaluated on Z3 terms.

Depth: a state property violated in the state reached after ``k`` actions, or a step property
violated by the ``k``-th action, is a violation at depth ``k``: the length of the trace, the same
number the explicit engine's shortest counterexample has.

Every counterexample is decoded from the Z3 model (actions from the selector), replayed through
the model (``checks.result.replay``), compared field by field with the decoded states and judged
again concretely before it is reported (``decode``); a trace that does not replay raises
``EngineError``.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Iterable
import z3

from kepcheck.spec.kep.properties import PropertySpec

from kepcheck.checks.result import CheckResult, EngineError, replay
from kepcheck.checks.symbolic.parametric import Parametric, concrete_scenario, parametric_model
from kepcheck.checks.symbolic.states import Unrolling, as_bool, state_leaves, states_equal, symbolic_state
from kepcheck.model.actions.next import transitions
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import all_, implies, ite, z3_and, z3_eq, z3_not, z3_or
from kepcheck.model.init import initial_state
from kepcheck.model.properties.catalog import PREDICATES

__all__ = ["init_at", "transition", "unroll", "bad_at", "holds_at", "simple_path", "invariants_at", "k_hypothesis",
           "bmc", "k_induction", "Conjunction", "decode", "record", "setup", "new_solver", "check", "named", "interruptible"]

# Z3 installs its own SIGINT handler during a check (its ``ctrl_c`` parameter): a Ctrl-C would then
# cancel the check as "unknown" and never reach kepcheck's handler (``checks/outputs/files.py``),
# so the run would end as inconclusive instead of interrupted. ``interruptible`` interrupts Z3 itself.
z3.set_param("ctrl_c", False)


def init_at(unrolling: Unrolling, step: int = 0):
    """I(s_step): the state at ``step`` is the scenario's initial state (plus the parametric bounds)."""
    return z3.And(states_equal(unrolling.state(step), unrolling.init), *unrolling.assumptions)


def transition(unrolling: Unrolling, step: int):
    """T(s_t, s_t+1) = 0 <= action@t < n ∧ ⋀_i (action@t = i → guard_i(s_t)) ∧ s_t+1 = succ_action@t(s_t).

    The successor is written field by field as one ``If`` chain over the selector (functional
    encoding: each next-state variable is defined once), which Z3 solves far faster than one
    implication per instance with a whole-state equality.
    """
    selector = unrolling.selector(step)
    instances = unrolling.instances(step)
    chooses = unrolling.chooses(step)
    parts = [selector >= 0, selector < len(instances)]
    for i, (_, guard, _) in enumerate(instances):
        if guard is not True:
            parts.append(implies(chooses[i], guard))
    columns = [state_leaves(successor) for _, _, successor in instances]
    for j, leaf in enumerate(state_leaves(unrolling.state(step + 1))):
        value = columns[-1][j]
        for i in range(len(instances) - 2, -1, -1):
            value = ite(chooses[i], columns[i][j], value)
        parts.append(z3_eq(leaf, value))
    return z3_and(parts)


def unroll(unrolling: Unrolling, k: int, start: int = 0):
    """T(s_start, s_start+1) ∧ … ∧ T(s_k-1, s_k)."""
    return z3_and([transition(unrolling, t) for t in range(start, k)])


@dataclass(frozen=True)
class Conjunction(PropertySpec):
    """A state property the engine proves for itself (not in the catalog): the conjunction of its
    ``parts``, state predicates ``(ctx, state)`` such as the strengthening invariants."""

    parts: tuple = ()


def predicate_of(spec: PropertySpec):
    if isinstance(spec, Conjunction):
        return lambda ctx, state: all_(part(ctx, state) for part in spec.parts)
    return PREDICATES[spec.name]


def bad_at(unrolling: Unrolling, spec: PropertySpec, k: int):
    """¬P(s_k) for a state property; for a step property, the k-th action (s_k-1 → s_k) violates it:
    ⋁_i (action@k-1 = i ∧ ¬P(s_k-1, a_i, succ_i)), or ¬P(s_k-1, s_k) for a predicate that does not
    read the action (the same under T(s_k-1, s_k), which every use of ``bad_at`` asserts)."""
    ctx, predicate = unrolling.ctx, predicate_of(spec)
    if spec.scope == "state":
        return z3.Not(as_bool(predicate(ctx, unrolling.state(k))))
    if k == 0:
        return z3.BoolVal(False)
    before = unrolling.state(k - 1)
    if not getattr(predicate, "reads_action", True):  # judged once, on the symbolic next state
        return z3_not(as_bool(predicate(ctx, before, None, unrolling.state(k))))
    chooses = unrolling.chooses(k - 1)
    violations = []
    for i, (action, _, successor) in enumerate(unrolling.instances(k - 1)):
        verdict = predicate(ctx, before, action, successor)
        if verdict is not True:  # an instance that cannot violate the property adds nothing
            violations.append(chooses[i] if verdict is False else z3_and([chooses[i], z3_not(verdict)]))
    return z3_or(violations) if violations else z3.BoolVal(False)


def holds_at(unrolling: Unrolling, spec: PropertySpec, k: int):
    """P at depth k (the negation of ``bad_at``)."""
    return z3.Not(bad_at(unrolling, spec, k))


def simple_path(unrolling: Unrolling, k: int, start: int = 0):
    """⋀_{start <= i < j <= k} s_i ≠ s_j."""
    return z3_and([z3_not(states_equal(unrolling.state(i), unrolling.state(j)))
                   for i in range(start, k + 1) for j in range(i + 1, k + 1)])


def invariants_at(unrolling: Unrolling, invariants: Iterable, k: int):
    """⋀ Inv(s_k) over the strengthening invariants (functions ``(ctx, state)``)."""
    return z3.And([as_bool(invariant(unrolling.ctx, unrolling.state(k))) for invariant in invariants])


def k_hypothesis(unrolling: Unrolling, spec: PropertySpec, k: int, invariants: Iterable = ()):
    """P at depths 0 … k-1 (1 … k-1 for a step property) ∧ Inv(s_0) ∧ … ∧ Inv(s_k), on a path that
    starts anywhere (in parametric mode: any sizes within the stated constraints)."""
    invariants = list(invariants)
    depths = range(0, k) if spec.scope == "state" else range(1, k)
    return z3.And([holds_at(unrolling, spec, i) for i in depths]
                  + [invariants_at(unrolling, invariants, i) for i in range(k + 1)] + unrolling.assumptions)


def bmc(unrolling: Unrolling, spec: PropertySpec, k: int):
    """I(s_0) ∧ T(s_0, s_1) ∧ … ∧ T(s_k-1, s_k) ∧ bad(k): satisfiable iff a violation at depth k."""
    return z3.And(init_at(unrolling), unroll(unrolling, k), bad_at(unrolling, spec, k))


def k_induction(unrolling: Unrolling, spec: PropertySpec, k: int, invariants: Iterable = ()):
    """hypothesis(k) ∧ T(s_0, s_1) ∧ … ∧ T(s_k-1, s_k) ∧ simple_path(k) ∧ bad(k): unsatisfiable (and
    no violation at depths < k from the initial state) means P holds at every depth."""
    return z3.And(k_hypothesis(unrolling, spec, k, invariants), unroll(unrolling, k), simple_path(unrolling, k),
                  bad_at(unrolling, spec, k))


def _value(model, term):
    if isinstance(term, bool) or isinstance(term, int):
        return term
    value = model.eval(term, model_completion=True)
    if z3.is_true(value):
        return True
    if z3.is_false(value):
        return False
    return value.as_long()


def decode(unrolling: Unrolling, model, spec: PropertySpec, k: int, parametric: Parametric | None,
            base_ctx: Context):
    """(concrete context, replayed Trace, chosen sizes): the trace of the model's selectors, replayed
    through the model and checked against the decoded states and the property."""
    ctx, chosen = base_ctx, {}
    if parametric is not None:
        scenario, chosen = concrete_scenario(parametric, model)
        ctx = base_ctx.with_scenario(scenario)
    # the instances of a step depend only on the context (their guards and effects on the state)
    source = unrolling.instances(0) if ctx is base_ctx else transitions(ctx, symbolic_state(ctx, 0))
    concrete_instances = [action for action, _, _ in source]
    labels = []
    for t in range(k):
        index = _value(model, unrolling.selector(t))
        symbolic_action = unrolling.instances(t)[index][0]
        action = concrete_instances[index]
        if action.name != symbolic_action.name:
            raise EngineError(f"instance {index} is {action.label()} concretely but {symbolic_action.label()} symbolically")
        labels.append(action.label())
    try:
        trace = replay(ctx, labels)
    except ValueError as error:
        raise EngineError(f"BMC trace for {spec.name} does not replay: {error}; labels {labels}") from error
    for t, (_, state) in enumerate(trace.steps):
        decoded = [_value(model, leaf) for leaf in state_leaves(unrolling.state(t))]
        replayed = [v if isinstance(v, bool) else int(v) for v in state_leaves(state)]
        if decoded != replayed:
            raise EngineError(f"BMC trace for {spec.name}: state {t} decoded from Z3 differs from the replay "
                              f"({labels[:t]})")
    predicate = predicate_of(spec)
    if spec.scope == "state":
        violated = not predicate(ctx, trace.steps[-1][1])
    else:
        violated = not predicate(ctx, trace.steps[-2][1], trace.steps[-1][0], trace.steps[-1][1])
    if not violated:
        raise EngineError(f"BMC trace for {spec.name} replays but does not violate it: {labels}")
    return ctx, trace, chosen


# --- what both drivers use ----------------------------------------------------------------------------

def record(ctx: Context, spec: PropertySpec, engine: str, verdict: str, **changes) -> CheckResult:
    return CheckResult(scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name, kind=spec.kind,
                       engine=engine, verdict=verdict, ref=spec.ref, mutants=tuple(sorted(ctx.mutants)), **changes)


def setup(ctx: Context, parametric) -> tuple[Unrolling, Parametric | None]:
    if parametric is None:
        return Unrolling(ctx, initial_state(ctx)), None
    model = parametric_model(ctx, tuple(parametric))
    return Unrolling(model.ctx, model.init, model.constraints), model


def new_solver() -> z3.Solver:
    """A Z3 solver for the unrolled formulas. It uses Z3's older simplex-based arithmetic solver
    (``smt.arith.solver=2``): on these formulas (linear integer sums and comparisons of small
    sizes under a deep If structure) it is 1.4–1.6× faster than the default at BMC depth 14–18
    (measured with bench/bench_symbolic.py); the verdicts are the same."""
    solver = z3.Solver()
    solver.set("smt.arith.solver", 2)
    return solver


def check(solver: z3.Solver, deadline: float | None, *assumptions):
    if deadline is not None:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return z3.unknown, "time budget exhausted"
        solver.set("timeout", max(1, int(remaining * 1000)))
    result = interruptible(solver.ctx, solver.check, *assumptions)
    return result, (solver.reason_unknown() if result == z3.unknown else "")


def interruptible(context: z3.Context, call, *arguments):
    """``call(*arguments)`` — a long Z3 call: a check, a simplification — in a helper thread (ctypes
    lets go of the GIL), so that the main thread keeps running Python and a SIGINT/SIGTERM handler
    raises there at once; Z3 is then interrupted (``Context.interrupt``) and the signal's exception
    goes on. Without this a long Z3 call holds a signal until it returns."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append(call(*arguments))
        except BaseException as error:  # noqa: BLE001 - handed to the main thread
            outcome.append(error)

    worker = threading.Thread(target=run, name="kepcheck-z3", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(0.05)
    except BaseException:
        context.interrupt()
        worker.join()
        raise
    if isinstance(outcome[0], BaseException):
        raise outcome[0]
    return outcome[0]


def named(function, name):
    """A state predicate ``(ctx, state)`` under another name (for the reason of a proof)."""
    def invariant(ctx, state):
        return function(ctx, state)
    invariant.__name__ = name
    return invariant
