"""The vector interpretation of ``model/expr/scalars.py``: state fields as numpy columns over a frontier.

A *column* is a one-dimensional numpy array with one entry per state of a frontier (``int64`` for
numbers, ``bool`` for flags). The model's guards and effects evaluated on states whose fields are
columns compute, in one pass, their value for every state of the frontier: a guard becomes a mask,
``ite`` becomes ``numpy.where``, ``and_``/``or_``/``not_`` the logical operations; comparisons and
sums are numpy's own operators. Plain ints and bools mixed in (constants, parameters) broadcast.
``model/expr/scalars.py`` dispatches here when it meets a column; nothing else of the model changes, so the
same action functions run on ints, on Z3 terms and on columns.

numpy is imported only by the engines that use columns (``checks/vector/layers.py``): ``model/expr/scalars.py``
recognises a column without importing numpy (``is_column``).
"""

from __future__ import annotations

import sys
from functools import reduce
from typing import Any, Sequence

__all__ = ["is_column", "where", "all_of", "any_of", "negation"]


def is_column(value: Any) -> bool:
    """``value`` is a numpy array (numpy is loaded: there can be no array otherwise)."""
    numpy = sys.modules.get("numpy")
    return numpy is not None and type(value) is numpy.ndarray


def _numpy():
    return sys.modules["numpy"]


def where(condition, then, otherwise):
    """``numpy.where`` for a mask ``condition`` and values or columns (tuples element by element)."""
    where_ = _numpy().where
    if isinstance(then, tuple):
        return tuple(where_(condition, a, b) for a, b in zip(then, otherwise))
    return where_(condition, then, otherwise)


def all_of(terms: Sequence):
    """Conjunction of masks (plain ``True`` terms already dropped by the caller)."""
    return reduce(_numpy().logical_and, terms)


def any_of(terms: Sequence):
    """Disjunction of masks (plain ``False`` terms already dropped by the caller)."""
    return reduce(_numpy().logical_or, terms)


def negation(term):
    return _numpy().logical_not(term)
