"""The visited set of the vector core: every state seen, exactly, numbered in the order first seen.

Both implementations keep every state's packed words (``checks/vector/layout.py``), so membership is
exact: no state is ever taken for another. ``insert(packed, limit)`` takes the successors of one
layer in transition order and marks each one added (its first occurrence, when new), seen, or new
beyond ``limit`` (a state budget, not added): so ids follow the breadth-first order of the
interpreted search.

* ``NativeVisited`` (``checks/vector/hashset.c``): an open-addressing hash table in C, a lookup per
  successor; memory per state: its words and at most 26 bytes of table (13 for states of more than
  one word).
* ``Visited``: numpy only (where there is no C compiler): sorted 64-bit fingerprints (the word
  itself for one-word states, else a hash) with the ids, and the words; a matching fingerprint is
  confirmed by comparing words, and two different states with the same fingerprint stop the search
  with an ``EngineError`` rather than be merged.
"""

from __future__ import annotations

import ctypes
from pathlib import Path
import numpy

from kepcheck.checks.result import EngineError
from kepcheck.checks.vector.native import load, pointer

__all__ = ["fingerprints", "Visited", "NativeVisited", "distinct"]

_MULTIPLIERS = numpy.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93,
                            0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53, 0x94D049BB133111EB, 0xBF58476D1CE4E5B9],
                           dtype=numpy.uint64)


def _mix(values: numpy.ndarray) -> numpy.ndarray:
    """splitmix64's finaliser, element by element."""
    values = values ^ (values >> numpy.uint64(30))
    values = values * numpy.uint64(0xBF58476D1CE4E5B9)
    values = values ^ (values >> numpy.uint64(27))
    values = values * numpy.uint64(0x94D049BB133111EB)
    return values ^ (values >> numpy.uint64(31))


def fingerprints(packed: numpy.ndarray) -> numpy.ndarray:
    """One uint64 per state: the word itself for one-word states (exact), else a hash of the words."""
    if packed.shape[1] == 1:
        return packed[:, 0].copy()
    with numpy.errstate(over="ignore"):
        result = numpy.zeros(len(packed), dtype=numpy.uint64)
        for word in range(packed.shape[1]):
            result = _mix(result ^ (packed[:, word] * _MULTIPLIERS[word % len(_MULTIPLIERS)]))
    return result


class Visited:
    """The states seen so far: sorted fingerprints with their ids, and every state's words by id."""

    def __init__(self, words: int):
        self.words = words
        self.sorted_fingerprints = numpy.zeros(0, dtype=numpy.uint64)
        self.sorted_ids = numpy.zeros(0, dtype=numpy.int64)
        self.chunks: list = []  # the words of the states, per batch added, in id order
        self.starts: list = []  # the first id of each chunk
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def seen(self, packed: numpy.ndarray, prints: numpy.ndarray) -> numpy.ndarray:
        """For each state (``prints`` its fingerprints, best sorted: the lookups then walk the set in
        order), whether it was seen."""
        hit = numpy.zeros(len(packed), dtype=bool)
        if not self.count or not len(packed):
            return hit
        position = numpy.searchsorted(self.sorted_fingerprints, prints)
        inside = position < self.count
        hit[inside] = self.sorted_fingerprints[position[inside]] == prints[inside]
        if self.words > 1 and hit.any():
            ids = self.sorted_ids[position[hit]]
            if not numpy.all(self.words_of(ids) == packed[hit]):
                raise EngineError("two different states have the same 64-bit fingerprint (see checks/vector/visited.py)")
        return hit

    def words_of(self, ids: numpy.ndarray) -> numpy.ndarray:
        """The packed words of the states with these ids."""
        if len(self.chunks) == 1:
            return self.chunks[0][ids]
        chunk = numpy.searchsorted(numpy.array(self.starts), ids, side="right") - 1
        result = numpy.empty((len(ids), self.words), dtype=numpy.uint64)
        for index in numpy.unique(chunk):
            where = chunk == index
            result[where] = self.chunks[index][ids[where] - self.starts[index]]
        return result

    def insert(self, packed: numpy.ndarray, limit: int | None = None, ids: bool = False):
        """Per state of ``packed`` (in order): 1 added (the first occurrence of a new state), 2 new
        but beyond ``limit`` states (not added), 0 seen before or earlier in ``packed``; with
        ``ids``, also each state's id (-1 where not added), as ``(marks, ids)``."""
        marks = numpy.zeros(len(packed), dtype=numpy.uint8)
        state_ids = numpy.full(len(packed), -1, dtype=numpy.int32)
        if not len(packed):
            return (marks, state_ids) if ids else marks
        prints = fingerprints(packed)
        unique, first, group = distinct(packed, prints, inverse=True)
        seen_before = self.seen(packed[first], unique)
        known = numpy.full(len(unique), -1, dtype=numpy.int64)
        if seen_before.any():
            known[seen_before] = self.sorted_ids[numpy.searchsorted(self.sorted_fingerprints, unique[seen_before])]
        order = numpy.argsort(first, kind="stable")  # the distinct states by first occurrence
        new = order[~seen_before[order]]  # indices into unique, in the order first met
        room = len(new) if limit is None else min(len(new), max(0, limit - self.count))
        known[new[:room]] = numpy.arange(self.count, self.count + room)
        marks[first[new[:room]]] = 1
        marks[first[new[room:]]] = 2
        state_ids[:] = known[group]
        self.add(packed[first[new[:room]]], prints[first[new[:room]]])
        return (marks, state_ids) if ids else marks

    def add(self, packed: numpy.ndarray, prints: numpy.ndarray) -> None:
        """Add new states (not seen, distinct), in id order."""
        if not len(packed):
            return
        ids = numpy.arange(self.count, self.count + len(packed), dtype=numpy.int64)
        order = numpy.argsort(prints, kind="stable")
        merged = numpy.concatenate([self.sorted_fingerprints, prints[order]])
        merged_ids = numpy.concatenate([self.sorted_ids, ids[order]])
        by_print = numpy.argsort(merged, kind="stable")  # two sorted runs: merged in linear time
        self.sorted_fingerprints, self.sorted_ids = merged[by_print], merged_ids[by_print]
        self.chunks.append(packed)
        self.starts.append(self.count)
        self.count += len(packed)


def distinct(packed: numpy.ndarray, prints: numpy.ndarray, inverse: bool = False) -> tuple:
    """(sorted distinct fingerprints, index of the first occurrence of each[, the distinct state of each
    row]) of the states of ``packed`` (a fingerprint shared by different states is detected, as in
    ``Visited.seen``)."""
    unique, first, group = numpy.unique(prints, return_index=True, return_inverse=True)
    if packed.shape[1] > 1 and not numpy.array_equal(packed, packed[first[group]]):
        raise EngineError("two different states have the same 64-bit fingerprint (see checks/vector/visited.py)")
    return (unique, first, group) if inverse else (unique, first)


_SOURCE = Path(__file__).with_name("hashset.c")


class NativeVisited:
    """``Visited`` in C (``checks/vector/hashset.c``)."""

    def __init__(self, words: int):
        library = load(_SOURCE.read_text(), "hashset")
        library.visited_new.restype = ctypes.c_void_p
        library.visited_insert.restype = ctypes.c_int64
        library.visited_count.restype = ctypes.c_int64
        library.visited_states.restype = ctypes.c_void_p
        library.visited_free.argtypes = [ctypes.c_void_p]
        self._library, self.words = library, words
        self._set = ctypes.c_void_p(library.visited_new(ctypes.c_int64(words)))
        if not self._set.value:
            raise MemoryError("the visited set could not be allocated")

    def __del__(self):
        if getattr(self, "_set", None) is not None and self._set.value:
            self._library.visited_free(self._set)
            self._set = None

    def __len__(self) -> int:
        return int(self._library.visited_count(self._set))

    def insert(self, packed: numpy.ndarray, limit: int | None = None, ids: bool = False):
        packed = numpy.ascontiguousarray(packed, dtype=numpy.uint64)
        marks = numpy.empty(len(packed), dtype=numpy.uint8)
        state_ids = numpy.empty(len(packed), dtype=numpy.int32) if ids else None
        added = self._library.visited_insert(self._set, ctypes.c_int64(len(packed)), pointer(packed, ctypes.c_uint64),
                                             ctypes.c_int64(2**62 if limit is None else limit),
                                             pointer(marks, ctypes.c_uint8),
                                             None if state_ids is None else pointer(state_ids, ctypes.c_int32))
        if added < 0:
            raise MemoryError("the visited set ran out of memory")
        return (marks, state_ids) if ids else marks

    def words_of(self, ids: numpy.ndarray) -> numpy.ndarray:
        """The packed words of the states with these ids (a copy)."""
        count = len(self)
        address = self._library.visited_states(self._set)
        words = numpy.ctypeslib.as_array(ctypes.cast(address, ctypes.POINTER(ctypes.c_uint64)), shape=(count, self.words))
        return words[ids]
