"""Input limits of scenario files, and how an offending value is shown in a message.

What is bounded, and why: a scenario file is read by a loader that must refuse every input it
cannot use within a small, fixed budget (about 2 s and 200 MB) with one line naming the file and
the field. The limits are far above any scenario the state machine can explore (a handful of
nodes and pods), so no real scenario meets them:

- ``MAX_FILE_BYTES``: the file is read up to this size and refused beyond it;
- ``MAX_DEPTH``: collections nested deeper than this are refused (a scenario nests 4 levels);
- ``MAX_NODES``: YAML nodes in the document, counting every node an alias or a merge key
  (``<<``) stands for, so that an alias bomb ("billion laughs") is refused before it expands;
- ``MAX_INT_DIGITS``: digits of an integer scalar, refused before it is converted (int64 has 19);
- ``MAX_QUANTITY_CHARS``: characters of a quantity string, refused before it is parsed.

A cluster snapshot (``kubectl get … -o yaml``, read by ``kepcheck import``) is a YAML stream of
one or more documents and larger than any scenario: it is read within ``SNAPSHOT_MAX_BYTES`` and
``SNAPSHOT_MAX_NODES`` (150 to 1,500 pods, depending on how much of each pod kubectl prints: its
``managedFields`` alone are a few hundred nodes), with the same depth, integer and quantity limits.
The node limit is what keeps a refusal within the budget: PyYAML composes about 35,000 nodes a
second here, so a 10,000-pod list is refused after 60,000 nodes, in about a second, not parsed for
ten. A larger cluster is snapshotted one node at a time (``kubectl get pods -A --field-selector
spec.nodeName=NODE -o yaml``).

Messages quote at most ``SHOWN_CHARS`` characters of an offending value (``shown``), and name a
collection by its type only, so a message stays one short line whatever the input.

This module is standalone (stdlib only).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "MAX_FILE_BYTES", "MAX_DEPTH", "MAX_NODES", "MAX_INT_DIGITS", "MAX_QUANTITY_CHARS", "SHOWN_CHARS",
    "SNAPSHOT_MAX_BYTES", "SNAPSHOT_MAX_NODES",
    "shown", "cut", "one_line",
]

MAX_FILE_BYTES = 1 << 20  # 1 MiB
MAX_DEPTH = 64
MAX_NODES = 50_000
MAX_INT_DIGITS = 20
MAX_QUANTITY_CHARS = 64
SHOWN_CHARS = 40
SNAPSHOT_MAX_BYTES = 16 << 20  # 16 MiB
SNAPSHOT_MAX_NODES = 60_000

_COLLECTIONS = {dict: "a mapping", list: "a list", tuple: "a list", set: "a set", frozenset: "a set"}


def shown(value: Any) -> str:
    """``value`` for a message: a string or number as its ``repr`` cut to ``SHOWN_CHARS`` characters
    (then ``…``), ``null``/``true``/``false`` as YAML spells them, a collection by its kind only
    (never its contents, which an alias bomb makes exponentially large)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value[:SHOWN_CHARS]) + ("…" if len(value) > SHOWN_CHARS else "")
    if isinstance(value, int):
        return cut(str(value)) if value.bit_length() < 4 * SHOWN_CHARS else "a very large integer"
    if isinstance(value, float):
        return cut(repr(value))
    for kind, name in _COLLECTIONS.items():
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"


def cut(text: str) -> str:
    """``text`` cut to ``SHOWN_CHARS`` characters, then ``…``."""
    return text[:SHOWN_CHARS] + ("…" if len(text) > SHOWN_CHARS else "")


def one_line(text: str) -> str:
    """``text`` with every non-printable character (newline, tab, control) escaped, so that a
    message built from a hostile file name or value stays on one line."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in text)
