"""The manifest run: every expected verdict of every default scenario x variant x property is
reproduced by the explicit engine. A failure prints the counterexample or witness trace."""

from __future__ import annotations

import pytest

from kepcheck.spec.kep.properties import PROPERTIES
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.checks.outputs.report import format_trace

from conftest import SCENARIOS, context, manifest, results

PAIRS = [(s, v.name) for s in SCENARIOS for v in VARIANTS]


@pytest.mark.parametrize("scenario,variant", PAIRS, ids=[f"{s}/{v}" for s, v in PAIRS])
def test_expected_verdicts(scenario, variant):
    found = results(scenario, variant)
    problems = []
    for spec in PROPERTIES:
        result = found[spec.name]
        expectation = manifest().expected(scenario, variant, spec.name)
        if result.verdict != expectation.verdict:
            text = f"{spec.name}: got {result.verdict}, manifest expects {expectation.verdict}"
            if expectation.reason:
                text += f" ({expectation.reason})"
            if result.trace is not None:
                text += "\n" + format_trace(context(scenario, variant), result.trace)
            problems.append(text)
    assert not problems, "\n\n".join(problems)


def test_every_manifest_exception_is_used_and_explained():
    exceptions = manifest().exceptions()
    assert exceptions, "the manifest lists no exception at all"
    for key, expectation in exceptions.items():
        assert expectation.reason and expectation.ref, key


def test_issue_headline_verdicts():
    """The verdicts the foundation issue names, read off the manifest run."""
    # NoDoubleReservation: violated under allocated-only with capacity freed for a resize taken by
    # another claimant; holds under alpha-1.37 on every default scenario.
    trace = results("deferred-upsize-one-victim", "allocated-only")["NoDoubleReservation"].trace
    assert trace.labels[-1].startswith("BindPod(pod=late")
    assert "PreemptForResize(pod=web)" in trace.labels
    assert all(results(s, "alpha-1.37")["NoDoubleReservation"].verdict == "holds" for s in SCENARIOS)
    # NoExcessVictims: violated under alpha on the KEP's example, holds there under kubelet-aligned.
    assert results("additional-preemption", "alpha-1.37")["NoExcessVictims"].verdict == "violated"
    assert results("additional-preemption", "kubelet-aligned")["NoExcessVictims"].verdict == "holds"
    # NoDoublePreemption: recorded for alpha and every double-preemption option.
    for variant in ("alpha-1.37", "dp-in-memory", "dp-nominated-node-name", "dp-node-name"):
        assert manifest().expected("resize-superseded", variant, "NoDoublePreemption") is not None
