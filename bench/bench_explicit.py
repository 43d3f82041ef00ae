"""Benchmark of the explicit-state engine (a benchmark, not a test: it asserts nothing).

For every default scenario (``spec/scenarios/``) under variant ``alpha-1.37`` and every
``bench/scenarios/*.yaml``, one breadth-first search without and one with symmetry reduction by
the interpreted core (``checks/search/breadth_first.py``); for the bench scenarios also the vector core
(``checks/search/hybrid.py`` from the initial state on: the model traced, compiled to C and
evaluated one layer at a time) on one and on two worker threads. Every ``always``/``sometimes``
property of the catalog is judged during the search. Prints distinct states, transitions, depth,
seconds, distinct states per second and bytes per stored state as a table. The vector core's
tracing and C compilation happen before the measured search (the compiled model is cached) and are
reported apart.

Memory is measured honestly, one search per fresh process (multiprocessing, "spawn" context):
the context and transition system are built first, then ``ru_maxrss`` (peak resident set size,
kilobytes on Linux) is read before and after ``explore``. The growth, divided by the number of
distinct states, is the *peak resident memory of the whole search* (state table, parent links,
depth list, queue, interpreter overhead) per state, not the size of a per-state encoding.

The bench scenarios are also run by the vector core with **every** property (eventually
included, the default of ``kepcheck check``): the graph kept as arrays, then the liveness checker
on it; that row's states/s (search and liveness seconds together) is divided by the rate of a
plain-Python BFS of the SPIN toy (``bench/toy_plain.py``) measured in the same run.

Run: ``make bench`` or ``python bench/bench_explicit.py [--max-states N] [--timeout S]
[--scenario NAME_OR_FILE ...] [--core interpreted|vector|every ...] [--json FILE]``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a plain script, with or without the editable install
    sys.path.insert(0, str(ROOT))

BENCH_SCENARIOS = Path(__file__).resolve().parent / "scenarios"
VARIANT = "alpha-1.37"


# --------------------------------------------------------------------------------------------
# The child: one exploration in a fresh interpreter.


def _search(ctx, system, representative, core: str, workers: int, max_states, timeout):
    """The search to measure, and a function to call first (the vector core's tracing and compiling).

    ``core``: ``interpreted``; ``vector`` (every always/sometimes property judged during the search);
    ``every`` (the vector core keeping the explored graph, then the liveness checker judging every
    eventually-property on it: what ``kepcheck check`` does with the default properties,
    ``checks/engines/explicit.check_explicit``)."""
    from kepcheck.checks.engines.liveness import check_liveness
    from kepcheck.checks.search.breadth_first import explore
    from kepcheck.checks.search.hybrid import explore_kep, prepare
    from kepcheck.spec.kep.properties import EVENTUALLY, PROPERTIES

    if core == "interpreted":
        return (lambda: None), (lambda _: (explore(system, max_states=max_states, timeout=timeout,
                                                    symmetry=representative), {}))
    every = core == "every"
    properties = list(PROPERTIES) if every else [p for p in PROPERTIES if p.kind != EVENTUALLY]

    def search(prepared):
        exploration = explore_kep(ctx, properties, max_states=max_states, timeout=timeout, symmetry=representative,
                                  hand_over_at=0, workers=workers, prepared=prepared, keep_graph=every)
        if not every:
            return exploration, {}
        started = time.perf_counter()
        judged = check_liveness(ctx, exploration, properties)
        return exploration, {"liveness_seconds": time.perf_counter() - started,
                             "eventually": {r.property: r.verdict for r in judged}}
    return (lambda: prepare(ctx, properties, representative is not None, workers)), search


def _toy_plain(conn) -> None:
    """Child process entry point: the plain-Python BFS of the toy (``bench/toy_plain.py``)."""
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from toy_plain import explore

        conn.send({"ok": True, **explore(5)})
    except BaseException as error:  # report, never hang the parent
        conn.send({"ok": False, "error": f"{type(error).__name__}: {error}"})
    finally:
        conn.close()


def _run_one(source: str, symmetry: bool, max_states: int | None, timeout: float | None, core: str, workers: int,
             conn) -> None:
    """Child process entry point: build the context (and, for the vector core, trace and compile the
    model), then measure only the search."""
    try:
        import gc
        import resource

        from kepcheck.checks.search.breadth_first import kep_system
        from kepcheck.model.context import Context
        from kepcheck.model.symmetry import make_representative, symmetry_classes
        from kepcheck.spec.language.loader import load_scenario
        from kepcheck.spec.kep.variants import variant_by_name

        scenario = load_scenario(source)
        ctx = Context.build(scenario, variant_by_name(VARIANT))
        system = kep_system(ctx)  # the full property catalog
        representative = make_representative(ctx) if symmetry else None
        classes = symmetry_classes(ctx)
        prepare, search = _search(ctx, system, representative, core, workers, max_states, timeout)
        prepared_at = time.perf_counter()
        prepared = prepare()
        prepared_at = time.perf_counter() - prepared_at
        gc.collect()
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rss_current = _current_rss_kb()  # for the record: if well below the peak, the growth is understated
        exploration, extras = search(prepared)
        rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        liveness_seconds = extras.get("liveness_seconds", 0.0)
        conn.send({
            **extras,
            "ok": True,
            "states": exploration.states,
            "transitions": exploration.transitions,
            "depth": exploration.depth,
            "seconds": exploration.seconds + liveness_seconds,
            "complete": exploration.complete,
            "budget": exploration.budget,
            "deadlocks": exploration.deadlocks,
            "found": sorted(exploration.found),
            "state_properties": len(system.state_properties),
            "step_properties": len(system.step_properties),
            "symmetry_classes": [[ctx.names[i] for i in members] for members in classes],
            "symmetry_active": representative is not None,
            "rss_before_kb": rss_before,
            "rss_after_kb": rss_after,
            "rss_current_before_kb": rss_current,
            "prepare_seconds": prepared_at,
        })
    except BaseException as error:  # report, never hang the parent
        import traceback

        conn.send({"ok": False, "error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()})
    finally:
        conn.close()


def _current_rss_kb() -> int | None:
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") // 1024


def run_isolated(source: str, symmetry: bool, max_states: int | None, timeout: float | None, core: str = "interpreted",
                 workers: int = 1) -> dict:
    return _in_child(_run_one, (source, symmetry, max_states, timeout, core, workers), timeout)


def _in_child(target, args: tuple, timeout: float | None) -> dict:
    """``target(*args, conn)`` in a fresh 'spawn' process; the dict it sends back."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=target, args=(*args, sender))
    process.start()
    sender.close()
    grace = (timeout or 3600) + 600  # the search stops itself at its time budget; this is a safety net (compiling)
    if receiver.poll(grace):
        try:
            result = receiver.recv()
        except EOFError:
            result = {"ok": False, "error": "child exited without a result"}
    else:
        result = {"ok": False, "error": f"no result after {grace:g} s"}
    process.join(10)
    if process.is_alive():
        process.kill()
        process.join()
    if not result.get("ok") and process.exitcode not in (0, None):
        result["error"] = f"{result.get('error', '')} (exit code {process.exitcode})".strip()
    return result


# --------------------------------------------------------------------------------------------
# The parent: choose scenarios, run them, print.


def machine_facts() -> dict:
    facts = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
    }
    try:  # read-only; GIT_OPTIONAL_LOCKS=0 keeps `git status` from touching the index
        env = dict(os.environ, GIT_OPTIONAL_LOCKS="0")
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=10).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=10).stdout.splitlines()
        if commit:
            facts["commit"] = commit + (f" (+{len(changed)} modified files)" if changed else "")
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        facts["usable_cpus"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                facts["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                facts["memory_gib"] = round(int(line.split()[1]) / 2**20, 1)
                break
    except OSError:
        pass
    return facts


def select_scenarios(wanted: list[str] | None) -> list[tuple[str, str, str]]:
    """``(name, source file, group)`` for every scenario to run."""
    from kepcheck.spec.language.loader import SCENARIO_DIR, default_scenarios, load_scenario

    # a shipped scenario's source names it inside the package (spec/scenarios/...): load it from there
    available = [(s.name, str(SCENARIO_DIR / Path(s.source).name), "default") for s in default_scenarios()]
    available += [(load_scenario(p).name, str(p), "bench") for p in sorted(BENCH_SCENARIOS.glob("*.yaml"))]
    if not wanted:
        return available
    chosen = []
    for item in wanted:
        path = Path(item)
        if path.suffix in (".yaml", ".yml") and path.is_file():
            chosen.append((load_scenario(path).name, str(path), "file"))
            continue
        matches = [a for a in available if item in (a[0], Path(a[1]).stem, Path(a[1]).name)]
        if not matches:
            names = ", ".join(a[0] for a in available)
            raise SystemExit(f"unknown scenario {item!r} (known: {names}; or give a .yaml file)")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def figures(name: str, group: str, symmetry: bool, result: dict, core: str = "interpreted", workers: int = 1) -> dict:
    row = {"scenario": name, "group": group, "symmetry": symmetry, "variant": VARIANT, "core": core, "workers": workers}
    row.update(result)
    row.pop("ok", None)
    if result.get("ok"):
        states = result["states"]
        growth_kb = max(0, result["rss_after_kb"] - result["rss_before_kb"])
        row["rss_growth_kb"] = growth_kb
        row["states_per_second"] = states / result["seconds"] if result["seconds"] > 0 else None
        row["bytes_per_state"] = growth_kb * 1024 / states if states and growth_kb else None
    return row


def _core(row: dict) -> str:
    if row["core"] == "every":
        return f"vector ×{row['workers']}, every property"
    return row["core"] if row["core"] == "interpreted" else f"{row['core']} ×{row['workers']}"


def _int(value) -> str:
    return f"{value:,}"


def render(rows: list[dict], facts: dict, args, console) -> None:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAVY, title=f"explicit engine, variant {VARIANT}, every always/sometimes property checked",
                  title_justify="left")
    table.add_column("scenario", no_wrap=True)
    table.add_column("core", no_wrap=True)
    table.add_column("symmetry")
    table.add_column("search")
    table.add_column("states", justify="right")
    table.add_column("transitions", justify="right")
    table.add_column("depth", justify="right")
    table.add_column("seconds", justify="right")
    table.add_column("states/s", justify="right")
    table.add_column("peak RSS +MiB", justify="right")
    table.add_column("bytes/state", justify="right")
    table.add_column("reduction", justify="right")
    plain = {}
    previous = None
    for row in rows:
        if previous is not None and previous != row["scenario"]:
            table.add_section()
        previous = row["scenario"]
        if "error" in row:
            table.add_row(row["scenario"], _core(row), "on" if row["symmetry"] else "off", "[red]error[/red] (below)",
                          *[""] * 8)
            continue
        if not row["symmetry"]:
            plain[row["scenario"], row["core"], row["workers"]] = row
        if row["symmetry"]:
            sym = "on" if row["symmetry_active"] else "on (none)"
        else:
            sym = "off"
        if row["complete"]:
            search = "complete"
        else:
            search = "[yellow]budget[/yellow] (" + ("states" if row["budget"].startswith("state") else "time") + ")"
        reduction = ""
        base = plain.get((row["scenario"], row["core"], row["workers"]))
        if row["symmetry"] and base is not None:
            if row["complete"] and base["complete"]:
                reduction = f"{base['states'] / row['states']:.2f}x"
            else:
                reduction = "n/a"
        rate = row["states_per_second"]
        bps = row["bytes_per_state"]
        table.add_row(
            row["scenario"], _core(row), sym, search, _int(row["states"]), _int(row["transitions"]), str(row["depth"]),
            f"{row['seconds']:.2f}", f"{rate:,.0f}" if rate else "-", f"{row['rss_growth_kb'] / 1024:.1f}",
            f"{bps:,.0f}" if bps is not None else "-", reduction,
        )
    console.print(table)
    for row in rows:
        if "error" in row:
            console.print(f"[red]error[/red] {row['scenario']} {_core(row)} symmetry {'on' if row['symmetry'] else 'off'}: "
                          f"{row['error']}", markup=True, highlight=False)
    console.print("bytes/state '-': no peak-RSS growth visible (a small search fits in memory the process already had)")
    console.print("symmetry 'on (none)': the scenario has no interchangeable pods, so the reduced search is the plain one")
    console.print("reduction: states without / states with symmetry, when both searches are complete")


def every_property(rows: list[dict], toy: dict, console) -> None:
    """The user's ordinary run (every property, eventually included) against the yardstick: its rate
    over the plain-Python toy BFS's rate measured in this run, its bytes per state, and whether every
    eventually-property reached a verdict."""
    for row in (r for r in rows if r["core"] == "every"):
        verdicts = row.get("eventually", {})
        open_ones = sorted(name for name, verdict in verdicts.items() if verdict == "inconclusive")
        ratio = (f"{row['states_per_second'] / toy['states_per_second']:.2f}" if toy.get("ok") and
                 row["states_per_second"] else "-")
        bps = "-" if row["bytes_per_state"] is None else f"{row['bytes_per_state']:,.0f}"
        console.print(
            f"every property, {row['scenario']}: {row['states']:,} states in {row['seconds']:.2f} s (search "
            f"{row['seconds'] - row['liveness_seconds']:.2f} s + liveness {row['liveness_seconds']:.2f} s) = "
            f"{row['states_per_second'] or 0:,.0f} states/s, {bps} bytes/state", highlight=False)
        console.print(f"every property / plain-Python toy BFS, {row['scenario']}: {ratio} "
                      f"({'search complete' if row['complete'] else 'budget: ' + row['budget']}; "
                      f"{len(verdicts)} eventually-properties, "
                      + (f"inconclusive: {', '.join(open_ones)})" if open_ones else "every one decided)"),
                      highlight=False)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-states", type=int, default=1_000_000, help="state budget per run (default 1000000)")
    parser.add_argument("--timeout", type=float, default=300.0, help="time budget per run in seconds (default 300)")
    parser.add_argument("--scenario", action="append", metavar="NAME_OR_FILE",
                        help="run only this scenario (name, file stem or .yaml path); repeatable")
    parser.add_argument("--core", action="append", choices=("interpreted", "vector", "every"),
                        help="run only this core's rows (every: the vector core with every property, eventually "
                             "included); repeatable; default all")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON to FILE")
    args = parser.parse_args(argv)

    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 180)
    log = Console(stderr=True, width=None if sys.stderr.isatty() else 160)
    facts = machine_facts()
    console.print(f"[bold]kepcheck explicit-engine benchmark[/bold]  {facts['date']}")
    console.print(f"python {facts['python']} | cpus {facts['cpu_count']}"
                  + (f" (usable {facts['usable_cpus']})" if "usable_cpus" in facts else "")
                  + (f" | {facts['cpu_model']}" if "cpu_model" in facts else "")
                  + (f" | {facts['memory_gib']} GiB" if "memory_gib" in facts else ""))
    console.print(f"platform {facts['platform']}" + (f" | commit {facts['commit']}" if "commit" in facts else ""))
    console.print(f"budget per run: {args.max_states:,} states, {args.timeout:g} s; one fresh 'spawn' process per run")
    console.print("bytes/state = peak RSS growth of the whole search (state table, parent links, queue, ...) "
                  "/ distinct states; not a per-state encoding size")
    console.print()

    scenarios = select_scenarios(args.scenario)
    rows = []
    started = time.perf_counter()
    toy = _in_child(_toy_plain, (), None)  # the yardstick, in this run: a plain-Python BFS of the toy
    if toy.get("ok"):
        log.print(f"  plain-Python BFS of the toy (bench/toy_plain.py): {toy['states']:,} states "
                  f"{toy['seconds']:.2f} s  {toy['states_per_second']:,.0f} states/s  "
                  f"{toy['bytes_per_state']:,.0f} bytes/state", highlight=False)
    else:
        log.print(f"[red]plain-Python BFS of the toy: {toy['error']}[/red]")
    for name, source, group in scenarios:
        runs = [("interpreted", 1, symmetry) for symmetry in (False, True)]
        if group != "default":  # the vector core on one and on two worker threads; every property on one
            runs += [("vector", workers, symmetry) for symmetry in (False, True) for workers in (1, 2)]
            runs.append(("every", 1, False))
        runs = [run for run in runs if not args.core or run[0] in args.core]
        for core, workers, symmetry in runs:
            result = run_isolated(source, symmetry, args.max_states, args.timeout, core, workers)
            row = figures(name, group, symmetry, result, core, workers)
            rows.append(row)
            what = f"{name:28} {core:11} {workers} worker{'s' if workers > 1 else ' '} symmetry {'on ' if symmetry else 'off'}"
            if "error" in row:
                log.print(f"[red]{what}: {row['error']}[/red]")
                if row.get("traceback"):
                    log.print(row["traceback"], markup=False, highlight=False)
            else:
                if core == "every":
                    what += f" (liveness {row['liveness_seconds']:.2f} s)"
                log.print(f"  {what}  {row['states']:>9,} states {row['seconds']:7.2f} s  "
                          f"{row['states_per_second'] or 0:9,.0f} states/s"
                          + ("" if row["complete"] else f"  ({row['budget']})")
                          + (f"  (traced and compiled before: {row['prepare_seconds']:.1f} s)" if core != "interpreted"
                             else ""), highlight=False)
    total = time.perf_counter() - started

    render(rows, facts, args, console)
    done = [r for r in rows if "error" not in r]
    every_property(done, toy, console)
    for group in ("default", "bench", "file"):
        for core, workers in (("interpreted", 1), ("vector", 1), ("vector", 2)):
            for symmetry in (False, True):
                chosen = [r for r in done if r["group"] == group and r["symmetry"] == symmetry and r["core"] == core
                          and r["workers"] == workers]
                seconds = sum(r["seconds"] for r in chosen)
                if chosen and seconds > 0:
                    states = sum(r["states"] for r in chosen)
                    console.print(f"{group} scenarios, {core} core, {workers} worker{'s' if workers > 1 else ''}, "
                                  f"symmetry {'on' if symmetry else 'off'}: {states:,} states in {seconds:.2f} s of "
                                  f"search = {states / seconds:,.0f} states/s", highlight=False)
    for symmetry in (False, True):
        one, two = ([r for r in done if r["core"] == "vector" and r["symmetry"] == symmetry and r["workers"] == w]
                    for w in (1, 2))
        if one and two and sum(r["seconds"] for r in two) > 0:
            ratio = sum(r["seconds"] for r in one) / sum(r["seconds"] for r in two)
            console.print(f"vector core, symmetry {'on' if symmetry else 'off'}: 1 worker / 2 workers = {ratio:.2f}x "
                          f"(search seconds)", highlight=False)
    if done:
        props = done[0]
        console.print(f"properties judged per run: {props['state_properties']} state + {props['step_properties']} step "
                      f"(liveness is not part of this search)")
    console.print(f"total wall time {total:.1f} s ({len(rows)} runs)")

    if args.json:
        payload = {"machine": facts, "variant": VARIANT, "max_states": args.max_states, "timeout": args.timeout,
                   "wall_seconds": total, "toy_plain": toy, "runs": rows}
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        console.print(f"figures written to {args.json}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
