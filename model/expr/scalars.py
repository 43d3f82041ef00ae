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

from kepcheck.model.expr import columns
from kepcheck.model.expr.traced import Term, term_and, term_ite, term_not, term_or
from kepcheck.model.expr.z3_terms import int_variable, z3_and, z3_eq, z3_if, z3_module, z3_not, z3_or

__all__ = ["is_concrete", "ite", "and_", "or_", "not_", "max2", "min2", "pick", "any_", "all_", "is_false", "implies", "int_variable", "z3_and", "z3_or", "z3_not", "z3_eq"]

_CONCRETE = (int, bool)


def is_concrete(*values: Any) -> bool:
    """True when every value is a plain Python int/bool/IntEnum (not a Z3 term)."""
    for v in values:
        if not isinstance(v, int):
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


def implies(premise: Any, conclusion: Any) -> Any:
    return or_(not_(premise), conclusion)
