"""Bounded model checking of the ``always`` properties with Z3 (the ``bmc`` engine).

One incremental solver: I(s_0), then for k = 0, 1, …: T(s_k-1, s_k) is added and the disjunction
of bad(k) over the properties not yet violated is checked under push/pop; a model violates one or
more of them (each reported, its trace decoded from that model, replayed and re-judged: see
``checks/symbolic/unrolling.py``), and the rest are checked again. A violation is reported at the first
(shortest) depth; no violation up to the depth is ``inconclusive`` (BMC never proves). The
strengthening invariants (``model/properties/strengthening/``) are proved first (``checks/symbolic/induction.py``) and
then assumed at every step: a proved invariant excludes only unreachable states, so it prunes the
search without changing a verdict.

Parametric mode (``parametric=(low, high)``, ``checks/symbolic/parametric.py``): node allocatable and every
non-zero size are Z3 integers in the range; a violation names the sizes Z3 chose.

Left out: ``sometimes`` and ``eventually`` properties (verdict ``not-checked``).
"""

from __future__ import annotations

import time
from functools import partial
from typing import Callable, Iterable
import z3

from kepcheck.spec.kep.properties import ALWAYS, PROPERTIES, PropertySpec

from kepcheck.checks.engine import Budget, DepthProgress, EngineOptions
from kepcheck.checks.result import INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult
from kepcheck.checks.symbolic.induction import proved_invariants
from kepcheck.checks.symbolic.unrolling import (
    bad_at, check, decode, init_at, interruptible, invariants_at, new_solver, record, setup, transition,
)
from kepcheck.model.context import Context
from kepcheck.model.expr.scalars import z3_or

__all__ = ["check_bmc", "ENGINE"]


class _Search:
    """One BMC run: the solver, the open properties and the results so far."""

    def __init__(self, ctx: Context, properties: list, timeout, parametric, strengthen: bool):
        self.ctx, self.started = ctx, time.perf_counter()
        self.deadline, self.timeout = (self.started + timeout if timeout else None), timeout
        self.unrolling, self.sizes = setup(ctx, parametric)
        self.invariants = []
        if strengthen and any(spec.kind == ALWAYS for spec in properties):
            self.invariants = proved_invariants(ctx, timeout, parametric)
        self.solver = new_solver()
        self.solver.add(init_at(self.unrolling))
        self.results: dict[str, CheckResult] = {}
        self.open = [spec for spec in properties if spec.kind == ALWAYS]
        for spec in properties:
            if spec.kind != ALWAYS:
                self.results[spec.name] = record(ctx, spec, "bmc", NOT_CHECKED,
                                                 reason="the symbolic engine checks only always properties")
        self.note = f"; {self.sizes.statement}" if self.sizes else ""
        self.stopped = None

    def out_of_time(self, k: int, slack: float = 0.0) -> bool:
        """Whether the time budget is spent before depth ``k`` is decided (then ``stopped`` says so)."""
        if self.deadline is None or time.perf_counter() < self.deadline - slack:
            return False
        self.stopped = f"time budget of {self.timeout:g} s reached at depth {k}" + (
            f"; no violation up to depth {k - 1}" if k else "")
        return True

    def step_to(self, k: int) -> None:
        """Add T(s_k-1, s_k) ∧ Inv(s_k), simplified once before it is asserted."""
        if k > 0:
            step = z3.And(transition(self.unrolling, k - 1), invariants_at(self.unrolling, self.invariants, k))
            self.solver.add(interruptible(step.ctx, partial(z3.simplify, som=False), step))

    def violations_at(self, k: int) -> None:
        """Report every open property violated at depth ``k``: one check for all of them; the model of a
        satisfiable check says which it violates (each reported with that model), the others are
        checked again together."""
        bads = {spec.name: bad_at(self.unrolling, spec, k) for spec in self.open}
        while self.open:
            self.solver.push()
            self.solver.add(z3_or([bads[spec.name] for spec in self.open]))
            verdict, why = check(self.solver, self.deadline)
            model = self.solver.model() if verdict == z3.sat else None
            self.solver.pop()
            if verdict == z3.unknown and not self.out_of_time(k, slack=0.05):
                self.stopped = f"solver returned unknown at depth {k}: {why}"
            if model is None:
                return
            for spec in [spec for spec in self.open if z3.is_true(model.eval(bads[spec.name], model_completion=True))]:
                _, trace, chosen = decode(self.unrolling, model, spec, k, self.sizes, self.ctx)
                reason = ("sizes chosen: " + ", ".join(f"{n}={v}" for n, v in chosen.items()) + self.note
                          if self.sizes is not None else "")
                self.results[spec.name] = record(self.ctx, spec, "bmc", VIOLATED, depth=k, trace=trace, reason=reason,
                                                 seconds=time.perf_counter() - self.started)
                self.open.remove(spec)

    def close(self, depth: int, k: int) -> None:
        for spec in self.open:
            reason = self.stopped or f"no violation up to depth {depth} (BMC does not prove)"
            self.results[spec.name] = record(self.ctx, spec, "bmc", INCONCLUSIVE, depth=depth if not self.stopped else k,
                                             reason=reason + self.note, seconds=time.perf_counter() - self.started)


def check_bmc(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, depth: int = 10, *,
              timeout: float | None = None, parametric=None, per_depth: list | None = None,
              strengthen: bool = True, progress: Callable | None = None) -> list[CheckResult]:
    """Bounded model checking of every ``always`` property to ``depth`` actions. ``timeout`` (seconds)
    bounds the whole run. ``parametric=(low, high)`` leaves the sizes symbolic. ``per_depth``, when
    given, receives ``(k, seconds)`` for every depth completed. ``strengthen``: the strengthening
    invariants are proved first and then assumed at every step, Inv(s_0) ∧ … ∧ Inv(s_k). ``progress``,
    when given, is called with a ``DepthProgress`` before the strengthening proofs and every depth."""
    properties = list(properties)
    if progress is not None:
        progress(DepthProgress("bmc", 0, depth, "proving the strengthening invariants"))
    search = _Search(ctx, properties, timeout, parametric, strengthen)
    k = 0
    for k in range(depth + 1):
        if search.out_of_time(k):
            break
        if progress is not None:
            progress(DepthProgress("bmc", k, depth, f"{len(search.open)} always-properties open"))
        step_started = time.perf_counter()
        search.step_to(k)
        search.violations_at(k)
        if per_depth is not None:
            per_depth.append((k, time.perf_counter() - step_started))
        if search.stopped or not search.open:
            break
    search.close(depth, k)
    return [search.results[spec.name] for spec in properties]


class BmcEngine:
    """The bmc engine (``Engine`` protocol)."""

    name = "bmc"

    def check(self, ctx: Context, properties, *, budget: Budget, options: EngineOptions) -> list[CheckResult]:
        return check_bmc(ctx, properties, options.depth, timeout=budget.timeout, parametric=options.parametric,
                         progress=None if options.progress is None else partial(options.progress, ctx))


ENGINE = BmcEngine()
