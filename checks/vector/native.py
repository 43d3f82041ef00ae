"""Native code for the vector core: C compiled with the machine's compiler, cached, loaded with ctypes.

``build(source)`` compiles a C source into a shared library with ``cc`` (``$CC``), ``-O1`` or
``$KEPCHECK_CFLAGS``, and caches it by the hash of source and flags under ``$KEPCHECK_CACHE``
(default ``~/.cache/kepcheck``); a build is written under a temporary name and renamed into place,
so concurrent builds of the same source are safe. ``available()`` names the compiler, or gives None
where there is none: the vector core then evaluates with numpy alone. The sources are the
generated model (``checks/vector/compiled.py``) and the visited set (``checks/vector/hashset.c``).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
import numpy

__all__ = ["available", "build", "load", "pointer"]


def available() -> str | None:
    """The C compiler to use, or None."""
    return shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")


def _flags() -> list[str]:
    return os.environ.get("KEPCHECK_CFLAGS", "-O1").split()


def _cache_dir() -> Path:
    return Path(os.environ.get("KEPCHECK_CACHE") or Path.home() / ".cache" / "kepcheck")


def build(source: str, name: str = "model", timeout: float | None = None) -> Path:
    """The shared library of ``source`` (built once per source and flags); ``TimeoutError`` when the
    compiler needs more than ``timeout`` seconds (it is stopped: a time budget includes compiling)."""
    digest = hashlib.sha256((" ".join(_flags()) + "\n" + source).encode()).hexdigest()[:24]
    library = _cache_dir() / f"{name}-{digest}.so"
    if library.exists():
        return library
    compiler = available()
    if compiler is None:
        raise RuntimeError("no C compiler (cc) on this machine")
    library.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        c_file = Path(scratch) / f"{name}.c"
        c_file.write_text(source)
        built = Path(scratch) / f"{name}.so"
        if timeout is not None and timeout <= 0:
            raise TimeoutError(f"no time left to compile {name}.c")
        try:
            done = subprocess.run([compiler, *_flags(), "-shared", "-fPIC", "-o", str(built), str(c_file)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise TimeoutError(f"compiling {name}.c took more than {timeout:.1f} s") from None
        if done.returncode != 0:
            raise RuntimeError(f"the C compiler failed on {name}.c: {done.stderr[:2000]}")
        staged = library.with_name(f"{library.name}.{os.getpid()}")
        shutil.copyfile(built, staged)
        os.replace(staged, library)
    return library


def load(source: str, name: str = "model", timeout: float | None = None) -> ctypes.CDLL:
    return ctypes.CDLL(str(build(source, name, timeout)))


def pointer(array: numpy.ndarray, kind):
    """A ctypes pointer to a contiguous numpy array's data."""
    return array.ctypes.data_as(ctypes.POINTER(kind))
