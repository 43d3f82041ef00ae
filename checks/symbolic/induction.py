"""k-induction proofs of the ``always`` properties with Z3 (the ``induction`` engine), and the proofs
of the auxiliary invariants they rest on.

``check_induction`` interleaves the base case (BMC from the initial state to depth k-1) and the
induction step (k-induction with a simple-path constraint), k = 1 … max_k, per property, using the
formula pieces of ``checks/symbolic/unrolling.py``. The strengthening invariants (``model/properties/strengthening/``)
are proved first (their conjunction) and then assumed on every state of the induction path; a
second tier, the preemption lemmas, is proved together with the catalog state properties it rests
on, after the state properties and before the step properties, and then assumed. A proved
invariant holds in every reachable state, so assuming it excludes only unreachable states.
Verdicts: ``proved`` (the k used in ``depth`` and ``reason``), ``violated`` (the base case found a
counterexample, replayed), ``inconclusive`` (not k-inductive up to ``max_k``, solver unknown or
time budget).
"""

from __future__ import annotations

import time
from functools import partial
from typing import Callable, Iterable
import z3

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, PropertySpec

from kepcheck.checks.engine import Budget, DepthProgress, EngineOptions
from kepcheck.checks.result import INCONCLUSIVE, NOT_CHECKED, PROVED, VIOLATED, CheckResult
from kepcheck.checks.symbolic.states import Unrolling
from kepcheck.checks.symbolic.unrolling import (
    Conjunction, bad_at, check, decode, init_at, k_induction, named, new_solver, record, setup, transition,
)
from kepcheck.model.context import Context
from kepcheck.model.properties.catalog import PREDICATES
from kepcheck.model.properties.strengthening import LEMMA_BASIS, PREEMPTION_LEMMAS, STRENGTHENING, strengthening_applies

__all__ = ["check_induction", "prove_strengthening", "prove_lemmas", "proved_invariants", "ENGINE"]


def proved_invariants(ctx: Context, timeout, parametric) -> list:
    """The strengthening invariants, once their conjunction is proved (k <= 2) for this context;
    none otherwise (what BMC assumes at every step)."""
    proved, _, _ = prove_strengthening(ctx, 2, timeout=timeout, parametric=parametric)
    return [named(f, name) for name, f in STRENGTHENING.items()] if proved else []


def _induction_step(unrolling: Unrolling, spec: PropertySpec, k: int, invariants, deadline) -> tuple:
    solver = new_solver()
    solver.add(k_induction(unrolling, spec, k, invariants))
    return check(solver, deadline)


def prove_strengthening(ctx: Context, max_k: int = 3, *, timeout: float | None = None, parametric=None,
                        names: Iterable[str] | None = None) -> tuple[bool, int, str]:
    """Prove the strengthening invariants of ``model/properties/strengthening/`` (their conjunction) by BMC to
    depth k-1 and k-induction. Returns (proved, k, reason)."""
    if not strengthening_applies(ctx):
        return False, 0, f"no strengthening invariants are stated for {ctx.variant.name} (stale view or asynchronous preemption)"
    chosen = [STRENGTHENING[n] for n in (names or STRENGTHENING)]
    return _prove_conjunction(ctx, "Strengthening", "the strengthening invariants", chosen, max_k, [], timeout,
                              parametric)


def _prove_conjunction(ctx: Context, name: str, meaning: str, predicates: list, max_k: int, invariants: list,
                       timeout, parametric) -> tuple[bool, int, str]:
    """Prove the conjunction of state predicates ``(ctx, state)``. Returns (proved, k, reason)."""
    conjunction = Conjunction(name, ALWAYS, meaning, "model/properties/strengthening/", parts=tuple(predicates))
    result = _prove(ctx, conjunction, max_k, list(invariants), timeout, parametric)
    return result.verdict == PROVED, result.depth, result.reason


def _lemma_predicates() -> list:
    """(name, predicate) of the preemption lemmas and of the catalog state properties they rest on."""
    return list(PREEMPTION_LEMMAS.items()) + [(name, PREDICATES[name]) for name in LEMMA_BASIS]


def prove_lemmas(ctx: Context, max_k: int = 3, *, invariants: list | None = None,
                 timeout: float | None = None) -> tuple[bool, int, str]:
    """Prove the preemption lemmas of ``model/properties/strengthening/`` together with the catalog state
    properties they rest on (``LEMMA_BASIS``): their conjunction by BMC to depth k-1 and k-induction,
    assuming ``invariants`` (the strengthening invariants, proved first when None). Returns (proved,
    k, reason)."""
    if invariants is None:
        proved, _, why = prove_strengthening(ctx, max_k, timeout=timeout)
        if not proved:
            return False, 0, f"strengthening invariants not proved: {why}"
        invariants = [named(f, name) for name, f in STRENGTHENING.items()]
    return _prove_conjunction(ctx, "PreemptionLemmas", "the preemption lemmas and their basis",
                              [f for _, f in _lemma_predicates()], max_k, invariants, timeout, None)


def _prove(ctx: Context, spec: PropertySpec, max_k: int, invariants: list, timeout, parametric,
           progress: Callable | None = None) -> CheckResult:
    """Interleave the base case (BMC from the initial state) and the induction step, k = 1 … max_k
    (``progress(k)``, when given, before each k)."""
    started = time.perf_counter()
    deadline = started + timeout if timeout else None
    unrolling, model_sizes = setup(ctx, parametric)
    note = f"; {model_sizes.statement}" if model_sizes else ""
    base = new_solver()
    base.add(init_at(unrolling))
    step_unrolling = Unrolling(unrolling.ctx, unrolling.init, unrolling.assumptions)
    reason = ""
    for k in range(1, max_k + 1):
        if progress is not None:
            progress(k)
        # base case: no violation at depth k-1 from the initial state
        if k > 1:
            base.add(transition(unrolling, k - 2))
        base.push()
        base.add(bad_at(unrolling, spec, k - 1))
        verdict, why = check(base, deadline)
        if verdict == z3.sat:
            _, trace, chosen = decode(unrolling, base.model(), spec, k - 1, model_sizes, ctx)
            base.pop()
            extra = ("sizes chosen: " + ", ".join(f"{n}={v}" for n, v in chosen.items())) if chosen else ""
            return record(ctx, spec, "induction", VIOLATED, depth=k - 1, trace=trace, reason=extra + note,
                           seconds=time.perf_counter() - started)
        base.pop()
        if verdict == z3.unknown:
            return record(ctx, spec, "induction", INCONCLUSIVE, depth=k - 1, reason=f"base case unknown: {why}" + note,
                           seconds=time.perf_counter() - started)
        verdict, why = _induction_step(step_unrolling, spec, k, invariants, deadline)
        if verdict == z3.unsat:
            names = ", ".join(getattr(f, "__name__", str(f)) for f in invariants) or "none"
            return record(ctx, spec, "induction", PROVED, depth=k,
                           reason=f"proved by {k}-induction with simple-path constraint; strengthening: {names}" + note,
                           seconds=time.perf_counter() - started)
        if verdict == z3.unknown:
            return record(ctx, spec, "induction", INCONCLUSIVE, depth=k, reason=f"induction step unknown at k={k}: {why}" + note,
                           seconds=time.perf_counter() - started)
        reason = f"not {k}-inductive (a counterexample to induction exists at k={k})"
    return record(ctx, spec, "induction", INCONCLUSIVE, depth=max_k, reason=reason + note,
                   seconds=time.perf_counter() - started)


def check_induction(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, max_k: int = 3, *,
                    timeout: float | None = None, parametric=None, strengthen: bool = True,
                    progress: Callable | None = None, until: float | None = None) -> list[CheckResult]:
    """k-induction (k = 1 … ``max_k``, simple-path constraint) of every ``always`` property.

    The strengthening invariants of ``model/properties/strengthening/`` are first proved themselves (their
    conjunction by k-induction); once proved they are assumed in every state of the induction path
    of each property. State properties come first, and each one proved is assumed from then on.
    Before the first step property the preemption lemmas are proved with the state properties they
    rest on (``prove_lemmas``; not in parametric mode, where they do not hold for every size) and,
    once proved, assumed too. Verdicts: ``proved`` (k in ``depth`` and ``reason``), ``violated`` (the
    base case found a counterexample, replayed), ``inconclusive`` (not k-inductive up to ``max_k``,
    solver unknown or time budget). ``timeout`` is per property (and for the lemmas); ``until`` (a
    ``time.perf_counter()`` value) bounds the whole call: each proof gets at most the time left of
    it, and a property it leaves no time for is inconclusive. ``progress``, when given, is called
    with a ``DepthProgress`` before the strengthening proofs and every k tried.
    """
    properties = list(properties)
    per_property = timeout
    invariants: list = []
    strengthening_note = ""
    if strengthen and progress is not None:
        progress(DepthProgress("induction", 1, max_k, "proving the strengthening invariants"))
    if strengthen:
        proved, k, why = prove_strengthening(ctx, max_k, timeout=_within(per_property, until), parametric=parametric)
        if proved:
            invariants = [named(f, name) for name, f in STRENGTHENING.items()]
        else:
            strengthening_note = f" (strengthening invariants not proved: {why})"
    results = {}
    # state properties first: each one proved is a reachable-state invariant, assumed from then on
    ordered = sorted(properties, key=lambda spec: spec.scope != "state")
    lemmas_pending = bool(invariants) and parametric is None
    for spec in ordered:
        if spec.kind != ALWAYS:
            results[spec.name] = record(ctx, spec, "induction", NOT_CHECKED,
                                         reason="the symbolic engine checks only always properties")
            continue
        if spec.scope != "state" and lemmas_pending:
            lemmas_pending = False
            proved, _, why = prove_lemmas(ctx, max_k, invariants=invariants, timeout=_within(per_property, until))
            if proved:
                known = {f.__name__ for f in invariants}
                invariants = invariants + [named(f, name) for name, f in _lemma_predicates() if name not in known]
            else:
                strengthening_note += f" (preemption lemmas not proved: {why})"
        if until is not None and time.perf_counter() >= until:
            results[spec.name] = record(ctx, spec, "induction", INCONCLUSIVE, reason="time budget exhausted")
            continue
        told = None if progress is None else partial(_told, progress, max_k, f"{spec.name} ({len(results) + 1} of "
                                                                              f"{len(properties)})")
        result = _prove(ctx, spec, max_k, invariants, _within(per_property, until), parametric, told)
        result.reason += strengthening_note
        results[spec.name] = result
        if result.verdict == PROVED and spec.scope == "state":
            invariants.append(named(PREDICATES[spec.name], spec.name))
    return [results[spec.name] for spec in properties]


def _within(timeout: float | None, until: float | None) -> float | None:
    """``timeout`` cut to the time left before ``until`` (at least a millisecond)."""
    if until is None:
        return timeout
    left = max(0.001, until - time.perf_counter())
    return left if timeout is None else min(timeout, left)


def _told(progress: Callable, max_k: int, subject: str, k: int) -> None:
    progress(DepthProgress("induction", k, max_k, subject))


class InductionEngine:
    """The induction engine (``Engine`` protocol)."""

    name = "induction"

    def check(self, ctx: Context, properties, *, budget: Budget, options: EngineOptions) -> list[CheckResult]:
        until = None if budget.timeout is None else time.perf_counter() + budget.timeout  # the whole context
        return check_induction(ctx, properties, options.max_k, timeout=budget.timeout, parametric=options.parametric,
                               until=until,
                               progress=None if options.progress is None else partial(options.progress, ctx))


ENGINE = InductionEngine()
