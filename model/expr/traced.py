"""The traced interpretation of ``model/expr/scalars.py``: the model evaluated on terms of a small expression
graph, built once, then evaluated fast over many states.

A ``Term`` is a node of a directed acyclic graph: a state field (``field``), or an operation on
terms and plain ints (``==``, ``<``, ``+``, ``ite``, ``and``, ``or``, ``not`` …). A ``Tracer`` owns
the graph and builds every node at most once (hash-consing): evaluating the model's action
functions, event handlers and properties on a state whose fields are ``Term`` leaves records each
guard, successor field and predicate as a node of one shared graph, with every common
subexpression (the same footprint, the same per-node sum, the same comparison) a single node. The
graph is then evaluated over a whole frontier of states at once, one numpy operation per node
(``checks/vector/layers.py``), which takes the Python interpreter out of the per-state loop.

A term has no truth value: the model never branches in Python on a state value (``bool(term)``
raises, as it does for numpy arrays and Z3 terms). ``model/expr/scalars.py`` dispatches ``ite``, ``and_``,
``or_`` and ``not_`` here when it meets a term; comparisons and sums are the operators below.
Constants are folded: an operation on plain values is computed, a comparison of a term with itself
is known (``x == x``, ``x < x``), and ``ite`` with equal branches or a plain condition is not a node.
"""

from __future__ import annotations

from typing import Any, Sequence

__all__ = ["Term", "Tracer", "is_term", "term_ite", "term_and", "term_or", "term_not"]


class Term:
    """One node of a ``Tracer``'s graph: ``op`` with ``args`` (terms or plain ints/bools)."""

    __slots__ = ("tracer", "op", "args", "index", "name")

    def __init__(self, tracer: "Tracer", op: str, args: tuple, index: int, name: str = ""):
        self.tracer, self.op, self.args, self.index, self.name = tracer, op, args, index, name

    def __repr__(self) -> str:
        if self.op == "field":
            return self.name
        return f"<{self.op} #{self.index}>"

    def __bool__(self):
        raise ValueError("a traced state value has no truth value (Python control flow on a state value)")

    __hash__ = object.__hash__

    def _binary(self, op: str, other, reflected: bool = False):
        if not isinstance(other, (Term, int)):
            return NotImplemented
        args = (other, self) if reflected else (self, other)
        return self.tracer.node(op, args)

    def __eq__(self, other):
        return self._binary("eq", other)

    def __ne__(self, other):
        return self._binary("ne", other)

    def __lt__(self, other):
        return self._binary("lt", other)

    def __le__(self, other):
        return self._binary("le", other)

    def __gt__(self, other):
        return self._binary("lt", other, reflected=True)

    def __ge__(self, other):
        return self._binary("le", other, reflected=True)

    def __add__(self, other):
        return self._binary("add", other)

    def __radd__(self, other):
        return self._binary("add", other, reflected=True)

    def __sub__(self, other):
        return self._binary("sub", other)

    def __rsub__(self, other):
        return self._binary("sub", other, reflected=True)


_FOLD = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b, "lt": lambda a, b: a < b, "le": lambda a, b: a <= b,
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b,
}


_SELF = {"eq": True, "le": True, "ne": False, "lt": False, "sub": 0}


def _key(value):
    """A term by identity, a plain value by type and value (``True`` and ``1`` differ)."""
    return ("t", value.index) if type(value) is Term else (type(value) is bool, int(value))


class Tracer:
    """The graph: every node built once, in an order where arguments come first (``nodes``)."""

    def __init__(self):
        self.nodes: list[Term] = []
        self._table: dict = {}

    def field(self, name: str) -> Term:
        """A leaf: one field of the state (its value is given when the graph is evaluated)."""
        key = ("field", name)
        term = self._table.get(key)
        if term is None:
            term = self._table[key] = Term(self, "field", (), len(self.nodes), name)
            self.nodes.append(term)
        return term

    def node(self, op: str, args: tuple):
        if op in _FOLD and not any(type(a) is Term for a in args):
            return _FOLD[op](*args)
        if op in _SELF and args[0] is args[1]:  # x == x, x < x, x - x ...: known without the state
            return _SELF[op]
        if op in ("add", "sub") and type(args[1]) is not Term and args[1] == 0:
            return args[0]
        if op == "add" and type(args[0]) is not Term and args[0] == 0:
            return args[1]
        key = (op,) + tuple(_key(a) for a in args)
        term = self._table.get(key)
        if term is None:
            term = self._table[key] = Term(self, op, tuple(int(a) if type(a) is not Term and type(a) is not bool
                                                            else a for a in args), len(self.nodes))
            self.nodes.append(term)
        return term


def is_term(value: Any) -> bool:
    return type(value) is Term


def _same(a, b) -> bool:
    """The same term, or equal plain values of the same kind (a bool is not the int 1)."""
    if type(a) is Term or type(b) is Term:
        return a is b
    return a == b and (type(a) is bool) == (type(b) is bool)


def term_ite(condition: Term, then, otherwise):
    """``ite`` on a term condition (tuples element by element); equal branches are not a node."""
    if isinstance(then, tuple):
        return tuple(term_ite(condition, a, b) for a, b in zip(then, otherwise))
    if _same(then, otherwise):
        return then
    if then is True and otherwise is False:
        return condition
    if then is False and otherwise is True:
        return term_not(condition)
    return condition.tracer.node("ite", (condition, then, otherwise))


def _complementary(terms: list) -> bool:
    """Some term and its negation are both among ``terms``."""
    present = {term.index for term in terms}
    return any(term.op == "not" and term.args[0].index in present for term in terms)


def _contradicts(terms: list) -> bool:
    """Two conjuncts ``x == a`` and ``x == b`` with different constants ``a`` and ``b``."""
    value_of: dict = {}
    for term in terms:
        if term.op == "eq" and type(term.args[0]) is Term and type(term.args[1]) is not Term:
            known = value_of.setdefault(term.args[0].index, term.args[1])
            if known != term.args[1]:
                return True
    return False


def _connective(op: str, terms: Sequence):
    flat = []
    for term in terms:
        if type(term) is Term and term.op == op:
            flat.extend(term.args)
        else:
            flat.append(term)
    if _complementary(flat) or _complementary([t for t in terms if type(t) is Term]):  # x and not x, x or not x
        return op == "or"
    if op == "and" and _contradicts(flat):
        return False
    unique = []
    seen = set()
    for term in flat:
        if term.index not in seen:
            seen.add(term.index)
            unique.append(term)
    if len(unique) == 1:
        return unique[0]
    unique.sort(key=lambda t: t.index)
    return unique[0].tracer.node(op, tuple(unique))


def term_and(terms: Sequence):
    """Conjunction of terms (plain ``True`` already dropped by the caller)."""
    return _connective("and", terms)


def term_or(terms: Sequence):
    """Disjunction of terms (plain ``False`` already dropped by the caller)."""
    return _connective("or", terms)


def term_not(term: Term):
    if term.op == "not":
        return term.args[0]
    return term.tracer.node("not", (term,))
