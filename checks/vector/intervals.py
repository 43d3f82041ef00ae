"""The values each field of a traced model can reach, by interval analysis: what a packed state needs.

The schema (``model/schema.leaves``) gives every field the domain its type allows: a size between 0
and the largest quantity of the scenario, any phase, any queue. Most fields of a scenario reach far
less — a pod that never resizes keeps its requests, a bound pod never sees ``Pending`` again — and
bits spent on values no state holds are memory spent per stored state. ``reachable_leaves`` narrows
every field's domain to an interval that contains every value it takes in a reachable state, by
abstract interpretation of the traced graph (``checks/vector/traced_system.py``) over intervals:

* start from the initial state (each field the one value it has there);
* evaluate every node of the graph on intervals: ``+``/``-`` on bounds, a comparison is known true
  or false when the intervals decide it and is ``[0, 1]`` otherwise, ``ite`` takes the branch its
  condition decides or the hull of both, ``and``/``or``/``not`` likewise;
* an action instance whose guard is known false adds nothing; otherwise each field's interval is
  widened to hold the instance's successor value;
* repeat until nothing widens (intervals only grow and stay inside the schema's domains, so this
  ends).

The result over-approximates the reachable values (it is sound, never exact): every reachable state
fits the narrowed layout. Under symmetry reduction (``model/symmetry.py``) a pod's fields may receive
any interchangeable pod's values and a preemptor index any member of its class, so the intervals are
closed under those moves too. Nothing depends on the analysis being right for correctness: packing
checks every value against its field's interval and stops the search with the field named when one
is outside (``checks/vector/layout.py``, ``checks/vector/compiled.py``).
"""

from __future__ import annotations

from dataclasses import replace

from kepcheck.checks.vector.dag import needed
from kepcheck.checks.vector.traced_system import TracedSystem
from kepcheck.model.expr.traced import Term

__all__ = ["reachable_leaves", "reachable_intervals"]

_UNKNOWN = (0, 1)


def _compare(op: str, a: tuple, b: tuple) -> tuple:
    if op == "lt":
        return (1, 1) if a[1] < b[0] else (0, 0) if a[0] >= b[1] else _UNKNOWN
    if op == "le":
        return (1, 1) if a[1] <= b[0] else (0, 0) if a[0] > b[1] else _UNKNOWN
    equal = (1, 1) if a[0] == a[1] == b[0] == b[1] else (0, 0) if a[1] < b[0] or b[1] < a[0] else _UNKNOWN
    return equal if op == "eq" else (1 - equal[1], 1 - equal[0])


def _interval(op: str, args: list) -> tuple:
    """One node's interval from its arguments' intervals (booleans as 0/1)."""
    if op == "add":
        return args[0][0] + args[1][0], args[0][1] + args[1][1]
    if op == "sub":
        return args[0][0] - args[1][1], args[0][1] - args[1][0]
    if op in ("eq", "ne", "lt", "le"):
        return _compare(op, args[0], args[1])
    if op == "ite":
        condition, then, otherwise = args
        if condition == (1, 1):
            return then
        if condition == (0, 0):
            return otherwise
        return min(then[0], otherwise[0]), max(then[1], otherwise[1])
    if op == "not":
        return 1 - args[0][1], 1 - args[0][0]
    if op == "and":
        return (0, 0) if any(a == (0, 0) for a in args) else (1, 1) if all(a == (1, 1) for a in args) else _UNKNOWN
    if op == "or":
        return (1, 1) if any(a == (1, 1) for a in args) else (0, 0) if all(a == (0, 0) for a in args) else _UNKNOWN
    raise ValueError(f"no interval rule for the operation {op!r}")


def _evaluate(nodes: list, fields: dict) -> dict:
    """Node index -> interval, for the nodes of ``nodes`` (graph order) given each field's interval."""
    values = {}
    for term in nodes:
        if term.op == "field":
            values[term.index] = fields[term.name]
        else:
            values[term.index] = _interval(term.op, [_of(arg, values) for arg in term.args])
    return values


def _of(value, values: dict) -> tuple:
    return values[value.index] if type(value) is Term else (int(value), int(value))


def reachable_intervals(system: TracedSystem) -> list[tuple[int, int]]:
    """Per field (in ``system.leaves`` order), an interval holding every value it has in a reachable
    state (and, with symmetry classes, in the representative of one)."""
    leaves = system.leaves
    ranges = _closed(system, [(int(v), int(v)) for v in system.initial])
    nodes = needed([i.guard for i in system.instances] + [v for i in system.instances for v in i.successor])
    while True:
        values = _evaluate(nodes, {leaf.name: r for leaf, r in zip(leaves, ranges)})
        widened = list(ranges)
        for instance in system.instances:
            if _of(instance.guard, values) == (0, 0):
                continue
            for j, value in enumerate(instance.successor):
                low, high = _of(value, values)
                widened[j] = (max(leaves[j].low, min(widened[j][0], low)), min(leaves[j].high, max(widened[j][1], high)))
        widened = _closed(system, widened)
        if widened == ranges:
            return ranges
        ranges = widened


def _closed(system: TracedSystem, ranges: list) -> list:
    """The intervals closed under the symmetry's moves: interchangeable pods' fields share their hull,
    and a preemptor index that may name a member of a class may name any member."""
    if not system.symmetry:
        return ranges
    ranges, width, offset = list(ranges), system.pod_fields, system.preemptor_field
    pods = sum(1 for leaf in system.leaves if leaf.name.endswith(".preempted_by"))
    while True:
        before = list(ranges)
        for pod in range(pods):
            low, high = ranges[pod * width + offset]
            for members in system.symmetry:
                if any(low <= m <= high for m in members):
                    low, high = min(low, *members), max(high, *members)
            ranges[pod * width + offset] = (low, high)
        for members in system.symmetry:
            for j in range(width):
                hull = (min(ranges[m * width + j][0] for m in members), max(ranges[m * width + j][1] for m in members))
                for m in members:
                    ranges[m * width + j] = hull
        if ranges == before:
            return ranges


def reachable_leaves(system: TracedSystem) -> tuple:
    """``system.leaves`` with each domain narrowed to its ``reachable_intervals`` interval."""
    return tuple(replace(leaf, low=low, high=high) for leaf, (low, high) in zip(system.leaves, reachable_intervals(system)))
