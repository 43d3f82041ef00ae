"""Why an always-property fails: the terms its predicate compared, for the trace report.

``EXPLAIN[name]`` has one function per always-property of the catalog, with the arguments of its
predicate in ``model/properties/catalog.py`` (``(ctx, state)`` or ``(ctx, before, action, after)``). On a
state (or step) where the predicate is false it returns the parts that are false there:

* a ``Tally`` for a sum the predicate compared with a node's allocatable — the terms it added, built
  by the predicate's own helpers (``kubelet_node_terms``, ``grant_terms``, ``victim_kept_terms``,
  summed by ``tally``), so a report can show no other sum than the one judged;
* a ``Fact`` for a comparison without arithmetic (a pod's phase, two priorities, a condition).

``checks/outputs/breach.py`` puts them in words. Left out: symbolic states (explanations are read on the
concrete states of a trace), and the scheduler's fit arithmetic behind NoVictimWithoutNeed (a Fact
names the claimant or victim; the fit is ``model/accounting/views.py``'s ``fits_new_pod`` /
``fits_deferred_pod``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES
from kepcheck.spec.kep.vocabulary import Phase

from kepcheck.model.accounting.footprints import kubelet_resizing_pod_requests
from kepcheck.model.accounting.views import fits_deferred_pod, fits_new_pod, kubelet_footprint
from kepcheck.model.context import Context
from kepcheck.model.properties.capacity import grant_terms, kubelet_grants, kubelet_node_terms, scheduler_grants, tally
from kepcheck.model.properties.conditions import condition_checks
from kepcheck.model.properties.victims import (
    kubelet_fit_victims, new_victims, not_evicted_by_lower_or_equal, victim_kept_terms, victims_in_flight,
    still_claiming,
)
from kepcheck.model.state import NO_NODE, NO_POD, State
from kepcheck.model.step import Action, snake_case

__all__ = ["Tally", "Fact", "EXPLAIN"]


@dataclass(frozen=True)
class Tally:
    """A sum a predicate compared with ``node``'s allocatable, per resource.

    ``claim``: ``kubelet-total`` (KubeletNeverOvercommits), ``scheduler-grant`` (NoDoubleReservation),
    ``kubelet-grant`` (KubeletHonorsReservation), ``kubelet-admission`` (BoundPodsAdmitted: the
    rejected pod's request beside the admitted pods), ``victim-kept`` (NoExcessVictims: the resize
    with one victim kept). ``terms``: ``(pod index, role, vector)`` of every term counted, in the
    predicate's order; roles: ``grant``, ``allocation``, ``resize``, ``request``, ``allocated`` (max(allocated,
    actual)), ``bound`` (a bound pod's desired), ``promise`` (a held resize promise), ``nominated``,
    ``kept`` (the victim kept). ``must_fit``: the property needs ``total <= allocatable`` (False:
    it needs the sum to exceed allocatable in some resource)."""

    claim: str
    claimant: int  # NO_POD for a node's kubelet total
    node: int
    terms: tuple
    total: tuple
    allocatable: tuple
    must_fit: bool = True

    @property
    def fits(self) -> bool:
        return all(t <= a for t, a in zip(self.total, self.allocatable))

    @property
    def breached(self) -> bool:
        return self.fits != self.must_fit


@dataclass(frozen=True)
class Fact:
    """A failed comparison without arithmetic. ``claim``: ``rejected`` (``pod`` is Failed),
    ``victim-priority`` (``pod`` evicted for ``others[0]`` of no higher priority), ``waiting-victims``
    (``pod``'s resize evicts ``more`` while ``others``, evicted for it earlier, still terminate),
    ``in-progress`` / ``pending`` / ``nominated`` (a condition of ``pod`` that is not truthful),
    ``already-fit`` (``pod`` fitted the scheduler's view without preemption), ``victim-not-needed``
    (with ``others[0]`` kept, ``pod`` fits the scheduler's view), ``kubelet-spares-victim`` (``pod``'s
    preemption evicted ``others[0]``, which the selection on the kubelet's allocations would not pick;
    it picks ``more``)."""

    claim: str
    pod: int
    others: tuple = ()
    more: tuple = ()


def _make(ctx: Context, claim: str, claimant: int, node: int, first: tuple, terms: list, must_fit: bool = True,
          state: State | None = None) -> Tally:
    """A Tally of ``first`` (pod, role, vector; or empty) plus ``terms``, summed as the predicate sums."""
    total = tally(ctx, terms)
    if first:
        total = tuple(a + b for a, b in zip(first[2], total))
    counted = tuple((i, _role(state, i, role, vector), tuple(vector)) for condition, i, role, vector in terms
                    if condition)
    return Tally(claim, claimant, node, (((first[0], first[1], tuple(first[2])),) if first else ()) + counted,
                 tuple(total), tuple(ctx.allocatable[node]), must_fit)


def _role(state: State | None, i: int, role: str, vector) -> str:
    """``holds`` told apart on the concrete pod: a bound pod's desired, or a resize promise."""
    if role != "holds" or state is None:
        return role
    pod = state.pods[i]
    if pod.phase == Phase.BOUND:
        return "bound"
    return "allocated" if tuple(vector) == tuple(kubelet_footprint(pod)) else "promise"


# --- one function per always-property ----------------------------------------------------------------

def kubelet_never_overcommits(ctx: Context, state: State) -> list:
    tallies = (_make(ctx, "kubelet-total", NO_POD, node, (), kubelet_node_terms(ctx, state, node))
               for node in ctx.node_range)
    return [t for t in tallies if t.breached]


def _grants(ctx: Context, after: State, grants: list, claim: str, role: str) -> list:
    result = []
    for condition, claimant, node, size in grants:
        if condition:
            t = _make(ctx, claim, claimant, node, (claimant, role, size), grant_terms(ctx, after, claimant, node),
                      state=after)
            if t.breached:
                result.append(t)
    return result


def no_double_reservation(ctx: Context, before: State, action: Action, after: State) -> list:
    return _grants(ctx, after, scheduler_grants(ctx, action, after), "scheduler-grant", "grant")


def kubelet_honors_reservation(ctx: Context, before: State, action: Action, after: State) -> list:
    return _grants(ctx, after, kubelet_grants(ctx, before, after), "kubelet-grant", "allocation")


def bound_pods_admitted(ctx: Context, state: State) -> list:
    """The rejected pods, each with the kubelet's count of its node as KubeletNeverOvercommits counts
    it (the admitted pods at max(allocated, actual)) plus the pod's request, when that exceeds."""
    result = []
    for i, pod in enumerate(state.pods):
        if pod.phase != Phase.REJECTED:
            continue
        result.append(Fact("rejected", i))
        if pod.node != NO_NODE:
            t = _make(ctx, "kubelet-admission", i, pod.node, (i, "request", pod.desired),
                      kubelet_node_terms(ctx, state, pod.node))
            if not t.fits:
                result.append(t)
    return result


def victims_strictly_lower_priority(ctx: Context, state: State) -> list:
    return [Fact("victim-priority", i, (pod.preempted_by,)) for i, pod in enumerate(state.pods)
            if not all(not_evicted_by_lower_or_equal(ctx, i, pod))]


def no_victim_without_need(ctx: Context, before: State, action: Action, after: State) -> list:
    if action.name not in ("PreemptForPod", "PreemptForResize"):
        return []
    claimant = ctx.pod_index(action.param("pod"))
    if action.name == "PreemptForResize":
        fits, node = fits_deferred_pod, before.pods[claimant].node
        fitted = fits(ctx, before, claimant)
    else:
        fits, node = fits_new_pod, ctx.node_index(action.param("node"))
        fitted = any(fits_new_pod(ctx, before, claimant, n) for n in ctx.node_range)
    result = [Fact("already-fit", claimant)] if fitted else []
    victims = [v for v, evicted in new_victims(ctx, before, after).items() if evicted]
    if victims and not still_claiming(ctx, before, action.name, claimant):
        result.insert(0, Fact("not-claiming", claimant))
    for victim in victims:
        if fits(ctx, before, claimant, node, {u: True for u in victims if u != victim}):
            result.append(Fact("victim-not-needed", claimant, (victim,)))
    return result


def no_excess_victims(ctx: Context, before: State, action: Action, after: State) -> list:
    if action.name != "PreemptForResize":
        return []
    claimant = ctx.pod_index(action.param("pod"))
    pod = after.pods[claimant]
    own = kubelet_resizing_pod_requests(pod.desired, pod.allocated, pod.actual, ctx.variant.kubelet_measure)
    result = []
    for victim, evicted in new_victims(ctx, before, after).items():
        if evicted:
            t = _make(ctx, "victim-kept", claimant, pod.node, (claimant, "resize", own),
                      victim_kept_terms(ctx, before, after, claimant, victim), must_fit=False)
            if t.breached:
                result.append(t)
    return result


def no_needless_victim_for_pending_pod(ctx: Context, before: State, action: Action, after: State) -> list:
    if action.name != "PreemptForPod":
        return []
    claimant, node = ctx.pod_index(action.param("pod")), ctx.node_index(action.param("node"))
    needed = kubelet_fit_victims(ctx, before, claimant, node)
    picked = tuple(v for v, condition in sorted(needed.items()) if condition)
    return [Fact("kubelet-spares-victim", claimant, (victim,), picked)
            for victim, evicted in new_victims(ctx, before, after).items() if evicted and not needed.get(victim, False)]


def no_double_preemption(ctx: Context, before: State, action: Action, after: State) -> list:
    if action.name != "PreemptForResize":
        return []
    claimant = ctx.pod_index(action.param("pod"))
    evicted = tuple(v for v, e in new_victims(ctx, before, after).items() if e)
    waiting = tuple(i for i, in_flight in enumerate(victims_in_flight(ctx, before, claimant)) if in_flight)
    return [Fact("waiting-victims", claimant, waiting, evicted)] if evicted and waiting else []


def conditions_truthful(ctx: Context, state: State) -> list:
    return [Fact(name, i) for i, pod in enumerate(state.pods) if pod.phase == Phase.RUNNING
            for name, holds in condition_checks(ctx, pod) if not holds]


EXPLAIN = {spec.name: globals()[snake_case(spec.name)] for spec in PROPERTIES if spec.kind == ALWAYS}
