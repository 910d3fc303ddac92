"""The lab's state directory and its document: what ``up`` records before it makes it, and what ``down`` may trust.

A directory is a lab's only if ``up`` made it: private to root, holding ``state.json``, an
``iobound/lab-state`` document. Of what that document records, only namespaces named with the
lab's prefix count; mounts count only strictly inside the subfolders ``up`` makes there.
"""

from __future__ import annotations

import fcntl
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from probes.core.document import dumps, envelope, read_document
from probes.core.outputs import write_replacing
from probes.core.errors import InputError, ProbeError
from probes.lab.layout import MOUNTED, OWN, Service, down_command
from probes.lab.spec import PREFIX, Spec, spec_from

__all__ = ["Saved", "Claim", "Journal", "resolve", "locked", "make", "load", "claim", "inside", "LOCK", "NEEDS_ROOT"]

LOCK = Path("/run/iobound-lab.lock")
NEEDS_ROOT = "iobound lab needs root: it makes network namespaces and mounts (run it with sudo)"
# lab-state format history:
#   1.2  slurm: whether the lab runs a Slurm of its own (up --slurm). 1.0 and 1.1 are read (no Slurm).
#   1.1  cipher (the sshfs mounts', null for ssh's default) and service (what one server's sshd served, null
#        without servers); the spec may state settings per role and per host, and no servers. 1.0 is read.
#   1.0  first version
KIND, VERSION, READABLE = "lab-state", "1.2", ("1.0", "1.1", "1.2")
STATE = "state.json"
# Seconds a lab command waits for another one to finish.
LOCK_WAIT = 30.0
_SAFE_PATH = re.compile(r"/[A-Za-z0-9._/-]*")
_NAMESPACE = re.compile(rf"{re.escape(PREFIX)}[a-z0-9]{{1,8}}")
# Never a lab's state directory: these directories themselves, and anything in the system's trees.
_TOPS = frozenset(map(Path, ("/", "/run", "/tmp", "/var", "/var/tmp", "/home", "/root", "/mnt", "/media", "/srv",
                             "/opt", "/usr", "/etc")))
_SYSTEM = tuple(map(Path, ("/proc", "/sys", "/dev", "/etc", "/usr", "/boot", "/bin", "/sbin", "/lib", "/lib32",
                           "/lib64", "/libx32", "/run/netns", "/run/user", "/var/lib", "/var/log")))
_BODY = ("spec", "netem", "complete", "objects")


@dataclass(frozen=True)
class Saved:
    """A lab's state document as read: its spec, netem's verdict, whether up finished, its namespaces, the mounts'
    cipher and what the file service served."""

    spec: Spec
    netem: bool | None
    complete: bool
    namespaces: tuple[str, ...]
    ignored: tuple[str, ...] = ()  # recorded entries that are not the lab's to remove
    cipher: str | None = None
    service: Service | None = None
    slurm: bool = False


@dataclass(frozen=True)
class Claim:
    """What ``down`` found in a state directory it may act on.

    ``saved`` is the lab's document when it reads in full; ``stale`` says why a document of the
    lab does not (another version, keys missing); ``empty`` marks an empty private directory, as
    an ``up`` killed before it wrote its state leaves. With none, there is no state there at all.
    """

    saved: Saved | None = None
    stale: str | None = None
    empty: bool = False

    @property
    def ours(self) -> bool:
        """Whether the directory holds a lab's document, so down may remove the directory."""
        return self.saved is not None or self.stale is not None


class Journal:
    """The state document of a lab being built: each part is written to it before it is made."""

    def __init__(self, root: Path, spec: Spec, cipher: str | None, slurm: bool = False):
        self.root = root
        self.body = {"spec": spec.to_dict(), "netem": None, "complete": False, "objects": [], "cipher": cipher,
                     "service": None, "slurm": slurm}
        self._save()

    def record(self, namespace: str) -> None:
        """Note ``namespace`` before it is made, so a crash after this leaves it findable."""
        self.body["objects"].append({"kind": "namespace", "name": namespace})
        self._save()

    def forget(self, namespace: str) -> None:
        """Strike ``namespace`` again: making it failed, so it is not the lab's (one of that name existed)."""
        self.body["objects"].remove({"kind": "namespace", "name": namespace})
        self._save()

    def note(self, **values: bool | dict) -> None:
        """Record netem's verdict, what the file service served, or that up finished."""
        self.body |= values
        self._save()

    @property
    def namespaces(self) -> tuple[str, ...]:
        """The namespaces recorded so far."""
        return tuple(obj["name"] for obj in self.body["objects"])

    def _save(self) -> None:
        write_replacing(self.root / STATE, dumps(envelope(KIND, VERSION, self.body)) + "\n")


def resolve(path: str | os.PathLike) -> Path:
    """The state directory as a real absolute path (symlinks resolved, as mountinfo shows it), if one may be there.

    Raises
    ------
    InputError
        If it is a system directory, or named with characters sshd's and sshfs's options cannot hold.
    """
    try:
        real = Path(path).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop
        raise InputError(str(path), "", f"cannot be resolved: {exc}") from None
    given = str(path) + (f" (that is {real})" if str(real) != str(path) else "")
    if not _SAFE_PATH.fullmatch(str(real)):
        raise InputError(given, "", "the lab's state directory must be named with letters, digits, '.', '_', '-' "
                                    "and '/' only (it goes into sshd's and sshfs's options)")
    if real in _TOPS or any(real.is_relative_to(tree) for tree in _SYSTEM):
        raise InputError(given, "", "is a system directory; the lab's state directory must be one of its own, "
                                    "e.g. /run/iobound-lab")
    return real


@contextmanager
def locked() -> Iterator[None]:
    """Hold the lab's lock (as root), so one lab command runs at a time; wait for it at most LOCK_WAIT seconds."""
    if os.geteuid() != 0:
        raise ProbeError(NEEDS_ROOT)
    fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ProbeError(f"another iobound lab command is running (it holds {LOCK}); try again once it "
                                     "has finished") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # closing the only descriptor of the open file releases the lock


def make(root: Path) -> None:
    """Make the state directory, new and private, with the subfolders the lab keeps its things in.

    Raises
    ------
    InputError
        If it exists (a lab's state directory is ``up``'s own, for ``down`` to remove) or its folder does not.
    """
    if root.exists() or root.is_symlink():
        what = "a directory" if root.is_dir() else "a file"
        raise InputError(str(root), "", f"exists already ({what}); give a new directory for the lab's state: up "
                                        "makes it, and down removes it")
    if not root.parent.is_dir():
        raise InputError(str(root), "", f"its folder {root.parent} does not exist")
    try:
        root.mkdir(mode=0o700)
        for sub in OWN:
            (root / sub).mkdir(mode=0o700)
    except OSError as exc:
        raise InputError(str(root), "", f"cannot be made: {exc.strerror}") from None


def load(root: Path) -> Saved | None:
    """The lab's document in ``root``; None if there is no such directory.

    Raises
    ------
    InputError
        If ``root`` is no lab's state directory, or its document cannot be read in full (saying that down removes it).
    """
    found = claim(root)
    if found.stale is not None:
        raise InputError(str(root / STATE), "", f"{found.stale}; '{down_command(root)}' removes it")
    return found.saved


def claim(root: Path) -> Claim:
    """What of ``root`` is a lab's, read without trusting it.

    Raises
    ------
    InputError
        If ``root`` is there but is no lab's state directory, saying what it found there.
    """
    try:
        info = root.lstat()
        entries = sorted(p.name for p in root.iterdir()) if stat.S_ISDIR(info.st_mode) else []
    except FileNotFoundError:
        return Claim()
    except PermissionError:
        raise ProbeError(NEEDS_ROOT) from None
    path = root / STATE
    private = info.st_uid == os.geteuid() and not info.st_mode & 0o077
    if not stat.S_ISDIR(info.st_mode):
        raise _refused(root, "it is a file")
    if not entries:
        return Claim(empty=private)
    if STATE not in entries or path.is_symlink() or not path.is_file():
        shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise _refused(root, f"it holds {shown} and no {STATE}")
    try:
        doc = read_document(path, KIND, READABLE)
    except InputError as exc:
        if exc.where != "format_version":
            raise _refused(root, f"its {STATE} is no lab state ({exc.detail})") from None
        found = Claim(stale=f"the state of another iobound version ({exc.detail})")
    else:
        try:
            found = Claim(saved=_saved(doc, str(path)))
        except InputError as exc:
            found = Claim(stale=f"a state that cannot be read in full ({exc.where}: {exc.detail})")
    if not private:
        raise _refused(root, f"it holds a lab's {STATE} but belongs to uid {info.st_uid} with mode "
                             f"{stat.S_IMODE(info.st_mode):o}")
    return found


def inside(root: Path, path: Path) -> bool:
    """Whether ``path`` (a real path) lies strictly inside a subfolder of ``root`` where the lab mounts things."""
    return any(path != root / sub and path.is_relative_to(root / sub) for sub in MOUNTED)


def _refused(root: Path, why: str) -> InputError:
    """The error for a directory that is no lab's: what was found there, and that nothing was touched."""
    return InputError(str(root), "", f"{why}: not a lab's state directory (up makes it private to root and writes "
                                     f"{STATE} there first); it was left as it is")


def _saved(doc: dict, source: str) -> Saved:
    """The body of a lab-state document; InputError naming a missing or malformed key."""
    for key in _BODY:
        if key not in doc:
            raise InputError(source, key, "missing")
    if doc["netem"] not in (True, False, None) or not isinstance(doc["complete"], bool):
        raise InputError(source, "netem" if doc["netem"] not in (True, False, None) else "complete", "not a boolean")
    if not isinstance(doc["objects"], list) or not isinstance(doc["spec"], dict):
        raise InputError(source, "objects" if not isinstance(doc["objects"], list) else "spec", "malformed")
    namespaces, ignored = [], []
    for obj in doc["objects"]:
        name = obj.get("name") if isinstance(obj, dict) and obj.get("kind") == "namespace" else None
        if isinstance(name, str) and _NAMESPACE.fullmatch(name):
            namespaces.append(name)
        else:
            ignored.append(f"recorded {str(obj)[:80]} (not a namespace named {PREFIX}...)")
    cipher, service, slurm = doc.get("cipher"), doc.get("service"), doc.get("slurm", False)
    if cipher is not None and not isinstance(cipher, str):
        raise InputError(source, "cipher", "not a cipher's name")
    if not isinstance(slurm, bool):
        raise InputError(source, "slurm", "not a boolean")
    try:
        service = None if service is None else Service.from_dict(service)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(source, "service", f"malformed ({exc})") from None
    return Saved(spec_from(doc["spec"], f"{source}: spec"), doc["netem"], doc["complete"], tuple(namespaces),
                 tuple(ignored), cipher, service, slurm)
