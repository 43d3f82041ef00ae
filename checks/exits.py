"""The command line's exit codes, and the checks on its options made before any work starts.

Exit codes, one meaning each (docs/using.md's table lists them): 0 every verdict matches the manifest
(or has no expectation); 1 some verdict differs; 2 bad input or usage (argparse's errors too, and an
output directory that cannot take the report); 3 some verdict is inconclusive within the budget
(and none differs); 4 an internal error (one line; ``--debug`` shows the traceback); 128 + the
signal's number when interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP). A closed stdout pipe
(``kepcheck list | head -1``) ends quietly with the code the command had.
"""

from __future__ import annotations

import math
import traceback

from kepcheck.checks.outputs.files import OutputError, check_output_dir, say
from kepcheck.checks.outputs.locks import lock_output

__all__ = ["EXIT_OK", "EXIT_DIFFERS", "EXIT_USAGE", "EXIT_INCONCLUSIVE", "EXIT_INTERNAL", "EXIT_INTERRUPTED",
           "UsageError", "validate_options", "internal_error", "OUTPUT_FLAGS"]

EXIT_OK, EXIT_DIFFERS, EXIT_USAGE, EXIT_INCONCLUSIVE, EXIT_INTERNAL = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130  # 128 + SIGINT; SIGTERM and SIGHUP give 128 + their number (checks/outputs/signals.Interrupted.code)
POSITIVE = ("max_states", "timeout", "timeout_per_check", "depth", "max_k", "examples", "steps", "workers")
OUTPUT_FLAGS = {"report": "--report", "out": "--out"}  # option -> flag of a report directory
UNROLLING_ENGINES = ("bmc", "induction")  # they unroll depths and keep no states: --max-states means nothing


class UsageError(Exception):
    """Bad usage of the command line: one line, exit 2."""


def validate_options(options) -> None:
    """Refuse, before any checking: budgets that are not positive and finite (``nan``, ``inf``), a
    state budget for an engine that keeps no states, a ``--fairness`` value with an empty group name
    (only ``none`` means none), and a report directory that cannot be written or that another run is
    writing (``checks/outputs/files.py``: its lock is then held until this process ends)."""
    for name in POSITIVE:
        value = getattr(options, name, None)
        if value is not None and not (value > 0 and (isinstance(value, int) or math.isfinite(value))):
            raise UsageError(f"--{name.replace('_', '-')} must be a positive finite number, got {value!r}")
    if getattr(options, "max_states", None) is not None and getattr(options, "engine", None) in UNROLLING_ENGINES:
        raise UsageError(f"--max-states bounds the states an explicit search keeps; the {options.engine} engine "
                         "unrolls depths and keeps none (bound it with --depth/--max-k or --timeout)")
    for value in getattr(options, "fairness", None) or ():
        if not all(item.strip() for item in value.split(",")):
            raise UsageError(f"--fairness {value!r} has an empty group name (name the groups, or 'none' for none)")
    for name, flag in OUTPUT_FLAGS.items():
        value = getattr(options, name, None)
        if value is not None:
            try:
                lock_output(check_output_dir(value), value)  # held to the end: no second run writes it meanwhile
            except OutputError as error:
                raise UsageError(f"{flag} {error}") from None


def internal_error(options, error: Exception) -> int:
    """One line for an error kepcheck did not expect (the traceback with ``--debug``): exit 4."""
    if getattr(options, "debug", False):
        traceback.print_exc()
    first = (str(error).strip().splitlines() or [""])[0][:200]
    say(f"kepcheck: internal error: {type(error).__name__}{': ' + first if first else ''} "
        "(rerun with --debug for the traceback)")
    return EXIT_INTERNAL
