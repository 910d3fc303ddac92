"""The plan's round trip in a lab (issue 34): plan a fio run over the lab's file service, run the plan's own job file
in a client's namespace, and check it with ``check --plan`` and against the lab's topology.

Every client's page cache is this machine's, far larger than what sshfs moves in a test: fio runs in a memory
cgroup, whose limit is then that client's cache (page-cache pages are charged to the cgroup of the process that reads
them), and the plan is told that memory. The servers' stores are tmpfs: the devices themselves, with no cache in
front of them, as the lab's topology says (memory 0 B).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from assess.cli import main
from tests.test_lab import CIPHER, needs_lab

# One client on a link slow enough that its NIC, not ssh's encryption on a busy machine, bounds what sshfs moves.
SPEC = '[clients]\ncount = 1\nrate = "300 Mbit/s"\n[servers]\ncount = 1\nrate = "1 Gbit/s"\nsize = "512 MiB"\n'
# The client's cache: a cgroup of this much memory (B), of which fio's own pages and the kernel's take a few MiB.
CACHE = 64 * 2**20
# The memory cgroup roots: v1's memory hierarchy, or a cgroup2 whose memory controller is enabled for children.
V1, V2 = Path("/sys/fs/cgroup/memory"), (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))


def _cgroup_root() -> tuple[Path, str, str] | None:
    """A writable memory cgroup root: its path, the file that limits a child's memory and the key of memory.stat
    that counts its page cache; None where there is none."""
    if (V1 / "memory.limit_in_bytes").exists() and os.access(V1, os.W_OK):
        return V1, "memory.limit_in_bytes", "cache"
    for root in V2:
        control = root / "cgroup.subtree_control"
        if control.exists() and "memory" in control.read_text().split() and os.access(root, os.W_OK):
            return root, "memory.max", "file"
    return None


@contextlib.contextmanager
def memory_cgroup(limit: int) -> Iterator[tuple[Path, str]]:
    """A new memory cgroup of ``limit`` bytes (its folder and its memory.stat key for the page cache), removed after
    the block, also on failure."""
    root, limit_file, cache_key = _cgroup_root()
    group = root / f"iobound-plan-{os.getpid()}"
    group.mkdir()
    try:
        (group / limit_file).write_text(str(limit))
        yield group, cache_key
    finally:
        group.rmdir()  # its processes have ended; the pages they left are handed to the parent


def _run_in(group: Path, argv: list[str]) -> None:
    """``argv`` run with its process (and what it starts) in ``group``: the shell joins it, then becomes argv."""
    subprocess.run(["sh", "-c", 'echo $$ > "$0" && exec "$@"', str(group / "cgroup.procs"), *argv], check=True,
                   timeout=120, capture_output=True)


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(list(argv))
    return status, out.getvalue()


_NO_CGROUP = pytest.mark.skipif(os.geteuid() == 0 and _cgroup_root() is None,
                                reason="no writable memory cgroup (v1 memory hierarchy, or cgroup2 with the memory "
                                       "controller enabled for children): a client's cache cannot be made small")


def _round(topology: Path, mount: Path, folder: Path, memory: int, *options: str) -> tuple[dict, dict, int]:
    """Plan fio on the lab's ``topology`` for a client cache of ``memory`` bytes, run the plan's job file in the
    client's namespace in a cgroup of :data:`CACHE`, and check the run against the plan: the plan, the read's check
    and the page cache the cgroup held at the end (B)."""
    assert _cli("plan", str(topology), "--benchmark", "fio", "--nodes", "1", "--noise", "0", "--min-time", "1",
                "--set", f"lab-clients.memory={memory} B", *options, "--path", str(mount), "-o", str(folder))[0] == 0
    output = folder / "fio.json"
    try:
        with memory_cgroup(CACHE) as (group, cache_key):
            _run_in(group, ["ip", "netns", "exec", f"iobl-{mount.parent.name}", "fio", "--output-format=json",
                            f"--output={output}", str(folder / "job.fio")])
            held = next(int(line.split()[1]) for line in (group / "memory.stat").read_text().splitlines()
                        if line.split()[0] == cache_key)
    finally:
        for written in (mount / "fio").iterdir():
            written.unlink()
    status, text = _cli("check", "--plan", str(folder / "plan.json"), str(output), "--json")
    runs = json.loads(text)["runs"]
    assert status == 0 and all(i["followed"] for r in runs for i in r["items"]), runs  # the plan's own job file
    read = next(r for r in runs if r["phase"] == "read")
    print(f"{folder.name}: the plan expected {read['expected_share'][1]:.1%} of the read from the cache, its rate shows "
          f"{read['measured_share'][0]:.1%} to {read['measured_share'][1]:.1%} (the cgroup held {held / 2**20:.1f} MiB"
          f" of page cache at the end): {read['meaning']}", file=sys.stderr)
    return json.loads((folder / "plan.json").read_text()), read, held


@needs_lab
@_NO_CGROUP
def test_a_planned_fio_run_in_the_lab_is_at_its_ceiling_and_a_half_cached_one_shows_the_share_planned(tmp_path):
    """Planned to outgrow every cache, fio's sequential read runs at the storage path's ceiling, not above it; planned
    to leave half its data set to the cache and read at random, the share its rate shows lies within 10 points of
    the plan's expectation. The second plan is given the page cache the first run's cgroup held: its memory less
    what fio and the kernel keep there. The closing notes give the planned and measured shares (pytest -rP)."""
    spec = tmp_path / "lab.toml"
    spec.write_text(SPEC)
    state = tmp_path / "lab"
    assert _cli("lab", "up", str(spec), "--state-dir", str(state), "--cipher", CIPHER)[0] == 0
    try:
        topology = state / "topology.toml"
        mount = next((state / "mnt").glob("*/*"))  # the one client's mount of the one server
        (mount / "fio").mkdir()
        plan, read, held = _round(topology, mount, tmp_path / "uncached", CACHE, "--cached-share", "0")
        servers = next(c for c in plan["phases"][1]["caches"] if c["layer"] == "server memory")
        assert servers["memory_bytes"] == [0, 0] and servers["stated"]  # tmpfs: the device, no cache in front of it
        assert read["expected_share"] == [0.0, 0.0] and read["measured_share"] == [0.0, 0.0], read
        status, text = _cli("check", str(topology), str(tmp_path / "uncached" / "fio.json"), "--json", "--tolerance",
                            "0.1", "--fail-on", "never")
        for run in json.loads(text)["runs"]:  # at the ceiling the lab's topology predicts, not above it
            codes = {f["code"] for f in run["findings"]}
            assert "AT-CEILING" in codes and "ABOVE-CEILING" not in codes, (run["ratio"], codes)
        _, read, _ = _round(topology, mount, tmp_path / "half", held, "--cached-share", "50%", "--access", "random")
        expected, measured = read["expected_share"][1], read["measured_share"]
        assert 0.3 < expected < 0.5 and measured[0] - 0.1 <= expected <= measured[1] + 0.1, read
    finally:
        assert _cli("lab", "down", "--state-dir", str(state))[0] == 0
