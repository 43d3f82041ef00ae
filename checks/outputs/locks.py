"""Output directories held by one run at a time: the lock of a report directory or sweep store.

Two runs writing one report would interleave their staging and renames; two sweeps appending to
one store would check and store scenarios twice. ``lock_output`` makes the second run refuse at
once, with one line naming the first (``checks/exits.py`` takes the lock of ``--report`` and
``report --out`` before any checking, ``kepcheck sweep`` that of ``-o``). A run killed with
``kill -9`` cannot clean up: its lock goes with it (an ``flock``), and its staging directory beside
the target is removed by the next run that writes there (``files.remove_dead_staging``).

Left out: locking across machines (``flock`` on a network file system is only as good as the
file system's locks; the lock files live in the local temporary directory).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

from kepcheck.checks.outputs.files import OutputError

__all__ = ["lock_output"]

_LOCKS: dict[str, int] = {}  # lock file -> descriptor, held until the process ends (the kernel frees it even on kill -9)


def lock_output(target: Path, shown=None) -> None:
    """Hold the lock of the output directory ``target`` for the rest of this process, so that two
    runs never write one report or sweep store at once: ``OutputError`` (one line, exit 2) naming
    the process that holds it. The lock is an ``flock`` on a file named after ``target`` in a
    private folder of the temporary directory, so nothing is left beside the output and a killed
    process holds nothing; where that folder cannot be made the run goes on unlocked."""
    folder = Path(tempfile.gettempdir()) / f"kepcheck-locks-{os.getuid()}"
    path = folder / (hashlib.sha256(os.fsencode(target)).hexdigest()[:32] + ".lock")
    if str(path) in _LOCKS:
        return
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip() or "?"
        os.close(descriptor)
        raise OutputError(shown if shown is not None else target, f"is being written by another kepcheck (pid "
                          f"{holder}); wait for it to end, or choose another directory") from None
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, str(os.getpid()).encode("ascii"), 0)
    _LOCKS[str(path)] = descriptor
