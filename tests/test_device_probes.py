"""probes.measure.device: real fio runs on files and loop devices, and write probes refused wherever they would destroy data."""

from __future__ import annotations

import os
import platform
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from probes.measure.device import Target, check_writable, device_probes, inspect_target
from probes.core.errors import ProbeError
from probes.measure.session import measure
from probes.core.units import Metric

pytestmark = pytest.mark.slow  # real fio runs on files and loop devices

RUNTIME = 0.3
MIB = 2**20


def run(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run(argv, check=True, capture_output=True, text=True)


def blkid_type(device: str) -> str:
    return subprocess.run(["blkid", "-p", "-o", "value", "-s", "TYPE", device], capture_output=True, text=True).stdout.strip()


def measured(probe) -> tuple[float, ...]:
    """Three samples of ``probe`` (a tiny budget stops it at the minimum)."""
    (result,) = measure(probe, budget=0.01)
    return result.samples


@pytest.fixture
def scratch():
    """A directory on a disk's file system (/var/tmp, not a tmpfs /tmp): direct=1 must reach a device."""
    path = Path(tempfile.mkdtemp(prefix="iobound-device-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def mount_on(scratch):
    """Mount a device or file system on a fresh directory; unmounted afterwards."""
    mounted = []

    def mount(source: str, *options: str) -> Path:
        point = scratch / f"mnt{len(mounted)}"
        point.mkdir()
        try:
            run("mount", *options, source, str(point))
        except (OSError, subprocess.CalledProcessError) as exc:
            pytest.skip(f"cannot mount {source} here: {getattr(exc, 'stderr', exc)}")
        mounted.append(point)
        return point

    yield mount
    for point in reversed(mounted):
        subprocess.run(["umount", str(point)], capture_output=True)


@pytest.fixture
def loop(scratch):
    """An empty 32 MiB loop device (root only), detached afterwards."""
    if os.geteuid() != 0:
        pytest.skip("loop devices need root")
    backing = scratch / "loop.img"
    backing.write_bytes(b"")
    os.truncate(backing, 32 * MIB)
    try:
        device = run("losetup", "--find", "--show", str(backing)).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"losetup cannot attach a loop device here: {getattr(exc, 'stderr', exc)}")
    yield device
    subprocess.run(["losetup", "--detach", device], capture_output=True)


def test_a_missing_file_is_created_filled_and_read(scratch):
    path = scratch / "probe.dat"
    probes = device_probes(str(path), runtime=RUNTIME, size=16 * MIB)
    assert [p.name for p in probes] == ["device.probe-dat.randread.4k.iops", "device.probe-dat.read.1m.bandwidth"]
    assert path.stat().st_size == 16 * MIB and path.stat().st_blocks * 512 >= 16 * MIB  # written, not sparse
    iops, bandwidth = probes
    assert (iops.outputs[0].metric, iops.outputs[0].unit) == (Metric.OPERATION_RATE, "op/s")
    assert (bandwidth.outputs[0].metric, bandwidth.outputs[0].unit) == (Metric.BANDWIDTH, "B/s")
    for probe in probes:
        assert {"--direct=1", "--ioengine=libaio", "--readonly"} <= set(probe.commands[0])
        samples = measured(probe)
        assert len(samples) >= 3 and min(samples) > 0


def test_an_existing_file_is_read_as_it_is(scratch):
    path = scratch / "data"
    content = os.urandom(MIB) * 8
    path.write_bytes(content)
    (iops, _) = device_probes(str(path), runtime=RUNTIME)
    assert min(measured(iops)) > 0
    assert path.read_bytes() == content


def test_a_sparse_file_is_refused_since_its_holes_measure_no_device(scratch):
    path = scratch / "sparse"
    path.write_bytes(b"")
    os.truncate(path, 64 * MIB)
    with pytest.raises(ProbeError, match="sparse"):
        device_probes(str(path))


def test_a_write_probe_on_an_existing_file_needs_confirmation(scratch):
    path = scratch / "data"
    path.write_bytes(os.urandom(MIB) * 4)
    with pytest.raises(ProbeError, match=r"holds 4\.0 MiB of data; a write probe would destroy it\. Add --destroy-data"):
        device_probes(str(path), write=True)
    probes = device_probes(str(path), write=True, destroy=True, runtime=RUNTIME)
    assert [p.name.split(".", 2)[2] for p in probes] == [
        "randread.4k.iops", "read.1m.bandwidth", "randwrite.4k.iops", "write.1m.bandwidth"]
    assert probes[2].once()[probes[2].name] > 0


@pytest.mark.parametrize("path, what", [("/var/tmp", "is a directory"), ("/dev/null", "is a character device"),
                                        ("/dev/iobound-no-such-disk", "no such device")])
def test_anything_but_a_block_device_or_a_regular_file_is_refused(path, what):
    with pytest.raises(ProbeError, match=what):
        device_probes(path)


def test_on_dev_shm_direct_io_works_or_is_refused_clearly():
    """tmpfs takes O_DIRECT since Linux 6.6; before, the probes must say why they cannot run."""
    path = Path(tempfile.mkdtemp(dir="/dev/shm")) / "probe.dat"
    try:
        if tuple(int(n) for n in re.findall(r"\d+", platform.release())[:2]) >= (6, 6):
            (iops, _) = device_probes(str(path), runtime=RUNTIME, size=4 * MIB)
            assert iops.once()[iops.name] > 0
        else:
            with pytest.raises(ProbeError, match="without O_DIRECT support"):
                device_probes(str(path), size=4 * MIB)
    finally:
        shutil.rmtree(path.parent)


def test_a_file_system_without_direct_io_is_named_and_no_file_is_left(mount_on):
    if os.geteuid() != 0:
        pytest.skip("mounting a ramfs needs root")
    ramfs = mount_on("none", "-t", "ramfs")
    with pytest.raises(ProbeError, match=r"probe\.dat is on a file system without O_DIRECT support"):
        device_probes(str(ramfs / "probe.dat"), size=4 * MIB)
    assert not (ramfs / "probe.dat").exists()


def test_read_probes_on_a_loop_device(loop):
    target = inspect_target(loop)
    assert (target.kind, target.size, target.in_use, target.data) == ("block", 32 * MIB, (), ())
    probes = device_probes(loop, runtime=RUNTIME)
    label = Path(loop).name
    assert [p.name for p in probes] == [f"device.{label}.randread.4k.iops", f"device.{label}.read.1m.bandwidth"]
    for probe in probes:
        assert "--readonly" in probe.commands[0] and f"--filename={loop}" in probe.commands[0]
        samples = measured(probe)
        assert len(samples) >= 3 and min(samples) > 0


def test_write_probes_on_an_empty_loop_device(loop):
    probes = device_probes(loop, write=True, runtime=RUNTIME)
    for probe in probes[2:]:
        assert "--readonly" not in probe.commands[0]
        samples = measured(probe)
        assert len(samples) >= 3 and min(samples) > 0


def test_a_file_system_refuses_write_probes_until_its_loss_is_confirmed(loop):
    run("mkfs.ext4", "-q", loop)
    with pytest.raises(ProbeError) as refused:
        device_probes(loop, write=True, runtime=RUNTIME)
    assert str(refused.value) == (f"{loop} holds an ext4 file system; a write probe would destroy it. "
                                  "Add --destroy-data to confirm.")
    assert blkid_type(loop) == "ext4"  # refused before fio wrote anything
    assert len(device_probes(loop, runtime=RUNTIME)) == 2  # reading is always allowed
    probes = device_probes(loop, write=True, destroy=True, runtime=RUNTIME)
    assert probes[2].once()[probes[2].name] > 0


def test_a_partition_table_refuses_write_probes(loop):
    with open(loop, "r+b") as disk:  # an MBR with one Linux partition, as fdisk writes it
        disk.seek(446)
        disk.write(bytes([0, 0, 2, 0, 0x83, 0, 0, 0]) + struct.pack("<II", 2048, 16384))
        disk.seek(510)
        disk.write(b"\x55\xaa")
    with pytest.raises(ProbeError, match=f"^{loop} holds a dos partition table; .* --destroy-data"):
        device_probes(loop, write=True)


def test_a_gpt_header_blkid_does_not_accept_still_counts(loop):
    with open(loop, "r+b") as disk:  # "EFI PART" at LBA 1 with no valid checksum
        disk.seek(512)
        disk.write(b"EFI PART" + bytes(84))
    assert inspect_target(loop).data == ("a gpt partition table",)


def test_data_that_no_signature_names_refuses_write_probes_until_its_loss_is_confirmed(loop):
    """Raw data (plain dm-crypt, a database's raw volume) has no signature blkid knows: a sample of it is not all zeros."""
    with open(loop, "r+b") as disk:
        disk.seek(20 * MIB)
        disk.write(os.urandom(MIB))
    with pytest.raises(ProbeError) as refused:
        device_probes(loop, write=True, runtime=RUNTIME)
    assert str(refused.value) == (f"{loop} holds data that no signature names (bytes other than zero in 2 of the 64 places "
                                  "read); a write probe would destroy it. Add --destroy-data to confirm.")
    probes = device_probes(loop, write=True, destroy=True, runtime=RUNTIME)
    assert probes[2].once()[probes[2].name] > 0


def test_a_mounted_device_is_refused_even_when_its_loss_is_confirmed(loop, mount_on):
    run("mkfs.ext4", "-q", loop)
    point = mount_on(loop)
    with pytest.raises(ProbeError) as refused:
        device_probes(loop, write=True, destroy=True, runtime=RUNTIME)
    assert str(refused.value).startswith(f"{loop} is mounted on {point} and holds an ext4 file system; ")
    assert "refused on a device in use, even with --destroy-data" in str(refused.value)
    assert blkid_type(loop) == "ext4"


def test_a_write_probe_checks_again_before_each_run(loop, mount_on):
    probes = device_probes(loop, write=True, runtime=RUNTIME)
    run("mkfs.ext4", "-q", loop)
    mount_on(loop)
    with pytest.raises(ProbeError, match="is mounted on"):
        probes[2].once()
    assert blkid_type(loop) == "ext4"


def test_a_file_system_made_after_planning_is_not_overwritten_without_confirmation(loop):
    probes = device_probes(loop, write=True, runtime=RUNTIME)
    assert probes[2].once()[probes[2].name] > 0  # the empty device: writing is fine
    run("mkfs.ext4", "-q", loop)
    with pytest.raises(ProbeError, match="holds an ext4 file system; a write probe would destroy it"):
        probes[2].once()
    assert blkid_type(loop) == "ext4"


def test_every_reason_is_named():
    target = Target("/dev/sdx", "block", 2**40, data=("a gpt partition table", "an LVM2_member signature"))
    with pytest.raises(ProbeError, match="holds a gpt partition table and an LVM2_member signature; "
                                         "a write probe would destroy them"):
        check_writable(target)
    check_writable(target, destroy=True)
    swap = Target("/dev/sdx", "block", 2**40, in_use=("is active swap", "is held by dm-0 (device-mapper, LVM or md)"))
    with pytest.raises(ProbeError, match="^/dev/sdx is active swap and is held by dm-0"):
        check_writable(swap, destroy=True)
