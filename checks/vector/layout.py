"""Compact states: a state packed into a few 64-bit words, exactly.

Every field of the state (``model/schema.leaves``, its domain narrowed to the values it can reach by
``checks/vector/intervals.py``) gets the bits its domain needs (a field that can only hold one value gets
none) and a place in a word; a state is then ``words`` unsigned 64-bit integers, and a set of
states an array of shape ``(states, words)``. Packing is exact — two states have equal words if and
only if they are equal — so the visited set needs no fingerprint and has no collision to bound: the
price is the words themselves (8 bytes each per stored state), which for the scenarios of this
project is one or two words (``bench-two-nodes-busy``: 93 bits, two words; the SPIN toy: one word).

``pack`` checks every value against its domain and raises ``ValueError`` naming the field when one
is outside (a model bug, never a silent wrap-around).
"""

from __future__ import annotations

from dataclasses import dataclass
import numpy

from kepcheck.model.schema import Leaf

__all__ = ["Slot", "Layout", "keys_view"]


@dataclass(frozen=True)
class Slot:
    leaf: Leaf
    word: int
    shift: int
    bits: int


class Layout:
    """Where each field of a state lives in its packed words."""

    def __init__(self, leaves: tuple[Leaf, ...]):
        self.leaves = tuple(leaves)
        slots, word, shift = [], 0, 0
        for leaf in self.leaves:
            bits = int(leaf.high - leaf.low).bit_length()
            if shift + bits > 64:
                word, shift = word + 1, 0
            slots.append(Slot(leaf, word, shift, bits))
            shift += bits
        self.slots = tuple(slots)
        self.words = word + 1

    @property
    def bits(self) -> int:
        return sum(slot.bits for slot in self.slots)

    def pack(self, columns: list) -> numpy.ndarray:
        """``(n, words)`` uint64 from one column (or plain value) per field, in ``leaves`` order."""
        size = next((len(c) for c in columns if isinstance(c, numpy.ndarray)), 1)
        packed = numpy.zeros((size, self.words), dtype=numpy.uint64)
        for slot, column in zip(self.slots, columns):
            values = numpy.asarray(column, dtype=numpy.int64)
            if values.size and (values.min() < slot.leaf.low or values.max() > slot.leaf.high):
                raise ValueError(f"{slot.leaf.name}: value outside its domain [{slot.leaf.low}, {slot.leaf.high}]")
            if slot.bits:
                packed[:, slot.word] |= (values - slot.leaf.low).astype(numpy.uint64) << numpy.uint64(slot.shift)
        return packed

    def unpack(self, packed: numpy.ndarray) -> list:
        """One ``int64`` column per field (``bool`` for flags), in ``leaves`` order."""
        columns = []
        for slot in self.slots:
            if slot.bits:
                mask = numpy.uint64((1 << slot.bits) - 1)
                values = ((packed[:, slot.word] >> numpy.uint64(slot.shift)) & mask).astype(numpy.int64) + slot.leaf.low
            else:
                values = numpy.full(len(packed), slot.leaf.low, dtype=numpy.int64)
            columns.append(values.astype(bool) if slot.leaf.boolean else values)
        return columns


def keys_view(packed: numpy.ndarray) -> numpy.ndarray:
    """The packed states as one comparable key each (a 1-D array): the word itself for one-word
    states, else the words as one opaque record compared byte by byte (equal iff the state is)."""
    if packed.shape[1] == 1:
        return packed[:, 0]
    packed = numpy.ascontiguousarray(packed)
    return packed.view(numpy.dtype((numpy.void, 8 * packed.shape[1])))[:, 0]
