"""``kepcheck import FILE``: a cluster snapshot to a scenario file (``checks/kube/snapshot.py``).

The command line's side: the options that choose the nodes (``--node``, ``--no-pending``) and add
the environment a snapshot lacks (``--resize POD=cpu=2,memory=1Gi``, ``--arrival
NAME:PRIORITY:cpu=1[:Never]``, ``--delete POD``, ``--scheduler-restart``, ``--recreate POD``, ``--max-events N``), the
scenario written as YAML to stdout or ``-o FILE`` (atomically), and on stderr one summary line of
what was kept and left out, plus a line when the scenario is larger than the explicit engine
explores in about a minute. Every refusal is one line ``FILE: FIELD: problem``, exit 2.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
import yaml

from kepcheck.spec.language.yaml_safe import InputError, load_document
from kepcheck.spec.limits import one_line, shown

from kepcheck.checks.exits import EXIT_OK, UsageError
from kepcheck.checks.kube.snapshot import (
    EXHAUSTIVE_EVENTS, EXHAUSTIVE_NODES, EXHAUSTIVE_PODS, read_objects, scenario_from_objects,
)
from kepcheck.checks.outputs.files import say

__all__ = ["add_import_parser", "command_import"]

_SCENARIO_NAME = re.compile(r"[A-Za-z0-9](?:[-.A-Za-z0-9]*[A-Za-z0-9])?")


def add_import_parser(sub) -> None:
    """The ``import`` subcommand's arguments."""
    command = sub.add_parser("import", help="turn a 'kubectl get nodes,pods,priorityclasses,pdb -A -o yaml' snapshot "
                             "into a scenario file")
    command.add_argument("file", metavar="FILE", help="the snapshot: a v1 List, or a multi-document YAML of objects")
    command.add_argument("-o", "--output", metavar="OUT", help="write the scenario here (default: stdout)")
    command.add_argument("--name", help="the scenario's name (default: FILE's name without .yaml, else 'imported')")
    command.add_argument("--node", action="append", metavar="NAME", help="keep this node (repeatable; default: all); "
                         "pods on other nodes are left out and counted")
    command.add_argument("--no-pending", action="store_true", help="leave out pending pods (no spec.nodeName)")
    command.add_argument("--resize", action="append", metavar="POD=cpu=Q[,memory=Q]",
                         help="environment: a resize the user may request (POD: scenario name or namespace/name)")
    command.add_argument("--arrival", action="append", metavar="NAME:PRIORITY:cpu=Q[,memory=Q][:Never]",
                         help="environment: a pod that may be created")
    command.add_argument("--delete", action="append", metavar="POD", help="environment: a pod that may be deleted")
    command.add_argument("--scheduler-restart", action="store_true", help="environment: the scheduler may restart once")
    command.add_argument("--recreate", action="append", metavar="POD",
                         help="environment: a pod its controller recreates (same name, pending) once it is gone")
    command.add_argument("--max-events", type=int, metavar="N", help="environment: at most N events in one run")


def _requests(text: str, flag: str, value: str) -> dict:
    """``cpu=2,memory=1Gi`` -> {"cpu": "2", "memory": "1Gi"} (the loader checks the quantities)."""
    pairs = [part.partition("=") for part in text.split(",")]
    if not text or any(not name or not sep or not quantity for name, sep, quantity in pairs):
        raise UsageError(f"{flag} {shown(value)}: expected resources as cpu=Q[,memory=Q]")
    return {name.strip(): quantity.strip() for name, _, quantity in pairs}


def _arrival(value: str) -> dict:
    parts = value.split(":")
    if len(parts) not in (3, 4) or not parts[0]:
        raise UsageError(f"--arrival {shown(value)}: expected NAME:PRIORITY:cpu=Q[,memory=Q][:Never]")
    try:
        priority = int(parts[1])
    except ValueError:
        raise UsageError(f"--arrival {shown(value)}: the priority {shown(parts[1])} is not an integer") from None
    arrival = {"name": parts[0], "priority": priority, "requests": _requests(parts[2], "--arrival", value)}
    if len(parts) == 4:
        arrival["preemptionPolicy"] = parts[3]
    return arrival


def environment_of(options) -> dict:
    """The scenario's ``environment`` from the command line's options."""
    environment: dict = {}
    for value in options.resize or ():
        pod, _, text = value.partition("=")
        if not pod:
            raise UsageError(f"--resize {shown(value)}: expected POD=cpu=Q[,memory=Q]")
        environment.setdefault("resizes", []).append({"pod": pod, "requests": _requests(text, "--resize", value)})
    for value in options.arrival or ():
        environment.setdefault("arrivals", []).append(_arrival(value))
    if options.delete:
        environment["deletions"] = list(options.delete)
    if options.scheduler_restart:
        environment["schedulerRestarts"] = 1
    if options.recreate:
        environment["recreations"] = list(options.recreate)
    if options.max_events is not None:
        if options.max_events < 0:
            raise UsageError(f"--max-events must be at least 0, got {options.max_events}")
        environment["maxEvents"] = options.max_events
    return environment


def _default_name(path: str) -> str:
    stem = Path(path).name.removesuffix(".yaml").removesuffix(".yml")
    return stem if len(stem) <= 63 and _SCENARIO_NAME.fullmatch(stem) else "imported"


def scenario_text(document: dict) -> str:
    """The scenario as YAML, leaf mappings in flow style; every string quoted if PyYAML's YAML 1.1
    spelling would read back differently under the loader's YAML 1.2 core schema."""
    text = yaml.safe_dump(document, sort_keys=False, default_flow_style=None, allow_unicode=True, width=1000)
    try:
        if load_document(text) == document:
            return text
    except InputError:
        pass
    return yaml.safe_dump(document, sort_keys=False, default_flow_style=None, allow_unicode=True, width=1000,
                          default_style='"')


def _write(path: str, text: str) -> None:
    """``text`` to ``path``, atomically (a temporary file beside it, then renamed)."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"-o {one_line(path)}: is a directory")
    temporary = None
    try:
        descriptor, temporary = tempfile.mkstemp(prefix=".kepcheck-import-", dir=target.parent)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, target)
    except OSError as error:
        if temporary is not None and os.path.exists(temporary):
            os.unlink(temporary)
        raise UsageError(f"-o {one_line(path)}: cannot write ({error.strerror})") from None


def command_import(options) -> int:
    """Read the snapshot, build the scenario, write it; the summary (and the size note) on stderr."""
    environment = environment_of(options)
    objects = read_objects(options.file)
    name = options.name if options.name is not None else _default_name(options.file)
    document, summary = scenario_from_objects(objects, name=name, nodes=options.node, environment=environment,
                                              pending=not options.no_pending, source=options.file)
    text = scenario_text(document)
    if options.output:
        _write(options.output, text)
    else:
        sys.stdout.write(text)
    say(f"kepcheck: import: {one_line(summary.line())}")
    if summary.too_big():
        arrivals = f" (and {summary.arrivals} arrivals)" if summary.arrivals else ""
        say(f"kepcheck: import: {summary.pods} pods{arrivals} on {summary.nodes} nodes with {summary.events} environment "
            "events is more than the explicit engine explores in about a minute (measured: "
            f"{EXHAUSTIVE_PODS} pods on {EXHAUSTIVE_NODES} nodes with {EXHAUSTIVE_EVENTS} events); check it with "
            "--engine random, or keep fewer nodes with --node")
    return EXIT_OK
