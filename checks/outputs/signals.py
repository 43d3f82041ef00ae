"""Signals that end a run: SIGINT, SIGTERM and SIGHUP become ``Interrupted`` (exit code 128 + the
signal's number) in the main thread, so ``finally`` blocks and context managers clean up; a block
that must not be cut in two (a rename, a store line) holds them back (``deferred_signals``); a
signal that lands where Python cannot raise (a finalizer, a garbage-collector callback) is sent
again until the run has handled it; one whose exception another exception wrapped on its way up
is still found (``swallowed_interrupt``).
"""

from __future__ import annotations

import gc
import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["Interrupted", "deferred_signals", "install_interrupt_handlers", "interrupt_handled", "restore_handlers",
           "swallowed_interrupt"]

_HELD_SIGNALS = {getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)}


class Interrupted(KeyboardInterrupt):
    """A signal that ends the run (SIGINT, SIGTERM, SIGHUP): exit code 128 + the signal's number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.code = 128 + signum


_HOLD = {"depth": 0, "pending": None, "handled": False, "raised": None}
_RESEND = {"thread": None, "stop": threading.Event()}
_RESEND_SECONDS = 0.25


def _in_finalizer(frame) -> bool:
    """Whether the signal came inside a ``__del__`` or a garbage-collector callback (an exception
    raised there is printed as "Exception ignored" and lost: Z3 frees its terms in ``__del__``,
    Hypothesis times the collector with a ``gc.callbacks`` entry)."""
    callbacks = {code for code in (getattr(getattr(c, "__func__", c), "__code__", None) for c in gc.callbacks) if code}
    for _ in range(64):
        if frame is None:
            return False
        if frame.f_code.co_name == "__del__" or frame.f_code in callbacks:
            return True
        frame = frame.f_back
    return False


def _resend(signum: int) -> None:
    """Deliver the signal again every ``_RESEND_SECONDS`` until the run has handled it, so that an
    interrupt that landed in a finalizer (or was otherwise swallowed) still ends the run."""
    while not _RESEND["stop"].wait(_RESEND_SECONDS):
        try:
            os.kill(os.getpid(), signum)
        except OSError:
            return


def _on_signal(signum, frame) -> None:
    """Raise ``Interrupted`` in the main thread, unless inside ``deferred_signals`` (then at its end)
    or a finalizer (then at the next resend). Once the run has handled one, signals are ignored."""
    if _HOLD["handled"]:
        return
    if _RESEND["thread"] is None:
        _RESEND["thread"] = threading.Thread(target=_resend, args=(signum,), name="kepcheck-resend", daemon=True)
        _RESEND["thread"].start()
    if _HOLD["depth"]:
        _HOLD["pending"] = _HOLD["pending"] or signum
    elif not _in_finalizer(frame):
        _HOLD["raised"] = signum
        raise Interrupted(signum)


def swallowed_interrupt() -> Interrupted | None:
    """The ``Interrupted`` raised and not yet handled, when another exception reached the top instead
    (ctypes wraps an exception raised while it converts an argument in ``ArgumentError``)."""
    signum = _HOLD["raised"]
    return None if signum is None or _HOLD["handled"] else Interrupted(signum)


def install_interrupt_handlers() -> dict:
    """Turn SIGINT, SIGTERM and SIGHUP into ``Interrupted`` (so ``finally`` blocks and context
    managers clean up); returns the previous handlers for ``restore_handlers``. Outside the main
    thread (where handlers cannot be set) nothing changes."""
    previous = {}
    _HOLD.update(depth=0, pending=None, handled=False, raised=None)
    _RESEND.update(thread=None, stop=threading.Event())
    for signum in _HELD_SIGNALS:
        try:
            previous[signum] = signal.signal(signum, _on_signal)
        except (ValueError, OSError):
            pass
    return previous


def interrupt_handled() -> None:
    """The run has caught its ``Interrupted``: ignore further signals and stop resending."""
    _HOLD["handled"] = True
    _RESEND["stop"].set()
    if _RESEND["thread"] is not None:
        _RESEND["thread"].join()


def restore_handlers(previous: dict) -> None:
    """Put back the handlers ``install_interrupt_handlers`` replaced (after ``interrupt_handled``)."""
    interrupt_handled()
    for signum, handler in previous.items():
        if handler is not None:
            signal.signal(signum, handler)


@contextmanager
def deferred_signals() -> Iterator[None]:
    """Hold back SIGINT/SIGTERM/SIGHUP for the block: one that arrives is delivered after it. The
    signal mask covers Python's default handlers in a single thread; the counter covers
    ``_on_signal``, whichever thread the kernel picks."""
    try:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    except (AttributeError, ValueError, OSError):
        previous = None
    _HOLD["depth"] += 1
    try:
        yield
    finally:
        _HOLD["depth"] -= 1
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if not _HOLD["depth"] and _HOLD["pending"] is not None:
            signum, _HOLD["pending"] = _HOLD["pending"], None
            if not _HOLD["handled"]:
                raise Interrupted(signum)
