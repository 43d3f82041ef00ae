"""Z3 terms built through Z3's C API, for the symbolic interpretation of ``model/expr/scalars.py``.

z3py's operators coerce and check their arguments on every call, which costs more than building
the term; the symbolic engine builds hundreds of thousands of them. Integer state variables are
``_Int`` terms (``int_variable``) whose comparisons and sums with plain ints or other ``_Int`` terms
go straight to the C API (anything else falls back to z3py); conjunction, disjunction, negation,
equality and ``If`` of Z3 terms do too (``z3_and``, ``z3_or``, ``z3_not``, ``z3_eq``, ``z3_if``).
Same terms, built faster (``tests/test_symbolic_agreement.py`` checks they are equivalent to
z3py's). Z3 is imported on first use: the explicit engine never loads it.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["z3_module", "z3_if", "int_variable", "z3_and", "z3_or", "z3_not", "z3_eq"]


_Z3_MODULE = None


def z3_module():
    """The z3 module, imported on first use: only the symbolic engine needs it."""
    global _Z3_MODULE
    if _Z3_MODULE is None:
        import z3

        _Z3_MODULE = z3
    return _Z3_MODULE


_CONSTANTS: dict = {}  # (type, value) -> Z3 constant in the main context (built once)


def _constant(z3, value):
    key = (type(value) is bool, value)
    term = _CONSTANTS.get(key)
    if term is None:
        term = _CONSTANTS[key] = z3.BoolVal(value) if key[0] else _int_class()(z3.IntVal(int(value)).as_ast(), z3.main_ctx())
    return term


def z3_if(z3, condition, then, otherwise):
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


def _operand(z3, value):
    """The AST of an integer operand, or None when the fast path does not apply."""
    if type(value) is _Int:
        return value.as_ast()
    if isinstance(value, int) and type(value) is not bool:
        return _constant(z3, int(value)).as_ast()
    return None


def _define_int():
    z3 = z3_module()
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
    z3 = z3_module()
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
    z3 = z3_module()
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
    z3 = z3_module()
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
    z3 = z3_module()
    if not isinstance(term, z3.BoolRef):
        return z3.Not(term)
    ctx = term.ctx
    return z3.BoolRef(z3.z3core.Z3_mk_not(ctx.ref(), term.as_ast()), ctx)
