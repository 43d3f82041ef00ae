"""Resource accounting: how much of a node a pod takes, in the scheduler's and the kubelet's eyes.

What is modelled (the Kubernetes facts of ``docs/reference.md``, cited as "docs/reference.md §N"):

* **The scheduler's view of an assigned pod** — component-helpers ``PodRequests`` /
  ``PodLimits`` with ``UseStatusResources`` (docs/reference.md §1.2–§1.6):
  - the v1.37 rule "max of sums": three pod totals (desired S, allocated A, actual R), each built
    with the KEP-753 init/sidecar formula, combined per resource as ``max(S, A, R)``, or
    ``max(A, R)`` while the resize is Infeasible (§1.2);
  - the v1.33–v1.36 rule "sum of maxes": each regular/sidecar container whose
    ``status.resources`` is set contributes ``max(desired, allocated, actual)`` (Infeasible:
    ``max(allocated, actual)``), every other container its desired requests, and the
    contributions are aggregated (§1.2);
  - init containers and sidecars (§1.4), pod overhead (§1.4), pod-level resources and their
    in-place resize (§1.5, and the §1.2 bullet on pod-level status maps), limits (§1.3).
* **The kubelet's resize admission view** (§1.7, §2.2): every other pod counts at
  ``max(allocated, actual)``; the resizing pod at its desired requests (implementation) or at
  ``max(desired, allocated, actual)`` (KEP-5836 text); the resize fits when the sum is within
  allocatable.
* **The scheduler's fit check for a Deferred pod** (§4.4, P-7): the queue copy only adds the
  positive excess of its desired requests over what the cache already counts.

Two layers. This module holds the first: the *vector* functions (``combine_totals``, ``kubelet_*``, ``deferred_fit_delta``)
take tuples with one entry per resource and are written only with ``model/expr/scalars.py`` helpers, so
they evaluate on plain ints and on Z3 terms alike; the state machine (which holds each pod's totals) calls
them directly. The second, ``model/accounting/pod_requests.py``: the *pod* functions (``pod_requests``, ``pod_limits``) take a ``Pod`` with named
containers and ``dict`` resource maps, follow the upstream code step by step, and are built on
``combine_totals`` — so the model's pod totals and the general pods share one rule.

Resource maps follow Kubernetes ``ResourceList`` semantics: a resource that is absent contributes
nothing (it is not zero-filled), and a result only names resources that something contributed
(§1.2 "Missing values", case C-8). ``None`` stands for a nil map / absent status field; an empty
map is a present-but-empty one. Quantities are ints in model units (millicores, bytes) and never
negative (``spec/kubernetes/quantities.py`` rejects negative input), which is what lets "absent" and "0" be
interchanged inside a ``max``.

Left out, deliberately: DRA node-allocatable claim resources, ``NonMissingContainerRequests``
(the scheduler's scoring defaults), ``SkipPodLevelResources`` / ``SkipContainerLevelResources``,
the ``pods`` scalar (a count, not a resource vector: ``model/accounting/views.py`` checks it in the fits), and the overhead the kubelet adds to the resizing pod (§2.2; the model's pods
have no overhead). The kubelet's fit check is ``Σ others + request ≤ allocatable`` per resource;
upstream ``fitsRequest`` skips resources the pod requests nothing of, which differs only when the
other pods alone already exceed allocatable (a state the kubelet's own admission avoids). With the
v1.36 rule, pod-level in-place resize applies only the §1.5 pod-level maximum: the §1.2 pod-level
status shortcut belongs to the v1.37 "max of sums" code (v0.36.3 was not re-read for it).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from kepcheck.model.expr.scalars import ite
from kepcheck.model.expr.vectors import vadd, vle, vmax, vpos, vsub, vsum

__all__ = ["RESOURCES", "KUBELET_MEASURES", "combine_totals", "kubelet_other_pod_requests",
           "kubelet_resizing_pod_requests", "deferred_fit_delta", "kubelet_fits"]

RESOURCES = ("cpu", "memory")
KUBELET_MEASURES = ("desired", "max")



def combine_totals(desired: Sequence, allocated: Sequence, actual: Sequence, infeasible: Any) -> tuple:
    """The scheduler's effective size from the three resource states (docs/reference.md §1.2).

    ``max(desired, allocated, actual)`` per resource, or ``max(allocated, actual)`` while the
    resize is Infeasible (its desired size is ignored). Under the v1.37 rule the arguments are pod
    totals; under the v1.36 rule they are one container's values. Works on ints/bools and on Z3
    terms (``infeasible`` may be a Z3 Bool).
    """
    return ite(infeasible, vmax(allocated, actual), vmax(desired, allocated, actual))


def kubelet_other_pod_requests(allocated: Sequence, actual: Sequence) -> tuple:
    """How the kubelet counts every pod other than the one being resized (docs/reference.md §1.7, §2.2).

    The kubelet replaces each other pod's spec by its checkpointed allocation before measuring it
    with the status-aware helper, so the pod counts at ``max(allocated, actual)``.
    """
    return vmax(allocated, actual)


def kubelet_resizing_pod_requests(desired: Sequence, allocated: Sequence, actual: Sequence, measure: str) -> tuple:
    """How the kubelet measures the pod whose resize it is admitting (docs/reference.md §2.2, §4.9).

    ``measure="desired"``: its desired requests only — what the implementation does (the
    resource-fit helper reads the spec). ``measure="max"``: ``max(desired, allocated, actual)`` —
    what the KEP-5836 text says. The two differ for mixed resizes (one resource up, one down).
    """
    if measure == "desired":
        return tuple(desired)
    if measure == "max":
        return vmax(desired, allocated, actual)
    raise ValueError(f"measure must be one of {', '.join(KUBELET_MEASURES)}, got {measure!r}")


def deferred_fit_delta(queue_desired: Sequence, cache_effective: Sequence) -> tuple:
    """What a Deferred pod still needs on its own node in the scheduler's eyes (docs/reference.md §4.4, P-7).

    ``max(0, desired of the queue copy − effective size the cache already counts)`` per resource:
    the cache copy already reserves ``max(desired, allocated, actual)``, so the delta is normally 0
    and only a newer, larger spec in the queue copy adds anything. Negative deltas are clamped (a
    pending downsize never frees capacity early).
    """
    return vpos(vsub(queue_desired, cache_effective))


def kubelet_fits(requested_vector: Sequence, others_vectors: Iterable[Sequence], allocatable: Sequence) -> Any:
    """The kubelet's resource-fit check for a resize (docs/reference.md §2.2): per resource,
    ``Σ others + requested ≤ allocatable``. A bool on ints, a Z3 Bool on terms.
    """
    requested = tuple(requested_vector)
    total = vadd(vsum(others_vectors, len(requested)), requested)
    return vle(total, allocatable)
