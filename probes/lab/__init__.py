"""A storage lab on this machine from real parts: hosts in network namespaces on shaped links, sshfs between them.

Every host is a namespace ``iobl-<host>`` joined to a bridge in ``iobl-sw`` by a veth pair
shaped with tc tbf on both ends to its rate (and delayed with netem where the kernel has it). Each
server runs sshd (root login by a key the lab makes, internal-sftp only) in its namespace,
exporting a tmpfs (or a file-backed ext4 image); each client mounts every server with sshfs, run
in the client's namespace, so I/O through ``STATE/mnt/<client>/<server>`` crosses the client's
and the server's shaped links. Before the links are shaped, ``up`` measures what the file service
itself serves (:func:`probes.lab.service.measure`); with ``slurm`` it then starts a Slurm whose nodes are the
hosts (:mod:`probes.lab.slurm`). :func:`probe` measures the shaped links, and the
file service again through them, on the machine as it is then (:func:`probes.lab.service.service_probes`). Each
namespace is written to the state document before it is made, and every mount lies in a folder
``up`` makes in the state directory, so :func:`down` removes all of a lab ``up`` made, also after a
crash or a killed ``up``. One lab command runs at a time (a lock).
"""

from __future__ import annotations

import os
import shutil
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from probes.core.errors import ProbeError
from probes.measure.tool import install_hint
from probes.lab import network, probing, service, slurm as lab_slurm, sweep
from probes.lab.layout import STATE_DIR, Lab, Service, down_command, links_phrase, per_host
from probes.lab.spec import PREFIX, SUBNET, SWITCH, Backing, Host, HostGroup, Role, Settings, Spec, hosts, parse_spec
from probes.lab.state import LOCK, Journal, claim, load, locked, make, resolve
from probes.measure.mountinfo import mounts
from probes.measure.probe import TARGET
from probes.measure.probeset import ProbeSetFile
from probes.measure.session import BUDGET, Outcome, Reporter, run_probes

__all__ = ["Spec", "Settings", "Host", "HostGroup", "Lab", "Service", "Backing", "Role", "Removal", "Probed",
           "parse_spec", "up", "status", "running", "probe", "down", "leftovers", "down_command", "links_phrase",
           "per_host", "STATE_DIR", "LOCK", "PREFIX", "SWITCH", "SUBNET", "STOPPED"]

STOPPED = ("every process in the lab's namespaces was stopped (SIGTERM, then SIGKILL), also any started there by "
           "hand (ip netns exec)")


@dataclass(frozen=True)
class Removal:
    """What :func:`down` did: how it decided what was the lab's (``notes``), and what it removed, one line each."""

    notes: tuple[str, ...]
    removed: tuple[str, ...]


@dataclass(frozen=True)
class Probed:
    """What :func:`probe` did: the lab it probed, the probe session's outcome, and why a group was not probed."""

    lab: Lab
    outcome: Outcome
    notes: tuple[str, ...]


def up(spec: Spec, state_dir: str | os.PathLike = STATE_DIR, *, cipher: str | None = None,
       slurm: bool = False) -> Lab:
    """Build the lab of ``spec`` in a new state directory, recording each part before making it; sshfs asks ssh for
    ``cipher`` (ssh's default when None); with ``slurm``, a Slurm runs a node in each host.

    If a step fails, or the lab is not whole at the end, what this call made (and only that) is removed.

    Raises
    ------
    InputError
        If the state directory exists, its folder does not, or it is a system directory; if ssh has no ``cipher``.
    ProbeError
        If this is not root, a tool is missing (with how to install it), a lab is up or left behind, another
        lab command runs, a step fails, or a part of the lab is missing at the end (it says which).
    """
    root = resolve(state_dir)
    with locked():
        _check_tools(spec, slurm)
        if cipher is not None:
            service.check_cipher(cipher)
        found = _leftovers(root)
        if found:
            raise ProbeError(f"a lab is up or was left behind ({'; '.join(found[:4])}): "
                             f"'{down_command(_holder(root))}' removes it")
        make(root)
        journal = Journal(root, spec, cipher, slurm)
        try:
            _build(Lab(spec, root, None, False, (), cipher, slurm=slurm), journal)
            made = _status(root)
            if made.missing:
                raise ProbeError(f"the lab came up without {'; '.join(made.missing)}; what up made was removed")
        except BaseException as exc:
            try:
                sweep.remove(root, journal.namespaces, mounted=True)
                _remove_state(root)
            except ProbeError as failed:
                raise ProbeError(f"{exc}; and removing what was made failed: {failed}") from exc
            raise
    return made


def status(state_dir: str | os.PathLike = STATE_DIR) -> Lab | None:
    """The lab recorded in ``state_dir``, each part checked live (namespaces, shaping, stores, sshd, mounts).

    Returns None if there is no such directory.

    Raises
    ------
    InputError
        If the directory is no lab's, or its state cannot be read in full (saying that down removes it).
    ProbeError
        If this is not root, or another lab command runs.
    """
    root = resolve(state_dir)
    with locked():
        return _status(root)


def probe(store: ProbeSetFile, reporter: Reporter, state_dir: str | os.PathLike = STATE_DIR, *,
          runtime: float = 1.0, budget: float = BUDGET, target: float = TARGET) -> Probed:
    """Probe the links of the lab of ``state_dir`` from inside its namespaces, saving to ``store`` as it goes.

    Each group's send and receive are probed with iperf3 against peers at least as fast (see
    :mod:`probes.lab.probing`), and the file service as every client meets every server at once
    through the shaped links, in one session (:func:`probes.measure.session.run_probes`) of ``budget``
    seconds, their repetitions interleaved; the lab's lock is held throughout, so no other lab command
    changes it meanwhile. The processes in the lab's namespaces (its sshd, sshfs and ssh, the iperf3 servers) are
    what the probes measure, so their CPU time is the probes' own, not the neighbours' (UNSTABLE-MACHINE).

    Raises
    ------
    ProbeError
        If this is not root, another lab command runs, no lab is up there, it is not whole, or it has no two
        hosts to probe between.
    """
    root = resolve(state_dir)
    with locked():
        lab = _running(root)
        made = probing.plan(lab, runtime=runtime)
        ids = {name: ident for name in (*(h.namespace for h in lab.hosts), SWITCH)
               if (ident := network.identity(name)) is not None}
        if not made.probes:
            raise ProbeError(f"nothing to probe in the lab in {root}: " + ("; ".join(made.notes) or "one host alone"))
        with probing.serving(made.peers), ExitStack() as stack:
            served = stack.enter_context(service.service_probes(lab, runtime)) if lab.servers and lab.clients else ()
            outcome = run_probes(made.probes + served, store, reporter, target=target, budget=budget,
                                 helpers=lambda: sweep.members(ids))
    return Probed(lab, outcome, made.notes)


def running(state_dir: str | os.PathLike = STATE_DIR) -> Lab:
    """The lab of ``state_dir``, up and whole.

    Raises
    ------
    ProbeError
        If this is not root, another lab command runs, no lab is up there, or it is not whole (saying what is missing).
    """
    root = resolve(state_dir)
    with locked():
        return _running(root)


def down(state_dir: str | os.PathLike = STATE_DIR) -> Removal:
    """Remove the lab of ``state_dir``: its mounts, every process in its namespaces, the namespaces, its state.

    Only a directory ``up`` made (private, holding a lab-state document) is removed, with the mounts in its
    folders and the namespaces it records (named ``iobl-*``, not tagged as another lab's). Without one, the
    namespaces named ``iobl-*`` that no other lab's state claims are swept, as the notes say.

    Raises
    ------
    InputError
        If ``state_dir`` is there but is no lab's state directory (it says what it found), or a system directory.
    ProbeError
        If this is not root, another lab command runs, or something could not be removed (the state is kept).
    """
    root = resolve(state_dir)
    with locked():
        found = claim(root)
        if found.saved is not None:
            names, notes = _recorded(root, found.saved.namespaces)
            notes += found.saved.ignored
        else:
            names, notes = _orphans(root)
            why = f"{root} holds {found.stale}" if found.stale else f"no lab state in {root}"
            notes.insert(0, f"{why}: swept the namespaces named {PREFIX}* (the lab's prefix) that no other lab's "
                            "state claims" + (", and the mounts in its folders" if found.ours else ""))
        removed = sweep.remove(root, names, mounted=found.ours)
        if found.ours:
            removed.append(_remove_state(root))
        elif found.empty:
            root.rmdir()
            removed.append(f"empty state directory {root} (of an up killed before it wrote its state)")
    stopped = any(line.startswith("process ") for line in removed)
    return Removal(tuple(notes + ([STOPPED] if stopped else [])), tuple(removed))


def leftovers(state_dir: str | os.PathLike = STATE_DIR) -> list[str]:
    """What of a lab exists here: namespaces named ``iobl-*`` (and whose), processes in them, the mounts and loop
    devices of ``state_dir``'s lab, and the state directory itself."""
    root = resolve(state_dir)
    with locked():
        return _leftovers(root)


def _build(lab: Lab, journal: Journal) -> None:
    """Make every part of ``lab``: keys, network, stores and sshd, the clients' mounts; measure the file service over
    the links while they are not shaped yet, then shape them."""
    service.make_keys(lab)
    lab = replace(lab, netem=network.build(lab, journal))
    for server in lab.servers:
        service.serve(lab, server)
    service.trust(lab)
    for client in lab.clients:
        for server in lab.servers:
            service.mount(lab, client, server)
    if lab.servers:
        journal.note(service=service.measure(lab).to_dict())
    network.shape(lab)
    if lab.slurm:
        lab_slurm.start(lab)
    journal.note(complete=True)


def _status(root: Path) -> Lab | None:
    """The lab of ``root`` with what of it is missing, checked live; None if there is no such directory."""
    saved = load(root)
    if saved is None:
        return None
    lab = Lab(saved.spec, root, saved.netem, saved.complete, (), saved.cipher, saved.service, saved.slurm)
    gone = network.missing(lab) + service.missing(lab)
    return replace(lab, missing=tuple(gone + (lab_slurm.missing(lab) if lab.slurm and not gone else [])))


def _running(root: Path) -> Lab:
    """The lab of ``root``, up and whole, or ProbeError saying what is not."""
    lab = _status(root)
    if lab is None:
        raise ProbeError(f"no lab is up in {root}: 'iobound lab up SPEC' builds one")
    if not lab.healthy:
        why = "; ".join(lab.missing) or "its up did not finish"
        raise ProbeError(f"the lab in {root} is not whole ({why}): '{down_command(root)}' removes it")
    return lab


def _leftovers(root: Path) -> list[str]:
    """What of a lab exists here, for ``up`` (it starts only on a clean machine) and ``status``."""
    names = network.namespaces()
    tags = {name: network.owner(name) for name in names}
    found = [f"namespace {name}" + (f" (of the lab in {tags[name]})" if tags[name] else "") for name in names]
    ids = {name: ident for name in names if (ident := network.identity(name)) is not None}
    found += [f"process {pid} in {name}" for pid, name in sweep.members(ids).items()]
    found += [f"mount {m.point}" for m in sweep.lab_mounts(root)]
    found += [f"loop device {device} ({backing})" for device, backing in sweep.loops(root)]
    return found + ([f"state directory {root}"] if _is_lab(root) else [])


def _holder(root: Path) -> Path:
    """The state directory whose ``down`` removes what is found: the one the lab's namespaces name, else ``root``."""
    return next((tag for name in network.namespaces() if (tag := network.owner(name)) is not None), root)


def _recorded(root: Path, names: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Of the namespaces ``root``'s state records, those to remove, and notes on those another lab's tag claims."""
    keep, notes = [], []
    for name in names:
        tag = network.owner(name)
        if tag is None or tag == root:
            keep.append(name)
        else:
            notes.append(f"left namespace {name} alone: it is the lab's in {tag}")
    return keep, notes


def _orphans(root: Path) -> tuple[list[str], list[str]]:
    """The namespaces named with the prefix that no other lab's state directory claims, and notes on the others."""
    keep, notes = [], []
    for name in network.namespaces():
        tag = network.owner(name)
        if tag is None or tag == root or not _is_lab(tag):
            keep.append(name)
        else:
            notes.append(f"left namespace {name} alone: it is the lab's in {tag} ('{down_command(tag)}' removes it)")
    return keep, notes


def _is_lab(path: Path) -> bool:
    """Whether ``path`` is a lab's state directory (holding its document)."""
    try:
        return claim(path).ours
    except (ProbeError, ValueError):  # InputError: no lab's
        return False


def _remove_state(root: Path) -> str:
    """Remove the state directory, once nothing is mounted in it (rmtree would reach into a mount)."""
    held = [m.point for m in mounts() if m.point.is_relative_to(root)]
    if held:
        raise ProbeError(f"{held[0]} is still mounted in {root}; the state is kept: unmount it and try "
                         f"'{down_command(root)}' again")
    shutil.rmtree(root)
    return f"state directory {root}"


def _check_tools(spec: Spec, slurm: bool) -> None:
    """FUSE and every tool the lab runs (Slurm's too, with ``slurm``), or ProbeError saying what is missing and how to
    install it."""
    tools = ["ip", "tc", "ssh", "ssh-keygen", "sshd", "sshfs", "mount", "umount", "nsenter"]
    tools += ["mkfs.ext4"] if any(h.backing is Backing.FILE for h in hosts(spec)) else []
    tools += ["fio"] if {h.role for h in hosts(spec)} >= {Role.CLIENT, Role.SERVER} else []  # measures the file service
    missing = [t for t in tools if not (service.sshd_path(required=False) if t == "sshd" else shutil.which(t))]
    if missing:
        raise ProbeError(f"the lab needs {', '.join(missing)}, not found here; {install_hint(missing)}")
    if slurm and (lacking := lab_slurm.missing_tools()):
        raise ProbeError(f"the lab's Slurm needs {', '.join(lacking)}, not found here; {lab_slurm.INSTALL}")
    if not os.path.exists("/dev/fuse"):
        raise ProbeError("the lab needs FUSE for sshfs, and /dev/fuse is missing (load it with: modprobe fuse)")
