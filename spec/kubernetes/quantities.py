"""Kubernetes resource quantities (``500m``, ``2``, ``1Gi``) as exact integers.

What is modelled: the quantity grammar of ``k8s.io/apimachinery/pkg/api/resource`` —

    quantity ::= sign? number suffix
    number   ::= digits | digits "." digits? | "." digits
    suffix   ::= "" | n u m k M G T P E           (decimal SI)
               | Ki Mi Gi Ti Pi Ei                (binary SI)
               | (e | E) sign? digits             (decimal exponent, e.g. "1e3")

and numbers as YAML delivers them (``int``, ``float``). Arithmetic is exact (``fractions.Fraction``).
The model's units are **millicores** for ``cpu`` and **base units** (bytes) for every other
resource (``memory``, ``ephemeral-storage``, ...).

What is left out, deliberately: Kubernetes silently *rounds* — a cpu request of ``0.0001`` becomes
``1m`` and a memory request of ``1500m`` becomes 2 bytes. A model that silently rounds a scenario
would check a different system than the one written down, so such values are rejected with a short
message instead. Negative quantities (legal in the API type, never in a request) are rejected too.

Digits are ASCII only, as in Kubernetes' scanner (``parseQuantityString`` in
``staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go`` accepts ``'0'``-``'9'`` and nothing
else; ``"٣"`` or ``"２"`` is not a quantity), and surrounding whitespace is ignored as
``Quantity.UnmarshalJSON`` ignores it (``strings.TrimSpace``). A quantity string longer than
``MAX_QUANTITY_CHARS`` is refused before it is parsed, so hostile input costs no work; messages
quote at most a short prefix of the value (``spec.limits.shown``).

This module imports only ``spec.limits`` (stdlib otherwise).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Any

from kepcheck.spec.limits import MAX_QUANTITY_CHARS, cut, shown

__all__ = ["parse_quantity", "format_quantity", "MAX_QUANTITY"]

# Kubernetes stores quantities in int64 (milli-units for cpu); larger values are not meaningful.
MAX_QUANTITY = 2**63 - 1

_DECIMAL_SUFFIXES = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_BINARY_SUFFIXES = {
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_NUMBER = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(.*)", re.DOTALL)  # ASCII digits only
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)")
_MAX_EXPONENT = 30  # far beyond int64 range; bounds the work done on hostile input such as "1e999999"


def _scale(resource: str) -> int:
    """Model units per Kubernetes unit: millicores for cpu, base units otherwise."""
    return 1000 if resource == "cpu" else 1


def _suffix_factor(suffix: str, text: str) -> Fraction:
    if suffix in _DECIMAL_SUFFIXES:
        return _DECIMAL_SUFFIXES[suffix]
    if suffix in _BINARY_SUFFIXES:
        return _BINARY_SUFFIXES[suffix]
    exponent = _EXPONENT.fullmatch(suffix)
    if exponent is None:
        raise ValueError(f"{shown(text)} is not a Kubernetes quantity")
    power = int(exponent.group(1))
    if abs(power) > _MAX_EXPONENT:
        raise ValueError(f"quantity {cut(text)} is out of range")
    return Fraction(10) ** power


def _exact_value(value: Any) -> tuple[Fraction, str]:
    """The quantity as an exact number of Kubernetes units, and how to show it in messages."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float, str)):
        got = shown(value) if value is None or isinstance(value, bool) else type(value).__name__
        raise ValueError(f"expected a quantity such as 500m or 1Gi, got {got}")
    if isinstance(value, int):
        return Fraction(value), shown(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{shown(value)} is not a Kubernetes quantity")
        return Fraction(repr(value)), repr(value)  # the decimal the YAML author wrote, not the binary float
    text = value.strip()
    if len(text) > MAX_QUANTITY_CHARS:
        raise ValueError(f"{shown(text)} is longer than {MAX_QUANTITY_CHARS} characters: not a quantity "
                         "this model can use")
    match = _NUMBER.fullmatch(text)
    if match is None:
        raise ValueError(f"{shown(value)} is not a Kubernetes quantity")
    sign, digits, suffix = match.groups()
    amount = Fraction(digits) * _suffix_factor(suffix, text)
    return (-amount if sign == "-" else amount), text


def parse_quantity(value: Any, resource: str) -> int:
    """Parse a Kubernetes quantity into model units (cpu: millicores; others: bytes/base units).

    ``parse_quantity("500m", "cpu") == 500``, ``parse_quantity(1.5, "cpu") == 1500``,
    ``parse_quantity("1Gi", "memory") == 1073741824``, ``parse_quantity("1e3", "memory") == 1000``.

    Raises ``ValueError`` with a short message for anything that is not a non-negative quantity
    expressible exactly in model units (see the module docstring for why nothing is rounded).
    """
    amount, text = _exact_value(value)
    if amount < 0:
        raise ValueError("quantity must not be negative")
    units = amount * _scale(resource)
    if units.denominator != 1:
        if resource == "cpu":
            raise ValueError(f"cpu quantity {text} is finer than 1m")
        raise ValueError(f"{resource} quantity {text} is not a whole number of bytes"
                         if resource == "memory" else f"{resource} quantity {text} is not a whole number")
    if units.numerator > MAX_QUANTITY:
        raise ValueError(f"quantity {cut(text)} is out of range")
    return units.numerator


def format_quantity(amount: int, resource: str) -> str:
    """The shortest natural Kubernetes spelling of ``amount`` model units.

    cpu: ``2000 -> "2"``, ``500 -> "500m"``. Other resources: the shortest exact form among plain
    bytes, binary suffixes and decimal suffixes, preferring binary on a tie
    (``1073741824 -> "1Gi"``, ``536870912 -> "512Mi"``, ``100000000 -> "100M"``, ``1536 -> "1536"``).
    ``parse_quantity(format_quantity(x, r), r) == x`` for every non-negative int ``x``.
    """
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise TypeError(f"format_quantity needs an int, got {type(amount).__name__}")
    if amount < 0:
        return "-" + format_quantity(-amount, resource)
    if resource == "cpu":
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if amount == 0:
        return "0"
    candidates = [str(amount)]
    for table in (_BINARY_SUFFIXES, _DECIMAL_SUFFIXES):
        for suffix, factor in table.items():
            if factor > 1 and amount % factor.numerator == 0:
                candidates.append(f"{amount // factor.numerator}{suffix}")
    # min() keeps the first of equally short candidates: plain < binary < decimal, in that order.
    plain, *suffixed = candidates
    best = min(suffixed, key=len, default=plain)
    return best if len(best) < len(plain) else plain
