"""Where a Darshan review's logs are read and judged: a pool of long-lived worker processes on this node, or Dask
(a running scheduler, a LocalCluster, or Slurm jobs through dask-jobqueue's SLURMCluster) beyond it.

Both take the logs in batches (:func:`assess.darshan_review.judge_batch`) and keep a bounded window of them in
flight, so that memory stays flat in the number of logs. A log that kills its worker (darshan-util crashes on some
corrupt logs) breaks the process pool: the batches in flight are then read again one log each in a new pool, and a
log that breaks that too is read in a child Python of its own (:func:`assess.darshan_review.judge_apart`), whose
death says how it died. On Dask, the scheduler retries a task whose worker died and gives up with KilledWorker; the
batch is then read one log each in the same way.
"""

from __future__ import annotations

import os
import select
import signal
import threading
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterable, Iterator

from assess.darshan_review import Basis, JobResult, LogFile, judge_apart, judge_batch

__all__ = ["pool_results", "dask_results", "dask_client", "slurm_cluster", "BATCH"]

# Logs per task: enough that the judging of a batch shares its model and ceilings, few enough that a crash re-reads
# little and progress moves.
BATCH = 16
# Batches in flight per worker: one being read, one waiting, so that no worker idles while results come back.
_AHEAD = 2
# Seconds sbatch may take to say whether Slurm would run the workers' job.
SBATCH = 30.0


def _start(review: int) -> None:
    """A pool worker's start: PyDarshan imported once, the address space capped as for the one-log child, and the
    worker bound to the ``review`` process that made the pool (:func:`_end_with`)."""
    import darshan  # noqa: F401  (imported once here, not per log)

    from probes.readers.darshan_extract import limit_memory

    limit_memory()
    _end_with(review)


def _end_with(pid: int) -> None:
    """End this process when process ``pid`` ends. A review killed outright (SIGKILL, the OOM killer) leaves its pool's
    workers waiting for ever on a queue whose ends they hold themselves, and the forkserver, which lives while they
    do, with them; a thread watching the review through a pidfd (no race with a new process taking its number) ends
    them."""
    try:
        watched = os.pidfd_open(pid)
    except ProcessLookupError:  # the review ended before this worker started
        os._exit(1)
    except (AttributeError, OSError):  # no pidfd here (Linux before 5.3): the worker lives as CPython's do
        return

    def watch() -> None:
        select.select([watched], [], [])
        os._exit(1)

    threading.Thread(target=watch, name="review-watch", daemon=True).start()


def _pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes forked from a forkserver that imported PyDarshan and iobound's judging once: a
    pool made after another broke is not forked from this process, whose threads may hold locks its children would
    inherit held (a new pool's workers hung so)."""
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["darshan", "assess.darshan_review", "assess.check"])
    return ProcessPoolExecutor(workers, mp_context=context, initializer=_start, initargs=(os.getpid(),))


def pool_results(batches: Iterable[list[LogFile]], basis: Basis, workers: int) -> Iterator[list[JobResult]]:
    """Each batch's results, from a pool of ``workers`` processes (in the order they finish).

    The batches in flight when a worker dies are read again one log a task in a new pool; the logs in flight when
    that breaks too are read each in a child of its own (:func:`assess.darshan_review.judge_apart`).
    """
    def apart(logs: list[LogFile]) -> Iterator[list[JobResult]]:
        return ([judge_apart(log, basis)] for log in logs)

    def one_each(logs: list[LogFile]) -> Iterator[list[JobResult]]:
        return _pooled(iter([[log] for log in logs]), basis, workers, workers, apart)

    return _pooled(iter(batches), basis, workers, workers * _AHEAD, one_each)


def _pooled(batches: Iterator[list[LogFile]], basis: Basis, workers: int, window: int,
            broken: Callable[[list[LogFile]], Iterator[list[JobResult]]]) -> Iterator[list[JobResult]]:
    """Each batch's results from a pool, ``window`` batches in flight; where the pool breaks, the logs of every batch
    in flight (which of them killed it is not known) go to ``broken`` and a new pool takes the rest."""
    pool = _pool(workers)
    flying: dict = {}
    try:
        while True:
            lost: list[list[LogFile]] = []
            while len(flying) < window and (batch := next(batches, None)) is not None:
                try:
                    flying[pool.submit(judge_batch, batch, basis)] = batch
                except BrokenProcessPool:
                    lost.append(batch)
                    break
            if not flying and not lost:
                return
            done, _ = wait(flying, return_when=FIRST_COMPLETED) if flying else ((), ())
            for future in done:
                batch = flying.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool:
                    lost.append(batch)
            if lost:
                lost += flying.values()
                flying.clear()
                pool.shutdown(wait=False, cancel_futures=True)
                yield from broken([log for batch in lost for log in batch])
                pool = _pool(workers)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def dask_client(address: str):
    """A Dask client: ``local`` starts a LocalCluster of one single-threaded process per CPU, ``slurm`` a
    SLURMCluster (:func:`slurm_cluster`) scaled to Dask's jobqueue settings, anything else is a running scheduler's
    address.

    Raises
    ------
    InputError
        If Dask (or dask-jobqueue, for ``slurm``) is not installed, or the scheduler cannot be reached.
    ProbeError
        If Slurm would not run the workers' job (:func:`_accepted`).
    """
    from probes.core.errors import InputError, ProbeError

    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise InputError("--dask", address, "needs Dask: pip install 'iobound[dask]'") from None
    if address == "local":
        from probes.core.machine import cpus

        return Client(LocalCluster(n_workers=cpus(), threads_per_worker=1, processes=True, dashboard_address=None))
    if address == "slurm":
        cluster = slurm_cluster()
        try:
            _accepted(cluster)
        except ProbeError:
            cluster.close()
            raise
        cluster.adapt(minimum_jobs=1, maximum_jobs=_slurm_jobs())
        return Client(cluster)
    try:
        return Client(address, timeout="30s")
    except OSError as exc:
        raise InputError("--dask", address, f"cannot reach the Dask scheduler: {exc}") from None


def _slurm_jobs() -> int:
    import dask

    return int(dask.config.get("jobqueue.slurm.maximum-jobs", 16) or 16)


def slurm_cluster():
    """dask-jobqueue's SLURMCluster, each job one worker process of one thread per core it asks for; its queue,
    account, cores, memory and walltime come from Dask's configuration (``jobqueue.slurm`` in
    ~/.config/dask/jobqueue.yaml, or DASK_JOBQUEUE__SLURM__QUEUE and the like), with one core and 4 GiB where it says
    none (a worker reads one log at a time, in less than PyDarshan's 1 GiB). Where it names no network for the
    scheduler (``interface``, or ``host`` or ``interface`` in ``scheduler-options``), the scheduler listens on this
    host's address on the way to Slurm's controller, which the job's nodes reach too (Dask's own default, the route to
    the internet, is often a network they do not reach).

    Raises
    ------
    InputError
        If dask-jobqueue is not installed.
    """
    import dask

    from probes.core.errors import InputError
    from probes.measure.batch import controller_route

    ctrl_c = signal.getsignal(signal.SIGINT)
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise InputError("--dask", "slurm", "needs dask-jobqueue: pip install 'iobound[dask]'") from None
    finally:  # its runner module makes Ctrl-C a silent sys.exit() for the whole process when imported: undone
        if ctrl_c is not None:
            signal.signal(signal.SIGINT, ctrl_c)
    settings = {key: dask.config.get(f"jobqueue.slurm.{key}", None)
                for key in ("cores", "memory", "processes", "interface", "scheduler-options")}
    scheduler = dict(settings["scheduler-options"] or {})
    if not (settings["interface"] or {"host", "interface"} & set(scheduler)) and (route := controller_route()):
        scheduler["host"] = route
    return SLURMCluster(cores=settings["cores"] or 1, memory=settings["memory"] or "4GiB",
                        processes=settings["processes"] or 1, n_workers=0, scheduler_options=scheduler)


def _accepted(cluster) -> None:
    """Whether Slurm would run the cluster's worker job, asked of sbatch --test-only (which submits nothing): a job
    Slurm refuses would leave the review waiting for workers that never come.

    Raises
    ------
    ProbeError
        If sbatch is not installed, refuses the job (with its reasons and where to change the job), or does not answer
        within ``SBATCH`` seconds.
    """
    import tempfile

    from probes.core.errors import ProbeError, ToolFailedError, ToolNotFoundError
    from probes.measure.tool import run_tool

    with tempfile.NamedTemporaryFile("w", prefix="iobound-dask-worker-", suffix=".sh") as script:
        script.write(cluster.job_script())
        script.flush()
        try:
            run_tool(["sbatch", "--test-only", script.name], timeout=SBATCH)
        except ToolNotFoundError:
            raise ProbeError("--dask slurm starts its workers with sbatch, which is not installed here; run the review "
                             "where Slurm's commands are (or load the site's Slurm module)") from None
        except ToolFailedError as exc:
            said = "; ".join(line.strip() for line in (exc.stderr or "").splitlines() if line.strip())
            why = f"no answer within {SBATCH:g} s" if exc.timeout is not None else said or f"status {exc.status}"
            raise ProbeError(f"Slurm would not run the Dask workers' job ({why}); set its cores, memory, queue or "
                             "account in Dask's jobqueue.slurm settings (~/.config/dask/jobqueue.yaml, or "
                             "DASK_JOBQUEUE__SLURM__MEMORY and the like)") from None


def dask_results(batches: Iterable[list[LogFile]], basis: Basis, client) -> Iterator[list[JobResult]]:
    """Each batch's results, judged by the Dask cluster ``client`` reaches (in the order they finish); a bounded
    window of tasks in flight, as many as twice the cluster's threads."""
    from distributed import as_completed
    from distributed.scheduler import KilledWorker

    def window() -> int:
        return max(2, _AHEAD * sum(client.nthreads().values()))

    pending = iter(batches)
    flying = {}
    for batch in pending:
        flying[client.submit(judge_batch, batch, basis, pure=False)] = batch
        if len(flying) >= window():
            break
    running = as_completed(list(flying))
    for future in running:
        batch = flying.pop(future)
        try:
            yield future.result()
        except KilledWorker:  # the scheduler gave up: some log of the batch kills whoever reads it
            for log in batch:
                single = client.submit(judge_batch, [log], basis, pure=False)
                try:
                    yield single.result()
                except KilledWorker:
                    yield [judge_apart(log, basis)]
        future.release()
        if (batch := next(pending, None)) is not None:
            new = client.submit(judge_batch, batch, basis, pure=False)
            flying[new] = batch
            running.add(new)
