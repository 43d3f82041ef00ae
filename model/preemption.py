"""Victim selection (DefaultPreemption PostFilter), reference §3.3 and §7.4.

* Potential victims on a node: pods with priority strictly below the preemptor's (P-1). Pods
  already terminating are included, as in ``SelectVictimsOnNode``; "evicting" one again is a
  no-op (the Delete call is idempotent, KEP-5836 §Shifting Preemption Victims).
* Remove them all; if the preemptor still does not fit, the node is no candidate.
* Reprieve greedily, most important first (higher priority, then older start time): a victim is
  put back when the preemptor still fits with it, otherwise it stays a victim (P-2).
* Among candidate nodes (pending pods only) pick the one with the lowest highest-victim
  priority, then the smallest sum of victim priorities, then the fewest victims, then the first.

Left out: PodDisruptionBudgets (no PDBs in the scenarios, so the PDB-violation tie-breaks are
all equal), workload-aware preemption, extenders, the candidate sampling percentage (the model's
clusters are small enough that every node is a candidate). Start time is approximated by
declaration order in the scenario (earlier = older).
"""

from __future__ import annotations

from typing import Callable

from model.context import Context
from model.state import State
from model.views import pods_on_node

__all__ = ["potential_victims", "select_victims", "pick_node"]


def potential_victims(ctx: Context, state: State, claimant: int, node: int) -> list[int]:
    priority = ctx.priorities[claimant]
    lower = (lambda p: p <= priority) if ctx.has("equal-priority-victims") else (lambda p: p < priority)
    return [i for i in pods_on_node(ctx, state, node) if i != claimant and lower(ctx.priorities[i])]


def select_victims(ctx: Context, state: State, claimant: int, node: int,
                   fits: Callable[[frozenset], bool]) -> tuple[int, ...] | None:
    """The victims on ``node`` for ``claimant``, or None if the node is no candidate.

    ``fits(removed)`` is the claimant's fit check with the pods in ``removed`` taken off the node.
    """
    candidates = potential_victims(ctx, state, claimant, node)
    if not candidates:
        return None  # "No preemption victims found for incoming pod" (UnschedulableAndUnresolvable)
    removed = frozenset(candidates)
    if not fits(removed):
        return None
    if not ctx.has("no-reprieve"):
        for victim in sorted(candidates, key=lambda i: (-ctx.priorities[i], i)):
            if fits(removed - {victim}):
                removed = removed - {victim}
    return tuple(sorted(removed))


def pick_node(ctx: Context, options: dict[int, tuple[int, ...]]) -> int:
    """pickOneNodeForPreemption without PDBs and start times (reference §3.3 'Node choice')."""

    def key(node: int):
        victims = options[node]
        priorities = [ctx.priorities[v] for v in victims]
        return (max(priorities, default=-(2**31)), sum(priorities), len(victims), node)

    return min(options, key=key)
