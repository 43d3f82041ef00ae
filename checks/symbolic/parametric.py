"""Parametric mode of the symbolic engines: the scenario's sizes left symbolic within a range.

``parametric_model(ctx, (low, high))``: node allocatable and every non-zero size of the scenario
(initial requests, allocations, actual sizes, the environment's resize requests) are Z3 integers
in ``[low, high]``, constrained only by what the scenario loader guarantees (stated in
``parametric_constraints`` and repeated in each result's ``reason``). A proof then covers every size
in the range; a violation names the sizes Z3 chose, which ``concrete_scenario`` puts into a
concrete scenario in which the trace replays.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
import z3

from kepcheck.spec.language.loader import Scenario

from kepcheck.checks.symbolic.states import as_bool
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import int_variable
from kepcheck.model.init import initial_state
from kepcheck.model.state import State

__all__ = ["Parametric", "parametric_model", "parametric_constraints", "concrete_scenario"]


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
    return z3.And([as_bool(x <= y) if not (isinstance(x, int) and isinstance(y, int)) else z3.BoolVal(x <= y)
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
            "from the pod's initial requests, unless the scenario's goes back to them (then it equals them), and "
            "equal resizes of the menu stay equal")


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
    for k, event in enumerate(resizes):  # the scenario's shape: a resize back to the declared requests stays one
        index = scenario.pod_index(event.pod)
        declared = _veq(event.requests, pods[index].requests)
        constraints.append(declared if scenario.resizes[k].requests == scenario.pods[index].requests else z3.Not(declared))
    for k, twin in enumerate(ctx.previous_twins[:len(resizes)]):  # equal entries stay equal (taken in order)
        if twin >= 0:
            constraints.append(_veq(resizes[k].requests, resizes[twin].requests))
    for node in nodes:
        constraints.append(_vle(held[node.name], node.allocatable))
    # the menu lists the scenario's resizes first, in order (Context.build)
    events = tuple(replace(e, requests=resizes[k].requests) if k < len(resizes) else e
                   for k, e in enumerate(ctx.events))
    symbolic_ctx = replace(ctx, scenario=symbolic_scenario, allocatable=tuple(n.allocatable for n in nodes),
                           events=events)
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


def concrete_scenario(parametric: Parametric, model) -> tuple[Scenario, dict]:
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
