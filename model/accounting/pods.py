"""A whole pod as Kubernetes stores it, for ``model/accounting/pod_requests.py``: regular, init and
sidecar containers, each with its spec requests and limits and what the pod status reports
(``allocatedResources``, ``resources``), plus overhead and pod-level resources, as immutable values;
and the two resize conditions the accounting reads (docs/reference.md §1.2–§1.6, §2.4).

Resource maps follow Kubernetes ``ResourceList`` semantics: a resource that is absent contributes
nothing (it is not zero-filled). ``None`` stands for a nil map / absent status field; an empty map
is a present-but-empty one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Optional

__all__ = ["CONTAINER_KINDS", "ResourceMap", "Container", "Pod", "is_resize_deferred", "is_resize_infeasible"]


CONTAINER_KINDS = ("regular", "init", "sidecar")


ResourceMap = Mapping[str, Any]  # resource name -> int (model units) or a Z3 integer term


class _FrozenMap(Mapping):
    """A read-only, hashable copy of a resource map (so that pods are values, STYLE R4)."""

    __slots__ = ("_items",)

    def __init__(self, resources: ResourceMap):
        self._items = dict(resources)

    def __getitem__(self, name: str) -> Any:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(frozenset(self._items.items()))

    def __repr__(self) -> str:
        return repr(self._items)


def _freeze(resources: Optional[ResourceMap]) -> Optional[ResourceMap]:
    return None if resources is None else _FrozenMap(resources)


@dataclass(frozen=True)
class Container:
    """One container of a pod: its spec and what the pod status reports for it (docs/reference.md §1.1).

    ``kind`` is ``"regular"`` (``spec.containers``), ``"init"`` (a non-restartable init container)
    or ``"sidecar"`` (an init container with ``restartPolicy: Always``). ``requests``/``limits`` are
    the desired values (``spec…resources``); ``allocated`` is ``status…allocatedResources``
    (requests only); ``actual``/``actual_limits`` are ``status…resources.requests/limits``. A
    container whose ``allocated``, ``actual`` and ``actual_limits`` are all ``None`` has no status
    entry. Maps are copied into read-only, hashable mappings.
    """

    name: str
    kind: str = "regular"
    requests: Optional[ResourceMap] = None
    allocated: Optional[ResourceMap] = None
    actual: Optional[ResourceMap] = None
    limits: Optional[ResourceMap] = None
    actual_limits: Optional[ResourceMap] = None

    def __post_init__(self) -> None:
        if self.kind not in CONTAINER_KINDS:
            raise ValueError(f"container {self.name!r}: kind must be one of {', '.join(CONTAINER_KINDS)}, got {self.kind!r}")
        for field in ("requests", "allocated", "actual", "limits", "actual_limits"):
            object.__setattr__(self, field, _freeze(getattr(self, field)))

    @property
    def has_status_resources(self) -> bool:
        """``containerStatus.resources != nil`` (the v1.36 rule's gate, docs/reference.md §1.2)."""
        return self.actual is not None or self.actual_limits is not None


@dataclass(frozen=True)
class Pod:
    """A pod as the accounting sees it (docs/reference.md §1.1, §1.5).

    ``containers`` is in declaration order; init containers and sidecars keep the order in which
    they are declared among ``spec.initContainers`` (the KEP-753 formula depends on it), regular
    containers may be placed anywhere. ``resize_reason`` is the reason of the ``PodResizePending``
    condition (``"Deferred"``, ``"Infeasible"``, any other string) or ``None`` when there is no
    such condition. ``pod_requests``/``pod_limits`` are pod-level ``spec.resources``;
    ``pod_allocated`` is ``status.allocatedResources``; ``pod_actual``/``pod_actual_limits`` are
    ``status.resources.requests/limits``.
    """

    containers: tuple[Container, ...]
    overhead: Optional[ResourceMap] = None
    resize_reason: Optional[str] = None
    pod_requests: Optional[ResourceMap] = None
    pod_limits: Optional[ResourceMap] = None
    pod_allocated: Optional[ResourceMap] = None
    pod_actual: Optional[ResourceMap] = None
    pod_actual_limits: Optional[ResourceMap] = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "containers", tuple(self.containers))
        for field in ("overhead", "pod_requests", "pod_limits", "pod_allocated", "pod_actual", "pod_actual_limits"):
            object.__setattr__(self, field, _freeze(getattr(self, field)))
        names = [container.name for container in self.containers]
        if len(set(names)) != len(names):
            raise ValueError(f"container names must be unique, got {names}")

    @property
    def has_status_resources(self) -> bool:
        """``pod.status.resources != nil`` (docs/reference.md §1.5)."""
        return self.pod_actual is not None or self.pod_actual_limits is not None


def is_resize_deferred(pod: Pod) -> bool:
    """``IsPodResizeDeferred``: the ``PodResizePending`` reason is ``Deferred`` (docs/reference.md §1.2, C-14).

    Like upstream, the condition's ``status`` and ``observedGeneration`` are not consulted.
    """
    return pod.resize_reason == "Deferred"


def is_resize_infeasible(pod: Pod) -> bool:
    """``IsPodResizeInfeasible``: the ``PodResizePending`` reason is ``Infeasible`` (docs/reference.md §1.2, C-14)."""
    return pod.resize_reason == "Infeasible"
