"""Victim selection (DefaultPreemption PostFilter), docs/reference.md §3.3 and §7.4.

* Potential victims on a node: pods with priority strictly below the preemptor's (P-1). Pods
  already terminating are included, as in ``SelectVictimsOnNode``; "evicting" one again is a
  no-op (the Delete call is idempotent, KEP-5836 §Shifting Preemption Victims).
* Remove them all; if the preemptor still does not fit, the node is no candidate.
* Reprieve greedily, most important first (higher priority, then older start time): a victim is
  put back when the preemptor still fits with it, otherwise it stays a victim (P-2). With
  PodDisruptionBudgets the potential victims are first split (``filterPodsWithPDBViolation``, in that
  order: each selected victim uses one of its budgets' ``disruptionsAllowed``; a victim that takes one
  below 0 violates it) and the violating ones are reprieved first, then the others (P-2).
* Among candidate nodes (pending pods only) ``pickOneNodeForPreemption`` applies its default score
  functions in order, each keeping only the nodes that tie for the best score (kubernetes/kubernetes
  ``pkg/scheduler/framework/preemption/preemption.go`` at ``00e6d95193934fed1b980e82fb6ec563e9dd1693``,
  ``pickOneNodeForPreemption``; expectations in ``TestSelectBestCandidate``,
  ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption_test.go`` at
  ``5def93b10a782c40035e7cf3bf5156616b1ce62e``):
  1. fewest PDB violations (``minNumPDBViolatingScoreFunc``; only with budgets, else all tie at 0);
  2. lowest highest-victim priority (``minHighestPriorityScoreFunc``; "node with min highest
     priority pod is picked");
  3. smallest sum of *adjusted* priorities, each victim's priority + MaxInt32 + 1
     (``minSumPrioritiesScoreFunc``): every term is >= 0, so a node with fewer victims usually wins
     before a lower plain sum ("sum of adjusted priorities is considered": node2, where a plain sum
     would pick node1; "when highest priorities are the same, minimum sum of priorities is picked");
  4. fewest victims (``minNumPodsScoreFunc``; "when highest priority and sum are the same, minimum
     number of pods is picked");
  5. latest start time of the highest-priority victims: the node whose *earliest* highest-priority
     victim started last (``latestStartTimeScoreFunc`` with ``GetEarliestPodStartTime``,
     ``pkg/scheduler/util/utils.go``; "same priority, same number of victims, different start time
     for each node's pod"). The model has no clock: a pod's start time is its declaration order in
     the scenario (earlier declared = started earlier), the same stand-in the reprieve uses; a pod
     bound during a run keeps its declared place, where upstream it would be the newest;
  6. the first remaining node. Upstream that is the first in a Go map's iteration order ("sort of
     randomly"). In the model two nodes never tie on rule 5 (distinct pods have distinct declaration
     places), so a tie upstream leaves to the map order ("a pod that fits on both nodes": node1 or
     node2) goes to the node whose victim was declared last; the node index stays as a last key.

Written with ``model/expr/scalars.py`` helpers: the victim set is a map from pod index to a condition
(a bool, or a Z3 term when the state is symbolic), built by the same greedy fold either way.

Left out: what ``spec/language/disruption_budgets.py`` leaves out of budgets, workload-aware preemption, extenders, the candidate sampling percentage (the model's
clusters are small enough that every node is a candidate), custom ``OrderedScoreFuncs``. Start time
is approximated by declaration order in the scenario (earlier = older).
"""

from __future__ import annotations

from typing import Callable

from kepcheck.spec.kep.vocabulary import Phase

from kepcheck.model.accounting.views import on_node
from kepcheck.model.context import Context, overridable
from kepcheck.model.expr.scalars import and_, is_false, ite, max2, not_, or_
from kepcheck.model.expr.vectors import lex_less
from kepcheck.model.memo import node_local
from kepcheck.model.state import State

__all__ = ["potential_victims", "select_victims", "reprieve", "greedy_reprieve", "victim_key", "chosen_node", "ADJUSTMENT", "disruptions_allowed",
           "budget_violating", "budget_violations"]

LOWEST = -(2**31)


@overridable
def potential_victims(ctx: Context, state: State, claimant: int, node) -> dict:
    """Pod index -> condition that the pod is on ``node`` with a strictly lower priority (P-1)."""
    priority = ctx.priorities[claimant]
    result = {}
    for i, pod in enumerate(state.pods):
        if i == claimant or ctx.priorities[i] >= priority:
            continue
        present = on_node(pod, node)
        if not is_false(present):
            result[i] = present
    return result


@node_local(lambda state, claimant, node, fits: (node, state.pods[claimant]))
def select_victims(ctx: Context, state: State, claimant: int, node, fits: Callable):
    """(candidate, victims): whether ``node`` is a candidate for ``claimant``, and for each pod
    index the condition that it is a victim. ``fits(ctx, state, claimant, node, removed)`` is the
    claimant's fit check (``fits_new_pod`` or ``fits_deferred_pod``) with the pods of ``removed``
    (index -> condition) taken off the node; it reads only the claimant and the pods on or
    nominated to ``node``, so the choice is memoised on those. The result must not be modified."""
    potential = potential_victims(ctx, state, claimant, node)
    if not potential:
        return False, {}  # "No preemption victims found for incoming pod" (UnschedulableAndUnresolvable)
    removed = dict(potential)
    feasible = and_(or_(*potential.values()), fits(ctx, state, claimant, node, removed))
    if is_false(feasible):
        return False, {}
    return feasible, reprieve(ctx, state, claimant, node, fits, removed)


@overridable
def reprieve(ctx: Context, state: State, claimant: int, node, fits: Callable, removed: dict) -> dict:
    """The greedy reprieve (P-2): most important first (higher priority, then older: declaration
    order), a victim is put back when the claimant still fits with it. Returns the victim map."""
    order = sorted(removed, key=lambda i: (-ctx.priorities[i], i))
    removed = dict(removed)
    if not ctx.budgets:
        return greedy_reprieve(ctx, state, claimant, node, fits, removed, order)
    violating = budget_violating(ctx, state, removed, order)
    for group in (True, False):  # the PDB-violating victims first, then the others (P-2)
        for victim in order:
            member = violating[victim] if group else not_(violating[victim])
            if is_false(removed[victim]) or is_false(member):
                continue
            trial = dict(removed)
            trial[victim] = False
            removed[victim] = and_(removed[victim], or_(not_(member), not_(fits(ctx, state, claimant, node, trial))))
    return removed


def greedy_reprieve(ctx: Context, state: State, claimant: int, node, fits: Callable, removed: dict,
                    order: list) -> dict:
    """Walking ``order``, each victim is put back when the claimant still fits with it (one group of
    P-2's reprieve). Returns the victim map."""
    removed = dict(removed)
    for victim in order:
        if is_false(removed[victim]):
            continue
        trial = dict(removed)
        trial[victim] = False
        removed[victim] = and_(removed[victim], not_(fits(ctx, state, claimant, node, trial)))
    return removed


def disruptions_allowed(ctx: Context, state: State, budget: int):
    """``status.disruptionsAllowed`` of a budget as the disruption controller computes it: its
    healthy pods (Ready and not being deleted: running) minus ``minAvailable``, at least 0."""
    members, minimum = ctx.budgets[budget]
    healthy = 0
    for i in members:
        healthy = healthy + ite(state.pods[i].phase == Phase.RUNNING, 1, 0)
    return max2(healthy - minimum, 0)


def budget_violating(ctx: Context, state: State, potential: dict, order: list) -> dict:
    """``filterPodsWithPDBViolation``: walking the potential victims in ``order``, each present one
    uses one disruption of every budget that selects it, and violates if that takes one below 0.
    Pod index -> condition."""
    allowed = [disruptions_allowed(ctx, state, b) for b in range(len(ctx.budgets))]
    violating = {}
    for i in order:
        present, hit = potential[i], False
        for b, (members, _) in enumerate(ctx.budgets):
            if i in members and not is_false(present):
                allowed[b] = allowed[b] - ite(present, 1, 0)
                hit = or_(hit, allowed[b] < 0)
        violating[i] = and_(present, hit)
    return violating


def budget_violations(ctx: Context, state: State, claimant: int, node, victims: dict):
    """``numPDBViolations`` of a candidate: how many of its victims violate a budget (an int or a term)."""
    if not ctx.budgets:
        return 0
    potential = potential_victims(ctx, state, claimant, node)
    violating = budget_violating(ctx, state, potential, sorted(potential, key=lambda i: (-ctx.priorities[i], i)))
    return sum((ite(and_(violating[i], victims.get(i, False)), 1, 0) for i in violating), 0)


ADJUSTMENT = 2**31  # MaxInt32 + 1, added to every victim's priority in the sum (rule 3)


def victim_key(ctx: Context, victims: dict) -> tuple:
    """Rules 2..5 of ``pickOneNodeForPreemption`` as one tuple, smaller is preferred: (highest victim
    priority, sum of adjusted victim priorities, number of victims, the number of pods minus the start
    (declaration index) of the earliest highest-priority victim: a later start is preferred)."""
    highest, total, count = LOWEST, 0, 0
    present = [(i, condition) for i, condition in sorted(victims.items()) if not is_false(condition)]
    for i, condition in present:
        priority = ctx.priorities[i]
        highest = ite(condition, max2(highest, priority), highest)
        total = total + ite(condition, priority + ADJUSTMENT, 0)
        count = count + ite(condition, 1, 0)
    earliest = len(ctx.priorities)
    for i, condition in reversed(present):  # the smallest index among the highest-priority victims
        earliest = ite(and_(condition, highest == ctx.priorities[i]), i, earliest)
    return highest, total, count, len(ctx.priorities) - earliest


def _node_key(ctx: Context, option: tuple, node: int) -> tuple:
    _, victims, violations = option
    return ((violations,) if ctx.budgets else ()) + victim_key(ctx, victims) + (node,)


def chosen_node(ctx: Context, options: dict, node: int):
    """Condition that pickOneNodeForPreemption picks ``node`` among ``options`` (node -> (candidate,
    victims, PDB violations)): its key (rules 1..6 of the module docstring) is the least."""
    candidate = options[node][0]
    key = _node_key(ctx, options[node], node)
    conditions = [candidate]
    for other, option in options.items():
        if other == node or is_false(option[0]):
            continue
        conditions.append(or_(not_(option[0]), lex_less(key, _node_key(ctx, option, other))))
    return and_(*conditions)
