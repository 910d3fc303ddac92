"""The index of a Darshan review: one row per log (its path, size, mtime and the basis it was judged on) holding its
result, in SQLite, so that a second review judges only the logs that are new or changed and an interrupted one
keeps every batch it committed.

A row stands for a log while its size, mtime and basis (the topologies' contents and iobound's version, see
:class:`assess.darshan_review.Basis`) are the same; any other log is judged again and its row replaced.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterable

from probes.core.errors import InputError
from probes.core.outputs import check_writable
from assess.darshan_review import JobResult, LogFile

__all__ = ["Index", "INDEX_FORMAT", "INDEX_VERSION"]

INDEX_FORMAT = "iobound/darshan-index"
# darshan-index format history:
#   1.0  first version: table logs (path, size, mtime_ns, basis, status, result as JobResult's JSON), table meta
INDEX_VERSION = "1.0"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS logs (path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
                                 basis TEXT NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL);
"""


class Index:
    """An open index: :meth:`done` says whether a log's result stands, :meth:`add` keeps a batch's results.

    Raises
    ------
    InputError
        On opening a file that is not an index of this format and version (one line; the file is left as it is).
    """

    def __init__(self, path: str | Path):
        self.path = str(path)
        existed = Path(path).exists()
        if not existed:
            check_writable(self.path)  # a folder that refuses files or a full disk, found before any log is read
        try:
            self._db = sqlite3.connect(self.path)
            if existed:
                self._check()
            self._db.executescript(_SCHEMA)
            self._db.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                                 (("format", INDEX_FORMAT), ("format_version", INDEX_VERSION)))
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            if not existed:
                Path(self.path).unlink(missing_ok=True)
                raise InputError(self.path, "", f"cannot be written: {exc} (nothing was written)") from None
            raise InputError(self.path, "", f"not an iobound Darshan index ({exc}); give --index a new file") from None

    def _check(self) -> None:
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not tables:
            return
        meta = dict(self._db.execute("SELECT key, value FROM meta")) if "meta" in tables else {}
        if meta.get("format") != INDEX_FORMAT:
            raise InputError(self.path, "", "not an iobound Darshan index (an SQLite file of other tables); give "
                             "--index a new file")
        if meta.get("format_version") != INDEX_VERSION:
            raise InputError(self.path, "", f"an iobound Darshan index of version {meta.get('format_version')}, this "
                             f"iobound writes {INDEX_VERSION}; give --index a new file")

    def done(self, log: LogFile, basis: str) -> JobResult | None:
        """The result kept for ``log`` if it still stands (same size, mtime and basis), else None."""
        row = self._db.execute("SELECT result FROM logs WHERE path = ? AND size = ? AND mtime_ns = ? AND basis = ?",
                               (log.path, log.size, log.mtime_ns, basis)).fetchone()
        return None if row is None else JobResult.from_dict(json.loads(row[0]))

    def add(self, results: Iterable[JobResult], basis: str) -> None:
        """Keep a batch's results, committed together: an interrupted review loses at most the batch in hand."""
        self._db.executemany("INSERT OR REPLACE INTO logs VALUES (?, ?, ?, ?, ?, ?)",
                             ((r.path, r.size, r.mtime_ns, basis, r.status, json.dumps(r.to_dict())) for r in results))
        self._db.commit()

    def __len__(self) -> int:
        return self._db.execute("SELECT count(*) FROM logs").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
