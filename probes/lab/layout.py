"""A lab as it is: its spec, where it keeps each thing under its state directory, and what of it is missing."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from probes.lab.spec import SWITCH, Host, Role, Spec, hosts

__all__ = ["Lab", "OWN", "MOUNTED", "STATE_DIR", "down_command"]

STATE_DIR = Path("/run/iobound-lab")
# The subfolders up makes in its state directory: only paths strictly inside them count as the lab's;
# mounts are made only inside the last two.
MOUNTED = ("store", "mnt")
OWN = ("keys", "hosts", "images", *MOUNTED)


@dataclass(frozen=True)
class Lab:
    """A lab as it is: its spec and layout, whether the kernel has netem, and what of it is missing (checked live).

    ``netem`` is None until :func:`probes.lab.up` has tried it; ``complete`` is False for a lab whose ``up``
    did not finish. ``state_dir`` is a real path (symlinks resolved), as /proc/self/mountinfo shows it.
    """

    spec: Spec
    state_dir: Path
    netem: bool | None
    complete: bool
    missing: tuple[str, ...]

    @property
    def delayed(self) -> bool:
        """Whether the spec's delay is in effect: one was asked for and netem is there to add it."""
        return self.spec.delay is not None and bool(self.netem)

    @property
    def hosts(self) -> tuple[Host, ...]:
        """Every host, clients first; the layout follows from the spec alone."""
        return hosts(self.spec)

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
        return {"spec": self.spec.to_dict(), "state_dir": str(self.state_dir), "netem": self.netem,
                "complete": self.complete, "missing": list(self.missing),
                "hosts": [{"name": h.name, "role": h.role.value, "namespace": h.namespace, "address": h.address}
                          for h in self.hosts],
                "stores": {s.name: str(self.store(s.name)) for s in self.servers},
                "mounts": [{"client": c.name, "server": s.name, "path": str(self.mount(c.name, s.name))}
                           for c in self.clients for s in self.servers]}

    def _role(self, role: Role) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if h.role is role)


def down_command(state_dir: Path) -> str:
    """The command that removes the lab of ``state_dir``, for messages (``--state-dir`` unless it is the default)."""
    return "iobound lab down" + ("" if state_dir == STATE_DIR else f" --state-dir {state_dir}")
