"""What a random walk judges besides the catalog: differential checks, and the ``Check`` value.

A ``Check`` is one thing judged on a walk (``checks/engines/random_walk.py``): a catalog property or one of
these differential checks, which compare two computations of the same quantity.

* ``SchedulerConservative`` — docs/reference.md §6 "Conservativeness": per node, the scheduler's
  ``Requested`` (``model.accounting.views.scheduler_requested``) is at least the kubelet's count of its
  admitted pods at max(allocated, actual), on the same snapshot. Checked only when the variant's
  accounting is ``max`` or ``kubelet-aligned`` (whose ``Requested`` outside a Deferred pod's cycle
  is the ``max`` one). Under ``allocated-only`` it is *expected* to fail (an InProgress downsize
  counts at its allocation only), so it is not run there.
* ``AccountingAgrees`` — the scheduler's footprint of every assigned pod
  (``model.accounting.views.scheduler_footprint``) equals an independent restatement of the Kubernetes formula
  for a one-container pod (docs/reference.md §1.2): desired if the pod has no status yet (bound, not
  admitted), else max(allocated, actual) while the resize is Infeasible, else max(desired,
  allocated, actual). Checked under the ``max`` accounting only (``kubelet-aligned`` differs by
  design inside a Deferred cycle, ``allocated-only`` everywhere).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, SOMETIMES, PropertySpec
from kepcheck.spec.kep.vocabulary import ResizeReason

from kepcheck.model.accounting.views import admitted, assigned, kubelet_footprint, scheduler_footprint, scheduler_requested
from kepcheck.model.context import Context
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.state import State

__all__ = ["Check", "scheduler_conservative", "accounting_agrees", "DIFFERENTIAL_CHECKS", "DIFFERENTIAL_NAMES",
           "walk_checks"]


@dataclass(frozen=True)
class Check:
    """One thing judged on a walk: a catalog property or a differential check.

    ``scope="state"``: ``predicate(ctx, state)``; ``scope="step"``: ``predicate(ctx, before,
    action, after)``. For ``always`` True means it holds; for ``sometimes`` True is a witness.
    """

    name: str
    kind: str
    scope: str
    predicate: Callable
    ref: str = ""


def scheduler_conservative(ctx: Context, state: State) -> bool:
    """docs/reference.md §6: per node and resource, the scheduler's Requested >= what the kubelet counts
    for its admitted pods (max(allocated, actual) each), on the same snapshot."""
    for node in ctx.node_range:
        requested = scheduler_requested(ctx, state, node)
        kubelet = [0] * ctx.width
        for pod in state.pods:
            if pod.node == node and admitted(pod):
                kubelet = [k + v for k, v in zip(kubelet, kubelet_footprint(pod))]
        if any(s < k for s, k in zip(requested, kubelet)):
            return False
    return True


def _restated_footprint(pod) -> tuple:
    """docs/reference.md §1.2 for a one-container pod, written out independently of model/accounting/footprints.py."""
    if not any(pod.allocated) and not any(pod.actual) and not admitted(pod):
        return tuple(pod.desired)  # bound, no status yet: PodRequests falls back to the spec
    if pod.resize == ResizeReason.INFEASIBLE:
        return tuple(max(a, r) for a, r in zip(pod.allocated, pod.actual))
    return tuple(max(d, a, r) for d, a, r in zip(pod.desired, pod.allocated, pod.actual))


def accounting_agrees(ctx: Context, state: State) -> bool:
    """Every assigned pod's scheduler footprint equals the independent restatement of §1.2."""
    return all(tuple(scheduler_footprint(ctx, pod)) == _restated_footprint(pod)
               for pod in state.pods if assigned(pod))


DIFFERENTIAL_CHECKS = (
    ("SchedulerConservative", scheduler_conservative, ("max", "kubelet-aligned"), "docs/reference.md §6 'Conservativeness'"),
    ("AccountingAgrees", accounting_agrees, ("max",), "docs/reference.md §1.2"),
)
DIFFERENTIAL_NAMES = frozenset(name for name, _, _, _ in DIFFERENTIAL_CHECKS)


def walk_checks(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, differential=True) -> list[Check]:
    """The catalog's always/sometimes properties among ``properties``, then the differential checks
    that apply to the context's variant: every one (``differential=True``), none (False or empty),
    or those named in ``differential`` (``--property``)."""
    checks = [Check(p.name, p.kind, p.scope, PREDICATES[p.name], p.ref) for p in properties
              if p.kind in (ALWAYS, SOMETIMES)]
    chosen = DIFFERENTIAL_NAMES if differential is True else frozenset(differential or ())
    checks += [Check(name, ALWAYS, "state", predicate, ref) for name, predicate, accountings, ref
               in DIFFERENTIAL_CHECKS if ctx.variant.accounting in accountings and name in chosen]
    return checks
