"""The vector interpretation of a traced model: its graph evaluated over a frontier of states.

Given one numpy column per field of the state (a frontier of ``n`` states), ``evaluate`` computes
the nodes a set of roots needs, once each, in graph order: a comparison or a sum is numpy's own
operation on whole columns, ``ite`` is ``numpy.where``, ``and``/``or``/``not`` the logical ones. A
root that is a plain value (the model decided without reading the state) stays plain. This is the
reference vector evaluation (``tests/test_vector.py`` checks it against the concrete model on every
state of the default matrix); the compiled evaluator (``checks/vector/compiled.py``) computes the same
graph per state in C.
"""

from __future__ import annotations

from functools import reduce
from typing import Iterable
import numpy

from kepcheck.model.expr.traced import Term

__all__ = ["needed", "evaluate", "value_of"]

_BINARY = {"eq": numpy.equal, "ne": numpy.not_equal, "lt": numpy.less, "le": numpy.less_equal,
           "add": numpy.add, "sub": numpy.subtract}


def needed(roots: Iterable) -> list:
    """The nodes the roots depend on (roots included), in graph order (arguments first)."""
    seen, stack = {}, [root for root in roots if type(root) is Term]
    while stack:
        term = stack.pop()
        if term.index in seen:
            continue
        seen[term.index] = term
        stack.extend(arg for arg in term.args if type(arg) is Term)
    return [seen[index] for index in sorted(seen)]


def _apply(term: Term, args: list):
    op = term.op
    if op in _BINARY:
        return _BINARY[op](args[0], args[1])
    if op == "ite":
        return numpy.where(args[0], args[1], args[2])
    if op == "not":
        return numpy.logical_not(args[0])
    return reduce(numpy.logical_and if op == "and" else numpy.logical_or, args)


def evaluate(nodes: list, columns: dict, values: dict | None = None) -> dict:
    """Node index -> column for every node of ``nodes`` (from ``needed``); ``columns`` maps a field's
    name to its column; ``values`` (node index -> column) are reused and extended."""
    values = {} if values is None else values
    for term in nodes:
        if term.index in values:
            continue
        if term.op == "field":
            values[term.index] = columns[term.name]
        else:
            values[term.index] = _apply(term, [values[arg.index] if type(arg) is Term else arg for arg in term.args])
    return values


def value_of(root, values: dict, size: int):
    """A root's column over ``size`` states (a plain value broadcast)."""
    if type(root) is Term:
        return values[root.index]
    return numpy.full(size, root, dtype=bool if type(root) is bool else numpy.int64)
