"""What a command writes: a file or a folder appears whole under its name or not at all, and a write that fails
(a full disk, a read-only file system, no permission) is an InputError naming the path and the reason.

A file is written to a temporary name beside its target and linked (a new file) or renamed (a replaced one) into
place; a folder is filled as a temporary sibling and renamed at the end. Whatever fails removes the temporary
name, so nothing is left behind. CSV a spreadsheet opens goes through :func:`csv_text`, which neutralises cells
a spreadsheet would run as formulas.
"""

from __future__ import annotations

import csv
import errno
import io
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from probes.core.errors import InputError

__all__ = ["check_new", "check_writable", "write_new", "write_replacing", "new_folder", "staged_in", "cannot_write", "WRITE_ERRORS",
           "spreadsheet_cell", "plain_cell", "csv_text", "SPREADSHEET_BOM"]

# The errors of a write that the disk or its owner refuses, whatever file it was: the user's to fix, not a bug.
WRITE_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO})


def cannot_write(path: str | os.PathLike, exc: OSError) -> InputError:
    """The one-line error of a write to ``path`` that failed with ``exc``: the path and the system's reason."""
    reason = exc.strerror or str(exc)
    return InputError(str(path), "", f"cannot be written: {reason} (nothing was written)")


def check_new(path: str | os.PathLike, what: str = "file") -> None:
    """InputError unless ``path`` can be a new ``what`` (file or folder): it does not exist, its folder does and
    takes a new file, and its disk is not full; for a check before long work, so that it fails at once."""
    path = Path(path)
    if os.path.lexists(path):
        raise InputError(str(path), "", f"exists already; give a new {what} name (nothing was overwritten)")
    if not path.parent.is_dir():
        raise InputError(str(path), "", f"its folder {str(path.parent)!r} does not exist")
    check_writable(path)


def check_writable(path: str | os.PathLike) -> None:
    """InputError unless the folder of ``path`` takes a new file and its disk is not full (a file made and removed:
    root passes a permission test, not a read-only or immutable folder); for a check before long work."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        os.close(fd)
        os.unlink(tmp)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    _check_room(path, 1)


def _check_room(path: Path, size: int) -> None:
    """InputError if the disk of ``path``'s folder has less than ``size`` bytes free (root may use the reserve)."""
    try:
        disk = os.statvfs(path.parent)
    except OSError:
        return  # a folder that cannot be asked: the write itself will say what is wrong
    free = (disk.f_bfree if os.geteuid() == 0 else disk.f_bavail) * disk.f_frsize
    if free < size:
        needed = f", {size:,} needed" if size > 1 else ""
        raise cannot_write(path, OSError(errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} ({free:,} bytes free{needed})"))


def write_new(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to the new file ``path``; InputError if it exists (nothing is overwritten) or cannot be
    written (then nothing is left behind). Returns the path."""
    return _write(Path(path), text, replace=False)


def write_replacing(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path``, replacing it: a reader sees the old file or the new one, never half a file."""
    return _write(Path(path), text, replace=True)


def _write(path: Path, text: str, *, replace: bool) -> Path:
    data = text.encode("utf-8")
    _check_room(path, len(data))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise cannot_write(path, exc) from None
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes the file private; an output should not be
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(tmp, path)
        else:
            _link(tmp, path)
    except FileExistsError:
        raise InputError(str(path), "", "exists already; give a new file name (nothing was overwritten)") from None
    except OSError as exc:
        raise cannot_write(path, exc) from None
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)
    return path


def _umask() -> int:
    """The process's umask (reading it means setting it: set back at once)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _link(tmp: str, path: Path) -> None:
    """Put the finished ``tmp`` at ``path`` unless something is there: a hard link fails rather than replace, and
    a file system without hard links gets a rename after a look."""
    try:
        os.link(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS):
            raise
        if os.path.lexists(path):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(path)) from None
        os.rename(tmp, path)


@contextmanager
def staged_in(folder: Path, name: Path | None = None) -> Iterator[Path]:
    """A temporary folder inside ``folder`` (so on its disk) to fill; removed with what it holds when the block
    ends. A write error in the block becomes InputError naming ``name`` (default: the folder)."""
    where = name or folder
    _check_room(where, 1)
    try:
        staged = Path(tempfile.mkdtemp(prefix=f".{where.name}.", suffix=".tmp", dir=folder))
    except OSError as exc:
        raise cannot_write(where, exc) from None
    try:
        yield staged
    except OSError as exc:
        if exc.errno not in WRITE_ERRORS:
            raise
        raise cannot_write(where, exc) from None
    finally:
        shutil.rmtree(staged, ignore_errors=True)


@contextmanager
def new_folder(path: Path, *, parents: bool = False) -> Iterator[Path]:
    """A temporary sibling of the new folder ``path`` to fill; renamed to ``path`` when the block ends, so the folder
    appears whole or not at all. With ``parents``, missing folders above it are made the same way (the highest one
    renamed into place). InputError if ``path`` exists (before or after the work) or cannot be written."""
    top = path
    while parents and not top.parent.exists() and top.parent != top.parent.parent:
        top = top.parent
    check_new(top, "folder")
    with staged_in(top.parent, top) as staged:
        inner = staged / path.relative_to(top)
        inner.mkdir(parents=True, exist_ok=True)
        yield inner
        inside = inner.relative_to(staged)
        for folder in (staged / inside, *(staged / p for p in inside.parents)):
            os.chmod(folder, 0o777 & ~_umask())  # mkdtemp makes a folder private; an output should not be
        taken = InputError(str(top), "", "was made by another command while this one worked; nothing was written: "
                           "give a new folder name")
        if os.path.lexists(top):
            raise taken
        try:
            os.rename(staged, top)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise taken from None
            raise cannot_write(top, exc) from None


# UTF-8's byte-order mark, first in a CSV for a spreadsheet: Excel and LibreOffice then read it as UTF-8, not in their
# locale's code page (where "±" reads "Â±").
SPREADSHEET_BOM = "\ufeff"
# A cell a spreadsheet reads as a number (kept as it is): an optional sign, digits with a point, an exponent.
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
# What a spreadsheet takes as the start of a formula (OWASP's list): = + - @, a tab, a carriage return.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value: object) -> str:
    """``value`` as a CSV cell a spreadsheet shows and never runs: text that begins as a formula does (=, +, -, @,
    tab, carriage return) gets a leading single quote, as OWASP advises; a plain number such as -1.5 stays a number."""
    text = "" if value is None else str(value)
    if text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text):
        return "'" + text
    return text


def plain_cell(cell: str) -> str:
    """A cell as it was before :func:`spreadsheet_cell`: the quote it put before a formula's first character taken off,
    so that a table iobound wrote reads back the same."""
    text = cell[1:]
    return text if cell.startswith("'") and text.startswith(_FORMULA_START) and not _NUMBER.fullmatch(text) else cell


def csv_text(rows: Iterable[Iterable[object]], *, preamble: str = "", line_end: str = "\n") -> str:
    """The CSV of ``rows`` (the first is the header), each cell through :func:`spreadsheet_cell`; ``preamble`` (e.g.
    a comment line) comes first. Every CSV iobound writes is made here."""
    out = io.StringIO()
    out.write(preamble)
    writer = csv.writer(out, lineterminator=line_end)
    for row in rows:
        writer.writerow([spreadsheet_cell(cell) for cell in row])
    return out.getvalue()
