"""Kubernetes conformance of the resource accounting (``model/accounting/footprints.py``, ``model/accounting/pod_requests.py``) and of quantity
parsing (``spec/kubernetes/quantities.py``).

Every expectation comes from ``docs/reference.md``: §7.1 cases C-1..C-15
(component-helpers ``resource/helpers_test.go`` and the ``DeferredPodScheduling`` plugin test),
§7.2 K-1..K-7 (kubelet ``TestHandlePodResourcesResize``) and the KEP-5836 "Risk of Additional
Preemption" example (§4.7). The expectations are authoritative: a failure here is a bug in the
model, never in the expectation.

Units: cpu in millicores, memory (and ephemeral-storage) in bytes. Test ids name the case.
"""

from __future__ import annotations

import pytest
import z3

from kepcheck.model.accounting.footprints import (
    RESOURCES,
    combine_totals,
    deferred_fit_delta,
    kubelet_fits,
    kubelet_other_pod_requests,
    kubelet_resizing_pod_requests,
)
from kepcheck.model.accounting.pod_requests import pod_limits, pod_requests
from kepcheck.model.accounting.pods import Container, Pod, is_resize_deferred, is_resize_infeasible
from kepcheck.spec.kubernetes.quantities import format_quantity, parse_quantity

Ki, Mi, Gi = 2**10, 2**20, 2**30
M, G = 10**6, 10**9
CPU = "cpu"
MEM = "memory"
EPH = "ephemeral-storage"


def cpu(millicores: int) -> dict:
    return {CPU: millicores}


def regular(name: str = "c1", **fields) -> Container:
    return Container(name, "regular", **fields)


def sidecar(name: str, **fields) -> Container:
    return Container(name, "sidecar", **fields)


def init(name: str, **fields) -> Container:
    return Container(name, "init", **fields)


NO_STATUS = {"use_status_resources": False}
PLR = {"pod_level_vertical_scaling": True}


# --- §7.1: pod requests -----------------------------------------------------------------------------

REQUEST_CASES = [
    pytest.param(
        Pod((regular(requests=cpu(4000), actual=cpu(2000)),), resize_reason="Infeasible"), {}, cpu(2000),
        id="C-1 resized, infeasible"),
    pytest.param(
        Pod((regular(requests=cpu(6000), allocated=cpu(4000), actual=cpu(2000)),), resize_reason="Infeasible"),
        {}, cpu(4000),
        id="C-2 resized, infeasible & in-progress"),
    pytest.param(
        Pod((regular(requests=cpu(4000), actual=cpu(2000)),)), {}, cpu(4000),
        id="C-3 resized, no resize status"),
    pytest.param(
        Pod((regular(requests={CPU: 30, MEM: 20 * M, EPH: 10 * G},
                     allocated={CPU: 20, MEM: 10 * M, EPH: 30 * G},
                     actual={CPU: 10, MEM: 30 * M, EPH: 20 * G}),)),
        {}, {CPU: 30, MEM: 30 * M, EPH: 30 * G},
        id="C-4 per-resource 3-way maximum"),
    pytest.param(
        Pod((regular(requests=cpu(4000), actual=cpu(2000)),), resize_reason="Infeasible"), NO_STATUS, cpu(4000),
        id="C-5 resized, infeasible, but don't use status"),
    pytest.param(
        Pod((sidecar("s1", requests=cpu(4000), actual=cpu(2000)),), resize_reason="Infeasible"), {}, cpu(2000),
        id="C-6a restartable init container, infeasible"),
    pytest.param(
        Pod((sidecar("s1", requests=cpu(4000), actual=cpu(2000)),)), {}, cpu(4000),
        id="C-6b restartable init container, no resize status"),
    pytest.param(
        Pod((sidecar("s1", requests=cpu(4000), actual=cpu(2000)),), resize_reason="Infeasible"), NO_STATUS,
        cpu(4000),
        id="C-6c restartable init container, infeasible, but don't use status"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), allocated=cpu(2000)),
             regular("c2", requests=cpu(2000), allocated=cpu(1000)))),
        {}, cpu(3000),
        id="C-7 max of sums instead of sum of maxes (v1.37)"),
    pytest.param(
        # Derived in the reference from v0.36.3 determineEffectiveRequests (not an upstream test):
        # status.resources equal to the allocation, so each container counts at its own maximum.
        Pod((regular("c1", requests=cpu(1000), allocated=cpu(2000), actual=cpu(2000)),
             regular("c2", requests=cpu(2000), allocated=cpu(1000), actual=cpu(1000)))),
        {"rule": "v1.36"}, cpu(4000),
        id="C-7 sum of maxes (v1.36)"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), allocated=cpu(2000), actual=cpu(2000)),
             regular("c2", requests=cpu(2000), allocated=cpu(1000), actual=cpu(1000)))),
        {}, cpu(3000),
        id="C-7 same pod with status.resources under v1.37"),
    pytest.param(
        Pod((regular("container-1", requests=None, actual=cpu(2000)),)), {}, cpu(2000),
        id="C-8a regular container with empty requests, status with requests"),
    pytest.param(
        Pod((sidecar("container-1", requests=None, actual=cpu(2000)),)), {}, cpu(2000),
        id="C-8b sidecar with empty requests, status with requests"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000)),),
            pod_requests=cpu(2000), pod_limits=cpu(4000),
            pod_allocated=cpu(3000), pod_actual=cpu(3500), pod_actual_limits=cpu(5000)),
        PLR, cpu(3500),
        id="C-9 pod-level resources, PLR vertical scaling, status populated"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000)),), resize_reason="Infeasible",
            pod_requests=cpu(10000), pod_limits=cpu(20000),
            pod_allocated=cpu(3000), pod_actual=cpu(4000), pod_actual_limits=cpu(8000)),
        PLR, cpu(4000),
        id="C-10 pod-level resources, PLR vertical scaling, infeasible"),
    pytest.param(
        Pod((regular("c1", limits=cpu(10000), actual_limits=cpu(6000)),), resize_reason="Infeasible"), {}, {},
        id="C-11 container limits only, infeasible: no requests"),
    pytest.param(
        # helpers_test.go "resolves directly from pod status when PLR vertical scaling enabled"
        # (docs/reference.md §1.8): the pod-level status maps replace the summed container A and R.
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000)),),
            pod_allocated=cpu(4000), pod_actual=cpu(3000), pod_actual_limits=cpu(5000)),
        PLR, cpu(4000),
        id="C-12 (anchor) aggregate resolves directly from pod status"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000), allocated=cpu(6000),
                     actual=cpu(5000), actual_limits=cpu(7000)),),
            pod_allocated=None, pod_actual=cpu(3000), pod_actual_limits=cpu(7000)),
        PLR, cpu(6000),
        id="C-12a PLR on, pod-level allocated nil: container fallback"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000), allocated=cpu(6000),
                     actual=cpu(5000), actual_limits=cpu(8000)),),
            pod_allocated=cpu(6000), pod_actual=None, pod_actual_limits=None),
        PLR, cpu(6000),
        id="C-12b PLR on, pod-level status resources nil: container fallback"),
    pytest.param(
        Pod((init("init-1", requests=cpu(4000)), regular("c1", requests=cpu(1000)))), {}, cpu(4000),
        id="C-13a init 4 + container 1"),
    pytest.param(
        Pod((init("init-1", requests=cpu(2000)), regular("c1", requests=cpu(2000)), regular("c2", requests=cpu(3000)))),
        {}, cpu(5000),
        id="C-13b init 2 + containers 2, 3"),
    pytest.param(
        Pod((init("init-1", requests=cpu(2000)), regular("c1", requests=cpu(2000)), regular("c2", requests=cpu(3000))),
            overhead={CPU: 1000, MEM: 1 * Gi}),
        {}, {CPU: 6000, MEM: 1 * Gi},
        id="C-13c init 2 + containers 2, 3 + overhead"),
    pytest.param(
        Pod((init("init-1", requests=cpu(2000)), regular("c1", requests=cpu(2000)), regular("c2", requests=cpu(3000))),
            overhead={CPU: 1000, MEM: 1 * Gi}),
        {"exclude_overhead": True}, cpu(5000),
        id="C-13c' same, overhead excluded"),
    pytest.param(
        Pod((sidecar("s1", requests=cpu(1000)), regular("c1", requests=cpu(1000)))), {}, cpu(2000),
        id="C-13d sidecar 1 + container 1"),
    pytest.param(
        Pod((init("init-1", requests=cpu(5000)), sidecar("s1", requests=cpu(1000)), sidecar("s2", requests=cpu(2000)),
             sidecar("s3", requests=cpu(3000)), regular("c1", requests=cpu(1000)))),
        {}, cpu(7000),
        id="C-13e init 5, sidecars 1 2 3, container 1"),
    pytest.param(
        Pod((init("init-1", requests=cpu(5000)), sidecar("s1", requests=cpu(1000)), sidecar("s2", requests=cpu(2000)),
             init("init-2", requests=cpu(5000)), sidecar("s3", requests=cpu(3000)), regular("c1", requests=cpu(1000)))),
        {}, cpu(8000),
        id="C-13f init 5, sidecars 1 2, init 5, sidecar 3, container 1"),
    pytest.param(
        Pod((sidecar("restartable-init-1", requests=cpu(10000)), init("init-1", requests=cpu(200000)),
             regular("container-1", requests=cpu(100000)))),
        {}, cpu(210000),
        id="C-13g sidecar 10, init 200, container 100"),
]


@pytest.mark.parametrize("pod, options, expected", REQUEST_CASES)
def test_pod_requests_conformance(pod, options, expected):
    assert pod_requests(pod, **options) == expected


# --- §7.1: pod limits -------------------------------------------------------------------------------

LIMIT_CASES = [
    pytest.param(
        Pod((regular("c1", limits=cpu(1000), actual_limits=cpu(2000)),
             regular("c2", limits=cpu(2000), actual_limits=cpu(1000)))),
        {}, cpu(3000),
        id="C-7b limits: max of sums instead of sum of maxes"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000)),),
            pod_requests=cpu(2000), pod_limits=cpu(4000),
            pod_allocated=cpu(3000), pod_actual=cpu(3500), pod_actual_limits=cpu(5000)),
        PLR, cpu(5000),
        id="C-9 pod-level limits, PLR vertical scaling, status populated"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000)),), resize_reason="Infeasible",
            pod_requests=cpu(10000), pod_limits=cpu(20000),
            pod_allocated=cpu(3000), pod_actual=cpu(4000), pod_actual_limits=cpu(8000)),
        PLR, cpu(8000),
        id="C-10 pod-level limits, PLR vertical scaling, infeasible"),
    pytest.param(
        Pod((regular("c1", limits=cpu(10000), actual_limits=cpu(6000)),), resize_reason="Infeasible"), {},
        cpu(6000),
        id="C-11 container limits aggregation with infeasible resize"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000)),),
            pod_allocated=cpu(4000), pod_actual=cpu(3000), pod_actual_limits=cpu(5000)),
        PLR, cpu(5000),
        id="C-12 (anchor) limits resolve directly from pod status"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000), allocated=cpu(6000),
                     actual=cpu(5000), actual_limits=cpu(7000)),),
            pod_allocated=None, pod_actual=cpu(3000), pod_actual_limits=cpu(7000)),
        PLR, cpu(7000),
        id="C-12a PLR on, pod-level allocated nil"),
    pytest.param(
        Pod((regular("c1", requests=cpu(1000), limits=cpu(2000), allocated=cpu(6000),
                     actual=cpu(5000), actual_limits=cpu(8000)),),
            pod_allocated=cpu(6000), pod_actual=None, pod_actual_limits=None),
        PLR, cpu(8000),
        id="C-12b PLR on, pod-level status resources nil"),
    pytest.param(
        Pod((regular("container-1", actual=cpu(2000)),)), {}, {},
        id="C-8 empty limits stay empty"),
    pytest.param(
        # helpers_test.go "regular, init and sidecar containers with limits" (non-resize anchor).
        Pod((sidecar("s1", limits=cpu(8000)), init("i1", limits=cpu(6000)), regular("c1", limits=cpu(9000)))),
        {}, cpu(17000),
        id="anchor regular 9, sidecar 8, init 6 limits"),
]


@pytest.mark.parametrize("pod, options, expected", LIMIT_CASES)
def test_pod_limits_conformance(pod, options, expected):
    assert pod_limits(pod, **options) == expected


def test_limits_overhead_added_only_to_present_nonzero_limits():
    """docs/reference.md §1.3 / PodLimits: overhead is added to non-zero limits only."""
    pod = Pod((regular("c1", limits={CPU: 2000, MEM: 0}),), overhead={CPU: 100, MEM: 10 * Mi, EPH: 1 * Gi})
    assert pod_limits(pod) == {CPU: 2100, MEM: 0}


# --- §7.1 C-14: conditions ---------------------------------------------------------------------------


@pytest.mark.parametrize("reason, deferred, infeasible", [
    pytest.param("Deferred", True, False, id="C-14 reason Deferred"),
    pytest.param("Other", False, False, id="C-14 reason Other"),
    pytest.param("Infeasible", False, True, id="C-14 reason Infeasible"),
    pytest.param(None, False, False, id="C-14 no PodResizePending condition"),
])
def test_resize_conditions(reason, deferred, infeasible):
    pod = Pod((regular(requests=cpu(100)),), resize_reason=reason)
    assert is_resize_deferred(pod) is deferred
    assert is_resize_infeasible(pod) is infeasible


# --- §7.1 C-15: NodeInfo.Requested over a resize cancellation ----------------------------------------


def test_c15_nodeinfo_requested_drops_when_deferred_resize_is_cancelled():
    """C-15: NodeInfo.Requested is the sum of pod_requests over the node's pods; an update is
    remove-old + add-new (docs/reference.md §1.6), so reverting the Deferred resize frees the reservation."""
    deferred = Pod((regular("c1", requests={CPU: 500, MEM: 100 * Mi}, allocated={CPU: 100, MEM: 100 * Mi}),),
                   resize_reason="Deferred")
    cancelled = Pod((regular("c1", requests={CPU: 100, MEM: 100 * Mi}, allocated={CPU: 100, MEM: 100 * Mi}),),
                    resize_reason=None)

    def requested(pods):
        return tuple(sum(pod_requests(pod).get(name, 0) for pod in pods) for name in RESOURCES)

    assert requested([deferred]) == (500, 100 * Mi)
    assert requested([cancelled]) == (100, 100 * Mi)
    assert is_resize_deferred(deferred) and not is_resize_deferred(cancelled)


# --- the v1.36 rule: details that distinguish it ------------------------------------------------------


def test_v136_container_without_status_resources_counts_desired():
    """v1.36 (docs/reference.md §1.2): the max applies only when ``status.resources`` is non-nil."""
    pod = Pod((regular(requests=cpu(1000), allocated=cpu(2000)),))
    assert pod_requests(pod, rule="v1.36") == cpu(1000)
    assert pod_requests(pod, rule="v1.37") == cpu(2000)


def test_v136_non_restartable_init_container_always_desired():
    pod = Pod((init("i1", requests=cpu(1000), allocated=cpu(3000), actual=cpu(3000)), regular(requests=cpu(500))))
    assert pod_requests(pod, rule="v1.36") == cpu(1000)
    assert pod_requests(pod, rule="v1.37") == cpu(3000)  # v1.37 follows the fallback chain for every container


def test_v137_infeasible_container_without_status_contributes_nothing():
    """docs/reference.md §1.2: a container with no status entry contributes nothing while Infeasible."""
    pod = Pod((regular("c1", requests=cpu(4000), actual=cpu(2000)), regular("c2", requests=cpu(1000))),
              resize_reason="Infeasible")
    assert pod_requests(pod) == cpu(2000)
    assert pod_requests(Pod(pod.containers)) == cpu(5000)


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match="kind"):
        Container("c1", "ephemeral")
    with pytest.raises(ValueError, match="rule"):
        pod_requests(Pod((regular(requests=cpu(1)),)), rule="v1.35")
    with pytest.raises(ValueError, match="unique"):
        Pod((regular("c1"), regular("c1")))
    with pytest.raises(ValueError, match="measure"):
        kubelet_resizing_pod_requests((1,), (1,), (1,), "min")


# --- §7.2: kubelet admission (K-1..K-7) ---------------------------------------------------------------

NODE = (4000, 4 * Gi)
OTHERS = [kubelet_other_pod_requests((1000, 1 * Gi), (1000, 1 * Gi)) for _ in range(2)]
RESIZED_ALLOCATED = (1000, 1 * Gi)


@pytest.mark.parametrize("measure", ["desired", "max"])
@pytest.mark.parametrize("desired, fits", [
    pytest.param((500, 500 * Mi), True, id="K-1 downsize both"),
    pytest.param((1500, 500 * Mi), True, id="K-2 cpu up, memory down"),
    pytest.param((500, 1500 * Mi), True, id="K-3 cpu down, memory up"),
    pytest.param((2500, 2500 * Mi), False, id="K-4 both up beyond free: Deferred"),
    pytest.param((500, 2500 * Mi), False, id="K-5 memory up beyond free: Deferred"),
])
def test_kubelet_admission(desired, fits, measure):
    """K-1..K-5 (TestHandlePodResourcesResize): node 4 cpu / 4Gi, two other pods at 1 cpu / 1Gi,
    the resized pod allocated 1 cpu / 1Gi. The verdict is the same under both measures here."""
    requested = kubelet_resizing_pod_requests(desired, RESIZED_ALLOCATED, RESIZED_ALLOCATED, measure)
    assert kubelet_fits(requested, OTHERS, NODE) is fits


def test_k5_deferred_because_of_memory():
    """K-5: the message mentions memory: 2Gi others + 2500Mi > 4Gi, while cpu fits."""
    requested = kubelet_resizing_pod_requests((500, 2500 * Mi), RESIZED_ALLOCATED, RESIZED_ALLOCATED, "desired")
    assert kubelet_fits((requested[0],), [(other[0],) for other in OTHERS], (NODE[0],)) is True
    assert kubelet_fits((requested[1],), [(other[1],) for other in OTHERS], (NODE[1],)) is False


@pytest.mark.parametrize("desired", [
    pytest.param((1000, 4500 * Mi), id="K-6 memory above allocatable"),
    pytest.param((5000, 1 * Gi), id="K-7 cpu above allocatable"),
])
def test_k6_k7_requests_above_allocatable(desired):
    # In the kubelet test version these resizes were marked Infeasible by a kubelet-side capacity
    # check; since v1.36 the API server's PodResizeValidator rejects them (docs/reference.md §2.1, §2.2),
    # so they never reach the kubelet. What both have in common: desired exceeds allocatable.
    assert not all(want <= have for want, have in zip(desired, NODE))
    assert kubelet_fits(desired, [], NODE) is False


def test_kubelet_measures_differ_for_mixed_resize():
    """docs/reference.md §2.2 / §4.9: cpu up, memory down — the implementation credits the lower desired
    memory right away, the KEP text's max(desired, allocated, actual) does not."""
    desired, allocated, actual = (2000, 512 * Mi), (1000, 1 * Gi), (1000, 1 * Gi)
    assert kubelet_resizing_pod_requests(desired, allocated, actual, "desired") == (2000, 512 * Mi)
    assert kubelet_resizing_pod_requests(desired, allocated, actual, "max") == (2000, 1 * Gi)


def test_kubelet_counts_others_at_max_of_allocated_and_actual():
    """docs/reference.md §1.7: another pod with a downsize allocated but not actuated still counts its actual."""
    assert kubelet_other_pod_requests((500, 2 * Gi), (1000, 1 * Gi)) == (1000, 2 * Gi)


# --- KEP-5836 "Risk of Additional Preemption" (docs/reference.md §4.7) --------------------------------------


def test_kep5836_risk_of_additional_preemption_example():
    """X = 2 cpu: pod1 desired X alloc X/2; pods 2-4 desired 2X alloc X/2 (actual = alloc); node 2X."""
    allocatable = (4000,)
    pod1 = Pod((regular(requests=cpu(2000), allocated=cpu(1000), actual=cpu(1000)),), resize_reason="Deferred")
    others = [Pod((regular(requests=cpu(4000), allocated=cpu(1000), actual=cpu(1000)),), resize_reason="Deferred")
              for _ in range(3)]

    # Scheduler view: every pod at max(desired, allocated, actual).
    scheduler_requested = sum(pod_requests(pod)[CPU] for pod in [pod1, *others])
    assert scheduler_requested == 2000 + 4000 + 4000 + 4000 == 14000
    assert scheduler_requested > allocatable[0]
    # Even with all three victims removed, re-adding any one of them (4000) on top of pod1 (2000) fails:
    # the scheduler evicts all three.
    for victim in others:
        assert pod_requests(pod1)[CPU] + pod_requests(victim)[CPU] > allocatable[0]

    # Kubelet view for pod1's resize: others at max(allocated, actual), pod1 at its desired size.
    def kubelet_view(remaining, measure):
        other_vectors = [kubelet_other_pod_requests((1000,), (1000,)) for _ in range(remaining)]
        requested = kubelet_resizing_pod_requests((2000,), (1000,), (1000,), measure)
        return requested, other_vectors

    for measure in ("desired", "max"):
        requested, all_three = kubelet_view(3, measure)
        assert requested[0] + sum(v[0] for v in all_three) == 5000
        assert kubelet_fits(requested, all_three, allocatable) is False
        requested, two_left = kubelet_view(2, measure)
        assert requested[0] + sum(v[0] for v in two_left) == 4000
        assert kubelet_fits(requested, two_left, allocatable) is True  # one victim was enough


# --- §4.4 / P-7: the Deferred pod's fit delta ------------------------------------------------------


def test_deferred_fit_delta():
    """S-23 pod: desired totals (600m, 600Mi), allocated (200m, 200Mi). Against the cache copy
    (which counts max(desired, allocated, actual)) the delta is 0; a newer larger queue spec adds its
    excess; a downsize never goes negative."""
    pod = Pod((regular("c1", requests={CPU: 500, MEM: 100 * Mi}, allocated={CPU: 100, MEM: 100 * Mi}),
               regular("c2", requests={CPU: 100, MEM: 500 * Mi}, allocated={CPU: 100, MEM: 100 * Mi})),
              resize_reason="Deferred")
    cached = tuple(pod_requests(pod)[name] for name in RESOURCES)
    assert cached == (600, 600 * Mi)
    assert tuple(pod_requests(pod, use_status_resources=False)[n] for n in RESOURCES) == (600, 600 * Mi)
    assert deferred_fit_delta((600, 600 * Mi), cached) == (0, 0)
    assert deferred_fit_delta((800, 500 * Mi), cached) == (200, 0)
    assert deferred_fit_delta((600, 600 * Mi), (200, 200 * Mi)) == (400, 400 * Mi)


# --- the vector rule on Z3 terms ----------------------------------------------------------------------


def _evaluate(terms, bindings):
    """Value of each Z3 term under concrete bindings, found by a solver (not by Python arithmetic)."""
    solver = z3.Solver()
    for variable, value in bindings.items():
        solver.add(variable == value)
    assert solver.check() == z3.sat
    model = solver.model()
    return tuple(model.eval(term, model_completion=True) for term in terms)


@pytest.mark.parametrize("desired, allocated, actual, infeasible", [
    ((4, 1), (2, 3), (1, 5), False),
    ((4, 1), (2, 3), (1, 5), True),
    ((0, 0), (0, 0), (0, 0), False),
    ((7, 2), (7, 9), (3, 9), True),
    ((6, 4), (4, 4), (2, 1), False),
])
def test_combine_totals_on_z3_terms(desired, allocated, actual, infeasible):
    d = z3.Ints("d0 d1")
    a = z3.Ints("a0 a1")
    r = z3.Ints("r0 r1")
    flag = z3.Bool("infeasible")
    result = combine_totals(tuple(d), tuple(a), tuple(r), flag)
    assert all(isinstance(term, z3.ArithRef) for term in result)

    bindings = {**dict(zip(d, desired)), **dict(zip(a, allocated)), **dict(zip(r, actual)), flag: infeasible}
    values = _evaluate(result, bindings)
    expected = tuple(max(x, y) if infeasible else max(w, x, y) for w, x, y in zip(desired, allocated, actual))
    assert tuple(value.as_long() for value in values) == expected
    # The same via substitution, and the concrete fast path agrees.
    pairs = [(variable, z3.BoolVal(value) if isinstance(value, bool) else z3.IntVal(value))
             for variable, value in bindings.items()]
    substituted = [z3.simplify(z3.substitute(term, *pairs)) for term in result]
    assert tuple(term.as_long() for term in substituted) == expected
    assert combine_totals(desired, allocated, actual, infeasible) == expected


def test_combine_totals_is_the_maximum_for_all_values():
    """Universally (Z3 proof): each entry is an upper bound of the counted states and equals one of them."""
    d, a, r = z3.Ints("d a r")
    flag = z3.Bool("infeasible")
    (result,) = combine_totals((d,), (a,), (r,), flag)
    claim = z3.If(flag,
                  z3.And(result >= a, result >= r, z3.Or(result == a, result == r)),
                  z3.And(result >= d, result >= a, result >= r, z3.Or(result == d, result == a, result == r)))
    solver = z3.Solver()
    solver.add(z3.Not(claim))
    assert solver.check() == z3.unsat


def test_vector_functions_on_z3_terms():
    """kubelet_fits and deferred_fit_delta build Z3 terms too (the symbolic engine relies on it)."""
    x, y = z3.Ints("x y")
    fits = kubelet_fits((x,), [(y,)], (10,))
    solver = z3.Solver()
    solver.add(fits, x == 4, y == 6)
    assert solver.check() == z3.sat
    solver = z3.Solver()
    solver.add(fits, x == 5, y == 6)
    assert solver.check() == z3.unsat
    (delta,) = deferred_fit_delta((x,), (y,))
    assert z3.simplify(z3.substitute(delta, (x, z3.IntVal(3)), (y, z3.IntVal(5)))).as_long() == 0


def test_one_container_pod_agrees_with_combine_totals():
    """The state machine's one-container pod and the general function share the rule."""
    for desired, allocated, actual in [((3, 1), (1, 2), (2, 2)), ((1, 1), (1, 1), (1, 1)), ((5, 0), (2, 4), (1, 3))]:
        for reason in (None, "Deferred", "Infeasible"):
            pod = Pod((regular(requests=dict(zip(RESOURCES, desired)), allocated=dict(zip(RESOURCES, allocated)),
                               actual=dict(zip(RESOURCES, actual))),), resize_reason=reason)
            general = tuple(pod_requests(pod)[name] for name in RESOURCES)
            assert general == combine_totals(desired, allocated, actual, reason == "Infeasible")
            assert general == tuple(pod_requests(pod, rule="v1.36")[name] for name in RESOURCES)


# --- spec/kubernetes/quantities.py -----------------------------------------------------------------------------


@pytest.mark.parametrize("value, resource, expected", [
    ("500m", CPU, 500),
    ("2", CPU, 2000),
    (2, CPU, 2000),
    (1.5, CPU, 1500),
    ("0.1", CPU, 100),
    (".5", CPU, 500),
    ("+1", CPU, 1000),
    ("500000u", CPU, 500),
    ("1Gi", MEM, Gi),
    ("512Mi", MEM, 512 * Mi),
    ("1.5Gi", MEM, 3 * Gi // 2),
    ("100M", MEM, 100 * M),
    ("1k", MEM, 1000),
    ("1Ki", MEM, 1024),
    ("1e3", MEM, 1000),
    ("1E3", MEM, 1000),
    ("1.5e3", MEM, 1500),
    ("1E", MEM, 10**18),
    ("1000m", MEM, 1),
    (4294967296, MEM, 4 * Gi),
    ("0", MEM, 0),
    ("10G", EPH, 10 * G),
])
def test_parse_quantity(value, resource, expected):
    assert parse_quantity(value, resource) == expected


@pytest.mark.parametrize("value, resource, message", [
    ("5x", CPU, "'5x' is not a Kubernetes quantity"),
    ("-1", CPU, "quantity must not be negative"),
    (-1, MEM, "quantity must not be negative"),
    ("0.0001", CPU, "cpu quantity 0.0001 is finer than 1m"),
    ("1n", CPU, "cpu quantity 1n is finer than 1m"),
    ("1500m", MEM, "memory quantity 1500m is not a whole number of bytes"),
    (0.5, MEM, "memory quantity 0.5 is not a whole number of bytes"),
    (True, CPU, "expected a quantity such as 500m or 1Gi, got true"),
    (None, MEM, "expected a quantity such as 500m or 1Gi, got null"),
    ([1], CPU, "expected a quantity such as 500m or 1Gi, got list"),
    ("", CPU, "'' is not a Kubernetes quantity"),
    ("Gi", MEM, "'Gi' is not a Kubernetes quantity"),
    ("1 Gi", MEM, "'1 Gi' is not a Kubernetes quantity"),
    ("1gi", MEM, "'1gi' is not a Kubernetes quantity"),
    ("1e", MEM, "'1e' is not a Kubernetes quantity"),
    ("1.2.3", CPU, "'1.2.3' is not a Kubernetes quantity"),
    (float("nan"), CPU, "nan is not a Kubernetes quantity"),
    ("1e999999", MEM, "quantity 1e999999 is out of range"),
    ("16Ei", MEM, "quantity 16Ei is out of range"),
])
def test_parse_quantity_rejects(value, resource, message):
    with pytest.raises(ValueError) as error:
        parse_quantity(value, resource)
    assert str(error.value) == message


@pytest.mark.parametrize("amount, resource, expected", [
    (2000, CPU, "2"),
    (500, CPU, "500m"),
    (1500, CPU, "1500m"),
    (0, CPU, "0"),
    (Gi, MEM, "1Gi"),
    (512 * Mi, MEM, "512Mi"),
    (100 * M, MEM, "100M"),
    (1000, MEM, "1k"),
    (1024, MEM, "1Ki"),
    (1536, MEM, "1536"),
    (2500 * Mi, MEM, "2500Mi"),
    (0, MEM, "0"),
    (4718592000, MEM, "4500Mi"),
])
def test_format_quantity(amount, resource, expected):
    assert format_quantity(amount, resource) == expected
    assert parse_quantity(expected, resource) == amount


def test_format_parse_round_trip():
    for resource in (CPU, MEM):
        for amount in [0, 1, 7, 999, 1000, 1001, 1024, 1500, 4096, 10**6, 3 * 2**20, 10**9 + 1, 5 * 2**40, 2**62]:
            assert parse_quantity(format_quantity(amount, resource), resource) == amount
