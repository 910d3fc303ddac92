"""Read IOR's output (text of IOR 3.0 to 4.x, and ``-O summaryFormat=json``) into bandwidth runs.

One :class:`~probes.core.run.Run` per test and operation (write, read), one sample per iteration,
in MiB/s as IOR prints them; what the output does not say is refused, never guessed.
"""

from __future__ import annotations

from probes.core.errors import ToolOutputError
from probes.core.run import Run, distinct_labels
from probes.readers.ior_json import parse_json
from probes.readers.ior_readback import Readback, readback
from probes.readers.ior_text import HEADER, parse_text
from probes.readers.jsonfields import JSON_OPENING
from probes.readers.textlines import beginning

__all__ = ["looks_like", "parse", "FORMAT", "Readback", "readback"]

# What iobound read says it reads.
FORMAT = "IOR output (text, or -O summaryFormat=json)"


def looks_like(text: str) -> bool:
    """Whether ``text`` looks like IOR's text or JSON output: a cheap sniff, not a validation."""
    if HEADER.search(text):
        return True
    return ('"Version"' in text and '"Began"' in text and ('"tests"' in text or '"Command line"' in text)
            and JSON_OPENING.search(text) is not None)


def parse(text: str, *, source: str) -> list[Run]:
    """One bandwidth run per IOR test and operation (write, read), in MiB/s.

    Parameters
    ----------
    text : what IOR printed: its text output (several runs one after another are read in
        turn; lines around them, such as launcher or ssh messages, are skipped), or its
        ``-O summaryFormat=json`` output.
    source : names the file in error messages and in each run's origin.

    Returns
    -------
    list of Run
        Labelled ``"<api> <access> <write|read>"`` (``" test N"`` added for test ids other
        than 0; repeated labels get ``" (line N)"``), metric bandwidth in MiB/s, one sample
        per iteration in the order run; the origin's line is the first result row.

    Raises
    ------
    ToolOutputError
        If the text is not IOR's output, is truncated (an IOR run with no result rows and no
        summary, or fewer rows than its repetitions; the error names the line of the run's
        header), has a malformed row, JSON that cannot be repaired, or leaves the workload
        unknown (no transfer size, no processes per node).

    Notes
    -----
    - Samples are the per-iteration rows (text ``write``/``read`` rows, JSON ``Results``).
      Where an operation has none, but the ``Summary of all tests`` table (or the JSON
      ``summary``) has it, the run's one sample is the summary's mean and it is tagged
      ``("summary_only", ...)`` with the repetitions, min, max and standard deviation: the
      per-iteration values are not invented from them. Max-only lines (``Max Write:``) are
      never read as samples.
    - Nodes are ``nodes`` where printed; IOR 3.0 to 3.2 print only tasks and clients per
      node, so nodes are tasks / clients per node (tagged ``("nodes", "tasks / clients per
      node")``). Processes per node are ``clients per node`` (IOR counts them on node 0:
      ``nodes x clients per node`` may differ from ``tasks``; every run is tagged with its tasks).
      Where the tasks are not a multiple of the clients per node (tasks spread unevenly), nodes
      stay unknown (None), the tag ``nodes`` says so, and the tasks are the run's placement.
    - IOR prints each figure twice: the per-iteration rows and the ``Summary of all tests``
      (max, min, mean over them). Where the summary's max, min or mean is not that of the rows
      within IOR's rounding (two decimals), the run is tagged ``inconsistent`` with both figures.
    - Access is random where IOR says so (``ordering in a file : random``, ``random
      offsets``, ``randomOffset: 1``); "random task offset" orders tasks, not offsets.
    - Direct I/O is true where the output shows it (``useO_DIRECT`` in the JSON parameters,
      ``-B``, ``--posix.odirect`` or ``useO_DIRECT=1`` on the command line), else unknown.
    - IOR releases print invalid JSON at times; trailing commas, missing commas between
      values and bare ``nan``/``inf`` numbers are repaired and the repair is tagged
      ``("json_repaired", ...)`` on every run; anything else is refused.
    - Who reads what was written, and fsync (see :class:`Readback`): a read whose tasks read
      what a task on another node wrote (``-C`` or ``-Z``, ``-Q`` nodes on) is tagged
      ``("read_by_other_node", "IOR -C -Q 1")``; a read of the same test's writes on the writing
      nodes (no reordering, or ``-C -Q 1`` on one node) ``("reads_own_writes", why)``; a write
      flushed before its phase ends (``-e`` fsync on close, ``-Y`` after every write)
      ``("fsync", "IOR -e")``. The reordering is the one the options block prints; fsync is
      read from the command line (text) or ``Parameters`` (JSON).
    """
    header = HEADER.search(text)
    # Only a JSON opening before the first header counts: no need to look through the whole log for one.
    opening = JSON_OPENING.search(text, 0, len(text) if header is None else header.start())
    if opening is not None:
        return distinct_labels(parse_json(text, opening, source))
    if header is None:
        found = beginning(text)
        raise ToolOutputError(source, "line 1", "expected IOR's output (a line 'IOR-<version>: MPI "
                              f"Coordinated Test of Parallel I/O' or its JSON); found {found}")
    return distinct_labels(parse_text(text, source))


