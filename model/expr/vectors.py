"""Resource vectors: tuples with one entry per resource of the scenario (cpu, then memory), added,
compared and summed with the helpers of ``model/expr/scalars.py``, so that they too evaluate on
plain ints, Z3 terms, traced terms and numpy columns alike.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from kepcheck.model.expr.scalars import and_, ite, max2, min2, or_

__all__ = ["vzero", "vadd", "vsub", "vmax", "vmin", "vle", "veq", "vpos", "vsum", "nonzero", "vsum_where", "lex_less"]


def _add(x, y):
    return x + y


def _sub(x, y):
    return x - y


def _ints(vector: Sequence) -> bool:
    """Every entry of ``vector`` is a concrete int (fast check for the explicit engine)."""
    for x in vector:
        if not isinstance(x, int):
            return False
    return True


def vzero(width: int) -> tuple:
    return (0,) * width


def vadd(a: Sequence, b: Sequence) -> tuple:
    return tuple(map(_add, a, b))


def vsub(a: Sequence, b: Sequence) -> tuple:
    return tuple(map(_sub, a, b))


def vmax(*vectors: Sequence) -> tuple:
    """Per-resource maximum of one or more vectors."""
    for vector in vectors:
        for x in vector:
            if type(x) is not int:
                break
        else:
            continue
        break
    else:
        return tuple(map(max, *vectors))
    result = tuple(vectors[0])
    for vector in vectors[1:]:
        result = tuple(max2(x, y) for x, y in zip(result, vector))
    return result


def vmin(a: Sequence, b: Sequence) -> tuple:
    return tuple(min2(x, y) for x, y in zip(a, b))


def vle(a: Sequence, b: Sequence) -> Any:
    """Every resource of ``a`` is at most the same resource of ``b``."""
    if _ints(a) and _ints(b):
        for x, y in zip(a, b):
            if x > y:
                return False
        return True
    return and_(*(x <= y for x, y in zip(a, b)))


def veq(a: Sequence, b: Sequence) -> Any:
    if _ints(a) and _ints(b):
        return tuple(a) == tuple(b)
    return and_(*(x == y for x, y in zip(a, b)))


def vpos(a: Sequence) -> tuple:
    """Per-resource ``max(0, x)``."""
    return tuple(max2(x, 0) for x in a)


def vsum(vectors: Iterable[Sequence], width: int) -> tuple:
    total = vzero(width)
    for vector in vectors:
        total = vadd(total, vector)
    return total


def nonzero(vector: Sequence) -> Any:
    """Some entry is positive (used for optional vectors that are all zero when absent)."""
    return or_(*(x > 0 for x in vector))


def vsum_where(pairs: Iterable, width: int) -> tuple:
    """Sum of the vectors whose condition holds: ``Σ ite(condition, vector, 0)``."""
    total = vzero(width)
    zero = total
    for condition, vector in pairs:
        if condition is False:
            continue
        total = tuple(map(_add, total, vector if condition is True else ite(condition, tuple(vector), zero)))
    return total


def lex_less(a: Sequence, b: Sequence) -> Any:
    """``a < b`` lexicographically (equal tuples are not less)."""
    result: Any = False
    for x, y in reversed(list(zip(a, b))):
        result = or_(x < y, and_(x == y, result))
    return result
