"""``iobound review --darshan DIR TOPOLOGY`` (or ``--manifest FILE TOPOLOGY``): every job of a centre judged.

Each Darshan log under DIR (or named by the manifest, one path a line) is judged against the topology of its file
system (TOPOLOGY, or a mount table: a TOML file whose [mounts] table maps mount points to topology files), on a
pool of worker processes or on Dask; an index keeps each log's result, so that a second review judges only the new
or changed logs and an interrupted one resumes. The JSON and the CSV give each log's result as it is judged.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from assess.cli.inputs import count_arg
from assess.cli.status import EXIT_FINDINGS, EXIT_OK

if TYPE_CHECKING:
    from assess.centre import Centre
    from assess.darshan_review import Basis, JobResult

# Where the index goes unless --index says: the current folder, not the log tree (a centre's archive is read-only).
INDEX = "iobound-darshan.sqlite"


def add_darshan_arguments(parser: argparse.ArgumentParser) -> None:
    """review's options for Darshan logs, beside its io500 list's."""
    logs = parser.add_mutually_exclusive_group()
    logs.add_argument("--darshan", nargs=2, metavar=("DIR", "TOPOLOGY"),
                      help="judge every Darshan log under DIR against TOPOLOGY (a topology file or bundled example, or "
                           "a mount table: a TOML file whose [mounts] table maps mount points to topology files)")
    logs.add_argument("--manifest", nargs=2, metavar=("FILE", "TOPOLOGY"),
                      help="as --darshan, for the logs FILE names (one path a line, relative to FILE's folder)")
    parser.add_argument("--index", metavar="FILE", default=INDEX,
                        help=f"the SQLite index of Darshan results, kept between reviews (default {INDEX})")
    parser.add_argument("--workers", type=count_arg, metavar="N",
                        help="worker processes reading Darshan logs (default: one per CPU)")
    parser.add_argument("--dask", metavar="SCHEDULER",
                        help="judge Darshan logs on Dask: a running scheduler's address, 'local' (a LocalCluster) or "
                             "'slurm' (dask-jobqueue's SLURMCluster, configured by Dask's jobqueue.slurm settings); "
                             "needs pip install 'iobound[dask]'")


def execute_darshan(args: argparse.Namespace) -> int:
    from probes.core.machine import cpus
    from assess.centre import Centre, render
    from assess.darshan_engines import BATCH, dask_client, dask_results, pool_results
    from assess.darshan_index import Index
    from assess.darshan_review import UNREADABLE, JobResult, basis_of, listed
    from assess.findings import Severity

    source, word = args.darshan or args.manifest
    if args.list:
        from probes.core.errors import InputError
        raise InputError("review", "--darshan", "takes no io500 list: give the logs' folder (or manifest) and their "
                         "topology")
    if args.html:
        from probes.core.outputs import check_new
        check_new(Path(args.html), "folder")  # before the work, not after it
    manifest = args.manifest is not None
    basis = basis_of(word)
    total = sum(1 for _ in listed(source, manifest=manifest, stat=False))
    centre = Centre()
    progress = Progress(total, asked=args.progress)

    with Index(args.index) as index:
        jobs = _jobs_out(args, source, basis)

        def keep(result: JobResult, now: bool) -> None:
            centre.add(result, now=now)
            jobs.add(result)

        def batches():
            batch = []
            for log in listed(source, manifest=manifest):
                if isinstance(log, tuple):  # a path that cannot be opened or is no regular file: named, never indexed
                    keep(JobResult(log[0], 0, 0, UNREADABLE, log[1]), True)
                    progress.add(1, 1)
                elif (result := index.done(log, basis.fingerprint)) is not None:
                    keep(result, False)
                    progress.add(1, 0)
                else:
                    batch.append(log)
                    if len(batch) == BATCH:
                        yield batch
                        batch = []
            if batch:
                yield batch

        client = dask_client(args.dask) if args.dask else None
        try:
            engine = dask_results(batches(), basis, client) if client else \
                pool_results(batches(), basis, args.workers or cpus())
            for results in engine:
                index.add(results, basis.fingerprint)
                for result in results:
                    keep(result, True)
                progress.add(len(results), len(results))
        finally:
            progress.close()  # the live line cleared before the text, or before the error that ended the review
            if client is not None:
                cluster = client.cluster
                client.close()
                if cluster is not None:
                    cluster.close()
    jobs.close(centre)
    if not args.json and not args.csv:
        print(render(centre, source, basis))
    if args.html:
        from assess.centre_page import write_centre_page
        index = write_centre_page(centre, source, basis, Path(args.html))
        if not args.json and not args.csv:
            print(f"\nwrote {index}")
    threshold = None if args.fail_on == "never" else Severity[args.fail_on.upper()]
    failed = threshold is not None and any(Severity[s.upper()] >= threshold for s in centre.severities)
    return EXIT_FINDINGS if failed else EXIT_OK


class _Jobs:
    """Where each job's result goes as it is judged: nowhere for the text (its centre's sums say it), a row of the CSV,
    or an item of the JSON's jobs; so that memory holds the jobs in flight, not the centre's every job."""

    def add(self, result: JobResult) -> None:
        pass

    def close(self, centre: Centre) -> None:
        pass


class _CsvJobs(_Jobs):
    def __init__(self):
        from probes.core.outputs import csv_text
        from assess.centre import CSV_HEADERS, csv_row

        self._text, self._row = csv_text, csv_row
        sys.stdout.write(csv_text([CSV_HEADERS]))

    def add(self, result: JobResult) -> None:
        sys.stdout.write(self._text([self._row(result)]))


class _JsonJobs(_Jobs):
    def __init__(self, source: str, index: str, basis: Basis):
        from probes.core.document import Listed
        from assess.centre import DARSHAN_REVIEW_VERSION, centre_head
        from assess.render import envelope

        head = envelope("darshan-review", DARSHAN_REVIEW_VERSION, centre_head(source, index, basis))
        self._listed = Listed(head, "jobs", sys.stdout.write)

    def add(self, result: JobResult) -> None:
        self._listed.add(result.to_dict())

    def close(self, centre: Centre) -> None:
        self._listed.close({"centre": centre.to_dict()})
        sys.stdout.write("\n")


def _jobs_out(args: argparse.Namespace, source: str, basis: Basis) -> _Jobs:
    return _JsonJobs(source, args.index, basis) if args.json else _CsvJobs() if args.csv else _Jobs()


class Progress:
    """Logs done, logs per second and the time left, drawn by :class:`assess.progress.PassProgress` (a live line on a
    terminal; elsewhere where ``asked``, a line every ten seconds and the last); imported when drawn, not when the
    parser is built."""

    def __init__(self, total: int, asked: bool = False, stream: TextIO | None = None):
        from assess.progress import PassProgress

        self.drawn = PassProgress("review", "logs", stream, asked)
        self.total, self.start = total, time.monotonic()
        self.done = self.judged = 0

    def add(self, done: int, judged: int) -> None:
        """``done`` more logs, ``judged`` of them read and judged now (the rest stood in the index)."""
        from assess.render import duration

        self.done += done
        self.judged += judged
        seconds = max(time.monotonic() - self.start, 1e-9)
        rate = self.judged / seconds
        when = (f"in {duration(seconds)}" if self.done >= self.total else
                f"about {duration((self.total - self.done) / rate)} left" if rate > 0 else "")
        self.drawn("done", self.done, self.total, f"{self.judged:,} judged now ({rate:.1f} logs/s), "
                                                  f"{self.done - self.judged:,} from the index, {when}".rstrip(", "))

    def close(self) -> None:
        """Clear the live line, so that the review's text starts on a clean one."""
        self.drawn.close()
