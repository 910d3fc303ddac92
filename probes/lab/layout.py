"""A lab as it is: its spec, where it keeps each thing under its state directory, and what of it is missing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from probes.core.units import Metric, format_quantity
from probes.lab.spec import SWITCH, Host, HostGroup, Role, Spec, groups, hosts

if TYPE_CHECKING:
    from pint import Quantity

__all__ = ["Lab", "Service", "OWN", "MOUNTED", "STATE_DIR", "down_command", "links_phrase", "per_host"]

STATE_DIR = Path("/run/iobound-lab")
# The subfolders up makes in its state directory: only paths strictly inside them count as the lab's;
# mounts are made only inside the last two.
MOUNTED = ("store", "mnt")
OWN = ("keys", "hosts", "images", *MOUNTED)


@dataclass(frozen=True)
class Service:
    """What one server's sshd served as ``up`` measured it: sshfs reads by ``streams`` clients at once over unshaped
    links, ``seconds`` long each, in B/s of all streams together per repetition."""

    server: str
    streams: int
    seconds: float
    samples: tuple[float, ...]

    def to_dict(self) -> dict:
        """The record the state document keeps (rates in B/s)."""
        return {"server": self.server, "streams": self.streams, "seconds": self.seconds,
                "samples_Bps": list(self.samples)}

    @classmethod
    def from_dict(cls, doc: dict) -> Service:
        """The record :meth:`to_dict` wrote; KeyError, TypeError or ValueError if it is not one."""
        samples = tuple(float(x) for x in doc["samples_Bps"])
        if not samples or not all(x > 0 for x in samples):
            raise ValueError("samples_Bps must be positive rates")
        return cls(str(doc["server"]), int(doc["streams"]), float(doc["seconds"]), samples)


@dataclass(frozen=True)
class Lab:
    """A lab as it is: its spec and layout, whether the kernel has netem, and what of it is missing (checked live).

    ``netem`` is None until :func:`probes.lab.up` has tried it; ``complete`` is False for a lab whose ``up``
    did not finish. ``state_dir`` is a real path (symlinks resolved), as /proc/self/mountinfo shows it.
    ``cipher`` is the one the sshfs mounts ask ssh for (None: ssh's default); ``service`` what the file
    service served as ``up`` measured it (None without servers, or before ``up`` measured it); ``slurm`` whether
    it runs a Slurm of its own (:mod:`probes.lab.slurm`).
    """

    spec: Spec
    state_dir: Path
    netem: bool | None
    complete: bool
    missing: tuple[str, ...]
    cipher: str | None = None
    service: Service | None = None
    slurm: bool = False

    def delay(self, host: Host) -> Quantity | None:
        """The delay added to what ``host`` sends, if in effect: one was asked for and netem is there to add it."""
        return host.delay if self.netem else None

    @property
    def hosts(self) -> tuple[Host, ...]:
        """Every host, clients first; the layout follows from the spec alone."""
        return hosts(self.spec)

    @property
    def groups(self) -> tuple[HostGroup, ...]:
        """The hosts in groups of one role and the same settings, as the lab's topology states them."""
        return groups(self.spec)

    @property
    def clients(self) -> tuple[Host, ...]:
        """The hosts that mount every server's store."""
        return self._role(Role.CLIENT)

    @property
    def servers(self) -> tuple[Host, ...]:
        """The hosts that run sshd, each exporting its store."""
        return self._role(Role.SERVER)

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The network namespaces of the lab: the switch's, then each host's."""
        return (SWITCH, *(h.namespace for h in self.hosts))

    @property
    def healthy(self) -> bool:
        """Whether ``up`` finished and every part is there."""
        return self.complete and not self.missing

    @property
    def key(self) -> Path:
        """The private key every client logs in to every server with (its ``.pub`` next to it)."""
        return self.state_dir / "keys" / "lab"

    @property
    def known_hosts(self) -> Path:
        """The servers' host keys, for the clients' ssh to check."""
        return self.state_dir / "keys" / "known_hosts"

    def home(self, host: str) -> Path:
        """Where ``host`` keeps its files: sshd's configuration, keys, pidfile and /run (servers), sshfs's logs."""
        return self.state_dir / "hosts" / host

    def image(self, server: str) -> Path:
        """The ext4 image that holds ``server``'s store when its backing is a file."""
        return self.state_dir / "images" / f"{server}.img"

    def store(self, server: str) -> Path:
        """Where server ``server`` keeps its files (its tmpfs or image), as it exports them."""
        return self.state_dir / "store" / server

    def mount(self, client: str, server: str) -> Path:
        """Where ``client`` sees ``server``'s store: I/O there crosses both hosts' links."""
        return self.state_dir / "mnt" / client / server

    def to_dict(self) -> dict:
        """The lab for JSON output: spec, state, hosts, stores and mounts (paths as text)."""
        def text(q: Quantity | None) -> str | None:
            return None if q is None else f"{q:~P}"

        return {"spec": self.spec.to_dict(), "state_dir": str(self.state_dir), "netem": self.netem,
                "complete": self.complete, "missing": list(self.missing), "cipher": self.cipher,
                "service": self.service.to_dict() if self.service else None, "slurm": self.slurm,
                "hosts": [{"name": h.name, "role": h.role.value, "namespace": h.namespace, "address": h.address,
                           "rate": text(h.rate), "delay": text(h.delay),
                           "backing": h.backing.value if h.backing else None, "size": text(h.size)}
                          for h in self.hosts],
                "stores": {s.name: str(self.store(s.name)) for s in self.servers},
                "mounts": [{"client": c.name, "server": s.name, "path": str(self.mount(c.name, s.name))}
                           for c in self.clients for s in self.servers]}

    def _role(self, role: Role) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if h.role is role)


def links_phrase(lab: Lab) -> str:
    """The rates of the lab's links in words: ``100 Mbit/s``, or ``500 Mbit/s (c1-c3) and 1 Gbit/s (s1, s2)``."""
    return per_host(lab, lambda h: format_quantity(h.rate, Metric.BANDWIDTH, h.rate.units))


def per_host(lab: Lab, text: Callable[[Host], str | None]) -> str:
    """What ``text`` says of each host, in words: one phrase when all hosts share it, else each with its hosts (those
    of which it says None left out), e.g. ``1 ms (c1-c3) and 2 ms (s1)``."""
    named: dict[str, list[str]] = {}
    for host in lab.hosts:
        if (said := text(host)) is not None:
            named.setdefault(said, []).append(host.name)
    if len(named) == 1 and len(next(iter(named.values()))) == len(lab.hosts):
        return next(iter(named))
    return " and ".join(f"{said} ({_span(names)})" for said, names in named.items())


def _span(names: list[str]) -> str:
    """``c1-c3`` for three or more hosts numbered in a row, else their names."""
    numbers = [int(n[1:]) for n in names]
    if len(names) > 2 and len({n[0] for n in names}) == 1 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return f"{names[0]}-{names[-1]}"
    return ", ".join(names)


def down_command(state_dir: Path) -> str:
    """The command that removes the lab of ``state_dir``, for messages (``--state-dir`` unless it is the default)."""
    return "iobound lab down" + ("" if state_dir == STATE_DIR else f" --state-dir {state_dir}")
