"""``kepcheck sweep``: bounds, the enumeration up to isomorphism, the minimal counterexample, resume
and workers (``checks/sweep*.py``)."""

from __future__ import annotations

import math
import os
from itertools import permutations, product
from pathlib import Path

import pytest

from kepcheck.checks.cli.main import main
from kepcheck.checks.engine import Budget, EngineOptions, engine
from kepcheck.checks.sweep.command import RESULT_DIR, sweep_points
from kepcheck.checks.sweep.bounds import BoundsError, load_bounds, parse_bounds
from kepcheck.checks.sweep.space import NO_NODE, Point, canonical, enumerate_points, point_document
from kepcheck.checks.sweep.store import STORE_NAME, ResultStore
from kepcheck.model.context import Context
from kepcheck.spec.kep.properties import property_by_name
from kepcheck.spec.language.loader import default_scenarios, load_scenario, parse_scenario
from kepcheck.spec.kep.variants import VARIANTS

TINY = Path(__file__).parent / "sweeps" / "tiny.yaml"
SHIPPED = "deferred-upsize-one-victim"  # shows NoDoubleReservation failing under allocated-only
BASE = {"name": "b", "nodes": 1, "podsPerNode": "1..2", "resources": {"cpu": {"allocatable": 2, "sizes": "1..2"}},
        "priorities": [0, 1]}


@pytest.mark.parametrize("change, field", [
    ({"colour": "red"}, "colour"),
    ({"nodes": "3..1"}, "nodes"),
    ({"nodes": 0}, "nodes"),
    ({"podsPerNode": "1-2"}, "podsPerNode"),
    ({"resources": {"memory": {"allocatable": 1, "sizes": 1}}}, "resources.cpu"),
    ({"resources": {"cpu": {"allocatable": 2}}}, "resources.cpu.sizes"),
    ({"priorities": [0, 0]}, "priorities"),
    ({"initialResize": ["Infeasible"]}, "initialResize[0]"),
    ({"deferredPods": "0..1"}, "deferredPods"),
    ({"initialResize": ["none", "Deferred"], "deferredPods": "2..1"}, "deferredPods"),
    ({"environment": {"events": ["restart"]}}, "environment.events[0]"),
    ({"environment": {"maxEvents": 1}}, "environment.maxEvents"),
    ({"variants": ["alpha-9"]}, "variants[0]"),
    ({"properties": ["SomeDeferredResizeResolvedByPreemption"]}, "properties[0]"),
])
def test_bounds_refusals_name_the_field(change, field):
    with pytest.raises(BoundsError) as refused:
        parse_bounds({**BASE, **change}, "b.yaml")
    assert str(refused.value).startswith(f"b.yaml: {field}: ")
    assert "\n" not in str(refused.value)


def test_a_refused_bounds_file_is_exit_2_with_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: b\nnodes: 1..x\npodsPerNode: 1\nresources: {cpu: {allocatable: 1, sizes: 1}}\n"
                   "priorities: [0]\n", encoding="utf-8")
    assert main(["sweep", str(bad), "-o", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and f"{bad}: nodes: " in error


def test_the_enumeration_matches_a_hand_count():
    """1 node of cpu 2, pods of cpu 1..2 at priority 0 or 1, one or two: one pod 2 sizes × 2
    priorities = 4; two pods (both cpu 1) as multisets of priorities {0,0} {0,1} {1,1} = 3. Under
    kubelet-fifo the age of pods of different priorities matters: {0,1} in both orders, 8."""
    bounds = parse_bounds(BASE)
    assert len(enumerate_points(bounds)) == 7
    assert len(enumerate_points(bounds, ordered_classes=False)) == 8


def test_deferred_pods_bounds_how_many_pods_start_deferred():
    """1 node of cpu 2, 1–2 pods of cpu 1..2 at priority 0, none or Deferred from 1 to 2 (D): by hand,
    one pod 1, 2 or D; two pods 1+1, 1+D, D+1 (equal priorities: both ages), D+D — 7 in all, of which
    ``deferredPods: 0`` keeps the 3 without D, ``0..1`` the 6 with at most one, ``1`` the 3 with one."""
    base = {**BASE, "priorities": [0], "initialResize": ["none", "Deferred"]}
    counts = {}
    for deferred in (0, "0..1", 1, None):
        bounds = parse_bounds({**base, "deferredPods": deferred} if deferred is not None else base)
        points = enumerate_points(bounds)
        counts[deferred] = len(points)
        assert all(sum(1 for pod in p.pods if pod[5]) in bounds.deferred_pods for p in points)
    assert counts == {0: 3, "0..1": 6, 1: 3, None: 7}


def _labelled(bounds):
    """Every scenario of ``bounds`` (no events, one node) as a labelled pod sequence: brute force."""
    kinds = [(p, "PreemptLowerPriority", 0, (s,), (s,), "") for p in bounds.priorities for s in bounds.sizes[0].values()]
    for allocatable in bounds.allocatable[0].values():
        for count in bounds.pods_per_node.values():
            for pods in product(kinds, repeat=count):
                if sum(pod[4][0] for pod in pods) <= allocatable:
                    yield Point((((allocatable,), False),), pods, ())


def test_the_enumeration_is_the_brute_force_divided_by_the_isomorphism():
    bounds = parse_bounds({**BASE, "podsPerNode": "1..3", "resources": {"cpu": {"allocatable": "3..4",
                                                                                 "sizes": "1..3"}},
                           "priorities": [0, 1, 2]})
    classes = {canonical(point) for point in _labelled(bounds)}
    scaled = {p for p in classes if _divisible_within(p)}
    assert set(enumerate_points(bounds)) == classes - scaled
    assert len(classes - scaled) < sum(1 for _ in _labelled(bounds))


def _divisible_within(point) -> bool:
    """The loader divides cpu by the common divisor of its quantities; the divided scenario is then
    another point, enumerated when its allocatable is still in 3..4 (sizes stay >= 1)."""
    values = [point.nodes[0][0][0]] + [pod[4][0] for pod in point.pods]
    divisor = math.gcd(*values)
    return divisor > 1 and values[0] // divisor in range(3, 5)


def test_canonical_forms_dedupe_renamings():
    bounds = load_bounds(TINY)
    points = enumerate_points(bounds)
    assert len({p.key for p in points}) == len(points)
    enumerated = set(points)
    for point in points:
        for order in permutations(range(len(point.pods))):
            renamed = _reordered(point, order)
            assert canonical(renamed) in enumerated
            if renamed != point and canonical(renamed) == point:
                assert renamed not in enumerated


def _reordered(point: Point, order) -> Point:
    position = {old: new for new, old in enumerate(order)}
    menu = tuple((e[0], position[e[1]]) + e[2:] if e[0] != "arrival" else e for e in point.menu)
    return Point(point.nodes, tuple(point.pods[i] for i in order), menu)


def test_a_reordering_across_priorities_is_the_same_model():
    """The isomorphism the canonical form relies on: pods of different priorities declared in the
    other order give the same state count and verdicts."""
    bounds = load_bounds(TINY)
    points = [p for p in enumerate_points(bounds) if len({pod[0] for pod in p.pods}) == 2][:12]
    specs = [property_by_name(name) for name in bounds.properties]
    variant = next(v for v in VARIANTS if v.name == "allocated-only")
    for point in points:
        figures = []
        for shown in (point, _reordered(point, tuple(reversed(range(len(point.pods)))))):
            ctx = Context.build(parse_scenario(point_document(bounds, shown)), variant, ())
            results = engine("explicit").check(ctx, specs, budget=Budget(), options=EngineOptions(workers=1))
            figures.append([(r.verdict, r.states) for r in results])
        assert figures[0] == figures[1]


def test_every_enumerated_scenario_loads():
    points, refused = sweep_points(load_bounds(TINY))
    assert refused == 0 and len(points) == 525
    assert all(pod[2] != NO_NODE for p in points for pod in p.pods)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    directory = tmp_path_factory.mktemp("sweep") / "one"
    assert main(["sweep", str(TINY), "-o", str(directory)]) == 1  # a violation: exit 1
    return directory


def _result_files(directory: Path) -> dict:
    return {path.name: path.read_bytes() for path in sorted((directory / RESULT_DIR).iterdir())}


def test_the_sweep_finds_the_known_violation_and_its_minimal_scenario(swept):
    summary = (swept / RESULT_DIR / "summary.md").read_text(encoding="utf-8")
    assert "NoDoubleReservation under alpha-1.37: holds on all 525 scenarios within bounds tiny" in summary
    assert "NoDoubleReservation under allocated-only: violated on" in summary
    minimal = load_scenario(swept / RESULT_DIR / "NoDoubleReservation--allocated-only.yaml")
    shipped = next(s for s in default_scenarios() if s.name == SHIPPED)
    assert (len(minimal.pods), len(minimal.nodes)) == (len(shipped.pods), len(shipped.nodes)) == (3, 1)
    report = (swept / RESULT_DIR / "NoDoubleReservation--allocated-only.md").read_text(encoding="utf-8")
    assert report.startswith("# NoDoubleReservation violated")


def test_the_summary_counts_the_scenarios_on_which_the_variants_disagree(swept):
    """Two variants: per property, the scenarios where their verdicts differ, counted from the store."""
    summary = (swept / RESULT_DIR / "summary.md").read_text(encoding="utf-8")
    store = ResultStore(swept)
    differ = sum(1 for point in enumerate_points(load_bounds(TINY))
                 if len({r["verdict"] for r in store.records[point.key] if r["property"] == "NoDoubleReservation"}) > 1)
    assert differ == 31
    assert "- variants alpha-1.37, allocated-only: NoDoubleReservation differs on 31 of 525 scenarios (first: " in summary
    assert "KubeletNeverOvercommits differs" not in summary


def test_an_eventually_violation_report_names_the_fairness_it_assumed(tmp_path):
    """The minimal lasso's report says which fairness groups the liveness check assumed, as
    ``kepcheck check`` reports do (the property's own groups under the variant)."""
    bounds = tmp_path / "lasso.yaml"
    bounds.write_text("name: lasso\nnodes: 1\npodsPerNode: 1..2\npods: 1..2\n"
                      "resources: {cpu: {allocatable: 2, sizes: 1..2}}\npriorities: [0]\n"
                      "initialResize: [none, Deferred]\nproperties: [EveryDeferredResizeResolved]\n", encoding="utf-8")
    assert main(["sweep", str(bounds), "-o", str(tmp_path / "out")]) == 1
    report = (tmp_path / "out" / RESULT_DIR / "EveryDeferredResizeResolved--alpha-1.37.md").read_text(encoding="utf-8")
    groups = property_by_name("EveryDeferredResizeResolved").fairness
    assert "- **Fairness assumed:** scheduler-cycle, scheduler-flush, kubelet-admission" in report
    assert "informer-delivery" not in report and "Fairness assumed:** none" not in report and "scheduler-cycle" in groups


def test_no_smaller_scenario_in_the_bounds_violates(swept):
    bounds = load_bounds(TINY)
    store = ResultStore(swept)
    minimal = load_scenario(swept / RESULT_DIR / "NoDoubleReservation--allocated-only.yaml")
    smallest = (len(minimal.pods), len(minimal.nodes), minimal.max_events)
    for point in enumerate_points(bounds):
        records = store.records[point.key]
        if any(r["verdict"] == "violated" and r["property"] == "NoDoubleReservation"
               and r["variant"] == "allocated-only" for r in records):
            assert point.size >= smallest


@pytest.mark.slow
def test_a_resumed_sweep_gives_the_same_result(swept, tmp_path):
    again = tmp_path / "again"
    again.mkdir()
    lines = (swept / STORE_NAME).read_text(encoding="utf-8").splitlines(keepends=True)
    (again / STORE_NAME).write_text("".join(lines[:200]) + lines[200][:40], encoding="utf-8")  # cut mid-line
    assert main(["sweep", str(TINY), "-o", str(again)]) == 1
    assert _result_files(again) == _result_files(swept)
    assert len(ResultStore(again).records) == len(lines) - 1  # the header line


@pytest.mark.slow
def test_two_workers_give_the_same_result(swept, tmp_path):
    assert main(["sweep", str(TINY), "-o", str(tmp_path / "two"), "--workers", "2"]) == 1
    assert _result_files(tmp_path / "two") == _result_files(swept)


@pytest.mark.slow
def test_a_local_two_worker_dask_cluster_gives_the_same_result(swept, tmp_path):
    """Issue 17: the same sweep as tasks on a local Dask cluster of two worker processes."""
    pytest.importorskip("distributed", reason="the optional 'distributed' extra is not installed")
    assert main(["sweep", str(TINY), "-o", str(tmp_path / "dask"), "--cluster", "local:2"]) == 1
    assert _result_files(tmp_path / "dask") == _result_files(swept)


@pytest.mark.slow
def test_a_running_dask_cluster_by_address_gives_the_same_result(swept, tmp_path):
    """The same command against a cluster that was already running, by its scheduler's address."""
    distributed = pytest.importorskip("distributed", reason="the optional 'distributed' extra is not installed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        assert main(["sweep", str(TINY), "-o", str(tmp_path / "remote"), "--cluster", cluster.scheduler_address]) == 1
    assert _result_files(tmp_path / "remote") == _result_files(swept)


@pytest.mark.parametrize("arguments,words", [(["--cluster", "nowhere"], "give local:N"),
                                             (["--cluster", "local:0"], "between 1 and 256"),
                                             (["--cluster", "local:2", "--workers", "2"], "exclude each other")])
def test_bad_cluster_options_are_one_line_errors(tmp_path, capsys, arguments, words):
    assert main(["sweep", str(TINY), "-o", str(tmp_path / "x"), *arguments]) == 2
    error = capsys.readouterr().err.strip()
    assert words in error and len(error.splitlines()) == 1


def test_a_directory_holding_other_files_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    assert main(["sweep", str(TINY), "-o", str(tmp_path)]) == 2
    assert "-o " in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["notes.txt"]
