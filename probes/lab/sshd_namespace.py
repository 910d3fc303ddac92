"""Start sshd in a lab server's network namespace with a /run of its own, then become it (exec).

Run as its own process (``python -I sshd_namespace.py ...``), a fresh single-threaded interpreter,
so nothing runs between fork and exec in the caller. It uses the standard library only, all of it
imported before it lets go of any mount. Usage::

    sshd_namespace.py --netns /run/netns/iobl-s1 --run VIEW [--bind STATE INSIDE] [--detach POINT ...] -- SSHD ARG...

It joins the network namespace, unshares its mount namespace (a slave of the caller's, so
unmounts there reach it), detaches every POINT (deepest first, as given), bind-mounts STATE at
INSIDE and VIEW over /run, and execs SSHD. A failing step is reported on stderr with its errno,
and the process exits with status 1. :func:`join` moves the calling thread alone into a network
namespace, for ``iobound lab probe``, whose tools then start there.
"""

from __future__ import annotations

import argparse
import ctypes
import errno
import os
import sys

# Linux's clone and mount flags (sched.h, sys/mount.h).
CLONE_NEWNS, CLONE_NEWNET = 0x00020000, 0x40000000
MS_BIND, MS_REC, MS_SLAVE, MNT_DETACH = 0x1000, 0x4000, 0x80000, 2
# A point that went with its parent's detaching is gone (EINVAL: not a mount point any more; ENOENT).
_GONE = (errno.EINVAL, errno.ENOENT)


class StepFailed(Exception):
    """A step the kernel refused: what it was and the errno it gave."""

    def __init__(self, step: str, code: int):
        super().__init__(f"cannot {step}: {os.strerror(code)} (errno {code} {errno.errorcode.get(code, '?')})")


def main(argv: list[str]) -> None:
    """Set up the namespaces that ``argv`` names, then exec sshd; exit 1 saying which step failed."""
    parser = argparse.ArgumentParser(prog="sshd_namespace")
    parser.add_argument("--netns", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--bind", nargs=2, metavar=("STATE", "INSIDE"))
    parser.add_argument("--detach", action="append", default=[])
    parser.add_argument("sshd", nargs="+")
    args = parser.parse_args(argv)
    try:
        enter(args.netns, args.run, args.bind, args.detach)
        os.execv(args.sshd[0], args.sshd)
    except StepFailed as exc:
        sys.stderr.write(f"sshd_namespace: {exc}\n")
        raise SystemExit(1) from None
    except OSError as exc:
        sys.stderr.write(f"sshd_namespace: cannot start {args.sshd[0]}: {exc.strerror} (errno {exc.errno})\n")
        raise SystemExit(1) from None


def enter(netns: str, view: str, bind: list[str] | None, detach: list[str]) -> None:
    """Join ``netns``, take a mount namespace of its own, let go of ``detach`` and see ``view`` as /run."""
    join(netns)
    libc = _libc()
    _call(libc.unshare(CLONE_NEWNS), "unshare the mount namespace")
    _call(libc.mount(b"none", b"/", None, MS_REC | MS_SLAVE, None), "make every mount a slave")
    for point in detach:
        if libc.umount2(os.fsencode(point), MNT_DETACH) != 0 and ctypes.get_errno() not in _GONE:
            raise StepFailed(f"detach {point}", ctypes.get_errno())
    if bind is not None:
        state, inside = bind
        _call(libc.mount(os.fsencode(state), os.fsencode(inside), None, MS_BIND | MS_REC, None),
              f"bind {state} at {inside}")
    _call(libc.mount(os.fsencode(view), b"/run", None, MS_BIND | MS_REC, None), f"bind {view} over /run")


def join(netns: str | int) -> None:
    """Move the calling thread into the network namespace at path ``netns`` (or open as descriptor ``netns``): the
    sockets it opens and the processes it starts from then on are there; the process's other threads stay."""
    if isinstance(netns, int):
        _call(_libc().setns(netns, CLONE_NEWNET), f"join the network namespace of descriptor {netns}")
        return
    try:
        fd = os.open(netns, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise StepFailed(f"open {netns}", exc.errno) from None
    try:
        _call(_libc().setns(fd, CLONE_NEWNET), f"join the network namespace {netns}")
    finally:
        os.close(fd)


def _libc() -> ctypes.CDLL:
    """The C library with the four calls used here, their argument types declared, errno kept."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.setns.argtypes = (ctypes.c_int, ctypes.c_int)
    libc.unshare.argtypes = (ctypes.c_int,)
    libc.mount.argtypes = (ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p)
    libc.umount2.argtypes = (ctypes.c_char_p, ctypes.c_int)
    for call in (libc.setns, libc.unshare, libc.mount, libc.umount2):
        call.restype = ctypes.c_int
    return libc


def _call(result: int, step: str) -> None:
    """Raise StepFailed with the errno the call left, if it failed."""
    if result != 0:
        raise StepFailed(step, ctypes.get_errno())


if __name__ == "__main__":
    main(sys.argv[1:])
