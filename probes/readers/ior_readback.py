"""Who reads what an IOR run wrote, and through which caches: the readback, fsync and O_DIRECT its command line asks for.

:mod:`probes.readers.ior` tags its runs with them, and :mod:`probes.readers.io500` the IOR phases it reads.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.core.workload import Operation
from probes.readers.textlines import COUNT, split_words

__all__ = ["Readback", "readback", "printed_readback", "direct_from_command"]

# IOR 3.0/3.1 print the offset in the ordering: "constant task offsets = 1", "random task offsets >= 1, seed=0".
_OLD_OFFSET = Pattern(r"task offsets (?:=|>=) ([0-9]{1,9})")
# IOR's short options that take a value (its option table, 3.x and 4.x); the others are flags, and
# flags may be grouped ("-Ce"). Options of the -O directive string that IOR names the same way.
_VALUED = frozenset("ADGJMNOQTUXabdfijlost")
_DIRECTIVES = {"reorderTasks": "C", "reorderTasksConstant": "C", "reorderTasksRandom": "Z",
               "taskPerNodeOffset": "Q", "fsync": "e", "fsyncPerWrite": "Y"}


@dataclass(frozen=True)
class Readback:
    """How an IOR run hands its data from writers to readers, which decides the caches a read or write can use.

    ``reorder`` is ``"-C"`` (each task reads what the task ``offset`` nodes on wrote),
    ``"-Z"`` (a random task at least ``offset`` nodes on) or ``""`` (its own data);
    ``fsync`` is ``"-e"`` (fsync on close), ``"-Y"`` (after every write) or ``""``. IOR shifts
    readers by ``offset`` x the tasks per node, so only with more than one node, and an
    offset that is not a multiple of the nodes, does the reader sit on another node; the
    page cache of that node never held the data (IOR's tutorial, "First Steps with IOR").
    """

    reorder: str = ""
    offset: int = 1
    fsync: str = ""

    def tags(self, operation: Operation, nodes: int | None, wrote: bool) -> list[tuple[str, str]]:
        """The tags of one run: ``fsync`` for writes; ``read_by_other_node``, or ``reads_own_writes`` when the
        same test ``wrote`` the data on the readers' nodes. ``nodes=None`` (not stated) counts as several."""
        if operation is Operation.WRITE:
            return [("fsync", f"IOR {self.fsync}")] if self.fsync else []
        shift = f"{self.reorder} -Q {self.offset}"
        if self.reorder and self.offset >= 1 and (
                nodes is None or nodes > 1 and (self.reorder == "-Z" or self.offset % nodes)):
            return [("read_by_other_node", f"IOR {shift}")]
        if not wrote:
            return []
        if not self.reorder:
            return [("reads_own_writes", "each task reads what it wrote in this test (no -C task reordering)")]
        on = f" on {nodes} node{'s' if nodes != 1 else ''}" if nodes else ""
        return [("reads_own_writes", f"{shift}{on} leaves each task reading what was written on its own node")]


def readback(words: list[str], *, source: str, where: str) -> Readback:
    """The :class:`Readback` an IOR command line asks for; ``words`` are its arguments after the program.

    The last of repeated options counts, as in IOR's parser; ``-O`` directives
    (``reorderTasks=1``, ``taskPerNodeOffset=2``, ``fsync=1`` ...) count like the options.

    Raises
    ------
    ToolOutputError
        If ``-Q`` is not a whole number (``where`` names the line).

    Examples
    --------
    >>> readback("-w -C -Q 1 -g -k -e -t 2m".split(), source="x", where="line 1")
    Readback(reorder='-C', offset=1, fsync='-e')
    """
    chosen: dict[str, str] = {}
    for letter, value in _short_options(words):
        if letter == "O":
            for directive in (value or "").split(","):
                key, _, given = directive.partition("=")
                if key.strip() in _DIRECTIVES:
                    chosen[_DIRECTIVES[key.strip()]] = given.strip()
        elif letter in "CZQeY":
            chosen[letter] = "1" if value is None else value
    offset = chosen.get("Q", "1")
    if not COUNT.fullmatch(offset):
        raise ToolOutputError(source, where, f"expected a whole number of nodes after ior's -Q; found {offset[:40]!r}")
    on = {letter for letter, value in chosen.items() if value not in ("0", "")}
    reorder = "-C" if "C" in on else "-Z" if "Z" in on else ""
    fsync = "-Y" if "Y" in on else "-e" if "e" in on else ""
    return Readback(reorder, int(offset), fsync)


def _short_options(words: list[str]):
    """Each short option of an IOR command line as (letter, value or None), in order: ``-Ce`` gives C and e;
    ``-Q 1``, ``-Q=1`` and ``-Q1`` give Q with "1"; long options (``--posix.odirect``) are skipped."""
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if len(word) < 2 or not word.startswith("-") or word.startswith("--"):
            continue
        letters, equals, given = word[1:].partition("=")
        for position, letter in enumerate(letters):
            if letter in _VALUED:
                value = letters[position + 1:] or (given if equals else None)
                if value is None and index < len(words):
                    value, index = words[index], index + 1
                yield letter, value
                break
            yield letter, given if equals and position == len(letters) - 1 else None


def printed_readback(text: str, offset: str | int | None, command: Readback) -> Readback:
    """The readback IOR printed ("ordering inter file", "task offset"), with the command line's fsync."""
    text = str(text)
    if not text:
        return command
    reorder = "-C" if "constant" in text else "-Z" if "random" in text else ""
    old = _OLD_OFFSET.search(text)
    if offset is None and old:
        offset = old[1]
    return replace(command, reorder=reorder, offset=int(offset) if offset is not None else command.offset)


def direct_from_command(command: str) -> bool | None:
    """True if the command line asks for O_DIRECT; None (unknown) otherwise: a script may set it."""
    words = split_words(command)
    for word in words:
        if word == "-B" or word.startswith("--posix.odirect") or word.replace(" ", "") == "useO_DIRECT=1":
            return True
        if word.startswith("useO_DIRECT=") and word.split("=", 1)[1].strip() not in ("", "0"):
            return True
    return None

