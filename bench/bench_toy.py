"""SPIN and this project's vector core side by side on the toy model (``bench/toy_resize.py``).

Both are timed as whole processes, start-up and compilation included, one after the other, several
times, on the same machine:

* SPIN: ``spin -a toy-resize.pml && cc -O2 -DSAFETY -DNOREDUCE -o pan pan.c && ./pan -m3000000`` in a
  fresh directory (the flags of bench/README.md, 'The SPIN toy'; the depth bound must exceed the search
  depth, about 230,000 here, or SPIN silently explores less);
* ours: ``python bench/bench_toy.py --ours`` in a fresh interpreter with an empty compile cache:
  import, trace the toy, generate and compile its C, explore with the vector core, print the counts.

The counts are compared (SPIN reports one state and two transitions more than the model has: its
state before the initial ``d_step``, as bench/README.md, 'The SPIN toy', says). The line ``SPIN/ours on the
toy: X.XX`` is SPIN's median whole-process time divided by ours. Where
SPIN (Debian package ``spin``) or a C compiler is missing the bench says so and still times ours.
The Promela file is ``bench/toy-resize.pml`` (or ``--promela FILE``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a plain script, with or without the editable install
    sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

PROMELA = ROOT / "bench" / "toy-resize.pml"
EXPECTED = (1_037_149, 13_720_870)  # distinct states and transitions for 5 pods (bench README)


def ours(pods: int, workers: int) -> tuple[int, int, float]:
    """Explore the toy with the vector core; (states, transitions, seconds of search)."""
    from toy_resize import toy_traced

    from kepcheck.checks.search.hybrid import choose_expander
    from kepcheck.checks.vector.layout import Layout
    from kepcheck.checks.vector.layers import explore_vector

    system = toy_traced(pods)
    layout = Layout(system.leaves)
    result = explore_vector(system, choose_expander(system, layout, workers))
    if result.found:
        raise SystemExit(f"the toy's invariant is violated: {sorted(result.found)}")
    return result.states, result.transitions, result.seconds


def _timed(command: list[str], cwd: str, env=None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {done.stdout[-500:]} {done.stderr[-500:]}")
    return elapsed, done.stdout


def run_spin(promela: Path) -> tuple[float, int, int]:
    """One whole SPIN run in a fresh directory: (seconds, states, transitions)."""
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copy(promela, Path(scratch) / "toy.pml")
        script = "spin -a toy.pml && cc -O2 -DSAFETY -DNOREDUCE -o pan pan.c && ./pan -m3000000"
        elapsed, out = _timed(["sh", "-c", script], scratch)
    states = int(re.search(r"([0-9]+) states, stored", out).group(1))
    transitions = int(re.search(r"([0-9]+) transitions", out).group(1))
    return elapsed, states, transitions


def run_ours(pods: int, workers: int) -> tuple[float, int, int]:
    """One whole run of this script's ``--ours`` mode with an empty compile cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, KEPCHECK_CACHE=cache)
        elapsed, out = _timed([sys.executable, str(Path(__file__).resolve()), "--ours", "--pods", str(pods),
                               "--workers", str(workers)], str(ROOT), env)
    states, transitions = (int(x) for x in out.split()[:2])
    return elapsed, states, transitions


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ours", action="store_true", help="only explore the toy and print states, transitions")
    parser.add_argument("--pods", type=int, default=5)
    parser.add_argument("--workers", type=int, default=1, help="cores for the vector core (default 1)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each (default 3)")
    parser.add_argument("--promela", type=Path, default=PROMELA)
    options = parser.parse_args(argv)
    if options.ours:
        states, transitions, seconds = ours(options.pods, options.workers)
        print(states, transitions, f"{seconds:.3f}")
        return 0
    spin = shutil.which("spin") and shutil.which("cc") and options.promela.exists()
    print(f"toy model, {options.pods} pods; {options.runs} runs each, whole processes, alternating")
    if not spin:
        why = "spin is not installed (Debian package spin)" if not shutil.which("spin") else (
            "no C compiler" if not shutil.which("cc") else f"no Promela file at {options.promela}")
        print(f"SPIN: not run: {why}")
    times = {"SPIN": [], "ours": []}
    counts = {}
    for _ in range(options.runs):
        if spin:
            seconds, *counts["SPIN"] = run_spin(options.promela)
            times["SPIN"].append(seconds)
        seconds, *counts["ours"] = run_ours(options.pods, options.workers)
        times["ours"].append(seconds)
    for name, values in times.items():
        if values:
            print(f"{name:5} {counts[name][0]:>10,} states {counts[name][1]:>12,} transitions   whole process: "
                  f"min {min(values):.2f} s, median {statistics.median(values):.2f} s, max {max(values):.2f} s")
    if options.pods == 5 and tuple(counts["ours"]) != EXPECTED:
        print(f"ours: counts differ from the reference {EXPECTED}")
        return 1
    if spin:  # SPIN also counts the state before its initial d_step, and the two steps out of it
        same = tuple(counts["SPIN"]) == (counts["ours"][0] + 1, counts["ours"][1] + 2)
        print("counts: identical to SPIN's (SPIN's own figures include its state before the initial d_step: "
              "+1 state, +2 transitions)" if same else "counts: DIFFERENT from SPIN's")
        if not same:
            return 1
    if spin:
        print(f"SPIN/ours on the toy: {statistics.median(times['SPIN']) / statistics.median(times['ours']):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
