"""Reading a scenario file safely: a bounded read of a regular file, and YAML 1.2 core-schema
parsing with bounded nesting, bounded alias expansion and plain (scalar) mapping keys.

What is validated, and why (the limits are in ``spec.limits``):

- ``read_text``: only a regular file is read (a device such as ``/dev/zero``, a FIFO, a directory
  or a socket is refused by its kind, a symbolic-link loop by the operating system's ``ELOOP``),
  and at most ``MAX_FILE_BYTES`` + 1 bytes are ever read; the text must be UTF-8.
- ``load_document``: events come from libyaml when PyYAML has it (else from PyYAML's own parser;
  neither recurses), and the composer below counts as it goes: collections nested deeper than
  ``MAX_DEPTH``, or more than ``MAX_NODES`` nodes once every alias and merge key (``<<``) is
  expanded, are refused before Python's recursion or memory is at stake; an alias to a collection
  that contains it is refused. Scalars follow the YAML 1.2 core schema (spec §10.3.2):
  ``true``/``false`` only (``yes``/``on``/``no``/``off`` are strings), no ``1:30`` sexagesimal and
  no ``1_000`` separators (strings), decimal and ``0x`` hex integers; an integer that YAML 1.1 and
  1.2 read differently (``010``, ``0o10``) is refused rather than guessed, and one longer than
  ``MAX_INT_DIGITS`` digits is refused before it is converted, as is a number written in digits
  that a double cannot hold (it would silently become infinity). Only the core tags (null, bool,
  int, float, str, seq, map) are constructed: no timestamps, binary, sets or Python objects. A
  mapping key must be a scalar and may not repeat; merge keys (``<<``, from the YAML 1.1 type
  repository, which YAML 1.2 readers keep supporting) work as defined there: explicit keys win,
  then the merged mappings in order.

Every refusal is an ``InputError(where, problem)``: ``where`` is ``""`` for the file itself and
``line N`` inside it. This module imports nothing of the model or checks.
"""

from __future__ import annotations

import errno
import math
import os
import re
import stat
from pathlib import Path
from typing import Any
import yaml
from yaml.composer import Composer, ComposerError
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent, MappingStartEvent, SequenceStartEvent
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.reader import ReaderError
from yaml.resolver import BaseResolver

from kepcheck.spec.limits import MAX_DEPTH, MAX_FILE_BYTES, MAX_INT_DIGITS, MAX_NODES, cut, shown

__all__ = ["InputError", "read_text", "load_document", "load_documents"]

_MERGE_TAG = "tag:yaml.org,2002:merge"
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


class InputError(ValueError):
    """The file cannot be read as a scenario document: ``where`` (``""`` or ``line N``), ``problem``."""

    def __init__(self, where: str, problem: str):
        self.where, self.problem = where, problem
        super().__init__(f"{where}: {problem}" if where else problem)


# --- the file ----------------------------------------------------------------------------------------

def read_text(path: str | Path, limit: int = MAX_FILE_BYTES, what: str = "a scenario file") -> str:
    """The UTF-8 text of the regular file at ``path``, read without ever holding more than
    ``limit`` + 1 bytes; ``InputError`` if it is not a regular file, too large (the message names
    the limit as the one for ``what``) or not UTF-8."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as error:
        raise InputError("", _open_problem(error)) from None
    except ValueError:  # a NUL character in the path
        raise InputError("", "cannot read file (the path contains a NUL character)") from None
    try:
        mode = os.fstat(descriptor).st_mode
        for is_kind, kind in _FILE_KINDS:
            if is_kind(mode):
                raise InputError("", f"not a regular file ({kind})")
        data = _read_at_most(descriptor, limit + 1)
    except OSError as error:
        raise InputError("", f"cannot read file ({error.strerror})") from None
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise InputError("", f"larger than {limit // 1024} KiB, the limit for {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError("", f"not UTF-8 text (byte {error.start})") from None


def _open_problem(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return f"cannot read file ({error.strerror}: a symbolic link loop)"
    return f"cannot read file ({error.strerror})"


def _read_at_most(descriptor: int, size: int) -> bytes:
    chunks, total = [], 0
    while total < size:
        chunk = os.read(descriptor, min(size - total, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


# --- YAML 1.2 core schema ----------------------------------------------------------------------------

class _CoreResolver(BaseResolver):
    """Implicit tags of the YAML 1.2 core schema (spec §10.3.2), plus the merge key ``<<``."""

    yaml_implicit_resolvers: dict = {}


for _tag, _pattern, _first in (
    ("null", r"(?:~|null|Null|NULL|)\Z", "~nN"),
    ("bool", r"(?:true|True|TRUE|false|False|FALSE)\Z", "tTfF"),
    ("int", r"(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)\Z", "-+0123456789"),
    ("float", r"(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
              r"|\.(?:nan|NaN|NAN))\Z", "-+.0123456789"),
    ("merge", r"<<\Z", "<"),
):
    _CoreResolver.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(_pattern),
                                        list(_first) + ([""] if _tag == "null" else []))

_INTEGER = re.compile(r"([-+]?)([0-9]+)\Z|0o([0-7]+)\Z|0x([0-9a-fA-F]+)\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_SPECIAL_FLOATS = {".inf": float("inf"), "+.inf": float("inf"), "-.inf": float("-inf"), ".nan": float("nan")}


class _CoreConstructor(SafeConstructor):
    """Constructs only the core tags; booleans, integers and floats by the core schema's rules."""

    yaml_constructors: dict = {}

    def construct_core_bool(self, node) -> bool:
        value = self.construct_scalar(node)
        if value in ("true", "True", "TRUE", "false", "False", "FALSE"):
            return value[0] in "tT"
        raise ConstructorError(None, None, f"{shown(value)} is not a boolean (true or false)", node.start_mark)

    def construct_core_int(self, node) -> int:
        """Decimal or ``0x`` hex. ``010`` and ``0o10`` are refused, not guessed: the YAML 1.1 type
        repository reads ``010`` as octal 8 and has no ``0o`` form (a string), YAML 1.2's core
        schema reads them as 10 and 8."""
        value = self.construct_scalar(node)
        match = _INTEGER.match(value)
        if match is None:
            raise ConstructorError(None, None, f"{shown(value)} is not an integer", node.start_mark)
        sign, decimal, octal, hexadecimal = match.groups()
        digits = decimal or octal or hexadecimal
        if len(digits) > MAX_INT_DIGITS:
            raise ConstructorError(None, None, f"an integer of {len(digits)} digits is out of range "
                                   f"(at most {MAX_INT_DIGITS} digits)", node.start_mark)
        if octal is not None:
            raise ConstructorError(None, None, f"{shown(value)} is an integer in YAML 1.2 but a string in YAML 1.1: "
                                   "write it in decimal, or quote it", node.start_mark)
        if decimal is not None and len(decimal) > 1 and decimal[0] == "0":
            raise ConstructorError(None, None, f"{shown(value)} is octal in YAML 1.1 but decimal in YAML 1.2: "
                                   "write it without the leading zero, or quote it", node.start_mark)
        if decimal is not None:
            return -int(decimal) if sign == "-" else int(decimal)
        return int(hexadecimal, 16)

    def construct_core_float(self, node) -> float:
        value = self.construct_scalar(node)
        if value.lower() in _SPECIAL_FLOATS:
            return _SPECIAL_FLOATS[value.lower()]
        if _FLOAT.match(value) is None:
            raise ConstructorError(None, None, f"{shown(value)} is not a number", node.start_mark)
        number = float(value)
        if math.isinf(number):  # written as digits, yet beyond a double: not silently infinity
            raise ConstructorError(None, None, f"the number {shown(value)} is out of range", node.start_mark)
        return number

    def construct_mapping(self, node, deep=False):
        """Refuses a key that is not a scalar, and a key given twice (the last would silently win);
        merge keys are then flattened as YAML defines them."""
        if isinstance(node, MappingNode):
            seen = set()
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                if not isinstance(key_node, ScalarNode):
                    raise ConstructorError(None, None, "a mapping key must be a plain value such as a field "
                                           "name, not a list or a mapping", key_node.start_mark)
                key = self.construct_object(key_node, deep=deep)
                if key in seen:
                    raise ConstructorError(None, None, f"duplicate key {shown(key)}", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


for _tag, _method in (
    ("null", SafeConstructor.construct_yaml_null), ("str", SafeConstructor.construct_yaml_str),
    ("seq", SafeConstructor.construct_yaml_seq), ("map", SafeConstructor.construct_yaml_map),
    ("bool", _CoreConstructor.construct_core_bool), ("int", _CoreConstructor.construct_core_int),
    ("float", _CoreConstructor.construct_core_float),
):
    _CoreConstructor.add_constructor(f"tag:yaml.org,2002:{_tag}", _method)
_CoreConstructor.add_constructor(None, SafeConstructor.construct_undefined)


# --- bounded composition -----------------------------------------------------------------------------

class _BoundedComposer(Composer):
    """PyYAML's composer, counting as it goes. For every node it records ``size`` (nodes in its
    tree, every alias expanded) and ``height`` (collections nested in that tree, itself included);
    an alias adds its target's size to the running count and its height to the current depth, so
    the limits hold for the document as the constructor will see it, and are checked before
    anything is expanded."""

    def __init__(self, max_nodes: int = MAX_NODES):
        super().__init__()
        self._max_nodes = max_nodes
        self._depth = 0
        self._count = 0
        self._size: dict[int, int] = {}
        self._height: dict[int, int] = {}

    def compose_document(self):
        """One document of the stream; what is recorded per node is per document (an alias never
        reaches into another), the node count runs over the whole stream."""
        self._size.clear()
        self._height.clear()
        return super().compose_document()

    def compose_node(self, parent, index):
        if self.check_event(AliasEvent):
            return self._compose_alias()
        event = self.peek_event()
        if event.anchor is not None and event.anchor in self.anchors:
            raise ComposerError(None, None, f"anchor &{cut(event.anchor)} is defined twice", event.start_mark)
        collection = isinstance(event, (SequenceStartEvent, MappingStartEvent))
        self._depth += collection
        if self._depth > MAX_DEPTH:
            raise ComposerError(None, None, f"collections nested deeper than {MAX_DEPTH} levels", event.start_mark)
        start = self._count
        self._add(1, event.start_mark)
        node = super().compose_node(parent, index)
        self._depth -= collection
        self._size[id(node)] = self._count - start
        self._height[id(node)] = collection + max((self._height[id(child)] for child in _children(node)), default=0)
        return node

    def _compose_alias(self):
        event = self.get_event()
        node = self.anchors.get(event.anchor)
        if node is None:
            raise ComposerError(None, None, f"alias *{cut(event.anchor)} has no anchor before it", event.start_mark)
        if id(node) not in self._size:
            raise ComposerError(None, None, f"alias *{cut(event.anchor)} is inside the collection it "
                                "refers to (a recursive alias)", event.start_mark)
        if self._depth + self._height[id(node)] > MAX_DEPTH:
            raise ComposerError(None, None, f"alias *{cut(event.anchor)} nests collections deeper than "
                                f"{MAX_DEPTH} levels", event.start_mark)
        self._add(self._size[id(node)], event.start_mark)
        return node

    def _add(self, nodes: int, mark) -> None:
        self._count += nodes
        if self._count > self._max_nodes:
            raise ComposerError(None, None, f"more than {self._max_nodes} YAML nodes, counting each alias and merge "
                                "key (<<) as the nodes it stands for", mark)


def _children(node) -> list:
    if isinstance(node, SequenceNode):
        return node.value
    if isinstance(node, MappingNode):
        return [child for pair in node.value for child in pair]
    return []


if getattr(yaml, "__with_libyaml__", False):
    from yaml._yaml import CParser as _Events
else:  # pragma: no cover - PyYAML without libyaml: the same events, parsed in Python
    from yaml.parser import Parser
    from yaml.reader import Reader
    from yaml.scanner import Scanner

    class _Events(Reader, Scanner, Parser):
        def __init__(self, stream):
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)


class _Loader(_BoundedComposer, _Events, _CoreConstructor, _CoreResolver):
    """Events from ``_Events``; composition, construction and resolution as above (the composer's
    methods come first in the MRO, so libyaml's own unbounded composer is never used)."""

    def __init__(self, text: str, max_nodes: int = MAX_NODES):
        _Events.__init__(self, text)
        _BoundedComposer.__init__(self, max_nodes)
        _CoreConstructor.__init__(self)
        _CoreResolver.__init__(self)


def load_document(text: str) -> Any:
    """The single YAML document in ``text`` as plain Python data (``None`` if there is none);
    ``InputError("line N", problem)`` for anything that is not a bounded YAML 1.2 core document."""
    return _load(text, MAX_NODES, lambda loader: loader.get_single_data())


def load_documents(text: str, max_nodes: int = MAX_NODES) -> list:
    """Every document of the YAML stream ``text`` (``---``-separated), in order, as plain Python data;
    the same limits and refusals as ``load_document``, with at most ``max_nodes`` nodes in the
    whole stream (a snapshot of a cluster is larger than a scenario: ``spec.limits.SNAPSHOT_*``)."""
    def documents(loader) -> list:
        loaded = []
        while loader.check_data():
            loaded.append(loader.get_data())
        return loaded

    return _load(text, max_nodes, documents)


def _load(text: str, max_nodes: int, construct) -> Any:
    """``construct(loader)`` on a bounded loader of ``text``; parser errors as ``InputError``."""
    loader = _Loader(text, max_nodes)
    try:
        return construct(loader)
    except ReaderError as error:
        line = text.encode("utf-8", "surrogatepass")[:error.position].count(b"\n") + 1
        raise InputError(f"line {line}", f"invalid YAML: {_clean(str(error.reason))}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        parts = [getattr(error, "context", None), getattr(error, "problem", None)]
        problem = ", ".join(str(part) for part in parts if part) or "not a YAML document"
        raise InputError(f"line {mark.line + 1}" if mark else "", f"invalid YAML: {_clean(problem)}") from None
    finally:
        loader.dispose()


def _clean(problem: str, limit: int = 120) -> str:
    """A parser's message on one line, cut to ``limit`` characters (it may quote the input)."""
    text = " ".join(problem.split())
    return text if len(text) <= limit else text[:limit] + "…"
