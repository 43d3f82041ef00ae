"""Every liveness counterexample the default matrix prints is a fair run as printed (issue 14):
replayed through the model's own ``next_steps``, no action instance of an assumed-fair group is
enabled in every state of the printed loop without being taken in it. (A fair component is not
enough: the loop shown must itself be fair, or the trace contradicts "while taking every action
that fairness requires".)"""

from __future__ import annotations

import pytest

from kepcheck.spec.kep.fairness import fair_action_names
from kepcheck.spec.kep.properties import EVENTUALLY, PROPERTIES

from kepcheck.checks.result import VIOLATED
from kepcheck.model.actions.next import next_steps

from conftest import default_matrix

# every lasso of the whole default matrix: the quick tier leaves this module out (make test-quick)
pytestmark = pytest.mark.slow

EVENTUALLY_PROPERTIES = [p for p in PROPERTIES if p.kind == EVENTUALLY]


def unfair_in_loop(ctx, trace, groups) -> set[str]:
    """Labels of the fair action instances enabled in every state of the loop and never taken in it."""
    fair = fair_action_names(groups)
    loop_states = [state for _, state in trace.steps[trace.loop:]]
    taken = {action for action, _ in trace.steps[trace.loop + 1:]}
    enabled = [{action for action, _ in next_steps(ctx, state) if action.name in fair} for state in loop_states]
    return {action.label() for action in set.intersection(*enabled) - taken}


@pytest.fixture(scope="module")
def lassos():
    found = []
    for run in default_matrix():
        for result in run.results:
            if result.kind == "eventually" and result.verdict == VIOLATED and result.trace is not None:
                found.append((run.ctx, result))
    return found


def test_the_matrix_has_lassos_with_loops(lassos):
    assert len(lassos) >= 40
    assert sum(1 for _, r in lassos if len(r.trace) > r.trace.loop) >= 20  # loops that take steps


def test_every_printed_loop_is_fair(lassos):
    unfair = {f"{r.scenario} {r.variant} {r.property}": sorted(unfair_in_loop(ctx, r.trace, r.fairness))
              for ctx, r in lassos}
    assert {name: labels for name, labels in unfair.items() if labels} == {}


def test_every_loop_returns_to_its_first_state(lassos):
    for _, result in lassos:
        assert result.trace.steps[-1][1] == result.trace.steps[result.trace.loop][1]
