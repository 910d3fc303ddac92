"""Probe sets: the measurements of a probe session in one versioned JSON file, saved after every repetition."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from probes.core.document import dumps, envelope, read_document
from probes.core.outputs import check_writable, write_replacing
from probes.core.errors import InputError
from probes.core.host import this_host
from probes.core.inputs import not_a_file
from probes.core.measurement import Measurement
from probes.measure.probe import Probe

__all__ = ["read_probe_set", "read_probe_document", "document", "machine_state", "ProbeSetFile", "PROBE_SET_VERSION"]

# 1.0: measurements with samples, summary, target, parameters and provenance (tool, version, commands, host).
# 1.1: per repetition its start in the session (times_s) and the CPUs other processes took (others_cpus); unstable
#      (UNSTABLE-MACHINE: why the repetitions drift, or null); the machine's state as the session began (machine:
#      load average, governor, CPUs, what others and the hypervisor took); 1.0 files are read (no times: no drift test).
# 1.2: job: the batch job a cluster probe ran in (scheduler, id, nodes, ppn, node list, hosts; each count and list with
#      where it came from), or absent outside one; 1.0 and 1.1 files are read.
PROBE_SET_VERSION = "1.2"
KIND = "probe-set"


def document(measurements: Iterable[Measurement], machine: dict | None = None, job: dict | None = None) -> dict:
    """The versioned JSON document of a probe set; ``machine``, the state of the machine when its session began;
    ``job``, the batch job it ran in (:meth:`probes.measure.batch.Job.to_dict`)."""
    body = {"measurements": [m.to_dict() for m in measurements]}
    return envelope(KIND, PROBE_SET_VERSION, body | ({"machine": machine} if machine else {})
                    | ({"job": job} if job else {}))


def machine_state() -> dict:
    """What a session records of the machine before it starts: load average, governor, its CPUs and what others take."""
    from probes.core import machine

    taken = machine.busy_now()
    return {"load_average": list(os.getloadavg()), "governor": machine.governor() or None, "cpus": machine.cpus(),
            "others_cpus": taken.others, "steal_cpus": taken.steal}


def read_probe_set(path: str | os.PathLike) -> dict[str, Measurement]:
    """The measurements of a probe set file by name; InputError naming the file and entry if it is malformed."""
    return read_probe_document(path)[0]


def read_probe_document(path: str | os.PathLike) -> tuple[dict[str, Measurement], dict | None]:
    """The measurements of a probe set file by name, and the machine's state as its session began (None in a 1.0
    file, which has none); InputError naming the file and entry if either is malformed."""
    doc = read_document(path, KIND, ("1.0", "1.1", PROBE_SET_VERSION))
    machine = doc.get("machine")
    if machine is not None and not isinstance(machine, dict):
        raise InputError(str(path), "machine", "must be the machine's state, an object")
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
    return found, machine


class ProbeSetFile:
    """The file a probe session writes as it goes; an existing one is continued with ``resume`` or replaced with ``force``."""

    def __init__(self, path: str | os.PathLike, *, force: bool = False, resume: bool = False):
        self.path = Path(path)
        self.measurements: dict[str, Measurement] = {}
        self.machine: dict | None = None  # the machine's state as the session began (machine_state)
        self.job: dict | None = None  # the batch job the session ran in (Job.to_dict)
        if self.path.is_dir():
            raise InputError(str(path), "", "is a directory; give a file name for the probe set, e.g. node01.json")
        if kind := not_a_file(self.path):  # replacing /dev/null or a FIFO with the probe set would break what uses it
            raise InputError(str(path), "", f"{kind}, not a file; give a file name for the probe set, e.g. node01.json")
        if self.path.exists():
            if resume:
                self.measurements = read_probe_set(self.path)
            elif not force:
                raise InputError(str(path), "", "exists already; --resume continues it, --force replaces it")
        elif not self.path.parent.is_dir():
            raise InputError(str(path), "", f"its folder {str(self.path.parent)!r} does not exist")
        check_writable(self.path)

    def done(self, probe: Probe) -> list[Measurement] | None:
        """The finished measurements of ``probe`` if this file has them from the same commands on this host."""
        found = [self.measurements.get(o.name) for o in probe.outputs]
        if all(m is not None and m.complete and _same(m, probe) for m in found):
            return found
        return None

    def partial(self, probe: Probe) -> dict[str, Measurement]:
        """The samples an interrupted session took of ``probe`` with the same commands on this host, to be continued."""
        return {o.name: m for o in probe.outputs if (m := self.measurements.get(o.name)) is not None and _same(m, probe)}

    def conflicts(self, probe: Probe) -> list[str]:
        """The names of ``probe`` this file holds from other commands or another host: measuring again would lose them."""
        return [o.name for o in probe.outputs if (m := self.measurements.get(o.name)) is not None and not _same(m, probe)]

    def refuse_conflicts(self, names: list[str]) -> None:
        """InputError if ``names`` (of :meth:`conflicts`, maybe from several ranks) is not empty."""
        if names:
            raise InputError(str(self.path), "", f"holds {', '.join(names)} measured with other commands or on another "
                             "host; measuring again would lose them. Write a new file, or replace this one with --force")

    def record(self, measurements: list[Measurement]) -> None:
        """Add or replace ``measurements`` and save the whole set."""
        for measurement in measurements:
            self.measurements[measurement.name] = measurement
        write_replacing(self.path, dumps(document(self.measurements.values(), self.machine, self.job)) + "\n")


def _same(measurement: Measurement, probe: Probe) -> bool:
    return measurement.provenance.commands == probe.commands and measurement.provenance.host.hostname == this_host().hostname
