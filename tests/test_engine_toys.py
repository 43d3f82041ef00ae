"""Engine smoke tests on toy models with known answers (docs/style.md R11, R12).

* TwoPhase commit with 3 resource managers (tlaplus/Examples ``TwoPhase.tla``, Stateright
  ``examples/2pc.rs``): exactly 288 distinct states, TCConsistent holds, both sometimes-properties
  are witnessed. A broken variant (TMCommit without "every RM prepared") must violate
  TCConsistent, with a counterexample as short as an independent level-by-level search finds.
* Die Hard (tlaplus/Examples ``DieHard.tla``): the shortest solution has 6 steps.
* Budgets: a search cut short is incomplete and never lets an ``always`` property "hold".
"""

from __future__ import annotations

import pytest

from kepcheck.checks.engines.explicit import check_explicit
from kepcheck.checks.search.breadth_first import explore
from kepcheck.checks.result import HOLDS, INCONCLUSIVE, VIOLATED
from kepcheck.model.context import Context
from kepcheck.spec.kep.properties import ALWAYS, EVENTUALLY, SOMETIMES
from kepcheck.spec.language.loader import default_scenarios
from kepcheck.spec.kep.variants import variant_by_name
from toy_two_phase_commit import (
    ABORTED, COMMITTED, Jugs, TMCommit, RMPrepare, TMRcvPrepared, die_hard_next, die_hard_system,
    tc_consistent, tp_init, tp_next, two_phase_system,
)


def shortest_depth(initial, successors, goal) -> int | None:
    """Plain level-by-level search, independent of ``checks.engines.explicit``: the number of steps to the
    nearest state satisfying ``goal``, or None if no reachable state does."""
    seen = set(initial)
    level = list(seen)
    depth = 0
    while level:
        if any(goal(state) for state in level):
            return depth
        following = []
        for state in level:
            for _, after in successors(state):
                if after not in seen:
                    seen.add(after)
                    following.append(after)
        level = following
        depth += 1
    return None


def reachable_count(initial, successors) -> int:
    seen = set(initial)
    stack = list(seen)
    while stack:
        for _, after in successors(stack.pop()):
            if after not in seen:
                seen.add(after)
                stack.append(after)
    return len(seen)


def assert_replays(trace, successors) -> None:
    """Every step of the trace is a transition of the model with that action."""
    for (_, before), (taken, after) in zip(trace.steps, trace.steps[1:]):
        assert (taken.label(), after) in {(action.label(), state) for action, state in successors(before)}, taken


# --- TwoPhase ------------------------------------------------------------------------------------------

def test_two_phase_state_values_have_value_equality():
    assert tp_init() == tp_init() and hash(tp_init()) == hash(tp_init())
    assert TMRcvPrepared(0) != RMPrepare(0)  # same parameter, different action
    assert RMPrepare(1).name == "RMPrepare" and RMPrepare(1).label() == "RMPrepare(rm=1)"
    assert TMCommit().label() == "TMCommit"
    with pytest.raises(AttributeError):
        tp_init().tm_state = "done"  # frozen


def test_two_phase_has_exactly_288_states():
    result = explore(two_phase_system(rm_count=3))
    assert result.complete
    assert result.states == 288  # TLC and Stateright
    assert reachable_count([tp_init(3)], tp_next) == 288  # and an independent search agrees


def test_two_phase_commit_is_consistent_and_both_outcomes_are_reachable():
    result = explore(two_phase_system(rm_count=3))
    assert "TCConsistent" not in result.found
    commit = result.found["SomeRMCommits"]
    abort = result.found["SomeRMAborts"]
    assert COMMITTED in commit.steps[-1][1].rm_state
    assert ABORTED in abort.steps[-1][1].rm_state
    # Breadth first: witnesses are shortest ones (3 x (prepare, receive), commit, deliver = 8; abort = 1).
    assert len(commit) == shortest_depth([tp_init()], tp_next, lambda s: COMMITTED in s.rm_state) == 8
    assert len(abort) == shortest_depth([tp_init()], tp_next, lambda s: ABORTED in s.rm_state) == 1
    assert_replays(commit, tp_next)
    assert_replays(abort, tp_next)


def test_two_phase_every_action_kind_fires():
    result = explore(two_phase_system())
    assert set(result.action_counts) == {
        "TMRcvPrepared", "TMCommit", "TMAbort", "RMPrepare", "RMChooseToAbort", "RMRcvCommitMsg", "RMRcvAbortMsg",
    }


def test_broken_two_phase_violates_consistency_with_a_shortest_counterexample():
    broken = lambda state: tp_next(state, broken=True)
    result = explore(two_phase_system(broken=True))
    trace = result.found["TCConsistent"]
    final = trace.steps[-1][1]
    assert not tc_consistent(final)
    assert all(tc_consistent(state) for _, state in trace.steps[:-1])
    expected = shortest_depth([tp_init()], broken, lambda s: not tc_consistent(s))
    assert expected == 3  # commit, one RM aborts on its own, another receives "Commit"
    assert len(trace) == expected
    assert trace.steps[0] == (None, tp_init())
    assert_replays(trace, broken)
    assert "TMCommit" in trace.labels


# --- Die Hard --------------------------------------------------------------------------------------------

def test_die_hard_shortest_solution_has_six_steps():
    result = explore(die_hard_system())
    assert result.complete
    assert result.states == 16  # TLC's distinct-state count for DieHard.tla
    solved = result.found["Solved"]
    assert len(solved) == 6
    assert len(solved) == shortest_depth([Jugs(0, 0)], die_hard_next, lambda s: s.big == 4)
    assert solved.steps[-1][1].big == 4
    assert_replays(solved, die_hard_next)
    # The same search, read as "NotSolved must fail" (DieHard's invariant), gives the same length.
    assert len(result.found["NotSolved"]) == 6
    assert "TypeOK" not in result.found


# --- budgets --------------------------------------------------------------------------------------------

def test_state_budget_leaves_the_search_incomplete():
    result = explore(two_phase_system(), max_states=50)
    assert not result.complete
    assert "state budget of 50" in result.budget
    assert 50 <= result.states < 288


def test_time_budget_leaves_the_search_incomplete():
    result = explore(two_phase_system(), timeout=1e-9)
    assert not result.complete
    assert "time budget" in result.budget


def test_budget_hit_on_a_kep_scenario_is_never_a_pass():
    scenario = default_scenarios()[0]
    ctx = Context.build(scenario, variant_by_name("alpha-1.37"))
    full = {r.property: r for r in check_explicit(ctx)}
    assert full[next(iter(full))].states > 5, "the scenario must be larger than the budget"
    results = check_explicit(ctx, max_states=5)
    assert results
    for record in results:
        if record.kind == ALWAYS:
            assert record.verdict != HOLDS, record.property
            if record.trace is None:
                assert record.verdict == INCONCLUSIVE, record.property
                assert "state budget of 5" in record.reason
            else:
                assert record.verdict == VIOLATED
        elif record.kind == SOMETIMES:
            assert record.verdict in (HOLDS, INCONCLUSIVE), record.property
            assert (record.verdict == HOLDS) == (record.trace is not None)
        else:
            assert record.kind == EVENTUALLY and record.verdict == INCONCLUSIVE
    assert any(r.kind == ALWAYS and r.verdict == INCONCLUSIVE for r in results)
