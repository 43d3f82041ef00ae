"""A sweep's scenarios as tasks on a Dask distributed cluster (issue 17): ``kepcheck sweep
--cluster local:N`` starts a local cluster of N worker processes; ``--cluster tcp://HOST:PORT`` uses
a running one (its scheduler's address; its workers need this package installed, at the same
version). Each task is ``checks/sweep_store.check_scenario`` on one scenario document, a pure
function of plain data, so the results are those of ``--workers N`` and of one process: the same
records, collected in enumeration order and kept in the same resumable store.

Why Dask and not Ray: ``distributed`` is a pure-Python install of a few MB whose ``LocalCluster``
runs in the machine's own processes, and a cluster is one ``dask scheduler`` plus ``dask worker``
commands; Ray brings a native runtime (its raylet and object store, a wheel of well over 100 MB)
that this workload — independent, CPU-bound, small-argument tasks — does not need. Dask is an
optional extra (``pip install 'kepcheck[distributed]'``; ``make test`` installs it): the base install
and every other command work without it.
"""

from __future__ import annotations

import logging
import socket
from contextlib import contextmanager
from typing import Iterator

from kepcheck.spec.limits import shown

from kepcheck.checks.exits import UsageError

__all__ = ["cluster_client", "check_address", "map_in_order", "describe_cluster"]

CONNECT_TIMEOUT = "20s"


def _distributed():
    try:
        import distributed
    except ImportError:
        raise UsageError("--cluster needs the optional Dask extra: pip install 'kepcheck[distributed]'") from None
    return distributed


def _local_workers(address: str) -> int | None:
    """N for ``local:N`` (None for a scheduler address); UsageError for a malformed one."""
    if not address.startswith("local:"):
        if "://" not in address:
            raise UsageError(f"--cluster {address}: give local:N or a scheduler address such as tcp://host:8786")
        return None
    count = address[len("local:"):]
    if not count.isdigit() or not 1 <= int(count) <= 256:
        raise UsageError(f"--cluster {address}: local:N needs N between 1 and 256")
    return int(count)


REACH_TIMEOUT = 1.5  # seconds: a scheduler address that takes a TCP connection no sooner is refused


def check_address(address: str) -> None:
    """Refuse, before any work: a malformed ``--cluster`` value, and a scheduler address nothing
    listens at (a plain TCP connection within ``REACH_TIMEOUT``; Dask itself would retry for
    ``CONNECT_TIMEOUT``). UsageError, one line."""
    if _local_workers(address) is not None:
        return
    scheme, _, rest = address.partition("://")
    if scheme not in ("tcp", "tls"):
        raise UsageError(f"--cluster {shown(address)}: a scheduler address is tcp://HOST:PORT or tls://HOST:PORT")
    host, colon, port = rest.rstrip("/").rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--cluster {shown(address)}: expected HOST:PORT with a port between 1 and 65535")
    try:
        socket.create_connection((host, int(port)), timeout=REACH_TIMEOUT).close()
    except (OSError, UnicodeError) as error:
        why = "no answer" if isinstance(error, TimeoutError) else (getattr(error, "strerror", None) or str(error))
        raise UsageError(f"--cluster {shown(address)}: cannot reach the Dask scheduler ({why})") from None


@contextmanager
def cluster_client(address: str) -> Iterator[object]:
    """A Dask client: of a local cluster started for the sweep (``local:N``) or of the scheduler at
    ``address``. UsageError (one line) when Dask is missing or the scheduler cannot be reached."""
    workers = _local_workers(address)
    distributed = _distributed()
    quiet = logging.ERROR
    if workers is not None:
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=quiet) as cluster:
            with distributed.Client(cluster, set_as_default=False) as client:
                yield client
        return
    try:
        client = distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError) as error:
        raise UsageError(f"--cluster {address}: cannot reach the Dask scheduler ({error})") from None
    with client:
        yield client


def map_in_order(client, function, *arguments) -> list:
    """``function`` over the zipped ``arguments`` as cluster tasks, results in argument order."""
    futures = client.map(function, *arguments, pure=False)
    try:
        return client.gather(futures)
    except BaseException:
        client.cancel(futures)
        raise


def describe_cluster(client) -> str:
    """How many workers (and threads) the client's cluster has, for the sweep's last line."""
    info = client.scheduler_info()
    workers = info.get("workers", {})
    return f"{len(workers)} Dask worker(s)"
