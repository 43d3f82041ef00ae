"""Sweep bounds: the YAML file that declares which small clusters a sweep checks (``kepcheck sweep``).

A bounds file names ranges rather than values: how many nodes, how many pods per node and pending,
the allocatable and pod sizes of each resource in model units (cpu in cores, memory in Gi), the
priority levels, the ``preemptionPolicy`` values, the node opt-outs (``disableResizePreemption``),
the initial resize condition (none, or a Deferred upsize) and how many pods may start with a
Deferred one (``deferredPods``), the environment's menu (the kinds of
user event: a resize of a pod to a size in range, an arrival, a deletion) and its budget
(``maxEvents``), and the properties and variants to check. ``checks/sweep/space.py`` enumerates
the scenarios within them. The format is in docs/sweeps.md.

The file is untrusted input read like a scenario file (``spec.language.yaml_safe``: size, nesting, aliases,
YAML 1.2 core scalars); a problem is ``BoundsError`` (a ``ScenarioError``: one line
``FILE: FIELD: problem``, exit 2).

Left out: initial Infeasible and InProgress resizes, scheduler restarts and nominated pending pods
(the scenario schema has them; a sweep does not vary them yet); a Deferred downsize (the kubelet
never defers a resize that increases no request, docs/reference.md §2.3).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES, SOMETIMES
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.language.fields import FieldReader, ScenarioError
from kepcheck.spec.language.loader import PREEMPTION_POLICIES
from kepcheck.spec.language.yaml_safe import InputError, load_document, read_text

__all__ = ["BoundsError", "Range", "SweepBounds", "load_bounds", "parse_bounds", "EVENT_KINDS", "RESOURCES"]

EVENT_KINDS = ("resize", "arrival", "deletion")
RESOURCES = ("cpu", "memory")  # model units: cpu in cores ("2"), memory in Gi ("2Gi")
INITIAL_RESIZES = ("none", "Deferred")
MAX_RANGE = 16  # the largest value of any range: a sweep is meant for small scopes
_RANGE = re.compile(r"(\d{1,2})\.\.(\d{1,2})")
_TOP = {"name", "description", "nodes", "podsPerNode", "pendingPods", "pods", "resources", "priorities",
        "preemptionPolicies", "optOuts", "initialResize", "deferredPods", "environment", "variants", "properties"}
_RESOURCE = {"allocatable", "sizes"}
_ENVIRONMENT = {"events", "maxEvents"}


class BoundsError(ScenarioError):
    """A bounds file is malformed: one line ``FILE: FIELD: problem``."""


@dataclass(frozen=True)
class Range:
    low: int
    high: int

    def values(self) -> range:
        return range(self.low, self.high + 1)

    def __contains__(self, value: int) -> bool:
        return self.low <= value <= self.high

    def __str__(self) -> str:
        return str(self.low) if self.low == self.high else f"{self.low}..{self.high}"


@dataclass(frozen=True)
class SweepBounds:
    name: str
    description: str
    nodes: Range
    pods_per_node: Range
    pending_pods: Range
    pods: Range  # declared pods in all (bound and pending; arrivals come on top)
    resources: tuple[str, ...]  # in RESOURCES order
    allocatable: tuple[Range, ...]  # per resource
    sizes: tuple[Range, ...]  # per resource: requests, allocated and resize targets
    priorities: tuple[int, ...]
    preemption_policies: tuple[str, ...]
    opt_outs: tuple[bool, ...]
    initial_resizes: tuple[str, ...]
    deferred_pods: Range  # how many declared pods start with a Deferred resize (when initialResize lists it)
    events: tuple[str, ...]  # the kinds of user event in the menu
    max_events: int
    variants: tuple[str, ...]
    properties: tuple[str, ...]
    source: str = ""

    def describe(self) -> str:
        """One line: the bounds, for the summary (``holds on all K scenarios within bounds B``)."""
        sizes = ", ".join(f"{r} allocatable {a} sizes {s}" for r, a, s in zip(self.resources, self.allocatable,
                                                                               self.sizes))
        menu = "/".join(self.events) if self.events and self.max_events else "none"
        return (f"{self.name}: nodes {self.nodes}, pods {self.pods} ({self.pods_per_node} per node, "
                f"{self.pending_pods} pending), {sizes}, priorities {list(self.priorities)}, "
                f"initial resize {'/'.join(self.initial_resizes)}{self._deferred()}, events {menu} "
                f"(at most {self.max_events})")

    def _deferred(self) -> str:
        return f" ({self.deferred_pods} pods Deferred)" if "Deferred" in self.initial_resizes else ""


def load_bounds(path: str | Path) -> SweepBounds:
    """Read and validate a bounds file (within the limits of ``spec.language.yaml_safe``)."""
    source = str(path)
    try:
        document = load_document(read_text(path, what="a bounds file"))
    except InputError as error:
        raise BoundsError(source, error.where, error.problem) from None
    return parse_bounds(document, source)


def parse_bounds(document: Any, source: str = "<bounds>") -> SweepBounds:
    """Bounds from a parsed YAML document; ``BoundsError`` naming ``source`` and the field."""
    reader = _Reader(source)
    if document is None:
        reader.fail("", "the file is empty")
    top = reader.mapping(document, "", _TOP, ("name", "nodes", "podsPerNode", "resources", "priorities"))
    name = reader.scenario_name(top["name"], "name")
    description = top.get("description", "")
    if not isinstance(description, str) or not description.isprintable():
        reader.fail("description", "must be one line of printable text")
    nodes = reader.range(top["nodes"], "nodes", 1)
    per_node = reader.range(top["podsPerNode"], "podsPerNode", 0)
    pending = reader.range(top.get("pendingPods", 0), "pendingPods", 0)
    most = nodes.high * per_node.high + pending.high
    pods = reader.range(top.get("pods", f"1..{min(max(most, 1), MAX_RANGE)}"), "pods", 1)
    resources, allocatable, sizes = _read_resources(reader, top["resources"])
    events, max_events = _read_environment(reader, top.get("environment") or {})
    initial_resizes = reader.choices(top.get("initialResize", ["none"]), "initialResize", INITIAL_RESIZES)
    deferred = reader.range(top.get("deferredPods", f"0..{pods.high}"), "deferredPods", 0)
    if "deferredPods" in top and "Deferred" not in initial_resizes:
        reader.fail("deferredPods", "counts pods that start Deferred: it needs initialResize to list Deferred")
    return SweepBounds(
        name, description, nodes, per_node, pending, pods, resources, allocatable, sizes,
        priorities=reader.distinct(top["priorities"], "priorities", reader.priority),
        preemption_policies=reader.choices(top.get("preemptionPolicies", ["PreemptLowerPriority"]),
                                           "preemptionPolicies", PREEMPTION_POLICIES),
        opt_outs=reader.distinct(top.get("optOuts", [False]), "optOuts", reader.boolean),
        initial_resizes=initial_resizes, deferred_pods=deferred,
        events=events, max_events=max_events,
        variants=reader.choices(top.get("variants", ["alpha-1.37"]), "variants", tuple(v.name for v in VARIANTS)),
        properties=_read_properties(reader, top.get("properties", [ALWAYS, EVENTUALLY])), source=source)


def _read_resources(reader: "_Reader", value: Any) -> tuple:
    resources = reader.mapping(value, "resources", set(RESOURCES), ("cpu",))
    names = tuple(r for r in RESOURCES if r in resources)
    allocatable, sizes = [], []
    for resource in names:
        where = f"resources.{resource}"
        fields = reader.mapping(resources[resource], where, _RESOURCE, ("allocatable", "sizes"))
        allocatable.append(reader.range(fields["allocatable"], f"{where}.allocatable", 1))
        sizes.append(reader.range(fields["sizes"], f"{where}.sizes", 1))
    return names, tuple(allocatable), tuple(sizes)


def _read_environment(reader: "_Reader", value: Any) -> tuple[tuple[str, ...], int]:
    environment = reader.mapping(value, "environment", _ENVIRONMENT)
    events = reader.choices(environment.get("events", []), "environment.events", EVENT_KINDS, empty=True)
    max_events = reader.integer(environment.get("maxEvents", 1 if events else 0), "environment.maxEvents", 0, 3)
    if max_events and not events:
        reader.fail("environment.maxEvents", "a budget of events needs environment.events (which kinds of event)")
    return events, max_events


def _read_properties(reader: "_Reader", value: Any) -> tuple[str, ...]:
    """Property names, or the kinds ``always`` and ``eventually`` standing for every property of the
    kind; a sometimes-property (a witness) is no claim about every cluster and is refused."""
    kinds = {ALWAYS, EVENTUALLY}
    catalog = {p.name: p for p in PROPERTIES}
    chosen = []
    for i, item in enumerate(reader.sequence(value, "properties") or reader.fail("properties", "name at least one")):
        if item in kinds:
            chosen += [p.name for p in PROPERTIES if p.kind == item]
        elif isinstance(item, str) and item in catalog and catalog[item].kind != SOMETIMES:
            chosen.append(item)
        else:
            reader.fail(f"properties[{i}]", f"{item!r} is not an always- or eventually-property nor one of the kinds "
                                            "always, eventually")
    return tuple(dict.fromkeys(chosen))


class _Reader(FieldReader):
    """``FieldReader`` whose failures are ``BoundsError``, with the readers of ranges and lists."""

    def fail(self, where: str, problem: str):
        raise BoundsError(self.source, where, problem)

    def range(self, value: Any, where: str, minimum: int) -> Range:
        """``N`` or ``"LOW..HIGH"`` with ``minimum <= LOW <= HIGH <= MAX_RANGE``."""
        if isinstance(value, int) and not isinstance(value, bool):
            low = high = value
        elif isinstance(value, str) and _RANGE.fullmatch(value):
            low, high = (int(part) for part in _RANGE.fullmatch(value).groups())
        else:
            self.fail(where, f"expected an integer or a range LOW..HIGH, got {value!r}"[:120])
        if not minimum <= low <= high <= MAX_RANGE:
            self.fail(where, f"{value!r} must satisfy {minimum} <= LOW <= HIGH <= {MAX_RANGE}")
        return Range(low, high)

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            self.fail(where, f"expected true or false, got {value!r}"[:120])
        return value

    def distinct(self, value: Any, where: str, read) -> tuple:
        items = self.sequence(value, where)
        if not items:
            self.fail(where, "name at least one value")
        chosen = tuple(read(item, f"{where}[{i}]") for i, item in enumerate(items))
        if len(set(chosen)) != len(chosen):
            self.fail(where, "a value is listed twice")
        return tuple(sorted(chosen))

    def choices(self, value: Any, where: str, known: tuple[str, ...], empty: bool = False) -> tuple[str, ...]:
        items = self.sequence(value, where)
        if not items and not empty:
            self.fail(where, "name at least one value")
        chosen = tuple(self.one_of(item, f"{where}[{i}]", known) for i, item in enumerate(items))
        if len(set(chosen)) != len(chosen):
            self.fail(where, "a value is listed twice")
        return tuple(item for item in known if item in chosen)
