"""The compiled evaluator of a traced model: its graph as C, run per state over a packed frontier.

``CompiledExpander`` does what ``NumpyExpander`` (``checks/vector/layers.py``) does — for every state of a
frontier, every enabled action instance's successor, packed, and the step properties it decides;
and the state properties of new states — but per state in compiled code, so that a node of the
graph costs a machine instruction rather than a numpy call, and an instance's successor is computed
only for the states where its guard holds. The C is generated from the traced graph
(``checks/vector/traced_system.py``), which is itself what the model's functions computed: it is a
translation of the one model, not a second encoding of it. ``tests/test_vector.py`` checks that
the compiled and the numpy evaluation agree.

Generated code per system: ``unpack`` (the layout's bit fields, ``checks/vector/layout.py``); ``expand``,
which per frontier state computes the nodes every guard needs, then for each instance whose guard
holds calls the instance's function (its successor's remaining nodes, the packed successor, and
under ``open`` bits the nodes of each step property still undecided); ``judge`` for the state
properties. Values outside a field's domain set ``error`` (a model bug, never a wrap-around).

Building and caching: ``checks/vector/native.py``. Where there is no C compiler the vector core uses numpy.
"""

from __future__ import annotations

import ctypes
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Iterator
import numpy

from kepcheck.checks.vector.dag import needed
from kepcheck.checks.vector.layers import Expansion
from kepcheck.checks.vector.layout import Layout
from kepcheck.checks.vector.native import load, pointer as _pointer
from kepcheck.checks.vector.traced_system import TracedSystem
from kepcheck.model.expr.traced import Term

__all__ = ["CompiledExpander", "generate"]

_CHUNK = 500  # frontier states per worker at least: smaller layers are expanded by one
_C_OPS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "add": "+", "sub": "-"}


class _Names:
    """How the C code names a node: a field, a shared value or a local of an instance function."""

    def __init__(self, leaves: dict, shared: dict):
        self.leaves, self.shared = leaves, shared

    def __call__(self, value) -> str:
        if type(value) is not Term:
            return str(int(value))
        if value.op == "field":
            return f"f[{self.leaves[value.name]}]"
        if value.index in self.shared:
            return f"s[{self.shared[value.index]}]"
        return f"t{value.index}"

    def expression(self, term: Term) -> str:
        args = [self(arg) for arg in term.args]
        if term.op in _C_OPS:
            return f"({args[0]} {_C_OPS[term.op]} {args[1]})"
        if term.op == "ite":
            return f"({args[0]} ? {args[1]} : {args[2]})"
        if term.op == "not":
            return f"(!{args[0]})"
        joiner = " && " if term.op == "and" else " || "
        return "(" + joiner.join(args) + ")"


def _pack_code(layout: Layout, values: list, names: _Names, target: str, source: str = "") -> list[str]:
    """Pack ``values`` into ``target``: a field whose value is the input field itself keeps its bits
    of the input words ``w``; a plain value is checked here; any other is checked at run time. With
    ``source``, every field is packed from the array ``source`` (``source[j]`` for field ``j``)."""
    if source:
        lines = [f"    {target}[{word}] = 0;" for word in range(layout.words)]
        for j, slot in enumerate(layout.slots):
            if slot.bits:
                lines.append(f"    {target}[{slot.word}] |= ((uint64_t)({source}[{j}] - ({slot.leaf.low}))) << {slot.shift};")
        return lines
    changed = [(number, slot, value) for number, (slot, value) in enumerate(zip(layout.slots, values), start=1)
               if not (type(value) is Term and value.op == "field" and value.name == slot.leaf.name)]
    lines = []
    for word in range(layout.words):
        mask = sum(((1 << slot.bits) - 1) << slot.shift for _, slot, _ in changed if slot.word == word)
        lines.append(f"    {target}[{word}] = w[{word}]" + (f" & {~mask & (2**64 - 1)}ULL;" if mask else ";"))
    for number, slot, value in changed:
        if type(value) is not Term:
            if not slot.leaf.low <= int(value) <= slot.leaf.high:
                lines.append(f"    *error = {number};")
            elif slot.bits and int(value) != slot.leaf.low:
                lines.append(f"    {target}[{slot.word}] |= {int(value) - slot.leaf.low}ULL << {slot.shift};")
            continue
        name = names(value)
        lines.append(f"    if ({name} < {slot.leaf.low} || {name} > {slot.leaf.high}) *error = {number};")
        if slot.bits:
            lines.append(f"    {target}[{slot.word}] |= ((uint64_t)({name} - ({slot.leaf.low}))) << {slot.shift};")
    return lines


def _unpack_code(layout: Layout) -> list[str]:
    lines = ["static void unpack(const uint64_t *w, int64_t *f) {"]
    for j, slot in enumerate(layout.slots):
        if slot.bits:
            lines.append(f"    f[{j}] = (int64_t)((w[{slot.word}] >> {slot.shift}) & {(1 << slot.bits) - 1}ULL) + ({slot.leaf.low});")
        else:
            lines.append(f"    f[{j}] = {slot.leaf.low};")
    return lines + ["}"]


def _instance_code(k: int, instance, steps: list, shared: set, layout: Layout, names: _Names,
                   observations: list = ()) -> list[str]:
    lines = [f"static void instance{k}(const uint64_t *w, const int64_t *f, const int64_t *s, uint64_t *out, "
             f"uint32_t *flags, uint32_t open, int32_t *error) {{"]
    done = set(shared)
    for term in needed(instance.successor):
        if term.index not in done and term.op != "field":
            lines.append(f"    int64_t t{term.index} = {names.expression(term)};")
            done.add(term.index)
    lines += _pack_code(layout, list(instance.successor), names, "out")
    lines.append("    uint32_t decided = 0;")
    for bit, prop in enumerate(steps):
        value = prop.values[k]
        lines.append(f"    if (open & {1 << bit}u) {{")
        local = set(done)
        for term in needed([value]):
            if term.index not in local and term.op != "field":
                lines.append(f"        int64_t t{term.index} = {names.expression(term)};")
                local.add(term.index)
        test = f"(!({names(value)}))" if prop.always else f"({names(value)})"
        lines.append(f"        if {test} decided |= {1 << bit}u;")
        lines.append("    }")
    for offset, observation in enumerate(observations, start=len(steps)):  # always evaluated: liveness reads every step
        value = observation.values[k]
        lines.append("    {")
        local = set(done)
        for term in needed([value]):
            if term.index not in local and term.op != "field":
                lines.append(f"        int64_t t{term.index} = {names.expression(term)};")
                local.add(term.index)
        lines.append(f"        if ({names(value)}) decided |= {1 << offset}u;")
        lines.append("    }")
    return lines + ["    *flags = decided;", "}"]


def _canonical_code(system: TracedSystem, layout: Layout) -> list[str]:
    """``canonical(w)``: the packed state ``w`` replaced by its representative under symmetry, as
    ``model.symmetry.make_representative`` computes it: in each class of interchangeable pods the
    pods are sorted (stably) by their fields in order, a preemptor inside any class counting as -2;
    then every preemptor index follows its pod to its new slot."""
    size, width, offset = len(system.leaves), system.pod_fields, system.preemptor_field
    pods = sum(1 for leaf in system.leaves if leaf.name.endswith(".preempted_by"))
    in_class = " || ".join(f"v == {i}" for i in sorted({i for members in system.symmetry for i in members}))
    lines = ["static int64_t key(const int64_t *f, int64_t pod, int64_t j) {",
             f"    int64_t v = f[pod * {width} + j];",
             f"    return (j == {offset} && ({in_class})) ? -2 : v;", "}", "",
             "static int before(const int64_t *f, int64_t a, int64_t b) {  /* pod a sorts strictly before pod b */",
             f"    for (int64_t j = 0; j < {width}; j++) {{",
             "        int64_t x = key(f, a, j), y = key(f, b, j);",
             "        if (x != y) return x < y;", "    }", "    return 0;", "}", "",
             "static void canonical(uint64_t *w) {",
             f"    int64_t f[{size}], g[{size}], map[{pods}];",
             "    unpack(w, f);", f"    for (int64_t j = 0; j < {size}; j++) g[j] = f[j];",
             f"    for (int64_t i = 0; i < {pods}; i++) map[i] = i;"]
    for members in system.symmetry:
        k = len(members)
        lines += ["    {", f"        static const int64_t members[{k}] = {{{', '.join(map(str, members))}}};",
                  f"        int64_t order[{k}];", f"        for (int64_t s = 0; s < {k}; s++) order[s] = members[s];",
                  f"        for (int64_t s = 1; s < {k}; s++) {{",
                  "            int64_t pod = order[s], t = s;",
                  "            while (t > 0 && before(f, pod, order[t - 1])) { order[t] = order[t - 1]; t--; }",
                  "            order[t] = pod;", "        }",
                  f"        for (int64_t s = 0; s < {k}; s++) {{",
                  "            map[order[s]] = members[s];",
                  f"            for (int64_t j = 0; j < {width}; j++) g[members[s] * {width} + j] = f[order[s] * {width} + j];",
                  "        }", "    }"]
    lines += [f"    for (int64_t i = 0; i < {pods}; i++) {{",
              f"        int64_t v = g[i * {width} + {offset}];", f"        if (v >= 0) g[i * {width} + {offset}] = map[v];",
              "    }"]
    lines += _pack_code(layout, [], _Names({}, {}), "w", source="g")
    return lines + ["}", ""]


def generate(system: TracedSystem, layout: Layout) -> str:
    """The C source of a traced system."""
    leaves = {leaf.name: j for j, leaf in enumerate(system.leaves)}
    shared_nodes = [t for t in needed([i.guard for i in system.instances]) if t.op != "field"]
    shared = {t.index: m for m, t in enumerate(shared_nodes)}
    names = _Names(leaves, shared)
    lines = ["#include <stdint.h>", "", *_unpack_code(layout), ""]
    if system.symmetry:
        lines += _canonical_code(system, layout)
    for k, instance in enumerate(system.instances):
        lines += _instance_code(k, instance, system.step_properties, set(shared), layout, names,
                                system.step_observations) + [""]
    lines += ["int64_t expand(int64_t n, const uint64_t *in, int64_t cap, int64_t *parent, int32_t *inst, uint64_t *out,",
              "               uint32_t *flags, uint32_t open, int32_t *error) {",
              "    int64_t m = 0;",
              f"    int64_t f[{len(leaves)}];", f"    int64_t s[{max(1, len(shared))}];",
              "    for (int64_t r = 0; r < n; r++) {",
              f"        unpack(in + r * {layout.words}, f);"]
    lines += [f"        s[{shared[t.index]}] = {names.expression(t)};" for t in shared_nodes]
    for k, instance in enumerate(system.instances):
        guard = instance.guard
        if guard is False:
            continue
        canon = f" canonical(out + m * {layout.words});" if system.symmetry else ""
        lines.append(f"        if ({names(guard)}) {{ if (m >= cap) return -1; instance{k}(in + r * {layout.words}, f, s, "
                     f"out + m * {layout.words}, flags + m, open, error);{canon} parent[m] = r; inst[m] = {k}; m++; }}")
    lines += ["    }", "    return m;", "}", ""]
    lines += _judge_code(system, layout, names)
    lines += _observe_code(system, layout, names)
    return "\n".join(lines) + "\n"


def _judge_code(system: TracedSystem, layout: Layout, names: _Names) -> list[str]:
    lines = ["void judge(int64_t n, const uint64_t *in, uint32_t *flags, uint32_t open) {",
             f"    int64_t f[{len(system.leaves)}];",
             "    for (int64_t r = 0; r < n; r++) {",
             f"        unpack(in + r * {layout.words}, f);", "        uint32_t decided = 0;"]
    plain = _Names(names.leaves, {})
    for bit, prop in enumerate(system.state_properties):
        value = prop.values[0]
        lines.append(f"        if (open & {1 << bit}u) {{")
        for term in needed([value]):
            if term.op != "field":
                lines.append(f"            int64_t t{term.index} = {plain.expression(term)};")
        test = f"(!({plain(value)}))" if prop.always else f"({plain(value)})"
        lines.append(f"            if {test} decided |= {1 << bit}u;")
        lines.append("        }")
    return lines + ["        flags[r] = decided;", "    }", "}"]


def _observe_code(system: TracedSystem, layout: Layout, names: _Names) -> list[str]:
    """``observe``: every state observation (the liveness premises and goals) of each state, as bits
    (``words`` 64-bit words per state, observation ``j`` at bit ``j % 64`` of word ``j // 64``)."""
    lines = ["", "void observe(int64_t n, const uint64_t *in, uint64_t *bits, int64_t words) {",
             f"    int64_t f[{len(system.leaves)}];",
             "    for (int64_t r = 0; r < n; r++) {",
             f"        unpack(in + r * {layout.words}, f);",
             "        uint64_t *out = bits + r * words;",
             "        for (int64_t w = 0; w < words; w++) out[w] = 0;"]
    plain = _Names(names.leaves, {})
    values = [observation.values[0] for observation in system.state_observations]
    for term in needed(values):
        if term.op != "field":
            lines.append(f"        int64_t t{term.index} = {plain.expression(term)};")
    for j, value in enumerate(values):
        lines.append(f"        if ({plain(value)}) out[{j // 64}] |= {1 << (j % 64)}ULL;")
    return lines + ["    }", "}"]


class CompiledExpander:
    """``NumpyExpander``'s interface, in compiled code."""

    name = "compiled"
    native = True  # the search keeps its visited set in C too (checks/visited.NativeVisited)

    def __init__(self, system: TracedSystem, layout: Layout, workers: int = 1, timeout: float | None = None):
        if len(system.step_properties) + len(system.step_observations) > 32 or len(system.state_properties) > 32:
            raise ValueError("the compiled evaluator judges at most 32 step properties and observations, and 32 "
                             "state properties")
        self.system, self.layout = system, layout
        library = load(generate(system, layout), timeout=timeout)  # TimeoutError past ``timeout`` s
        self._expand, self._judge, self._observe = library.expand, library.judge, library.observe
        self._expand.restype = ctypes.c_int64
        self._judge.restype = self._observe.restype = None
        self._average = 16  # transitions per state the next buffer is sized for (it grows when too small)
        self.workers = max(1, workers)
        self._local = threading.local()  # per thread: the buffers it expands chunks into
        self._pool = None  # the worker threads, started on the first frontier large enough to share

    def __del__(self):
        if getattr(self, "_pool", None) is not None:
            self._pool.shutdown(wait=False)

    def _mask(self, properties, open_names: set) -> int:
        return sum(1 << bit for bit, p in enumerate(properties) if p.name in open_names)

    def expand(self, frontier: numpy.ndarray, open_steps: set) -> Expansion:
        """The transitions of ``frontier``; with several workers the frontier is cut into contiguous
        chunks expanded at once on as many cores (the compiled code runs without Python's lock), and
        the chunks' transitions are put back in frontier order: the result does not depend on the
        number of workers."""
        frontier = numpy.ascontiguousarray(frontier)
        mask = self._mask(self.system.step_properties, open_steps)
        chunks = min(self.workers, max(1, len(frontier) // _CHUNK))
        if chunks == 1:
            return self._expansion(*self._expand_chunk(frontier, mask), open_steps)
        bounds = numpy.linspace(0, len(frontier), chunks + 1).astype(numpy.int64)
        parts = list(self._workers().map(lambda c: self._expand_chunk(frontier[bounds[c]:bounds[c + 1]], mask),
                                         range(chunks)))
        parent = numpy.concatenate([part[0] + start for part, start in zip(parts, bounds[:-1])])
        inst, out, flags = (numpy.concatenate([part[i] for part in parts]) for i in (1, 2, 3))
        return self._expansion(parent, inst, out, flags, open_steps)

    def expand_slices(self, frontier: numpy.ndarray, size: int, open_steps: set) -> Iterator[Expansion]:
        """The expansions of consecutive slices of ``size`` states of ``frontier``, in order. With
        several workers, slices are expanded ahead on the worker threads (as many at once as there
        are workers) while the caller takes in the earlier ones; a frontier of one slice is cut into
        chunks instead (``expand``). A slice is expanded with the step properties open when it was
        started: the caller ignores decisions on properties it has since closed."""
        starts = list(range(0, len(frontier), size))
        if self.workers == 1 or len(starts) == 1:
            for start in starts:
                yield self.expand(frontier[start:start + size], open_steps)
            return
        frontier = numpy.ascontiguousarray(frontier)
        ahead, pending = iter(starts), deque()

        def submit() -> None:
            start = next(ahead, None)
            if start is not None:
                mask = self._mask(self.system.step_properties, open_steps)
                pending.append(self._workers().submit(self._expand_chunk, frontier[start:start + size], mask))

        for _ in range(self.workers):
            submit()
        try:
            while pending:
                parts = pending.popleft().result()
                submit()
                yield self._expansion(*parts, open_steps)
        finally:
            for future in pending:
                future.cancel()

    def _workers(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="kepcheck-expand")
        return self._pool

    def _expansion(self, parent, inst, out, flags, open_steps: set) -> Expansion:
        decides = {p.name: (flags & numpy.uint32(1 << bit)) != 0
                   for bit, p in enumerate(self.system.step_properties) if p.name in open_steps}
        first = len(self.system.step_properties)
        observed = {o.key: (flags & numpy.uint32(1 << bit)) != 0
                    for bit, o in enumerate(self.system.step_observations, start=first)}
        return Expansion(parent, inst, out, decides, observed)

    def observe(self, packed: numpy.ndarray) -> numpy.ndarray:
        """The state observations of ``packed`` as bits: (states, words) uint64, observation ``j`` at
        bit ``j % 64`` of word ``j // 64`` (``checks.vector.graph.bit_column`` reads one)."""
        packed = numpy.ascontiguousarray(packed)
        count = len(self.system.state_observations)
        words = max(1, -(-count // 64))
        bits = numpy.zeros((len(packed), words), dtype=numpy.uint64)
        if len(packed) and count:
            self._observe(ctypes.c_int64(len(packed)), _pointer(packed, ctypes.c_uint64), _pointer(bits, ctypes.c_uint64),
                          ctypes.c_int64(words))
        return bits

    def _expand_chunk(self, frontier: numpy.ndarray, mask: int) -> tuple:
        """The transitions of one chunk (parent rows, instances, packed successors, step flags), expanded
        into this thread's buffers — kept from chunk to chunk, so that no memory is touched for the
        first time per chunk — and copied out."""
        n, average = len(frontier), self._average
        while True:
            parent, inst, out, flags = self._buffers(max(64, n * average))
            error = ctypes.c_int32(0)
            m = self._expand(ctypes.c_int64(n), _pointer(frontier, ctypes.c_uint64), ctypes.c_int64(len(parent)),
                             _pointer(parent, ctypes.c_int64), _pointer(inst, ctypes.c_int32),
                             _pointer(out, ctypes.c_uint64), _pointer(flags, ctypes.c_uint32),
                             ctypes.c_uint32(mask), ctypes.byref(error))
            if m >= 0:
                break
            average *= 2
        self._average = max(2, -(-m * 5 // (4 * max(1, n))) + 1)  # the next buffer: what this chunk needed, + 25 %
        self._check(error.value)
        return parent[:m].copy(), inst[:m].copy(), out[:m].copy(), flags[:m].copy()

    def _buffers(self, capacity: int) -> tuple:
        buffers = getattr(self._local, "buffers", None)
        if buffers is None or len(buffers[0]) < capacity:
            buffers = (numpy.empty(capacity, dtype=numpy.int64), numpy.empty(capacity, dtype=numpy.int32),
                       numpy.empty((capacity, self.layout.words), dtype=numpy.uint64),
                       numpy.empty(capacity, dtype=numpy.uint32))
            self._local.buffers = buffers
        return buffers

    def judge(self, packed: numpy.ndarray, open_states: set) -> dict:
        packed = numpy.ascontiguousarray(packed)
        flags = numpy.zeros(len(packed), dtype=numpy.uint32)
        if len(packed):
            self._judge(ctypes.c_int64(len(packed)), _pointer(packed, ctypes.c_uint64), _pointer(flags, ctypes.c_uint32),
                        ctypes.c_uint32(self._mask(self.system.state_properties, open_states)))
        return {p.name: (flags & numpy.uint32(1 << bit)) != 0
                for bit, p in enumerate(self.system.state_properties) if p.name in open_states}

    def _check(self, error: int) -> None:
        if error:
            slot = self.layout.slots[error - 1]
            raise ValueError(f"{slot.leaf.name}: value outside its domain [{slot.leaf.low}, {slot.leaf.high}]")
