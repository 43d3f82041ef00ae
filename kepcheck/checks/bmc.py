"""The symbolic engine: bounded model checking and k-induction of the ``always`` properties (issue 4).

The transition relation is not written here: it is the model's own ``model.actions.transitions``
evaluated on states whose fields are Z3 constants (``checks/symbolic.py``). At every step ``t`` an
integer selector ``action@t`` picks one action instance; the instance's guard must hold and the
next state must equal the successor the model computed (every field: frame conditions come for
free because the model returns whole states). Properties are the predicates of
``model/properties.py``, also evaluated on Z3 terms.

Layout (pySMT's ``model_checking.py``, STYLE.md R13): one small function per formula piece —
``init_at``, ``transition``, ``unroll``, ``bad_at``, ``holds_at``, ``simple_path``,
``k_hypothesis``, ``bmc``, ``k_induction`` — and two drivers, ``check_bmc`` and
``check_induction``, that return the common ``CheckResult``.

Depth: a state property violated in the state reached after ``k`` actions, or a step property
violated by the ``k``-th action, is a violation at depth ``k``: the length of the trace, the same
number the explicit engine's shortest counterexample has.

Every counterexample is decoded from the Z3 model (labels from the selector), replayed through
the model (``checks.result.replay``), compared field by field with the decoded states and judged
again concretely before it is reported; a trace that does not replay raises ``EngineError``.

Parametric mode (``parametric=(low, high)``): node allocatable and every non-zero size of the
scenario (initial requests, allocations, actual sizes, the environment's resize requests) are Z3
integers in ``[low, high]``, constrained only by what the scenario loader guarantees (stated in
``parametric_constraints`` and repeated in each result's ``reason``). A violation names the sizes
Z3 chose; they are put into a concrete scenario and the trace is replayed there.

Left out: ``sometimes`` and ``eventually`` properties (verdict ``not-checked``); BMC never proves
(a clean bound is ``inconclusive``, reason ``no violation up to depth k``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, fields, replace
from typing import Iterable

import z3

from kepcheck.spec.properties import ALWAYS, PROPERTIES, PropertySpec
from kepcheck.spec.scenarios import Scenario

from kepcheck.checks.result import INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult, Trace, replay
from kepcheck.checks.symbolic import at_time, symbolic_state
from kepcheck.model.actions import transitions
from kepcheck.model.context import Context, initial_state
from kepcheck.model.expr import all_, implies, int_variable, ite, z3_and, z3_eq, z3_not, z3_or
from kepcheck.model.properties import PREDICATES
from kepcheck.model.state import PodState, State

__all__ = [
    "PROVED", "EngineError", "Unrolling", "state_leaves", "states_equal", "init_at", "transition", "unroll",
    "bad_at", "holds_at", "simple_path", "invariants_at", "k_hypothesis", "bmc", "k_induction",
    "parametric_model", "parametric_constraints", "check_bmc", "check_induction", "prove_strengthening",
    "prove_lemmas",
]

PROVED = "proved"
_SIMPLIFY = True


class EngineError(RuntimeError):
    """The symbolic engine produced something the model does not confirm (an engine bug)."""


# --- symbolic states and the action instances of each step -------------------------------------------

def state_leaves(state: State) -> list:
    """Every field of a state in a fixed order (pods field by field, retry flags, menu, counter)."""
    leaves = []
    for pod in state.pods:
        for field in fields(PodState):
            value = getattr(pod, field.name)
            leaves.extend(value if isinstance(value, tuple) else (value,))
    leaves.extend(state.retry_due)
    leaves.extend(state.env_used)
    leaves.append(state.env_events)
    return leaves


def states_equal(a: State, b: State):
    """``a = b``, field by field."""
    return z3_and([z3_eq(x, y) for x, y in zip(state_leaves(a), state_leaves(b))])


def _as_bool(term):
    return z3.BoolVal(term) if isinstance(term, bool) else term


class Unrolling:
    """The symbolic model of one context: a State of Z3 constants per step, the action instances
    enabled from it (``(action, guard, successor)``, computed once per step) and the selector
    ``action@t``. ``init`` is the initial state (concrete, or with Z3 sizes in parametric mode)."""

    def __init__(self, ctx: Context, init: State, assumptions: list | None = None):
        self.ctx = ctx
        self.init = init
        self.assumptions = list(assumptions or [])  # parametric constraints
        self._states: dict[int, State] = {}
        self._instances: dict[int, list] = {}
        self._chooses: dict[int, list] = {}
        self.build_seconds: dict[int, float] = {}

    def state(self, step: int) -> State:
        if step not in self._states:
            self._states[step] = symbolic_state(self.ctx, step)
        return self._states[step]

    def instances(self, step: int) -> list:
        """The action instances leaving the state at ``step`` (guards and successors as Z3 terms)."""
        if step not in self._instances:
            started = time.perf_counter()
            self._instances[step] = list(transitions(self.ctx, self.state(step)))
            self.build_seconds[step] = time.perf_counter() - started
        return self._instances[step]

    def selector(self, step: int):
        return int_variable(at_time("action", step))

    def chooses(self, step: int) -> list:
        """``action@step = i`` for every action instance ``i`` of the step (built once)."""
        if step not in self._chooses:
            selector = self.selector(step)
            self._chooses[step] = [selector == i for i in range(len(self.instances(step)))]
        return self._chooses[step]


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
class _Conjunction(PropertySpec):
    """A state property the engine proves for itself (not in the catalog): the conjunction of its
    ``parts``, state predicates ``(ctx, state)`` such as the strengthening invariants."""

    parts: tuple = ()


def _predicate(spec: PropertySpec):
    if isinstance(spec, _Conjunction):
        return lambda ctx, state: all_(part(ctx, state) for part in spec.parts)
    return PREDICATES[spec.name]


def bad_at(unrolling: Unrolling, spec: PropertySpec, k: int):
    """¬P(s_k) for a state property; for a step property, the k-th action (s_k-1 → s_k) violates it:
    ⋁_i (action@k-1 = i ∧ ¬P(s_k-1, a_i, succ_i)), or ¬P(s_k-1, s_k) for a predicate that does not
    read the action (the same under T(s_k-1, s_k), which every use of ``bad_at`` asserts)."""
    ctx, predicate = unrolling.ctx, _predicate(spec)
    if spec.scope == "state":
        return z3.Not(_as_bool(predicate(ctx, unrolling.state(k))))
    if k == 0:
        return z3.BoolVal(False)
    before = unrolling.state(k - 1)
    if not getattr(predicate, "reads_action", True):  # judged once, on the symbolic next state
        return z3_not(_as_bool(predicate(ctx, before, None, unrolling.state(k))))
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
    return z3.And([_as_bool(invariant(unrolling.ctx, unrolling.state(k))) for invariant in invariants])


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


# --- parametric mode ----------------------------------------------------------------------------------

class _ParametricScenario(Scenario):
    """A scenario whose sizes may be Z3 terms: labels print symbolic sizes as they are."""

    def format(self, vector) -> str:
        if all(isinstance(v, int) for v in vector):
            return super().format(vector)
        return ", ".join(f"{name} {value}" for name, value in zip(self.resources, vector))


@dataclass
class Parametric:
    """The symbolic sizes of one scenario: the context with Z3 allocatable and menu sizes, the
    initial state with Z3 sizes, the constraints, and every size variable with its concrete value."""

    ctx: Context
    init: State
    constraints: list
    variables: dict  # name -> (Z3 Int, concrete value in the scenario)
    bounds: tuple
    statement: str


def _symbolic_vector(name: str, vector, resources, variables: dict, bounds) -> tuple:
    """Z3 Ints for the non-zero entries of ``vector`` (zeros stay zero: the resource is not requested)."""
    result = []
    for resource, value in zip(resources, vector):
        if value == 0:
            result.append(0)
            continue
        variable = int_variable(f"{name}.{resource}")
        variables[f"{name}.{resource}"] = (variable, value)
        result.append(variable)
    return tuple(result)


def _vle(a, b):
    return z3.And([_as_bool(x <= y) if not (isinstance(x, int) and isinstance(y, int)) else z3.BoolVal(x <= y)
                   for x, y in zip(a, b)])


def _veq(a, b):
    return z3.And([z3.BoolVal(x == y) if isinstance(x, int) and isinstance(y, int) else x == y for x, y in zip(a, b)])


def _vmax(a, b):
    return tuple(max(x, y) if isinstance(x, int) and isinstance(y, int) else z3.If(x >= y, x, y) for x, y in zip(a, b))


def parametric_constraints() -> str:
    return ("every non-zero size (node allocatable, pod requests/allocated/actual, resize requests) is an integer "
            "in [low, high] (zeros stay zero); a pod on a node requests at most the node's allocatable, and so does "
            "each resize of it; the pods on a node hold at most its allocatable (max of allocated and actual); a "
            "Deferred pod's requests differ from its allocation; an InProgress pod's allocation differs from its "
            "actual size; a pod without a pending resize has requests = allocated; a resize of the menu differs "
            "from the pod's initial requests")


def parametric_model(ctx: Context, bounds: tuple[int, int]) -> Parametric:
    """The scenario of ``ctx`` with every size symbolic within ``bounds`` and the loader's relations."""
    low, high = bounds
    scenario = ctx.scenario
    resources = scenario.resources
    variables: dict = {}
    nodes = tuple(replace(node, allocatable=_symbolic_vector(f"allocatable.{node.name}", node.allocatable, resources,
                                                             variables, bounds)) for node in scenario.nodes)
    pods = []
    for spec in scenario.pods:
        requests = _symbolic_vector(f"{spec.name}.requests", spec.requests, resources, variables, bounds)
        allocated = (_symbolic_vector(f"{spec.name}.allocated", spec.allocated, resources, variables, bounds)
                     if spec.allocated is not None else None)
        actual = (_symbolic_vector(f"{spec.name}.actual", spec.actual, resources, variables, bounds)
                  if spec.actual is not None else None)
        pods.append(replace(spec, requests=requests, allocated=allocated, actual=actual))
    resizes = tuple(replace(event, requests=_symbolic_vector(f"resize{k}.{event.pod}", event.requests, resources,
                                                             variables, bounds))
                    for k, event in enumerate(scenario.resizes))
    symbolic_scenario = _ParametricScenario(**{f.name: getattr(scenario, f.name) for f in fields(Scenario)})
    symbolic_scenario = replace(symbolic_scenario, nodes=nodes, pods=tuple(pods), resizes=resizes)
    constraints = []
    for variable, _ in variables.values():
        constraints += [variable >= low, variable <= high]
    node_of = {node.name: node for node in nodes}
    held = {node.name: (0,) * len(resources) for node in nodes}
    for spec in pods:
        if spec.node is None:
            continue
        allocatable = node_of[spec.node].allocatable
        allocated = spec.allocated if spec.allocated is not None else spec.requests
        actual = spec.actual if spec.actual is not None else allocated
        constraints.append(_vle(spec.requests, allocatable))
        if spec.resize == "Deferred":
            constraints.append(z3.Not(_veq(allocated, spec.requests)))
        if spec.resize == "InProgress":
            constraints.append(z3.Not(_veq(allocated, actual)))
        if spec.resize in (None, "InProgress"):
            constraints.append(_veq(allocated, spec.requests))
        held[spec.node] = tuple(h + m for h, m in zip(held[spec.node], _vmax(allocated, actual)))
        for event in resizes:
            if event.pod == spec.name:
                constraints.append(_vle(event.requests, allocatable))
    for event in resizes:
        constraints.append(z3.Not(_veq(event.requests, pods[scenario.pod_index(event.pod)].requests)))
    for node in nodes:
        constraints.append(_vle(held[node.name], node.allocatable))
    # the menu lists the scenario's resizes first, in order (Context.build)
    events = tuple(replace(e, requests=resizes[k].requests) if k < len(resizes) else e
                   for k, e in enumerate(ctx.events))
    symbolic_ctx = replace(ctx, scenario=symbolic_scenario, allocatable=tuple(n.allocatable for n in nodes),
                           events=events, cache={})
    init = _parametric_initial_state(ctx, symbolic_scenario)
    statement = f"sizes symbolic in [{low}, {high}]: {parametric_constraints()}"
    return Parametric(symbolic_ctx, init, constraints, variables, bounds, statement)


def _parametric_initial_state(ctx: Context, scenario: Scenario) -> State:
    """The concrete initial state with its size fields replaced by the scenario's Z3 sizes (the
    initial state's other fields do not depend on sizes: ``model.context.initial_state``)."""
    concrete = initial_state(ctx)
    pods = []
    for spec, pod in zip(scenario.pods, concrete.pods):
        if spec.arrival or spec.node is None:
            pods.append(replace(pod, desired=spec.requests))
            continue
        allocated = spec.allocated if spec.allocated is not None else spec.requests
        actual = spec.actual if spec.actual is not None else allocated
        in_progress = pod.in_progress if spec.actual is None else z3.Not(_veq(allocated, actual))
        pods.append(replace(pod, desired=spec.requests, allocated=allocated, actual=actual, in_progress=in_progress))
    return replace(concrete, pods=tuple(pods))


def _concrete_scenario(parametric: Parametric, model) -> tuple[Scenario, dict]:
    """The scenario with the sizes the model chose (and those sizes by name)."""
    chosen = {name: model.eval(variable, model_completion=True).as_long()
              for name, (variable, _) in parametric.variables.items()}
    def value(v):
        return v if isinstance(v, int) else chosen[str(v)]
    def vector(vec):
        return None if vec is None else tuple(value(v) for v in vec)
    symbolic = parametric.ctx.scenario
    scenario = Scenario(**{f.name: getattr(symbolic, f.name) for f in fields(Scenario)})
    scenario = replace(
        scenario,
        nodes=tuple(replace(n, allocatable=vector(n.allocatable)) for n in symbolic.nodes),
        pods=tuple(replace(p, requests=vector(p.requests), allocated=vector(p.allocated), actual=vector(p.actual))
                   for p in symbolic.pods),
        resizes=tuple(replace(r, requests=vector(r.requests)) for r in symbolic.resizes),
    )
    return scenario, chosen


# --- decoding and replaying a counterexample ------------------------------------------------------------

def _value(model, term):
    if isinstance(term, bool) or isinstance(term, int):
        return term
    value = model.eval(term, model_completion=True)
    if z3.is_true(value):
        return True
    if z3.is_false(value):
        return False
    return value.as_long()


def _decode(unrolling: Unrolling, model, spec: PropertySpec, k: int, parametric: Parametric | None,
            base_ctx: Context):
    """(concrete context, replayed Trace, chosen sizes): the trace of the model's selectors, replayed
    through the model and checked against the decoded states and the property."""
    ctx, chosen = base_ctx, {}
    if parametric is not None:
        scenario, chosen = _concrete_scenario(parametric, model)
        ctx = Context.build(scenario, base_ctx.variant, sorted(base_ctx.mutants))
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
    predicate = _predicate(spec)
    if spec.scope == "state":
        violated = not predicate(ctx, trace.steps[-1][1])
    else:
        from kepcheck.model.actions import next_steps

        before = trace.steps[-2][1]
        action = next(a for a, _ in next_steps(ctx, before) if a.label() == labels[-1])
        violated = not predicate(ctx, before, action, trace.steps[-1][1])
    if not violated:
        raise EngineError(f"BMC trace for {spec.name} replays but does not violate it: {labels}")
    return ctx, trace, chosen


# --- drivers ------------------------------------------------------------------------------------------

def _record(ctx: Context, spec: PropertySpec, engine: str, verdict: str, **changes) -> CheckResult:
    return CheckResult(scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name, kind=spec.kind,
                       engine=engine, verdict=verdict, ref=spec.ref, mutants=tuple(sorted(ctx.mutants)), **changes)


def _setup(ctx: Context, parametric) -> tuple[Unrolling, Parametric | None]:
    if parametric is None:
        return Unrolling(ctx, initial_state(ctx)), None
    model = parametric_model(ctx, tuple(parametric))
    return Unrolling(model.ctx, model.init, model.constraints), model


def _solver() -> z3.Solver:
    """A Z3 solver for the unrolled formulas. It uses Z3's older simplex-based arithmetic solver
    (``smt.arith.solver=2``): on these formulas (linear integer sums and comparisons of small
    sizes under a deep If structure) it is 1.4–1.6× faster than the default at BMC depth 14–18
    (measured with bench/bench_symbolic.py); the verdicts are the same."""
    solver = z3.Solver()
    solver.set("smt.arith.solver", 2)
    return solver


def _check(solver: z3.Solver, deadline: float | None, *assumptions):
    if deadline is not None:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            return z3.unknown, "time budget exhausted"
        solver.set("timeout", max(1, int(remaining * 1000)))
    result = solver.check(*assumptions)
    return result, (solver.reason_unknown() if result == z3.unknown else "")


def _proved_invariants(ctx: Context, timeout, parametric) -> list:
    """The strengthening invariants, once their conjunction is proved (k <= 2) for this context;
    none otherwise. A proved invariant holds in every reachable state, so assuming it at every step
    of an unrolling removes only unreachable states."""
    from kepcheck.model.strengthening import STRENGTHENING

    proved, _, _ = prove_strengthening(ctx, 2, timeout=timeout, parametric=parametric)
    return [_named(f, name) for name, f in STRENGTHENING.items()] if proved else []


def check_bmc(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, depth: int = 10, *,
              timeout: float | None = None, parametric=None, per_depth: list | None = None,
              strengthen: bool = True) -> list[CheckResult]:
    """Bounded model checking of every ``always`` property to ``depth`` actions.

    One incremental solver: I(s_0), then for k = 0, 1, …: T(s_k-1, s_k) is added and the disjunction of
    bad(k) over the properties not yet violated is checked under push/pop; a model violates one or
    more of them (each reported, its trace decoded from that model), and the rest are checked again.
    A violation is reported at the first (shortest) depth with a replayed trace; no violation up to ``depth`` is ``inconclusive``. ``timeout`` (seconds)
    bounds the whole run. ``parametric=(low, high)`` leaves the sizes symbolic. ``per_depth``, when
    given, receives ``(k, seconds)`` for every depth completed. ``strengthen``: the strengthening
    invariants are proved first and then assumed at every step, Inv(s_0) ∧ … ∧ Inv(s_k) (sound: a
    proved invariant excludes only unreachable states; it prunes the solver's search). Each step's
    T(s_k-1, s_k) ∧ Inv(s_k) is simplified once before it is asserted.
    """
    started = time.perf_counter()
    deadline = started + timeout if timeout else None
    properties = list(properties)
    unrolling, model_sizes = _setup(ctx, parametric)
    invariants = []
    if strengthen and any(spec.kind == ALWAYS for spec in properties):
        invariants = _proved_invariants(ctx, timeout, parametric)
    solver = _solver()
    solver.add(init_at(unrolling))
    results: dict[str, CheckResult] = {}
    open_specs = []
    for spec in properties:
        if spec.kind != ALWAYS:
            results[spec.name] = _record(ctx, spec, "bmc", NOT_CHECKED, reason="the symbolic engine checks only always properties")
        else:
            open_specs.append(spec)
    note = f"; {model_sizes.statement}" if model_sizes else ""
    stopped = None
    for k in range(depth + 1):
        step_started = time.perf_counter()
        if k > 0:
            step = z3.And(transition(unrolling, k - 1), invariants_at(unrolling, invariants, k))
            solver.add(z3.simplify(step, som=False) if _SIMPLIFY else step)
        # one check for all open properties: the model of a satisfiable check says which of them it
        # violates (each reported with that model); the others are checked again together
        bads = {spec.name: bad_at(unrolling, spec, k) for spec in open_specs}
        while open_specs:
            solver.push()
            solver.add(z3_or([bads[spec.name] for spec in open_specs]))
            verdict, why = _check(solver, deadline)
            model = solver.model() if verdict == z3.sat else None
            solver.pop()
            if verdict == z3.unknown:
                stopped = f"solver returned unknown at depth {k}: {why}"
            if model is None:
                break
            for spec in [spec for spec in open_specs if z3.is_true(model.eval(bads[spec.name], model_completion=True))]:
                concrete_ctx, trace, chosen = _decode(unrolling, model, spec, k, model_sizes, ctx)
                reason = ""
                if model_sizes is not None:
                    reason = "sizes chosen: " + ", ".join(f"{n}={v}" for n, v in chosen.items()) + note
                results[spec.name] = _record(ctx, spec, "bmc", VIOLATED, depth=k, trace=trace, reason=reason,
                                             seconds=time.perf_counter() - started)
                open_specs.remove(spec)
        if per_depth is not None:
            per_depth.append((k, time.perf_counter() - step_started))
        if stopped or not open_specs:
            break
    for spec in open_specs:
        reason = stopped or f"no violation up to depth {depth} (BMC does not prove)"
        results[spec.name] = _record(ctx, spec, "bmc", INCONCLUSIVE, depth=depth if not stopped else k,
                                     reason=reason + note, seconds=time.perf_counter() - started)
    return [results[spec.name] for spec in properties]


def _induction_step(unrolling: Unrolling, spec: PropertySpec, k: int, invariants, deadline) -> tuple:
    solver = _solver()
    solver.add(k_induction(unrolling, spec, k, invariants))
    return _check(solver, deadline)


def prove_strengthening(ctx: Context, max_k: int = 3, *, timeout: float | None = None, parametric=None,
                        names: Iterable[str] | None = None) -> tuple[bool, int, str]:
    """Prove the strengthening invariants of ``model/strengthening.py`` (their conjunction) by BMC to
    depth k-1 and k-induction. Returns (proved, k, reason)."""
    from kepcheck.model.strengthening import STRENGTHENING

    chosen = [STRENGTHENING[n] for n in (names or STRENGTHENING)]
    return _prove_conjunction(ctx, "Strengthening", "the strengthening invariants", chosen, max_k, [], timeout,
                              parametric)


def _prove_conjunction(ctx: Context, name: str, meaning: str, predicates: list, max_k: int, invariants: list,
                       timeout, parametric) -> tuple[bool, int, str]:
    """Prove the conjunction of state predicates ``(ctx, state)``. Returns (proved, k, reason)."""
    conjunction = _Conjunction(name, ALWAYS, meaning, "model/strengthening.py", parts=tuple(predicates))
    result = _prove(ctx, conjunction, max_k, list(invariants), timeout, parametric)
    return result.verdict == PROVED, result.depth, result.reason


def _lemma_predicates() -> list:
    """(name, predicate) of the preemption lemmas and of the catalog state properties they rest on."""
    from kepcheck.model.strengthening import LEMMA_BASIS, PREEMPTION_LEMMAS

    return list(PREEMPTION_LEMMAS.items()) + [(name, PREDICATES[name]) for name in LEMMA_BASIS]


def prove_lemmas(ctx: Context, max_k: int = 3, *, invariants: list | None = None,
                 timeout: float | None = None) -> tuple[bool, int, str]:
    """Prove the preemption lemmas of ``model/strengthening.py`` together with the catalog state
    properties they rest on (``LEMMA_BASIS``): their conjunction by BMC to depth k-1 and k-induction,
    assuming ``invariants`` (the strengthening invariants, proved first when None). Returns (proved,
    k, reason)."""
    if invariants is None:
        from kepcheck.model.strengthening import STRENGTHENING

        proved, _, why = prove_strengthening(ctx, max_k, timeout=timeout)
        if not proved:
            return False, 0, f"strengthening invariants not proved: {why}"
        invariants = [_named(f, name) for name, f in STRENGTHENING.items()]
    return _prove_conjunction(ctx, "PreemptionLemmas", "the preemption lemmas and their basis",
                              [f for _, f in _lemma_predicates()], max_k, invariants, timeout, None)


def _prove(ctx: Context, spec: PropertySpec, max_k: int, invariants: list, timeout, parametric) -> CheckResult:
    """Interleave the base case (BMC from the initial state) and the induction step, k = 1 … max_k."""
    started = time.perf_counter()
    deadline = started + timeout if timeout else None
    unrolling, model_sizes = _setup(ctx, parametric)
    note = f"; {model_sizes.statement}" if model_sizes else ""
    base = _solver()
    base.add(init_at(unrolling))
    step_unrolling = Unrolling(unrolling.ctx, unrolling.init, unrolling.assumptions)
    reason = ""
    for k in range(1, max_k + 1):
        # base case: no violation at depth k-1 from the initial state
        if k > 1:
            base.add(transition(unrolling, k - 2))
        base.push()
        base.add(bad_at(unrolling, spec, k - 1))
        verdict, why = _check(base, deadline)
        if verdict == z3.sat:
            _, trace, chosen = _decode(unrolling, base.model(), spec, k - 1, model_sizes, ctx)
            base.pop()
            extra = ("sizes chosen: " + ", ".join(f"{n}={v}" for n, v in chosen.items())) if chosen else ""
            return _record(ctx, spec, "induction", VIOLATED, depth=k - 1, trace=trace, reason=extra + note,
                           seconds=time.perf_counter() - started)
        base.pop()
        if verdict == z3.unknown:
            return _record(ctx, spec, "induction", INCONCLUSIVE, depth=k - 1, reason=f"base case unknown: {why}" + note,
                           seconds=time.perf_counter() - started)
        verdict, why = _induction_step(step_unrolling, spec, k, invariants, deadline)
        if verdict == z3.unsat:
            names = ", ".join(getattr(f, "__name__", str(f)) for f in invariants) or "none"
            return _record(ctx, spec, "induction", PROVED, depth=k,
                           reason=f"proved by {k}-induction with simple-path constraint; strengthening: {names}" + note,
                           seconds=time.perf_counter() - started)
        if verdict == z3.unknown:
            return _record(ctx, spec, "induction", INCONCLUSIVE, depth=k, reason=f"induction step unknown at k={k}: {why}" + note,
                           seconds=time.perf_counter() - started)
        reason = f"not {k}-inductive (a counterexample to induction exists at k={k})"
    return _record(ctx, spec, "induction", INCONCLUSIVE, depth=max_k, reason=reason + note,
                   seconds=time.perf_counter() - started)


def check_induction(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, max_k: int = 3, *,
                    timeout: float | None = None, parametric=None, strengthen: bool = True) -> list[CheckResult]:
    """k-induction (k = 1 … ``max_k``, simple-path constraint) of every ``always`` property.

    The strengthening invariants of ``model/strengthening.py`` are first proved themselves (their
    conjunction by k-induction); once proved they are assumed in every state of the induction path
    of each property. State properties come first, and each one proved is assumed from then on.
    Before the first step property the preemption lemmas are proved with the state properties they
    rest on (``prove_lemmas``; not in parametric mode, where they do not hold for every size) and,
    once proved, assumed too. Verdicts: ``proved`` (k in ``depth`` and ``reason``), ``violated`` (the
    base case found a counterexample, replayed), ``inconclusive`` (not k-inductive up to ``max_k``,
    solver unknown or time budget). ``timeout`` is per property (and for the lemmas).
    """
    from kepcheck.model.strengthening import STRENGTHENING

    properties = list(properties)
    invariants: list = []
    strengthening_note = ""
    if strengthen:
        proved, k, why = prove_strengthening(ctx, max_k, timeout=timeout, parametric=parametric)
        if proved:
            invariants = [_named(f, name) for name, f in STRENGTHENING.items()]
        else:
            strengthening_note = f" (strengthening invariants not proved: {why})"
    results = {}
    # state properties first: each one proved is a reachable-state invariant, assumed from then on
    ordered = sorted(properties, key=lambda spec: spec.scope != "state")
    lemmas_pending = bool(invariants) and parametric is None
    for spec in ordered:
        if spec.kind != ALWAYS:
            results[spec.name] = _record(ctx, spec, "induction", NOT_CHECKED,
                                         reason="the symbolic engine checks only always properties")
            continue
        if spec.scope != "state" and lemmas_pending:
            lemmas_pending = False
            proved, _, why = prove_lemmas(ctx, max_k, invariants=invariants, timeout=timeout)
            if proved:
                known = {f.__name__ for f in invariants}
                invariants = invariants + [_named(f, name) for name, f in _lemma_predicates() if name not in known]
            else:
                strengthening_note += f" (preemption lemmas not proved: {why})"
        result = _prove(ctx, spec, max_k, invariants, timeout, parametric)
        result.reason += strengthening_note
        results[spec.name] = result
        if result.verdict == PROVED and spec.scope == "state":
            invariants.append(_named(PREDICATES[spec.name], spec.name))
    return [results[spec.name] for spec in properties]


def _named(function, name):
    def invariant(ctx, state):
        return function(ctx, state)
    invariant.__name__ = name
    return invariant
