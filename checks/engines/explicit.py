"""The explicit-state engine: one breadth-first search per context, every property judged on it.

``always`` and ``sometimes`` properties are judged during the search (``checks/search/breadth_first.py``);
``eventually`` properties by the liveness checker on the graph of the same search
(``checks/engines/liveness.py``): one search per context. A budget hit makes every verdict that is not
already decided ``inconclusive`` (never ``holds``). Symmetry reduction (``model/symmetry.py``) is
used unless an eventually-property is judged (its premises and goals name pods individually).
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Iterable

from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, PROPERTIES, PropertySpec

from kepcheck.checks.engine import Budget, EngineOptions
from kepcheck.checks.engines.liveness import check_liveness
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, NOT_CHECKED, VIOLATED, CheckResult, EngineError
from kepcheck.checks.search.breadth_first import Exploration
from kepcheck.checks.search.hybrid import HAND_OVER_AT, explore_kep
from kepcheck.model.context import Context
from kepcheck.model.memo import caching
from kepcheck.model.symmetry import make_representative

__all__ = ["check_explicit", "judge", "ENGINE"]


def judge(ctx: Context, exploration: Exploration, spec: PropertySpec) -> CheckResult:
    """The verdict of an always- or sometimes-property from an exploration."""
    record = CheckResult(
        scenario=ctx.scenario.name, variant=ctx.variant.name, property=spec.name, kind=spec.kind,
        engine="explicit", verdict=NOT_CHECKED, states=exploration.states, transitions=exploration.transitions,
        depth=exploration.depth, seconds=exploration.seconds, ref=spec.ref, mutants=tuple(sorted(ctx.mutants)),
    )
    trace = exploration.found.get(spec.name)
    decided = VIOLATED if spec.kind == ALWAYS else HOLDS  # a trace decides: a violation, or a witness
    if trace is not None:
        record.verdict, record.trace = decided, trace
    elif not exploration.complete:
        record.verdict, record.reason = INCONCLUSIVE, exploration.budget
    elif spec.kind == ALWAYS:
        record.verdict = HOLDS
    else:
        record.verdict, record.reason = VIOLATED, "no reachable witness"
    return record


def check_explicit(ctx: Context, properties: Iterable[PropertySpec] = PROPERTIES, *, max_states: int | None = None,
                   timeout: float | None = None, symmetry: Callable | None = None, progress: Callable | None = None,
                   fairness=None, step_hook: Callable | None = None, core: str = "auto",
                   workers: int = 1) -> list[CheckResult]:
    """One ``CheckResult`` per property, from one exploration.

    ``eventually`` properties are judged by the liveness checker on the explored graph (kept as
    arrays by either core); when any is selected symmetry reduction is not applied (the premises
    and goals name pods individually). ``fairness`` overrides the fairness groups each property
    assumes. ``core``: ``interpreted`` (the search of ``checks/search/breadth_first.py``
    throughout), ``vector`` (the vector core from the initial state on) or ``auto`` (interpreted,
    handing over to the vector core past ``checks.search.hybrid.HAND_OVER_AT`` states); the cores
    give the same counts, verdicts and traces; ``workers``: the cores the vector core expands a
    layer on. A step hook keeps the search interpreted.
    """
    properties = list(properties)
    deadline = Budget(timeout=timeout).deadline()
    liveness = [p for p in properties if p.kind == EVENTUALLY]
    hand_over = None if core == "interpreted" or step_hook is not None else 0 if core == "vector" else HAND_OVER_AT
    with caching(ctx):  # one set of caches for the search and the liveness judgement on its graph
        exploration = explore_kep(ctx, properties, max_states=max_states, timeout=timeout, progress=progress,
                                  symmetry=None if liveness else symmetry, hand_over_at=hand_over, workers=workers,
                                  keep_graph=bool(liveness), step_hook=step_hook)
        judged = {r.property: r for r in check_liveness(ctx, exploration, liveness, fairness=fairness,
                                                       deadline=deadline)} if liveness else {}
    return [judged[spec.name] if spec.name in judged else judge(ctx, exploration, spec) for spec in properties]


class ExplicitEngine:
    """The explicit engine (``Engine`` protocol): one breadth-first search per context."""

    name = "explicit"

    def check(self, ctx: Context, properties, *, budget: Budget, options: EngineOptions) -> list[CheckResult]:
        """With symmetry on, a violation whose path of representatives no concrete run follows (the
        reduced search breaks the age tie between interchangeable pods by canonical order,
        ``model/symmetry.py``) is searched again without the reduction, so verdicts and traces are
        always those of the model itself."""
        progress = None if options.progress is None else partial(options.progress, ctx)
        properties = list(properties)
        run = partial(check_explicit, ctx, properties, max_states=budget.max_states, timeout=budget.timeout,
                      progress=progress, fairness=options.fairness, step_hook=options.on_step, core=options.core,
                      workers=options.workers)
        symmetry = make_representative(ctx) if options.symmetry else None
        try:
            return run(symmetry=symmetry)
        except EngineError as error:
            if symmetry is None or not str(error).startswith("symmetry:"):
                raise
            return run(symmetry=None)


ENGINE = ExplicitEngine()
