"""The beta's AddOrActivate on same-node scale-ups, read two ways (``spec/kep/variants.py`` decision
``scale_up_events``): ``any-pod`` (the model's first reading: the Deferred pod's own larger request is
"an assigned pod scales up") and ``other-pods`` (the narrower reading: a Deferred pod that left the
queue after the no-op Bind comes back only on other pods' events). ``kepcheck diff beta-1.38
beta-1.38+scale_up_events=other-pods`` shows the verdicts that change."""

from __future__ import annotations

import pytest

from kepcheck.checks.engines.explicit import check_explicit
from kepcheck.model.actions.next import apply_action as step
from kepcheck.model.context import Context
from kepcheck.model.init import initial_state
from kepcheck.spec.kep.variants import derived_variant
from kepcheck.spec.kep.vocabulary import Queue
from kepcheck.spec.language.loader import default_scenarios

NARROW = "beta-1.38-narrow-requeue"  # = beta-1.38+scale_up_events=other-pods
STEPS = ("RequestResize(pod=web, requests=[cpu 2])", "BindDeferredPod(pod=web)", "RequestResize(pod=web, requests=[cpu 5])")


def _scenario(name):
    return next(s for s in default_scenarios() if s.name == name)


@pytest.mark.parametrize("variant, queue", [("beta-1.38", Queue.ACTIVE), (NARROW, Queue.NOT_QUEUED)])
def test_the_pods_own_larger_request_requeues_it_only_in_the_first_reading(variant, queue):
    """resize-superseded: A (2 cpu) fits, web binds and leaves the queue; B (5 cpu) stays Deferred
    with the same reason, so no handler sees web gain the condition: only its own growth can re-add it."""
    ctx = Context.build(_scenario("resize-superseded"), derived_variant(variant))
    state = initial_state(ctx)
    for label in STEPS:
        state = step(ctx, state, label)
    assert state.pods[ctx.names.index("web")].queue == queue


@pytest.mark.parametrize("scenario", ["resize-superseded", "resize-lowered-while-victims-terminate"])
def test_the_narrower_reading_leaves_a_superseding_resize_deferred_for_ever(scenario):
    results = {r.property: r for r in check_explicit(Context.build(_scenario(scenario), derived_variant(NARROW), ()))}
    for name in ("DeferredResizeResolved", "EveryDeferredResizeResolved"):
        assert results[name].verdict == "violated", name
        assert results[name].trace.labels[:3] == list(STEPS)
    broad = {r.property: r for r in check_explicit(Context.build(_scenario(scenario), derived_variant("beta-1.38"), ()))}
    assert broad["DeferredResizeResolved"].verdict == "holds"
