"""PriorityClasses and a pod's ``priorityClassName``, resolved as the Priority admission plugin does.

Kubernetes (``plugin/pkg/admission/priority/admission.go``, ``admitPod``): a pod that names a
``priorityClassName`` gets that class's value (a built-in system class first:
``system-cluster-critical``, ``system-node-critical``), and a name no class has is refused ("no
PriorityClass with name X was found"); a pod that names none gets the ``globalDefault`` class (the
lowest value if a race left several), else priority 0. The pod's ``preemptionPolicy`` comes from the
same class (``PreemptLowerPriority`` without one). A pod that also gives ``priority`` or
``preemptionPolicy`` is refused when it differs from what the class gives ("the integer value of
priority (X) must not be provided in pod spec; priority admission controller computed Y from the given
PriorityClass name", and the same for the policy).

A PriorityClass (``pkg/apis/scheduling/validation/validation.go``, ``ValidatePriorityClass``): its
name is a DNS-1123 subdomain, a name with the ``system-`` prefix is reserved for the built-in classes,
its value is at most ``HighestUserDefinablePriority``; a second ``globalDefault`` class is refused by
the admission plugin ("PriorityClass X is already marked as default. Only one default can exist").

In a scenario, ``priority`` without ``priorityClassName`` stays the shorthand it always was: it
stands for a class of that value and policy, declared or not (the scenario need not declare classes
at all). ``read_priority_classes`` and ``read_priority`` read a scenario's ``priorityClasses`` and a
pod's fields with these rules, refusing with the file and field named.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kepcheck.spec.kubernetes.api_validation import HIGHEST_USER_DEFINABLE_PRIORITY, INT32_MIN, SYSTEM_PRIORITIES
from kepcheck.spec.language.fields import FieldReader

__all__ = ["PriorityClass", "SYSTEM_CLASSES", "DEFAULT_PREEMPTION_POLICY", "PREEMPTION_POLICIES", "class_problem",
           "resolve_class", "admit_problem", "read_priority_classes", "read_priority"]

DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"
PREEMPTION_POLICIES = (DEFAULT_PREEMPTION_POLICY, "Never")
SYSTEM_PREFIX = "system-"


@dataclass(frozen=True)
class PriorityClass:
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str = DEFAULT_PREEMPTION_POLICY


SYSTEM_CLASSES = {name: PriorityClass(name, value) for value, name in SYSTEM_PRIORITIES.items()}


def class_problem(pc: PriorityClass, declared: dict) -> tuple[str, str] | None:
    """(field, problem) of a PriorityClass the API server refuses beside the ``declared`` ones."""
    if pc.name.startswith(SYSTEM_PREFIX):
        return "name", (f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only "
                        "(the built-in system classes need no declaration)")
    if pc.value > HIGHEST_USER_DEFINABLE_PRIORITY:
        return "value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
    if pc.name in declared:
        return "name", f"a PriorityClass named {pc.name!r} is already declared"
    default = next((c for c in declared.values() if c.global_default), None)
    if pc.global_default and default is not None:
        return "globalDefault", f"PriorityClass {default.name} is already marked as default. Only one default can exist"
    return None


def resolve_class(classes: dict, class_name: str | None) -> PriorityClass | None:
    """The class ``admitPod`` resolves: the named one (system classes first; None if there is no such
    class), else the global default (the lowest value of several), else None (priority 0)."""
    if class_name is not None:
        return SYSTEM_CLASSES.get(class_name) or classes.get(class_name)
    defaults = sorted((c for c in classes.values() if c.global_default), key=lambda c: c.value)
    return defaults[0] if defaults else None


def admit_problem(resolved: PriorityClass | None, class_name: str | None, priority: int | None,
                  policy: str | None) -> tuple[str, str] | None:
    """(field, problem) when ``admitPod`` refuses a pod naming ``class_name`` (None: no name) that gives
    ``priority`` and ``policy`` itself (None: not given); None when it admits it."""
    if class_name is not None and resolved is None:
        return "priorityClassName", f"no PriorityClass with name {class_name} was found"
    if class_name is None:
        return None  # the shorthand: a pod's own priority and policy stand for its class
    if priority is not None and priority != resolved.value:
        return "priority", (f"the integer value of priority ({priority}) must not be provided in pod spec; priority "
                            f"admission controller computed {resolved.value} from the given PriorityClass name")
    if policy is not None and policy != resolved.preemption_policy:
        return "preemptionPolicy", (f"the string value of PreemptionPolicy ({policy}) must not be provided in pod "
                                    f"spec; priority admission controller computed {resolved.preemption_policy} "
                                    "from the given PriorityClass name")
    return None


_CLASS_FIELDS = {"name", "value", "globalDefault", "preemptionPolicy"}


def read_priority_classes(reader: FieldReader, value: Any) -> dict:
    """A scenario's ``priorityClasses``: name -> PriorityClass, each as the API server admits it."""
    classes: dict = {}
    for i, raw in enumerate(reader.sequence(value, "priorityClasses")):
        where = f"priorityClasses[{i}]"
        reader.mapping(raw, where, _CLASS_FIELDS, ("name", "value"))
        default = raw.get("globalDefault", False)
        if not isinstance(default, bool):
            reader.fail(f"{where}.globalDefault", "expected true or false")
        pc = PriorityClass(reader.object_name(raw["name"], f"{where}.name", "PriorityClass"),
                           reader.integer(raw["value"], f"{where}.value", INT32_MIN), default,
                           reader.one_of(raw.get("preemptionPolicy", DEFAULT_PREEMPTION_POLICY),
                                         f"{where}.preemptionPolicy", PREEMPTION_POLICIES))
        problem = class_problem(pc, classes)
        if problem:
            reader.fail(f"{where}.{problem[0]}", problem[1])
        classes[pc.name] = pc
    return classes


def read_priority(reader: FieldReader, raw: dict, where: str, classes: dict) -> tuple[int, str]:
    """A pod's (priority, preemptionPolicy): from its ``priorityClassName``, else its own ``priority``
    (the shorthand), else the global default class, else 0; refused as ``admitPod`` refuses."""
    class_name = raw.get("priorityClassName")
    if class_name is not None:
        class_name = reader.object_name(class_name, f"{where}.priorityClassName", "PriorityClass")
    given = reader.priority(raw["priority"], f"{where}.priority") if "priority" in raw else None
    policy = raw.get("preemptionPolicy")
    if policy is not None:
        policy = reader.one_of(policy, f"{where}.preemptionPolicy", PREEMPTION_POLICIES)
    resolved = resolve_class(classes, class_name)
    problem = admit_problem(resolved, class_name, given, policy)
    if problem:
        reader.fail(f"{where}.{problem[0]}", problem[1])
    if resolved is None or (class_name is None and given is not None):  # no class, or the shorthand
        return (given if given is not None else 0), policy or DEFAULT_PREEMPTION_POLICY
    return resolved.value, policy or resolved.preemption_policy
