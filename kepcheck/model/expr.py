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
    "vlt_any",
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


_Z3_MODULE = None


def _z3():
    """The z3 module, imported on first use: only the symbolic engine needs it."""
    global _Z3_MODULE
    if _Z3_MODULE is None:
        import z3

        _Z3_MODULE = z3
    return _Z3_MODULE


def ite(condition: Any, then: Any, otherwise: Any) -> Any:
    """``then if condition else otherwise`` that also builds ``z3.If``."""
    if type(condition) is bool:
        return then if condition else otherwise
    z3 = _z3()
    if isinstance(then, tuple):
        return tuple(_z3_if(z3, condition, a, b) for a, b in zip(then, otherwise))
    return _z3_if(z3, condition, then, otherwise)


_CONSTANTS: dict = {}  # (type, value) -> Z3 constant in the main context (built once)


def _constant(z3, value):
    key = (type(value) is bool, value)
    term = _CONSTANTS.get(key)
    if term is None:
        term = _CONSTANTS[key] = z3.BoolVal(value) if key[0] else _int_class()(z3.IntVal(int(value)).as_ast(), z3.main_ctx())
    return term


def _z3_if(z3, condition, then, otherwise):
    """``z3.If`` that returns a branch when both branches are the same value or the same term
    (the term is the same either way; skipping the ``If`` keeps the unrolled formulas small)."""
    then_term, otherwise_term = z3.is_expr(then), z3.is_expr(otherwise)
    if then_term and otherwise_term:
        if then.eq(otherwise):
            return then
    elif not then_term and not otherwise_term and type(then) is type(otherwise) and then == otherwise:
        return then
    # build the term directly: z3.If's argument coercion dominates the symbolic engine's time
    if not then_term:
        then = _constant(z3, then)
    if not otherwise_term:
        otherwise = _constant(z3, otherwise)
    boolean = isinstance(then, z3.BoolRef)
    if boolean != isinstance(otherwise, z3.BoolRef):
        return z3.If(condition, then, otherwise)
    ctx = condition.ctx
    ast = z3.Z3_mk_ite(ctx.ref(), condition.as_ast(), then.as_ast(), otherwise.as_ast())
    if boolean:
        return z3.BoolRef(ast, ctx)
    if type(then) is _Int and type(otherwise) is _Int:
        return _Int(ast, ctx)
    return z3.z3._to_expr_ref(ast, ctx)


# --- Z3 terms built through the C API ----------------------------------------------------------------
# z3py's operators coerce and check their arguments on every call, which costs more than building
# the term; the symbolic engine builds hundreds of thousands of them. Integer state variables are
# ``_Int`` terms (``int_variable``) whose comparisons and sums with plain ints or other ``_Int``
# terms go straight to the C API (anything else falls back to z3py); conjunction, disjunction and
# negation of Z3 Booleans do too (``z3_and``, ``z3_or``, ``z3_not``). Same terms, built faster.

def _operand(z3, value):
    """The AST of an integer operand, or None when the fast path does not apply."""
    if type(value) is _Int:
        return value.as_ast()
    if isinstance(value, int) and type(value) is not bool:
        return _constant(z3, int(value)).as_ast()
    return None


def _define_int():
    z3 = _z3()
    core = z3.z3core

    def comparison(make, fallback):
        def compare(self, other):
            b = _operand(z3, other)
            if b is None:
                return fallback(self, other)
            ctx = self.ctx
            return z3.BoolRef(make(ctx.ref(), self.as_ast(), b), ctx)
        return compare

    def arithmetic(make, fallback, reflected):
        def combine(self, other):
            b = _operand(z3, other)
            if b is None:
                return fallback(self, other)
            ctx = self.ctx
            args = (z3.Ast * 2)(b, self.as_ast()) if reflected else (z3.Ast * 2)(self.as_ast(), b)
            return _Int(make(ctx.ref(), 2, args), ctx)
        return combine

    base = z3.ArithRef

    def not_equal(self, other):
        b = _operand(z3, other)
        if b is None:
            return base.__ne__(self, other)
        ctx = self.ctx
        return z3.BoolRef(core.Z3_mk_not(ctx.ref(), core.Z3_mk_eq(ctx.ref(), self.as_ast(), b)), ctx)

    namespace = {
        "__doc__": "A Z3 integer term whose comparisons and sums with ints build their terms through the C API.",
        "__eq__": comparison(core.Z3_mk_eq, base.__eq__),
        "__ne__": not_equal,
        "__le__": comparison(core.Z3_mk_le, base.__le__),
        "__lt__": comparison(core.Z3_mk_lt, base.__lt__),
        "__ge__": comparison(core.Z3_mk_ge, base.__ge__),
        "__gt__": comparison(core.Z3_mk_gt, base.__gt__),
        "__add__": arithmetic(core.Z3_mk_add, base.__add__, False),
        "__radd__": arithmetic(core.Z3_mk_add, base.__radd__, True),
        "__sub__": arithmetic(core.Z3_mk_sub, base.__sub__, False),
        "__rsub__": arithmetic(core.Z3_mk_sub, base.__rsub__, True),
        "__hash__": base.__hash__,
    }
    return type("_Int", (base,), namespace)


def _int_class():
    global _Int
    if _Int is None:
        _Int = _define_int()
    return _Int


_Int: Any = None


def int_variable(name: str):
    """A Z3 integer constant for a state variable (an ``_Int``: fast comparisons and sums)."""
    z3 = _z3()
    cls = _int_class()
    ctx = z3.main_ctx()
    return cls(z3.Int(name, ctx).as_ast(), ctx)


def _bool_terms(z3, terms):
    """The ASTs of Z3 Booleans, or None if some term is anything else."""
    asts = (z3.Ast * len(terms))()
    for i, term in enumerate(terms):
        if not isinstance(term, z3.BoolRef):
            return None
        asts[i] = term.as_ast()
    return asts


def _connective(make: str, fallback: str, terms: Sequence):
    """``Z3_mk_and``/``Z3_mk_or`` over Z3 Booleans; anything else goes through z3py's ``And``/``Or``
    (which coerces Python bools)."""
    z3 = _z3()
    asts = _bool_terms(z3, terms)
    if asts is None:
        return getattr(z3, fallback)(*terms)
    ctx = z3.main_ctx()
    return z3.BoolRef(getattr(z3.z3core, make)(ctx.ref(), len(terms), asts), ctx)


def z3_and(terms: Sequence):
    """``z3.And`` of Z3 Booleans, built through the C API."""
    return _connective("Z3_mk_and", "And", terms)


def z3_or(terms: Sequence):
    """``z3.Or`` of Z3 Booleans, built through the C API."""
    return _connective("Z3_mk_or", "Or", terms)


def z3_eq(a, b):
    """``a == b`` as a Z3 Boolean for two scalars of the same sort (plain values become constants)."""
    z3 = _z3()
    a_term, b_term = z3.is_expr(a), z3.is_expr(b)
    if not a_term and not b_term:
        return z3.BoolVal(a == b)
    a = a if a_term else _constant(z3, a)
    b = b if b_term else _constant(z3, b)
    if isinstance(a, z3.BoolRef) != isinstance(b, z3.BoolRef):
        return a == b  # z3py reports the sort mismatch
    ctx = a.ctx
    return z3.BoolRef(z3.z3core.Z3_mk_eq(ctx.ref(), a.as_ast(), b.as_ast()), ctx)


def z3_not(term):
    z3 = _z3()
    if not isinstance(term, z3.BoolRef):
        return z3.Not(term)
    ctx = term.ctx
    return z3.BoolRef(z3.z3core.Z3_mk_not(ctx.ref(), term.as_ast()), ctx)


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
    return symbolic[0] if len(symbolic) == 1 else z3_and(symbolic)


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
    return symbolic[0] if len(symbolic) == 1 else z3_or(symbolic)


def not_(term: Any) -> Any:
    if term is True:
        return False
    if term is False:
        return True
    return z3_not(term)


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


def vlt_any(a: Sequence, b: Sequence) -> Any:
    """Some resource of ``a`` is below ``b`` (the negation of ``vle(b, a)``)."""
    return not_(vle(b, a))


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
