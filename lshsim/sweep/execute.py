"""Running a sweep: its unfinished cells, in process or on Dask, into the Parquet store.

:func:`run_sweep` enumerates and checks every cell, opens the store (new, or resumed: the cells
already in a part are skipped), runs the rest and writes their rows in parts of at most
``batch`` rows, or every :data:`FLUSH_SECONDS` when cells are slow. On an error or Ctrl-C the
rows already computed are written first, so ``--resume`` loses nothing finished.

Where cells run: ``workers=0`` in this process, one after another (an estimate may use several
threads); ``workers=N`` on a ``dask.distributed.LocalCluster`` of N processes with one thread
each; ``scheduler="tcp://HOST:PORT"`` on an existing Dask cluster (so Dask's Kubernetes, SLURM
and cloud deployers), whose workers must import the same lshsim. Cells go to Dask in small
chunks and come back in any order; each cell's numbers depend on its seed only
(:mod:`lshsim.sweep.cells`), so the rows are the same in every case except ``seconds``.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from lshsim._validate import check_float, check_int
from lshsim.sweep.cells import Cell, enumerate_cells
from lshsim.sweep.runner import run_cell, run_cells
from lshsim.sweep.spec import Spec
from lshsim.sweep.store import META, Store, check_store, open_store

#: A Dask address: ``PROTOCOL://HOST:PORT`` or ``HOST:PORT`` (HOST a name, IPv4 or [IPv6]).
_ADDRESS = re.compile(r"^(?:[a-z][a-z0-9+.-]*://)?(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):\d{1,5}$")


def check_address(scheduler: str) -> str:
    """Check that ``scheduler`` looks like a Dask address before trying to reach it.

    Args:
        scheduler: ``--scheduler``'s value.

    Returns:
        ``scheduler``.

    Raises:
        ValueError: one line naming ``--scheduler`` and the expected form.
    """
    m = _ADDRESS.match(scheduler)
    if not m or int(scheduler.rsplit(":", 1)[1]) > 65535:
        raise ValueError(
            f"--scheduler: expected an address like tcp://HOST:PORT, got {scheduler!r}"
        )
    return scheduler


#: Rows per part file (a part is also written every FLUSH_SECONDS): ``--part-rows``'s default.
BATCH = 500
#: Seconds to reach a scheduler and see one of its workers: ``--timeout``'s default.
TIMEOUT = 30.0
#: Extra seconds the connection gets beyond its timeout before it is abandoned (Dask's own
#: ``Client(timeout=)`` does not bound a server that accepts and never answers).
GRACE = 1.0
#: Longest time computed rows wait before they are written.
FLUSH_SECONDS = 60.0
#: Chunks per Dask worker aimed at (for load balance), and most cells in one chunk.
CHUNKS_PER_WORKER = 8
MAX_CHUNK = 16


@dataclass(frozen=True)
class Summary:
    """What a sweep did.

    Attributes:
        out: the store's folder.
        cells: cells in the spec.
        skipped: cells already finished before this run (``--resume``).
        ran: cells this run computed.
        parts: part files in the store now.
        seconds: this run's wall time.
        spec_sha256: the spec's hash.
    """

    out: str
    cells: int
    skipped: int
    ran: int
    parts: int
    seconds: float
    spec_sha256: str

    def to_dict(self) -> dict:
        """A JSON-ready dict of every field."""
        return asdict(self)


def check_run(
    spec: Spec,
    out: str | Path,
    *,
    workers: int = 0,
    scheduler: str | None = None,
    resume: bool = False,
    batch: int = BATCH,
    timeout: float = TIMEOUT,
) -> None:
    """Every check of :func:`run_sweep` but the cells', reading only: nothing is created.

    A command calls it (and :func:`lshsim.sweep.cells.enumerate_cells`) before its work starts,
    so bad options, a foreign file in ``out`` or a damaged part end it before anything is
    written (:func:`lshsim.sweep.store.check_store`).

    Args:
        spec: the checked spec.
        out: the store's folder.
        workers: as :func:`run_sweep`.
        scheduler: as :func:`run_sweep`.
        resume: as :func:`run_sweep`.
        batch: as :func:`run_sweep`.
        timeout: as :func:`run_sweep`.

    Raises:
        ValueError: one line naming the option, folder or file.
    """
    _check_options(workers, scheduler, batch, timeout)
    check_store(out, spec, resume=resume)


def _check_options(workers, scheduler, batch, timeout) -> tuple[int, int, float]:
    """``(workers, batch, timeout)`` checked, and the scheduler's address."""
    workers = check_int("--workers", workers, 0, 4096)
    batch = check_int("--part-rows", batch, 1)
    timeout = check_float("--timeout", timeout, 0.0, 86400.0, lo_open=True)
    if scheduler is not None:
        check_address(scheduler)
    return workers, batch, timeout


def run_sweep(
    spec: Spec,
    out: str | Path,
    *,
    workers: int = 0,
    scheduler: str | None = None,
    resume: bool = False,
    batch: int = BATCH,
    timeout: float = TIMEOUT,
    progress: Callable[[int, int], None] | None = None,
    cells: list[Cell] | None = None,
) -> Summary:
    """Run every unfinished cell of ``spec`` and store the rows in ``out``.

    Args:
        spec: the checked spec (:func:`lshsim.sweep.spec.load_spec`).
        out: the store's folder: new or empty, or the same spec's sweep with ``resume``.
        workers: 0 runs the cells in this process; N >= 1 starts a LocalCluster of N
            single-threaded processes. Ignored with ``scheduler``.
        scheduler: the address of an existing Dask scheduler (``tcp://HOST:PORT``).
        resume: continue the sweep in ``out``, skipping the cells already stored.
        batch: most rows per part file, >= 1.
        timeout: seconds to reach ``scheduler`` and see one of its workers.
        progress: called as ``progress(done, total)`` (in cells) as rows arrive.
        cells: ``enumerate_cells(spec)``, where the caller has them already (default: they
            are enumerated and checked here).

    Returns:
        The :class:`Summary`.

    Raises:
        ValueError: one line naming the problem: a bad cell, folder or spec mismatch (see
            :func:`lshsim.sweep.store.check_store`), an unreachable scheduler.
    """
    workers, batch, timeout = _check_options(workers, scheduler, batch, timeout)
    start = time.perf_counter()
    cells = enumerate_cells(spec) if cells is None else cells
    store = open_store(out, spec, resume=resume)  # owns the folder until unlock()
    try:
        finished = store.finished()
        todo = [c for c in cells if c.key not in finished]
        done = len(cells) - len(todo)
        with _rows_of(todo, workers, scheduler, timeout) as results:  # connects before writes
            store.begin(len(cells))
            if progress:
                progress(done, len(cells))
            with _Writer(store, batch) as writer:
                for rows in results:
                    writer.add(rows)
                    done += len(rows)
                    if progress:
                        progress(done, len(cells))
        parts = len(store.parts())
    finally:
        store.unlock()
    return Summary(
        str(store.path),
        len(cells),
        len(cells) - len(todo),
        len(todo),
        parts,
        time.perf_counter() - start,
        spec.sha256(),
    )


class _Writer:
    """Buffers rows and writes a part per ``batch`` rows or :data:`FLUSH_SECONDS`, and at exit."""

    def __init__(self, store: Store, batch: int):
        self.store, self.batch = store, batch
        self.rows: list[dict] = []
        self.last = time.monotonic()

    def __enter__(self):
        return self

    def add(self, rows: list[dict]) -> None:
        self.rows.extend(rows)
        while len(self.rows) >= self.batch:
            self._write(self.batch)
        if self.rows and time.monotonic() - self.last >= FLUSH_SECONDS:
            self._write(len(self.rows))

    def _write(self, count: int) -> None:
        self.store.write_part(self.rows[:count])
        del self.rows[:count]
        self.last = time.monotonic()

    def __exit__(self, *exc) -> None:  # on errors too: what was computed is kept
        if self.rows and (self.store.path / META).is_file():
            self._write(len(self.rows))


@contextlib.contextmanager
def _rows_of(todo: list[Cell], workers: int, scheduler: str | None, timeout: float):
    """Connect where the cells run; yield an iterator of their rows, in lists, as they finish.

    In process (or with nothing to run) the rows come in order; on Dask, as chunks finish.
    """
    if not todo or (workers == 0 and scheduler is None):
        yield ([run_cell(cell)] for cell in todo)
        return
    with dask_client(workers, scheduler, timeout) as client:
        yield _dask_rows(client, todo)


def _dask_rows(client, todo: list[Cell]) -> Iterator[list[dict]]:
    """Run ``todo`` in chunks on ``client``'s workers; yield each chunk's rows as it finishes."""
    from dask.distributed import as_completed

    n = max(1, len(client.scheduler_info()["workers"]))
    size = max(1, min(MAX_CHUNK, len(todo) // (CHUNKS_PER_WORKER * n)))
    chunks = [todo[i : i + size] for i in range(0, len(todo), size)]
    futures = client.map(run_cells, chunks, threads=1, pure=False)
    try:
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.cancel(futures)


def connect(scheduler: str, timeout: float):
    """A ``dask.distributed.Client`` of ``scheduler``, reached within ``timeout`` (+ :data:`GRACE`).

    The connection runs in a daemon thread: a server that accepts and never answers (which
    Dask's ``Client(timeout=)`` waits on forever) is abandoned at the deadline.

    Args:
        scheduler: the scheduler's address.
        timeout: seconds to reach it.

    Returns:
        The connected client.

    Raises:
        ValueError: one line naming ``--scheduler``: nothing answered in time, or what
            answered is not a Dask scheduler.
    """
    from dask.distributed import Client

    box: dict = {}

    def attempt():
        try:
            box["client"] = Client(scheduler, timeout=timeout)
        except BaseException as exc:  # reported below, in the caller's thread
            box["error"] = exc

    thread = threading.Thread(target=attempt, name="lshsim-sweep-connect", daemon=True)
    thread.start()
    thread.join(timeout + GRACE)
    if thread.is_alive():
        raise ValueError(
            f"--scheduler {scheduler}: no answer within {timeout:g} s (something accepts the "
            "connection but does not speak Dask's protocol, or the scheduler is stuck)"
        )
    exc = box.get("error")
    if exc is None:
        return box["client"]
    if isinstance(exc, MemoryError | OverflowError | EOFError):
        raise ValueError(
            f"--scheduler {scheduler}: what answered is not a Dask scheduler ({type(exc).__name__})"
        ) from None
    if isinstance(exc, OSError | TimeoutError | ValueError | TypeError):
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ValueError(
            f"--scheduler {scheduler}: no Dask scheduler answered within {timeout:g} s ({why})"
        ) from None
    raise exc


@contextlib.contextmanager
def dask_client(workers: int, scheduler: str | None = None, timeout: float = TIMEOUT):
    """A Dask client: of a new LocalCluster of ``workers`` processes, or of ``scheduler``.

    The LocalCluster's workers have one thread each and ``NUMBA_NUM_THREADS=1``, so N workers
    use N cores. Both are closed on exit.

    Args:
        workers: processes of the LocalCluster (>= 1), when ``scheduler`` is None.
        scheduler: the address of an existing scheduler.
        timeout: seconds to reach ``scheduler`` and see one of its workers.

    Yields:
        The connected ``dask.distributed.Client``.

    Raises:
        ValueError: the scheduler did not answer, or has no worker, within ``timeout``.
    """
    from dask.distributed import Client, LocalCluster

    if scheduler is None:
        with (
            LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",  # its HTTP server on a free port, without the dashboard
                scheduler_kwargs={"dashboard": False},
                env={"NUMBA_NUM_THREADS": "1"},
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client
        return
    client = connect(scheduler, timeout)
    with client:
        try:
            client.wait_for_workers(1, timeout=timeout)
        except TimeoutError:
            raise ValueError(
                f"--scheduler {scheduler}: the scheduler has no worker after {timeout:g} s"
            ) from None
        yield client
