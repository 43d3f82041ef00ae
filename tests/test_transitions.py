"""The transition table is checked as data, and every explored step is checked against it."""

import importlib
from collections import defaultdict

import pytest

from kepcheck.spec.language.loader import default_scenarios
from kepcheck.spec.kep.transitions import ACTIONS, REMOVAL_STATUSES, RESIZE_REQUEST_ACTION, SHARED_SOURCES, TRANSITIONS
from kepcheck.spec.kep.variants import VARIANTS
from kepcheck.spec.kep.vocabulary import LIFECYCLE_STATUSES
from kepcheck.checks.search.breadth_first import explore, kep_system
from kepcheck.model.actions.next import ACTION_NAMES, ACTOR_OF, NEXT
from kepcheck.model.context import Context
from kepcheck.model.lifecycle import lifecycle_status
from kepcheck.model.state import type_ok
from kepcheck.model.step import snake_case


def test_statuses_known():
    for row in TRANSITIONS:
        assert row.source in LIFECYCLE_STATUSES, row
        assert row.target in LIFECYCLE_STATUSES, row


def test_actions_exist_and_actors_match():
    for row in TRANSITIONS:
        assert row.action in ACTION_NAMES, row
        assert ACTOR_OF[row.action] == row.actor, row


def test_action_names_match_functions():
    """UpperCamel labels map one to one onto snake_case functions, in NEXT order."""
    def snake(name):
        return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")

    assert [snake(name) for name in ACTION_NAMES] == [f.__name__ for f in NEXT]


def test_next_is_the_spec_action_table():
    """NEXT is the spec's action list, in its order; each action is the function of its name defined
    in one of its actor's modules (the scheduler's: pending pods, Deferred resizes, late deliveries)."""
    modules = {"user": ("user",), "kubelet": ("kubelet",), "scheduler": ("scheduler", "resize_preemption", "asynchrony")}
    assert list(ACTION_NAMES) == [spec.name for spec in ACTIONS]
    for spec, function in zip(ACTIONS, NEXT):
        names = [f"kepcheck.model.actions.{name}" for name in modules[str(spec.actor)]]
        assert function.__module__ in names, (spec.name, function.__module__)
        assert getattr(importlib.import_module(function.__module__), snake_case(spec.name)) is function, spec.name
        assert ACTOR_OF[spec.name] == spec.actor


def test_nothing_enters_absent():
    assert not [row for row in TRANSITIONS if row.target == "Absent"]


def test_one_owner_per_source_status():
    owners = defaultdict(set)
    for row in TRANSITIONS:
        if row.target in REMOVAL_STATUSES or row.action == RESIZE_REQUEST_ACTION:
            continue
        owners[row.source].add(row.actor)
    shared = {status for status, actors in owners.items() if len(actors) > 1}
    assert shared == set(SHARED_SOURCES), shared


@pytest.mark.parametrize("variant", [pytest.param(v, marks=pytest.mark.slow) if v.name.endswith("-stale") else v
                                     for v in VARIANTS], ids=lambda v: v.name)
def test_every_explored_step_conforms(variant):
    allowed = {(row.action, row.source, row.target, row.role) for row in TRANSITIONS}
    problems = []
    for scenario in default_scenarios():
        ctx = Context.build(scenario, variant)

        def hook(before, action, after):
            if not type_ok(after, len(ctx.names), len(ctx.node_names), ctx.width):
                problems.append(f"{scenario.name}: {action.label()} leaves a state that is not TypeOK: {after}")
            named = action.param("pod")
            for i, (old, new) in enumerate(zip(before.pods, after.pods)):
                source, target = lifecycle_status(old), lifecycle_status(new)
                if source == target:
                    continue
                role = "self" if named == ctx.names[i] else "other"
                if (action.name, source, target, role) not in allowed:
                    problems.append(f"{scenario.name}: {action.label()} moved {ctx.names[i]} {source} -> {target}")

        explore(kep_system(ctx, []), step_hook=hook)
    assert not problems, "\n".join(sorted(set(problems))[:20])
