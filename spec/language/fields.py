"""The fields of a scenario document, one kind at a time: what each may hold, and the one-line
``ScenarioError`` naming the file and the field when it holds something else.

What is validated: mappings (unknown and missing fields), lists, the scenario's own name, Pod and
Node names and references to them, integers (bounded), pod priorities, the node opt-out list,
choices among fixed words, and resource vectors (Kubernetes quantities). The Kubernetes rules
(names, priorities, the opt-out's owners) are in ``spec.kubernetes.api_validation`` with their sources;
every message quotes at most a short prefix of the offending value (``spec.limits.shown``).
"""

from __future__ import annotations

import re
from typing import Any, NoReturn

from kepcheck.spec.kep.vocabulary import RESOURCE_NAMES
from kepcheck.spec.kubernetes.api_validation import (
    INT32_MAX, MAX_OPT_OUT_OWNERS, dns1123_subdomain_problem, label_key_problem, priority_problem,
)
from kepcheck.spec.kubernetes.quantities import parse_quantity
from kepcheck.spec.limits import cut, one_line, shown

__all__ = ["ScenarioError", "FieldReader", "SCENARIO_NAME_MAX_LENGTH"]

# The scenario's own name is not a Kubernetes object's: it names report and trace files
# ("<scenario>--<variant>--<property>.md"), so it is kept short and free of path characters.
SCENARIO_NAME_MAX_LENGTH = 63
_SCENARIO_NAME = re.compile(r"[A-Za-z0-9](?:[-.A-Za-z0-9]*[A-Za-z0-9])?")


class ScenarioError(ValueError):
    """A scenario file is malformed. ``str()`` is one line: ``FILE: FIELD: problem``."""

    def __init__(self, source: str, where: str, problem: str):
        self.source, self.where, self.problem = source, where, problem
        super().__init__(one_line(f"{source}: {where}: {problem}" if where else f"{source}: {problem}"))


class FieldReader:
    """Reads fields of the document loaded from ``source``; ``where`` is a field's path in it."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, where: str, problem: str) -> NoReturn:
        raise ScenarioError(self.source, where, problem)

    @staticmethod
    def field(where: str, key: Any) -> str:
        """The path of ``key`` under ``where`` (a hostile key is cut short like any value)."""
        name = cut(key) if isinstance(key, str) else shown(key)
        return f"{where}.{name}" if where else name

    def mapping(self, value: Any, where: str, allowed: set[str], required: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            self.fail(where, f"expected a mapping, got {type(value).__name__}")
        for key in value:
            if key not in allowed:
                self.fail(self.field(where, key), f"unknown field (allowed: {', '.join(sorted(allowed))})")
        for key in required:
            if key not in value:
                self.fail(self.field(where, key), "required field is missing")
        return value

    def sequence(self, value: Any, where: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(where, f"expected a list, got {type(value).__name__}")
        return value

    def scenario_name(self, value: Any, where: str) -> str:
        """ASCII letters, digits, '-' and '.', starting and ending with a letter or digit."""
        if not isinstance(value, str) or len(value) > SCENARIO_NAME_MAX_LENGTH or not _SCENARIO_NAME.fullmatch(value):
            self.fail(where, f"{shown(value)} is not a valid name (ASCII letters, digits, '-' and '.', starting and "
                             f"ending with a letter or digit, at most {SCENARIO_NAME_MAX_LENGTH} characters)")
        return value

    def object_name(self, value: Any, where: str, kind: str) -> str:
        """A Pod or Node name: a DNS-1123 subdomain (``ValidatePodName``, ``ValidateNodeName``)."""
        if not isinstance(value, str):
            self.fail(where, f"expected a {kind} name, got {shown(value)}")
        problem = dns1123_subdomain_problem(value)
        if problem:
            self.fail(where, f"{shown(value)} is not a valid {kind} name: {problem}")
        return value

    def reference(self, value: Any, where: str, known: dict[str, Any], kind: str) -> str:
        """The name of a declared pod or node (``known``)."""
        if not isinstance(value, str) or value not in known:
            self.fail(where, f"unknown {kind} {shown(value)}")
        return value

    def one_of(self, value: Any, where: str, choices: tuple[str, ...]) -> str:
        if not isinstance(value, str) or value not in choices:
            self.fail(where, f"{shown(value)} is not one of {', '.join(choices)}")
        return value

    def integer(self, value: Any, where: str, minimum: int | None = None, maximum: int = INT32_MAX) -> int:
        """An integer (not a boolean) within [``minimum``, ``maximum``]; by default at most int32's maximum."""
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"expected an integer, got {shown(value)}")
        if minimum is not None and value < minimum:
            self.fail(where, f"must be at least {minimum}, got {shown(value)}")
        if value > maximum:
            self.fail(where, f"must be at most {maximum}, got {shown(value)}")
        return value

    def priority(self, value: Any, where: str) -> int:
        """A pod priority Kubernetes can hold (``spec.kubernetes.api_validation.priority_problem``)."""
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(where, f"expected an integer, got {shown(value)}")
        problem = priority_problem(value)
        if problem:
            self.fail(where, f"priority {shown(value)} {problem}")
        return value

    def opt_out(self, value: Any, where: str) -> bool:
        """``disableResizePreemption``: a boolean, or the API's list of owners (non-empty = opted out),
        at most 20 distinct label keys."""
        if isinstance(value, bool):
            return value
        if not isinstance(value, list):
            self.fail(where, f"expected true/false or a list of owners, got {shown(value)}")
        if len(value) > MAX_OPT_OUT_OWNERS:
            self.fail(where, f"at most {MAX_OPT_OUT_OWNERS} owners (has {len(value)})")
        seen = set()
        for i, owner in enumerate(value):
            if not isinstance(owner, str):
                self.fail(f"{where}[{i}]", f"expected an owner (a label key), got {shown(owner)}")
            problem = label_key_problem(owner)
            if problem:
                self.fail(f"{where}[{i}]", f"{shown(owner)} is not a valid owner (a label key): {problem}")
            if owner in seen:
                self.fail(f"{where}[{i}]", f"duplicate owner {shown(owner)}")
            seen.add(owner)
        return bool(value)

    def resources(self, value: Any, where: str) -> dict[str, int]:
        """Kubernetes quantities by resource name, in model units (``spec.kubernetes.quantities``)."""
        self.mapping(value, where, set(RESOURCE_NAMES))
        result = {}
        for resource, quantity in value.items():
            try:
                result[resource] = parse_quantity(quantity, resource)
            except ValueError as error:
                self.fail(f"{where}.{resource}", str(error))
        return result
