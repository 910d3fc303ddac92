"""The one way iobound opens a file a user names: regular files only, up to a size limit, read in pieces.

Why: ``/dev/zero`` never ends and a FIFO waits forever for a writer, so both are refused before a
byte is read, as are directories, devices and sockets; a file larger than the limit is refused
before it is read; and a file is read in pieces, so that Ctrl-C or SIGTERM stops a read at once.
The limit is 1 GiB unless ``--max-input-size`` (the commands that read inputs) or the
``IOBOUND_MAX_INPUT_SIZE`` environment variable says otherwise. Reading takes the text once in
memory; :func:`iter_lines` hands its lines to a reader one at a time, never a list of them all.

>>> with open_input(__file__) as f:
...     f.size > 0 and "iter_lines" in f.text()
True
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import stat
from typing import Iterator

from probes.core.errors import InputError, UnitError

__all__ = ["DEFAULT_LIMIT", "ENVIRONMENT", "max_input_size", "input_limit", "open_input", "read_input", "InputFile",
           "not_a_file", "kind_of", "not_regular", "iter_lines", "format_size"]

# 1 GiB: the largest real outputs met so far are about 60 MB (a fio JSON of 10,848 jobs, an IOR log of 20,000
# runs), so real files have 16x headroom; reading one takes up to 3x its size in memory, which a laptop can
# spare for 1 GiB. A larger file is almost never a benchmark's output (a disk image, a core dump, a log left
# running), and reading it whole would take minutes and most of the machine's memory before saying so.
DEFAULT_LIMIT = 2**30
ENVIRONMENT = "IOBOUND_MAX_INPUT_SIZE"
# Read in pieces of 16 MiB (a few ms each): a signal is handled between two pieces.
_PIECE = 16 * 2**20
# Lines are cut from the text in slices of about 1 MiB, so at most a slice's lines exist at once.
_SLICE = 2**20
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))
# A character beyond Unicode's first 65,536 (an emoji) makes Python hold a whole text at 4 bytes a character: in
# a text larger than _ASTRAL_ABOVE such characters read as U+FFFD; a smaller one keeps them (a name in a list).
_ASTRAL = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_ASTRAL_ABOVE = 16 * 2**20
_ASTRAL_LEADS = tuple(bytes([lead]) for lead in range(0xF0, 0xF5))
_limit: int | None = None  # set by --max-input-size, for one command


def max_input_size() -> int:
    """The largest file iobound reads, in bytes: the command's ``--max-input-size``, else the environment's, else 1 GiB."""
    if _limit is not None:
        return _limit
    text = os.environ.get(ENVIRONMENT, "").strip()
    if not text:
        return DEFAULT_LIMIT
    from probes.core.units import Metric, parse_quantity

    try:
        return int(parse_quantity(text, Metric.SIZE, what="the size", positive=True).m_as("B"))
    except UnitError as exc:
        raise InputError(ENVIRONMENT, "", str(exc)) from None


@contextlib.contextmanager
def input_limit(size: int | None) -> Iterator[None]:
    """Within the block, read files of up to ``size`` bytes (None: leave the limit as it is)."""
    global _limit
    previous = _limit
    if size is not None:
        _limit = int(size)
    try:
        yield
    finally:
        _limit = previous


def format_size(size: int) -> str:
    """Bytes as a person reads them: ``format_size(1536) == '1.5 KiB'``, ``format_size(2**30) == '1 GiB'``."""
    for power, unit in ((40, "TiB"), (30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 2**power:
            return f"{size / 2**power:.3g} {unit}"
    return f"{size} bytes" if size != 1 else "1 byte"


class InputFile:
    """A regular file opened for reading, no larger than the limit; see :func:`open_input`."""

    def __init__(self, path: str | os.PathLike, *, error: type[InputError] = InputError, what: str | None = None):
        self.source = str(path)
        self._error, self._what = error, what
        self.limit = max_input_size()
        self._kind(self._os(os.stat, path))  # before opening: opening a device can act on it
        fd = self._os(os.open, path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            status = os.fstat(fd)
            self._kind(status)  # the path may have been replaced in between
            self.size = status.st_size
            if self.size > self.limit:
                raise self._too_large(self.size)
        except BaseException:
            os.close(fd)
            raise
        self._file = os.fdopen(fd, "rb", buffering=0)

    def __enter__(self) -> InputFile:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def head(self, size: int) -> tuple[str, bool]:
        """The text of the file's first ``size`` bytes (up to the last whole line when there is more), and whether
        that is all of it."""
        data = self._read(size + 1)
        whole = len(data) <= size
        text = _decode(data if whole else data[:size], "replace")
        if not whole:
            cut = text.rfind("\n")
            text = text[: cut + 1] if cut >= 0 else text
        return text, whole

    def text(self, errors: str = "replace") -> str:
        """The whole file as text: UTF-8 (UTF-16 with its byte-order mark); with ``errors="strict"`` a byte that is
        not UTF-8 raises UnicodeDecodeError, else it reads as U+FFFD, as do characters beyond U+FFFF in a text over
        16 MiB (Python would hold it at 4 bytes a character)."""
        return _decode(self.data(), errors)

    def lines(self, longest: int = _SLICE) -> Iterator[str]:
        """The file's lines with their ends, cut at "\\n" alone (as the csv module takes them), decoded as
        :meth:`text` decodes them, read a piece at a time: a file of any size in the memory of a line.

        Raises
        ------
        InputError (its ``error``)
            When it comes to it, if a line is longer than ``longest`` characters (no text: a binary, NULs).
        """
        self._file.seek(0)
        utf16 = self._file.read(2) in (b"\xff\xfe", b"\xfe\xff")
        self._file.seek(0)
        text = io.TextIOWrapper(io.BufferedReader(self._file, _PIECE), encoding="utf-16" if utf16 else "utf-8",
                                errors="replace", newline="\n")
        number = 0
        try:
            while line := text.readline(longest + 1):
                number += 1
                if len(line) > longest:
                    raise self._error(self.source, f"line {number}", f"is longer than {longest:,} characters: not a "
                                      "line of text")
                yield line
        finally:  # the wrappers let go of the file, which closing them (as they are collected) would close
            if not self._file.closed:
                text.detach().detach()

    def data(self) -> bytes:
        """The whole file's bytes, within the limit (a binary format: a Darshan log)."""
        data = self._read(self.limit + 1)
        if len(data) > self.limit:  # it grew while being read (a log still written)
            raise self._too_large(len(data), grew=True)
        return bytes(data)

    def _read(self, most: int) -> bytearray:
        """Up to ``most`` bytes from the start, read a piece at a time into one buffer."""
        self._file.seek(0)
        data = bytearray(min(most, self.size + 1))
        done = 0
        while done < most:
            if done == len(data):
                data.extend(bytes(min(_PIECE, most - done)))
            with memoryview(data) as view:
                count = self._file.readinto(view[done: min(done + _PIECE, len(data))])
            if not count:
                break
            done += count
        del data[done:]
        return data

    def _os(self, call, *args):
        try:
            return call(*args)
        except FileNotFoundError:
            dangling = os.path.islink(self.source)
            raise self._error(self.source, "", self._cannot("a symbolic link to a file that does not exist" if dangling
                                                            else "no such file")) from None
        except OSError as exc:
            reason = {errno.EAGAIN: "a file that blocks when opened",
                      errno.ELOOP: "a symbolic link that loops: too many levels of symbolic links"}.get(
                exc.errno, (exc.strerror or str(exc)).lower())
            raise self._error(self.source, "", self._cannot(reason)) from None
        except ValueError:  # a NUL byte in the name
            raise self._error(self.source, "", "is not a file name (it holds a NUL character)") from None

    def _cannot(self, reason: str) -> str:
        if self._what is not None:
            return f"cannot read {self._what} ({reason})"
        return reason if reason == "no such file" else f"cannot be read ({reason})"

    def _kind(self, status: os.stat_result) -> None:
        kind = kind_of(status)
        if kind is not None:
            raise self._error(self.source, "", not_regular(kind))

    def _too_large(self, size: int, grew: bool = False) -> InputError:
        suggested = format_size(1 << max(size - 1, 1023).bit_length()).replace(" ", "")  # a power of 2: exact
        what = f"grew past {format_size(self.limit)} while being read" if grew else \
            f"{format_size(size)}, more than the {format_size(self.limit)} iobound reads"
        return self._error(self.source, "", f"{what}; --max-input-size {suggested} (or {ENVIRONMENT}={suggested}) "
                                            "raises the limit")


def open_input(path: str | os.PathLike, *, error: type[InputError] = InputError, what: str | None = None) -> InputFile:
    """Open the file a user named, to read as text; use it in a ``with`` block.

    Parameters
    ----------
    path : the file.
    error : the InputError subclass raised (ToolOutputError for results, TopologyError for topologies ...).
    what : what the file is, for messages: ``"the topology file"`` gives "cannot read the topology file (no such file)".

    Raises
    ------
    InputError (``error``)
        At once, without reading, if the path is missing, unreadable, not a regular file (a directory, a FIFO, a
        device, a socket) or larger than :func:`max_input_size`; the message is one line naming the path.
    """
    return InputFile(path, error=error, what=what)


def read_input(path: str | os.PathLike, *, error: type[InputError] = InputError, what: str | None = None,
               errors: str = "replace") -> str:
    """The whole text of the file a user named, read as :func:`open_input` and :meth:`InputFile.text` say."""
    with open_input(path, error=error, what=what) as file:
        return file.text(errors)


def not_a_file(path: str | os.PathLike) -> str | None:
    """What ``path`` is if it exists and is no regular file (``"a named pipe (FIFO)"``, ``"a directory"`` ...), else None;
    for a command about to write there."""
    try:
        return kind_of(os.stat(path))
    except (OSError, ValueError):
        return None


def not_regular(kind: str) -> str:
    """The one line refusing a file that is ``kind`` (what :func:`kind_of` says): a FIFO's open waits for a writer."""
    return f"{kind}, not a file; iobound reads regular files"


def iter_lines(text: str) -> Iterator[str]:
    """The lines of ``text``, exactly as ``text.splitlines()`` gives them, cut a slice at a time.

    Why: a list of every line costs about 60 bytes a line beside the text, several times the text
    itself for short lines; a reader that walks the lines once needs only the one it is at.

    >>> list(iter_lines("a\\r\\nb\\n\\nc")) == "a\\r\\nb\\n\\nc".splitlines()
    True
    """
    start, end = 0, len(text)
    while start < end:
        cut = text.find("\n", start + _SLICE)
        stop = end if cut < 0 else cut + 1  # a slice ends after a newline: no line break is split in two
        yield from text[start:stop].splitlines()
        start = stop


def kind_of(status: os.stat_result) -> str | None:
    """What a file of ``status`` is if no regular file (``"a named pipe (FIFO)"``, ``"a directory"`` ...), else None."""
    if stat.S_ISREG(status.st_mode):
        return None
    return next((name for test, name in _KINDS if test(status.st_mode)), "not a regular file")


def _decode(data: bytearray, errors: str) -> str:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):  # UTF-16 with its byte-order mark (Windows tools, PowerShell's >)
        return data.decode("utf-16", errors)
    if errors != "strict" and len(data) > _ASTRAL_ABOVE and not data.isascii() and any(data.find(lead) >= 0 for lead in _ASTRAL_LEADS):  # memchr
        data = _ASTRAL.sub("\ufffd".encode(), data)
    return data.decode("utf-8", errors)
