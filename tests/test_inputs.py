"""Any input, safely: what a user names is opened as probes.core.inputs says, by every reader and command.

A device, a FIFO or a directory is refused at once (a FIFO used to hang forever, /dev/zero to take 23 GB);
a file over the size limit is refused unread; a 500 MB file is read within 3x its size plus 100 MB of
memory (held there by RLIMIT_AS in a child process, so reading more would fail); SIGTERM and Ctrl-C stop a
read at once with 143 and 130. Commands that could hang run in a child process with a timeout.
"""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assess.cli import main
from probes.core import inputs
from probes.core.errors import InputError, ToolOutputError, TopologyError
from probes.core.inputs import input_limit, iter_lines, open_input, read_input
from probes.measure.probeset import ProbeSetFile, read_probe_set
from probes.readers import read_results, table
from topologies.load import load_topology

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "topologies" / "examples" / "lecture-results.csv"
PING = ROOT / "tests" / "data" / "readers" / "ping-iputils_loopback_4pkts.txt"
MB = 1_000_000
# Seconds a refusal may take in a child process: start-up (about 1 s, more on a loaded machine), nothing else.
AT_ONCE = 20
# iobound's command line in a child process whose address space is limited to argv[1] bytes (0: unlimited); its
# peak address space (VmPeak, kB) is the last line of its stderr.
LIMITED = """
import resource, sys
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from assess.cli import main
status = main(sys.argv[2:])
sys.stdout.flush()
print(open("/proc/self/status").read().split("VmPeak:")[1].split()[0], file=sys.stderr)
sys.exit(status)
"""


def iobound(*argv: str, timeout: float = AT_ONCE, limit: int = 0) -> tuple[int, str, str, float]:
    """Run ``iobound ARGV`` in a child process: exit status, stdout, stderr and wall seconds; a hang fails the test."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-c", LIMITED, str(limit), *argv], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def one_line_error(err: str) -> str:
    """The error line of a child's stderr (its last line is the peak address space), checked to be one line."""
    lines = err.strip().splitlines()[:-1]
    assert len(lines) == 1 and lines[0].startswith("iobound: error: ") and "Traceback" not in err, err
    return lines[0]


# Paths that are no regular file

@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "results.fifo"
    os.mkfifo(path)
    return path


def test_iobound_read_dev_zero_is_refused_at_once():
    status, _, err, seconds = iobound("read", "/dev/zero")
    assert status == 2 and seconds < AT_ONCE
    assert one_line_error(err) == "iobound: error: /dev/zero: a character device, not a file; iobound reads regular files"


@pytest.mark.slow
@pytest.mark.parametrize("argv", [["read", "{}"], ["topology", "{}"], ["check", "lecture", "{}"],
                                  ["predict", "{}", "--op", "read", "--transfer-size", "1MiB"], ["probe", "show", "{}"]],
                         ids=lambda argv: argv[0] + (" " + argv[1] if argv[1] != "{}" else ""))
def test_a_fifo_is_refused_at_once_by_every_command_never_waited_on(fifo, argv):
    status, _, err, _ = iobound(*(word.format(fifo) for word in argv))
    assert status == 2
    assert one_line_error(err) == f"iobound: error: {fifo}: a named pipe (FIFO), not a file; iobound reads regular files"


def test_a_directory_is_refused_naming_what_it_is(tmp_path, capsys):
    assert main(["read", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"iobound: error: {tmp_path}: a directory, not a file; iobound reads regular files\n"


def test_each_reader_of_files_refuses_what_is_no_file_with_its_own_error(tmp_path, fifo):
    with pytest.raises(ToolOutputError, match="a named pipe"):
        read_results(fifo)
    with pytest.raises(TopologyError, match="a named pipe"):
        load_topology(fifo)
    with pytest.raises(InputError, match="a directory, not a file"):
        read_probe_set(tmp_path)
    with pytest.raises(InputError, match=r"^/dev/null: a character device"):
        read_input("/dev/null")
    (tmp_path / "zero").symlink_to("/dev/zero")  # a link is judged by what it leads to
    with pytest.raises(ToolOutputError, match="zero: a character device"):
        read_results(tmp_path / "zero")
    with pytest.raises(ToolOutputError, match="nowhere.csv: no such file$"):
        read_results(tmp_path / "nowhere.csv")
    with pytest.raises(TopologyError, match=r"cannot read the topology file \(no such file\)"):
        load_topology(tmp_path / "nowhere.toml")


def test_a_probe_set_is_never_written_over_a_device_or_a_fifo(fifo):
    """Replacing /dev/null (iobound probe -o /dev/null --force, as root) would break every program that uses it."""
    for path, kind in (("/dev/null", "a character device"), (fifo, "a named pipe (FIFO)")):
        with pytest.raises(InputError, match=f"^{path}: {re.escape(kind)}, not a file; give a file name"):
            ProbeSetFile(path, force=True)
    assert Path("/dev/null").is_char_device()


# The size limit

def test_a_file_over_the_limit_is_refused_unread_and_the_message_says_how_to_raise_it(tmp_path, capsys, monkeypatch):
    path = tmp_path / "results.csv"
    path.write_text(RESULTS.read_text(encoding="utf-8") + "#" * 3000 + "\n", encoding="utf-8")
    size = inputs.format_size(path.stat().st_size)
    assert main(["read", "--max-input-size", "1KiB", str(path)]) == 2
    assert capsys.readouterr().err == (f"iobound: error: {path}: {size}, more than the 1 KiB iobound reads; "
                                       "--max-input-size 8KiB (or IOBOUND_MAX_INPUT_SIZE=8KiB) raises the limit\n")
    assert main(["read", "--max-input-size", "8KiB", str(path)]) == 0
    capsys.readouterr()
    monkeypatch.setenv("IOBOUND_MAX_INPUT_SIZE", "2 KiB")
    assert main(["read", str(path)]) == 2
    assert "more than the 2 KiB iobound reads" in capsys.readouterr().err
    assert main(["read", "--max-input-size", "1MiB", str(path)]) == 0  # the option wins over the environment
    capsys.readouterr()
    monkeypatch.setenv("IOBOUND_MAX_INPUT_SIZE", "lots")
    assert main(["read", str(path)]) == 2
    assert capsys.readouterr().err == ("iobound: error: IOBOUND_MAX_INPUT_SIZE: the size must be a number with a unit, "
                                       "such as '1 MiB'. Got 'lots' instead.\n")


def test_the_limit_is_1_GiB_by_default_and_every_command_that_reads_files_can_raise_it(capsys):
    assert inputs.max_input_size() == inputs.DEFAULT_LIMIT == 2**30
    with input_limit(5 * 2**30):
        assert inputs.max_input_size() == 5 * 2**30
    assert inputs.max_input_size() == 2**30
    for argv in (["read"], ["check"], ["report"], ["compare"], ["fit"], ["topology"], ["predict"], ["whatif"],
                 ["size"], ["probe", "show"], ["lab", "up"]):
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        assert "--max-input-size SIZE" in capsys.readouterr().out, argv
    with pytest.raises(SystemExit):
        main(["read", "--max-input-size", "12", str(RESULTS)])
    assert "--max-input-size" in capsys.readouterr().err


def test_a_file_that_grows_past_the_limit_while_read_is_refused(tmp_path):
    path = tmp_path / "growing.log"
    path.write_text("x" * 1000, encoding="utf-8")
    with input_limit(2048), open_input(path) as file:
        with open(path, "a", encoding="utf-8") as log:  # a log still written to
            log.write("y" * 2000)
        with pytest.raises(InputError, match="grew past 2 KiB while being read; --max-input-size 4KiB"):
            file.text()


# Memory: a 500 MB file read under RLIMIT_AS, so that a read needing more than the bound fails

@pytest.fixture(scope="module")
def peak_of_a_small_read() -> int:
    """The address space (bytes) `iobound read` of a small results CSV reaches: the interpreter, pint, a reader."""
    status, _, err, _ = iobound("read", str(RESULTS))
    assert status == 0, err
    return int(err.split()[-1]) * 1024


def _bound(size: int, baseline: int) -> int:
    return baseline + 3 * size + 100 * MB


def _write(path: Path, head: bytes, line: bytes, size: int) -> int:
    block = line * (2**20 // len(line))
    with open(path, "wb") as f:
        f.write(head)
        while f.tell() < size:
            f.write(block)
    return path.stat().st_size


@pytest.mark.slow
def test_a_500_MB_output_is_read_within_3x_its_size_and_100_MB(tmp_path, peak_of_a_small_read):
    """A results CSV amid 500 MB of comment lines: the runs are read, the text is held once (twice while decoded)."""
    path = tmp_path / "large.csv"
    try:
        size = _write(path, RESULTS.read_bytes(), b"# " + b"a comment line of a long log " * 33 + b"\n", 500 * MB)
        status, out, err, _ = iobound("read", str(path), timeout=300, limit=_bound(size, peak_of_a_small_read))
    finally:
        path.unlink()
    assert status == 0, err[-2000:]
    assert "Lustre size / ppn read 128 KiB seq, 10 nodes x 8 ppn" in out and "Traceback" not in err


@pytest.mark.slow
def test_a_500_MB_file_in_no_format_is_refused_from_its_first_4_MiB(tmp_path, peak_of_a_small_read):
    path = tmp_path / "zeros.bin"
    with open(path, "wb") as f:
        f.truncate(500 * MB)  # sparse: written at once
    status, _, err, seconds = iobound("read", str(path), limit=_bound(500 * MB, peak_of_a_small_read))
    assert status == 2 and seconds < AT_ONCE
    assert one_line_error(err).startswith(f"iobound: error: {path}: not a format iobound reads (judged by its first "
                                          "4 MiB); expected a results CSV with columns op, transfer_size, value, "
                                          "unit or fio JSON output")


@pytest.mark.slow
def test_short_lines_are_walked_one_at_a_time_never_listed(tmp_path, peak_of_a_small_read):
    """50 MB of 4-byte lines after IOR's banner: a list of them would take 60 bytes a line, 15x the text."""
    path = tmp_path / "ior.log"
    size = _write(path, b"IOR-3.3.0: MPI Coordinated Test of Parallel I/O\n", b"x y\n", 50 * MB)
    status, _, err, _ = iobound("read", str(path), timeout=300, limit=_bound(size, peak_of_a_small_read))
    assert status == 2
    assert "expected result rows" in one_line_error(err)


@pytest.mark.slow
def test_past_its_first_4_MiB_a_file_is_read_by_the_reader_that_knows_its_beginning(tmp_path):
    path = tmp_path / "ping.log"
    path.write_bytes(PING.read_bytes() + b"\n" + b"\x00" * (5 * 2**20))  # a log with a hole at its end
    assert [run.samples for run in read_results(path)] == [run.samples for run in read_results(PING)]
    path.write_bytes(b"\x00" * (5 * 2**20) + PING.read_bytes())  # the tool's output after 5 MiB of something else
    with pytest.raises(ToolOutputError, match=r"not a format iobound reads \(judged by its first 4 MiB\)"):
        read_results(path)


# Signals

@pytest.fixture(scope="module")
def large_results(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("signals") / "large.csv"
    _write(path, RESULTS.read_bytes(), b"# " + b"a comment line of a long log " * 33 + b"\n", 500 * MB)
    yield path
    path.unlink()


@pytest.mark.parametrize("sent, status, said", [(signal.SIGTERM, 143, "iobound: stopped by SIGTERM"),
                                                (signal.SIGINT, 130, "iobound: interrupted")])
def test_a_signal_stops_a_read_at_once_with_its_exit_status(large_results, sent, status, said):
    child = subprocess.Popen([sys.executable, "-m", "assess", "read", str(large_results)], cwd=ROOT,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not _has_open(child.pid, large_results):  # it is reading
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.01)
    child.send_signal(sent)
    sent_at = time.monotonic()
    _, err = child.communicate(timeout=60)
    assert child.returncode == status and err.strip() == said, err
    assert time.monotonic() - sent_at < 5


def _has_open(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:  # a descriptor closed while looked at
        return False


# Text: encodings, and lines one at a time

def test_utf16_with_its_byte_order_mark_is_read_as_text(tmp_path):
    """PowerShell's ``>`` writes UTF-16: a ping output saved so is the same output."""
    path = tmp_path / "ping.txt"
    path.write_bytes(PING.read_text(encoding="utf-8").encode("utf-16"))
    assert [run.samples for run in read_results(path)] == [run.samples for run in read_results(PING)]


def test_a_files_lines_leave_it_open_to_be_read_again(tmp_path):
    """Going through a file's lines, whole or in part, lets go of the file without closing it: read again, it is the
    same file."""
    path = tmp_path / "list.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    with open_input(path) as file:
        first = list(file.lines())
        part = file.lines()
        assert next(part) == "a,b\n"
        part.close()
        assert list(file.lines()) == first == ["a,b\n", "1,2\n"] and file.text() == "a,b\n1,2\n"


def test_a_character_beyond_the_first_65536_is_kept_unless_the_text_is_large(tmp_path, monkeypatch):
    """An emoji in a name is kept; in a large text it would make Python hold all of it at 4 bytes a character."""
    path = tmp_path / "note.txt"
    path.write_text("job 🚀 done\n", encoding="utf-8")
    assert read_input(path) == read_input(path, errors="strict") == "job 🚀 done\n"
    monkeypatch.setattr(inputs, "_ASTRAL_ABOVE", 8)
    assert read_input(path) == "job \ufffd done\n"
    assert read_input(path, errors="strict") == "job 🚀 done\n"


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab \r\n\x0b\x0c\x1c\x85\u2028\ufeff,\"#", max_size=60), piece=st.integers(1, 8))
def test_lines_one_at_a_time_are_the_lines_of_the_text(text, piece):
    saved = inputs._SLICE
    inputs._SLICE = piece  # slices of a few characters cut everywhere a slice can end
    try:
        assert list(iter_lines(text)) == text.splitlines()
    finally:
        inputs._SLICE = saved

    def rows(lines):
        reader, found = csv.reader(lines), []
        try:
            found += [(row, reader.line_num) for row in reader]
        except csv.Error as exc:
            found.append((str(exc), reader.line_num))
        return found

    assert rows(table._lines(text)) == rows(io.StringIO(text.removeprefix("\ufeff")))
