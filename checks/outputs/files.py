"""Where the output goes: the report directory, checked before any work and written atomically, and
the standard streams, kept quiet on a closed pipe and readable on a terminal that is not UTF-8.

``check_output_dir(path)`` refuses, with one ``OutputError`` line naming the path and the problem,
an output directory that cannot be written: an empty path, an existing file or device, a directory
that is not a kepcheck report (so ``--out .`` or ``--out ~`` never deletes anything of the user's),
the current directory, a name longer than the file system allows, a parent that is not a writable
directory (probed by creating and removing a directory there, which also catches read-only file
systems when running as root).

``atomic_directory(target)`` yields a staging directory beside the target (``.NAME.tmp-PID``, same
parent, so one ``rename`` moves it); on success the old target is moved aside, the staging
directory renamed into place and the old one deleted, so a re-run leaves exactly the new report.
On any error or interrupt the staging directory is removed and the old target is left as it was.
``SIGINT``, ``SIGTERM`` and ``SIGHUP`` are held back (``pthread_sigmask``) while directories are
created, swapped or removed, so an interrupt lands before or after, never in between.
"""

from __future__ import annotations

import codecs
import errno
import glob
import os
import shutil
import stat
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from kepcheck.checks.outputs.signals import deferred_signals

__all__ = ["OutputError", "check_output_dir", "atomic_directory", "REPORT_HEADING", "quiet_stdout",
           "tolerant_streams", "ascii_only", "console", "width_of", "say"]

REPORT_HEADING = "# KEP-5836 design review"  # the first line of every review's index.md
REPORT_ENTRIES = frozenset({"index.md", "lifecycle.md", "lifecycle.dot", "scenarios", "traces"})


class OutputError(Exception):
    """An output path that cannot be written: ``str()`` is one line, ``PATH: problem``."""

    def __init__(self, path, problem: str) -> None:
        text = str(os.fspath(path))
        shown = repr(text) if len(text) <= 100 else repr(text[:60]) + f"… ({len(text)} characters)"
        super().__init__(f"{shown}: {' '.join(str(problem).split())}")


# --- the report directory --------------------------------------------------------------------------

def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISREG, "a file"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a directory"


def _is_report(path: Path, entries: list[str]) -> bool:
    """A directory kepcheck may replace: empty, holding only report entries, or a review (its
    ``index.md`` starts with the review heading)."""
    if set(entries) <= REPORT_ENTRIES:
        return True
    try:
        with open(path / "index.md", encoding="utf-8", errors="replace") as index:
            return index.read(len(REPORT_HEADING)) == REPORT_HEADING
    except OSError:
        return False


def _check_existing(value, target: Path) -> None:
    mode = os.stat(target).st_mode
    if not stat.S_ISDIR(mode):
        raise OutputError(value, f"exists and is {_kind(mode)}; name a directory")
    try:
        entries = sorted(os.listdir(target))
    except OSError as error:
        raise OutputError(value, f"cannot be read: {error.strerror}") from None
    if not _is_report(target, entries):
        shown = ", ".join(entries[:3]) + (", …" if len(entries) > 3 else "")
        raise OutputError(value, f"exists and is not a kepcheck report (it holds {shown}); "
                                 "name a new or empty directory, or a previous report")
    if not os.access(target, os.W_OK | os.X_OK):
        raise OutputError(value, "is a directory that is not writable")
    try:
        cwd = Path.cwd().resolve()
    except OSError:
        return
    if cwd == target or target in cwd.parents:
        raise OutputError(value, "is the current directory or contains it; name another directory")


def _check_names(value, target: Path, ancestor: Path) -> None:
    try:
        name_max, path_max = os.pathconf(ancestor, "PC_NAME_MAX"), os.pathconf(ancestor, "PC_PATH_MAX")
    except (OSError, ValueError):
        name_max, path_max = 255, 4096
    for part in target.parts:
        if len(os.fsencode(part)) > name_max:
            raise OutputError(value, f"a name is too long ({len(os.fsencode(part))} bytes; the file system allows "
                                     f"{name_max})")
    if len(os.fsencode(str(target))) + 200 > path_max:  # room for traces/<scenario>--<variant>--<property>
        raise OutputError(value, f"the path is too long for the report's files (the file system allows {path_max} "
                                 "bytes in all)")


def _check_parent(value, target: Path) -> None:
    ancestor = target.parent
    while not os.path.lexists(ancestor) and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    _check_names(value, target, ancestor if ancestor.is_dir() else Path("/"))
    if not ancestor.is_dir():
        raise OutputError(value, f"{str(ancestor)!r} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputError(value, f"cannot be created: directory {str(ancestor)!r} is not writable")
    probe = ancestor / f".kepcheck-probe-{os.getpid()}"
    try:
        with deferred_signals():
            os.mkdir(probe)
            os.rmdir(probe)
    except FileExistsError:
        pass
    except OSError as error:
        raise OutputError(value, f"cannot be created in {str(ancestor)!r}: {error.strerror}") from None


def check_output_dir(value) -> Path:
    """The absolute target of an output directory ``value`` (symbolic links resolved), after checking
    that a report can be written there; ``OutputError`` (one line) otherwise. Nothing is created."""
    text = os.fspath(value)
    if not str(text).strip():
        raise OutputError(value, "an empty path; name a directory (e.g. reports)")
    if "\0" in str(text):
        raise OutputError(value, "a path with a NUL character")
    target = Path(os.path.realpath(os.path.abspath(text)))
    if target == target.parent:
        raise OutputError(value, "is the root directory; name another directory")
    if os.path.exists(target):
        _check_existing(value, target)
    _check_parent(value, target)
    return target


def remove_dead_staging(target: Path) -> None:
    """Remove the staging directories of ``target`` whose process no longer runs (``kill -9`` while
    writing), so that a re-run leaves exactly the new output beside it."""
    prefix = f".{target.name[:64]}.tmp-"
    for entry in target.parent.glob(f"{glob.escape(prefix)}*"):
        pid = entry.name[len(prefix):].split("-")[0].split(".")[0]
        if pid.isdigit() and os.path.isdir("/proc/self") and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(entry, ignore_errors=True)  # (without /proc nothing is removed)


def _make_staging(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_dead_staging(target)
    base = f".{target.name[:64]}.tmp-{os.getpid()}"
    for attempt in range(100):
        staging = target.parent / (base if attempt == 0 else f"{base}-{attempt}")
        try:
            staging.mkdir()
            return staging
        except FileExistsError:
            continue
    raise FileExistsError(f"no free staging name beside {target}")


def _swap(staging: Path, target: Path) -> None:
    """Put ``staging`` where ``target`` is: one rename when nothing is there; else move the old
    target aside, rename, delete the old one (and put it back if the rename fails)."""
    if not os.path.lexists(target):
        os.rename(staging, target)
        return
    aside = staging.with_name(staging.name + ".old")
    os.rename(target, aside)
    try:
        os.rename(staging, target)
    except OSError:
        os.rename(aside, target)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def _where(error: OSError, staging: Path, target: Path) -> str:
    """The error's file, named inside the target rather than the staging directory."""
    name = error.filename if isinstance(error.filename, str) else ""
    if name.startswith(str(staging)):
        name = str(target) + name[len(str(staging)):]
    return f" ({name})" if name else ""


@contextmanager
def atomic_directory(target: Path, shown=None) -> Iterator[Path]:
    """Yield a staging directory beside ``target``; when the block ends normally it replaces
    ``target`` (whatever was there is deleted). On an error or interrupt nothing of it is left and
    ``target`` is unchanged; an ``OSError`` becomes ``OutputError`` naming ``shown`` (default the
    target)."""
    target = Path(target)
    staging = None
    try:
        with deferred_signals():
            staging = _make_staging(target)
        yield staging
        with deferred_signals():
            _swap(staging, target)
    except BaseException as error:
        if staging is not None:
            with deferred_signals():
                shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, OSError):
            raise OutputError(shown if shown is not None else target, "cannot write the report: "
                              f"{error.strerror or error}{_where(error, staging or target, target)}") from None
        raise


# --- the standard streams ----------------------------------------------------------------------------

_ASCII = {"✓": "+", "✗": "x", "≈": "~", "∎": "#", "×": "x", "—": "-", "–": "-", "…": ".", "→": ">", "←": "<",
          "⟲": "@", "⚠": "!", "·": ".", "≥": ">", "≤": "<", "‹": "<", "›": ">", "’": "'", "“": '"', "”": '"'}


def _ascii_fallback(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the symbols kepcheck prints, one ASCII character each (so tables stay
    aligned); anything else ``?``."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start:error.end]
    return "".join(_ASCII.get(char, "?") for char in text), error.end


codecs.register_error("kepcheck-ascii", _ascii_fallback)


def ascii_only(stream) -> bool:
    """Whether ``stream`` encodes with a codec other than UTF-8/16/32 (then JSON is written with
    ``\\u`` escapes, which are exact)."""
    try:
        return not codecs.lookup(getattr(stream, "encoding", None) or "utf-8").name.startswith("utf")
    except LookupError:
        return True


def tolerant_streams() -> None:
    """Make stdout and stderr write what their encoding cannot carry as ASCII (``_ASCII``) instead of
    raising ``UnicodeEncodeError`` (e.g. ``PYTHONIOENCODING=ascii``). UTF-8 streams are untouched."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and ascii_only(stream) and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="kepcheck-ascii")
            except (ValueError, OSError):
                pass


def width_of(stream) -> int:
    """The columns output on ``stream`` may use: ``$COLUMNS`` when it is set (also when the stream is a
    pipe or a file), else the terminal's width, else 200 (a pipe or a file)."""
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or 80
    except (OSError, ValueError, AttributeError):
        pass
    return 200


def console(stream):
    """A rich console on ``stream``, ``width_of(stream)`` columns wide; colour only on a terminal
    and never with ``$NO_COLOR`` set (rich reads it); rich reads the stream's encoding and draws
    ASCII boxes when it is not UTF-8. A broken pipe raises ``BrokenPipeError`` (rich's own reaction
    is ``SystemExit(1)``, which would read as "a verdict differs")."""
    from rich.console import Console  # rich loads in about 0.1 s: only when something is printed

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "broken pipe")

    return _Console(file=stream, highlight=False, soft_wrap=False, width=width_of(stream))


def say(line: str) -> None:
    """One line on stderr; a closed stderr is not an error of its own."""
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def quiet_stdout() -> None:
    """After a broken pipe on stdout: point its file descriptor at /dev/null, so that the flush at
    exit does not fail again ("Note on SIGPIPE" in the ``signal`` module's documentation)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
