"""Probe sets: the measurements of a probe run in one versioned JSON file, saved after every repetition."""

from __future__ import annotations

import os
from pathlib import Path

from probes.document import dumps, envelope, read_document, write_atomic
from probes.errors import InputError
from probes.measurement import Measurement
from probes.probe import Probe

__all__ = ["read_probe_set", "ProbeSetFile", "FORMAT_VERSION"]

# 1.0: measurements with samples, summary, target, parameters and provenance (tool, version, commands, host).
FORMAT_VERSION = "1.0"
KIND = "probe-set"


def read_probe_set(path: str | os.PathLike) -> dict[str, Measurement]:
    """The measurements of a probe set file by name; InputError naming the file and entry if it is malformed."""
    doc = read_document(path, KIND, (FORMAT_VERSION,))
    entries = doc.get("measurements")
    if not isinstance(entries, list):
        raise InputError(str(path), "measurements", "must be a list of measurements")
    found: dict[str, Measurement] = {}
    for i, entry in enumerate(entries):
        try:
            measurement = Measurement.from_dict(entry)
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            raise InputError(str(path), f"measurements[{i}]", f"is not a measurement iobound wrote ({exc!r})") from None
        found[measurement.name] = measurement
    return found


class ProbeSetFile:
    """The file a probe run writes as it goes; an existing one is continued with ``resume`` or replaced with ``force``."""

    def __init__(self, path: str | os.PathLike, *, force: bool = False, resume: bool = False):
        self.path = Path(path)
        self.measurements: dict[str, Measurement] = {}
        if self.path.is_dir():
            raise InputError(str(path), "", "is a directory; give a file name for the probe set, e.g. node01.json")
        if self.path.exists():
            if resume:
                self.measurements = read_probe_set(self.path)
            elif not force:
                raise InputError(str(path), "", "exists already; --resume continues it, --force replaces it")
        elif not self.path.parent.is_dir():
            raise InputError(str(path), "", f"its folder {str(self.path.parent)!r} does not exist")

    def done(self, probe: Probe) -> list[Measurement] | None:
        """The finished measurements of ``probe`` if this file has them from the same commands."""
        found = [self.measurements.get(o.name) for o in probe.outputs]
        if all(m is not None and m.complete and m.provenance.commands == probe.commands for m in found):
            return found
        return None

    def partial(self, probe: Probe) -> dict[str, Measurement]:
        """The samples an interrupted run took of ``probe`` with the same commands, to be continued."""
        return {o.name: m for o in probe.outputs
                if (m := self.measurements.get(o.name)) is not None and m.provenance.commands == probe.commands}

    def record(self, measurements: list[Measurement]) -> None:
        """Add or replace ``measurements`` and save the whole set."""
        for measurement in measurements:
            self.measurements[measurement.name] = measurement
        doc = envelope(KIND, FORMAT_VERSION, {"measurements": [m.to_dict() for m in self.measurements.values()]})
        write_atomic(self.path, dumps(doc) + "\n")
