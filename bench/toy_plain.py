"""A plain-Python breadth-first search of the SPIN toy: the yardstick for this project's engines.

The toy is the one of ``bench/toy_resize.py`` (``NP`` pods, two nodes of capacity 6; ``Place``,
``AskResize``, ``ApplyResize``, ``EvictFor``, ``Remove``), written here the way a careful Python
programmer would write a one-off checker: a state is a flat tuple ``node[0..NP) + req[0..NP) +
want[0..NP)``, successors come from one plain function, the visited set is a Python ``set`` and the
frontier a ``collections.deque``. No project code is used, so the figure measures what the language
gives for free on this machine. It counts distinct states and transitions (every enabled action
instance, self-loops included) exactly as the vector core does for ``NP = 5``: 1,037,149 states and
13,720,870 transitions, checked on every run.

``bench/bench_explicit.py`` runs it in the same process run as the KEP engine's figures and prints
the ratio of the two rates. Run alone: ``python bench/toy_plain.py [--pods N]``.
"""

from __future__ import annotations

import argparse
import gc
import resource
import time
from collections import deque

CAPACITY = 6
NODES = (1, 2)
EXPECTED = {5: (1_037_149, 13_720_870)}


def successors(state: tuple, pods: int):
    """Every enabled action instance's successor (a state may repeat: self-loops count)."""
    node, req, want = state[:pods], state[pods:2 * pods], state[2 * pods:]
    used = {n: sum(req[k] for k in range(pods) if node[k] == n) for n in NODES}
    for i in range(pods):
        if node[i] == 0:  # Place(pod, node)
            for n in NODES:
                if used[n] + req[i] <= CAPACITY:
                    yield state[:i] + (n,) + state[i + 1:]
                else:
                    yield state
            continue
        if want[i] == 0:  # AskResize(pod, size)
            for size in (2, 3):
                yield state if size == req[i] else state[:2 * pods + i] + (size,) + state[2 * pods + i + 1:]
        else:  # ApplyResize(pod) or EvictFor(pod, victim)
            if used[node[i]] - req[i] + want[i] <= CAPACITY:
                changed = list(state)
                changed[pods + i], changed[2 * pods + i] = want[i], 0
                yield tuple(changed)
            else:
                for victim in range(pods):
                    if victim < i and node[victim] == node[i]:
                        changed = list(state)
                        changed[victim], changed[2 * pods + victim] = 0, 0
                        yield tuple(changed)
                    else:
                        yield state
        changed = list(state)  # Remove(pod)
        changed[i], changed[2 * pods + i] = 0, 0
        yield tuple(changed)


def explore(pods: int = 5) -> dict:
    """Breadth-first search from the initial state; distinct states, transitions, seconds, bytes/state."""
    gc.collect()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    initial = (0,) * pods + (1,) * pods + (0,) * pods
    seen = {initial}
    frontier = deque([initial])
    transitions = 0
    while frontier:
        state = frontier.popleft()
        for after in successors(state, pods):
            transitions += 1
            if after not in seen:
                seen.add(after)
                frontier.append(after)
    seconds = time.perf_counter() - started
    growth_kb = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before)
    states = len(seen)
    expected = EXPECTED.get(pods)
    if expected is not None and (states, transitions) != expected:
        raise SystemExit(f"plain-Python toy BFS found {states:,} states and {transitions:,} transitions, "
                         f"expected {expected[0]:,} and {expected[1]:,}")
    return {"states": states, "transitions": transitions, "seconds": seconds,
            "states_per_second": states / seconds, "bytes_per_state": growth_kb * 1024 / states}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pods", type=int, default=5)
    figures = explore(parser.parse_args(argv).pods)
    print(f"plain-Python BFS of the toy: {figures['states']:,} states, {figures['transitions']:,} transitions in "
          f"{figures['seconds']:.2f} s = {figures['states_per_second']:,.0f} states/s, "
          f"{figures['bytes_per_state']:,.0f} bytes/state")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
