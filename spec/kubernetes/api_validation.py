"""Kubernetes API validation that a scenario's objects must pass, as the API server applies it.

What is validated (each rule is Kubernetes' own; the functions return ``None`` for a valid value,
else the problem in Kubernetes' words):

- **Pod and Node names** are DNS-1123 subdomains: ``pkg/apis/core/validation/validation.go``
  ``ValidatePodName`` and ``ValidateNodeName`` are both ``apimachineryvalidation.NameIsDNSSubdomain``,
  i.e. ``IsDNS1123Subdomain`` in ``staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go``:
  at most 253 characters (``DNS1123SubdomainMaxLength``), matching
  ``[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`` — lowercase ASCII letters,
  digits, ``-`` and ``.``, starting and ending with a letter or digit, no empty label (``a..b``).
- **Owners in ``disableResizePreemption``** (KEP-5836's ``NodePodPreemptionPolicy``; ``+listType=set``,
  ``+k8s:maxItems=20``, each value ``+k8s:format=k8s-label-key``; the declarative validation test
  of ``pkg/registry/core/node`` refuses 21 items, a malformed key and a duplicate) are label keys:
  ``IsLabelKey`` in ``staging/src/k8s.io/apimachinery/pkg/api/validate/content/kube.go`` — an
  optional DNS-1123 subdomain prefix and ``/``, then a name of at most 63 characters matching
  ``([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]``.
- **Pod priority** is ``spec.priority``, an ``int32``, which the Priority admission plugin
  (``plugin/pkg/admission/priority/admission.go``, ``admitPod``) resolves from a PriorityClass. A
  PriorityClass value is at most ``HighestUserDefinablePriority`` = 1,000,000,000
  (``pkg/apis/scheduling/types.go``; ``ValidatePriorityClass`` in
  ``pkg/apis/scheduling/validation/validation.go``) unless the class is one of the two system
  classes (``pkg/apis/scheduling/v1/helpers.go``, ``systemPriorityClasses``):
  ``system-cluster-critical`` = 2,000,000,000 (``SystemCriticalPriority``) and
  ``system-node-critical`` = 2,000,001,000. Negative values down to the ``int32`` minimum are allowed.

This module is standalone (stdlib only).
"""

from __future__ import annotations

import re

__all__ = [
    "DNS1123_SUBDOMAIN_MAX_LENGTH", "DNS1123_LABEL_MAX_LENGTH", "LABEL_KEY_NAME_MAX_LENGTH", "MAX_OPT_OUT_OWNERS",
    "HIGHEST_USER_DEFINABLE_PRIORITY", "SYSTEM_PRIORITIES", "INT32_MIN", "INT32_MAX",
    "dns1123_subdomain_problem", "dns1123_label_problem", "label_key_problem", "priority_problem",
]

DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1123_LABEL_MAX_LENGTH = 63
LABEL_KEY_NAME_MAX_LENGTH = 63
MAX_OPT_OUT_OWNERS = 20
HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000
SYSTEM_PRIORITIES = {2_000_000_000: "system-cluster-critical", 2_000_001_000: "system-node-critical"}
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1

_DNS1123_LABEL = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_PATTERN = re.compile(_DNS1123_LABEL)
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(?:\.{_DNS1123_LABEL})*")
_LABEL_KEY_NAME = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SUBDOMAIN_RULE = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
                   "'-' or '.', and must start and end with an alphanumeric character")
_LABEL_RULE = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
               "and must start and end with an alphanumeric character")
_LABEL_KEY_RULE = ("a label key's name part must consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character")


def _length_then_pattern(value: str, limit: int, pattern, rule: str, part: str = "") -> str | None:
    """The length is checked first (as Kubernetes does), so the pattern only ever sees ``limit`` characters."""
    if len(value) > limit:
        return f"{part}must be no more than {limit} characters (has {len(value)})"
    return rule if pattern.fullmatch(value) is None else None


def dns1123_subdomain_problem(value: str) -> str | None:
    """``IsDNS1123Subdomain``."""
    return _length_then_pattern(value, DNS1123_SUBDOMAIN_MAX_LENGTH, _DNS1123_SUBDOMAIN, _SUBDOMAIN_RULE)


def dns1123_label_problem(value: str) -> str | None:
    """``IsDNS1123Label`` (a container name: ``validateContainers``)."""
    return _length_then_pattern(value, DNS1123_LABEL_MAX_LENGTH, _DNS1123_LABEL_PATTERN, _LABEL_RULE)


def label_key_problem(value: str) -> str | None:
    """``IsLabelKey``: ``[prefix/]name``, the prefix a DNS-1123 subdomain, the name at most 63 characters."""
    parts = value.split("/", 2)
    if len(parts) > 2:
        return "a label key has at most one '/' (an optional DNS subdomain prefix, then a name)"
    name = parts[-1]
    if len(parts) == 2:
        prefix_problem = dns1123_subdomain_problem(parts[0]) if parts[0] else "must be non-empty"
        if prefix_problem:
            return f"prefix part {prefix_problem}"
    return _length_then_pattern(name, LABEL_KEY_NAME_MAX_LENGTH, _LABEL_KEY_NAME, _LABEL_KEY_RULE, "name part ")


def priority_problem(value: int) -> str | None:
    """A pod priority the API server could hold: an ``int32`` that some PriorityClass may have."""
    if not INT32_MIN <= value <= INT32_MAX:
        return f"must fit in an int32 ({INT32_MIN} to {INT32_MAX}): spec.priority is an int32"
    if value > HIGHEST_USER_DEFINABLE_PRIORITY and value not in SYSTEM_PRIORITIES:
        classes = " or ".join(f"{v} ({name})" for v, name in SYSTEM_PRIORITIES.items())
        return (f"is above {HIGHEST_USER_DEFINABLE_PRIORITY}, the highest user-definable priority, and is not "
                f"a system priority class value: {classes}")
    return None
