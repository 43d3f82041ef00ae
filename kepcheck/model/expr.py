"""Expression helpers that evaluate on plain ints and on Z3 terms alike.

The model's guards and effects never use Python ``if``/``and``/``or``/``max`` on *state values*;
they call these helpers instead. On plain Python ints and bools every helper is an ordinary
operation (fast path); on Z3 terms it builds the corresponding term (``If``, ``And``, ``Or``,
``Not``). Control flow on *parameters* (which pod, which node, which resource index) is ordinary
Python: parameters are finite and known when an action is expanded.

Resource vectors are tuples with one entry per resource of the scenario (cpu, then memory).

What is left out: nothing symbolic is imported unless a Z3 term is actually seen, so the
explicit engine never pays for Z3.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from kepcheck.model import columns
from kepcheck.model.traced import Term, term_and, term_ite, term_not, term_or
from kepcheck.model.z3_terms import int_variable, z3_and, z3_eq, z3_if, z3_module, z3_not, z3_or

__all__ = [
    "is_concrete",
    "ite",
    "and_",
    "or_",
    "not_",
    "max2",
    "min2",
    "vadd",
    "vsub",
    "vmax",
    "vmin",
    "vle",
    "veq",
    "vpos",
    "vsum",
    "vzero",
    "pick",
    "any_",
    "all_",
    "nonzero",
    "vsum_where",
    "lex_less",
    "is_false",
    "implies",
    "int_variable",
    "z3_and",
    "z3_or",
    "z3_not",
    "z3_eq",
]

_CONCRETE = (int, bool)


def _add(x, y):
    return x + y


def _sub(x, y):
    return x - y


def is_concrete(*values: Any) -> bool:
    """True when every value is a plain Python int/bool/IntEnum (not a Z3 term)."""
    for v in values:
        if not isinstance(v, int):
            return False
    return True


def _ints(vector: Sequence) -> bool:
    """Every entry of ``vector`` is a concrete int (fast check for the explicit engine)."""
    for x in vector:
        if not isinstance(x, int):
            return False
    return True


def ite(condition: Any, then: Any, otherwise: Any) -> Any:
    """``then if condition else otherwise`` that also builds ``z3.If``."""
    if type(condition) is bool:
        return then if condition else otherwise
    if type(condition) is Term:
        return term_ite(condition, then, otherwise)
    if columns.is_column(condition):
        return columns.where(condition, then, otherwise)
    z3 = z3_module()
    if isinstance(then, tuple):
        return tuple(z3_if(z3, condition, a, b) for a, b in zip(then, otherwise))
    return z3_if(z3, condition, then, otherwise)


def and_(*terms: Any) -> Any:
    """Conjunction; short-circuits on concrete ``False``."""
    for term in terms:  # fast path: every term concrete (``x is True`` <=> a bool that is true)
        if term is True:
            continue
        if term is False:
            return False
        break
    else:
        return True
    symbolic = []
    for term in terms:
        if type(term) is bool:
            if not term:
                return False
        else:
            symbolic.append(term)
    if not symbolic:
        return True
    if len(symbolic) == 1:
        return symbolic[0]
    if type(symbolic[0]) is Term:
        return term_and(symbolic)
    return columns.all_of(symbolic) if columns.is_column(symbolic[0]) else z3_and(symbolic)


def or_(*terms: Any) -> Any:
    """Disjunction; short-circuits on concrete ``True``."""
    for term in terms:  # fast path: every term concrete
        if term is False:
            continue
        if term is True:
            return True
        break
    else:
        return False
    symbolic = []
    for term in terms:
        if type(term) is bool:
            if term:
                return True
        else:
            symbolic.append(term)
    if not symbolic:
        return False
    if len(symbolic) == 1:
        return symbolic[0]
    if type(symbolic[0]) is Term:
        return term_or(symbolic)
    return columns.any_of(symbolic) if columns.is_column(symbolic[0]) else z3_or(symbolic)


def not_(term: Any) -> Any:
    if term is True:
        return False
    if term is False:
        return True
    if type(term) is Term:
        return term_not(term)
    return columns.negation(term) if columns.is_column(term) else z3_not(term)


def max2(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        return a if a >= b else b
    return ite(a >= b, a, b)


def min2(a: Any, b: Any) -> Any:
    if type(a) is int and type(b) is int:
        return a if a <= b else b
    return ite(a <= b, a, b)


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


def is_false(term: Any) -> bool:
    """True only for a concrete ``False``: lets the explicit engine skip work a guard rules out."""
    return term is False


def any_(terms: Iterable) -> Any:
    return or_(*terms)


def all_(terms: Iterable) -> Any:
    return and_(*terms)


_NO_DEFAULT = object()


def pick(values: Sequence, index: Any, default: Any = _NO_DEFAULT) -> Any:
    """``values[index]`` for a static sequence and an index that is a state value (an int or a Z3
    term). A concrete index out of range gives ``default`` (or raises IndexError without one);
    out-of-range symbolic indices read the last element: callers guard them."""
    if isinstance(index, int):
        if not 0 <= index < len(values):
            if default is _NO_DEFAULT:
                raise IndexError(f"index {index} out of range 0..{len(values) - 1}")
            return default
        return values[index]
    result = values[-1]
    for i in range(len(values) - 2, -1, -1):
        result = ite(index == i, values[i], result)
    return result


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


def implies(premise: Any, conclusion: Any) -> Any:
    return or_(not_(premise), conclusion)
