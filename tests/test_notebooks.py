"""The teaching labs in notebooks/: one source each, committed without outputs; its student and teacher copies
(notebooks/make_copies.py) run from top to bottom, the student copies also without fio and iperf3."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import nbformat
import pytest

HERE = Path(__file__).parent.parent / "notebooks"
_spec = importlib.util.spec_from_file_location("make_copies", HERE / "make_copies.py")
make_copies = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_copies)

NOTEBOOKS = make_copies.labs()
CORPUS = HERE.parent.parent / "shared" / "corpus"  # real outputs beside the project, where present
TOOLS = ("fio", "iperf3")  # what a student's laptop may lack
MEASURING = [p for p in NOTEBOOKS if p.name.split("_", 1)[0] in ("1", "3")]  # the labs that run them


def _read(path):
    return nbformat.read(path, as_version=4)


def _tags(cell):
    return set(cell.get("metadata", {}).get("tags", ()))


def test_copies_a_teacher_edited_are_kept_unless_forced_and_a_wrong_lab_or_folder_is_refused(tmp_path, capsys):
    out = tmp_path / "copies"
    assert make_copies.main(["--out", str(out), "2"]) == 0
    student = out / "student" / NOTEBOOKS[1].name
    assert student.exists() and make_copies.main(["--out", str(out), "2"]) == 0  # the same copies: written again
    student.write_text(student.read_text(encoding="utf-8").replace("Objectives", "Goals"), encoding="utf-8")
    edited = student.read_text(encoding="utf-8")
    (tmp_path / "file").write_text("", encoding="utf-8")
    for argv, says in ((["--out", str(out), "2"], "differs from the copy made now (edited?): nothing written"),
                       (["--out", str(out), "9", "abc"], "no lab 9, abc: the labs are 1"),
                       (["--out", str(tmp_path / "file"), "2"], "is a file, not a folder")):
        with pytest.raises(SystemExit) as exited:
            make_copies.main(argv)
        assert exited.value.code == 2 and says in capsys.readouterr().err
    assert student.read_text(encoding="utf-8") == edited
    assert make_copies.main(["--out", str(out), "--force", "2"]) == 0 and "Goals" not in student.read_text(encoding="utf-8")


def test_the_labs_are_numbered_by_level():
    assert [p.name.split("_", 1)[0] for p in NOTEBOOKS] == [str(n) for n in range(1, len(NOTEBOOKS) + 1)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_lab_is_committed_without_outputs(path):
    notebook = _read(path)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_lab_has_the_form_of_teaching_material(path):
    """Objectives, prerequisites and time at the top; predict, then compare; answer cells each followed by a solution;
    key points at the end."""
    cells = _read(path).cells
    top = cells[1].source
    assert all(word in top for word in ("**Objectives.**", "**Prerequisites.**", "**Time.**"))
    assert cells[-1].source.startswith("## Key points")
    students = [i for i, c in enumerate(cells) if "student" in _tags(c)]
    assert len(students) >= 3 and all("solution" in _tags(cells[i + 1]) for i in students)
    assert not [c for c in cells if c.cell_type == "code" and "check" not in _tags(c)
                and re.search(r"^assert ", c.source, re.M)], "a lab's checks are tagged `check` (teacher copy only)"
    assert not [c for c in cells if "seeds/" in c.source], "cite the bibliography's short names, not project paths"
    steps = [c.source.split(".**", 1)[0] for c in cells if c.source.startswith(("**Predict.**", "**Compare.**"))]
    assert steps and steps[0] == "**Predict", "a lab asks for a prediction before it computes"
    assert all(a != b for a, b in zip(steps, steps[1:])) and steps[-1] == "**Compare", \
        "each prediction is followed by a comparison, before the next prediction"


@pytest.mark.slow
def test_the_copies_leave_out_what_the_other_reader_gets():
    source = _read(NOTEBOOKS[0])
    student, teacher = make_copies.copy(source, "student"), make_copies.copy(source, "teacher")
    assert not [c for c in student.cells if _tags(c) & {"solution", "check"}]
    assert not [c for c in teacher.cells if "student" in _tags(c)]
    assert len(student.cells) + len(teacher.cells) > len(source.cells)
    page = make_copies.preview(student)
    assert "Objectives" in page and "Solution." not in page


def _run(notebook, where):
    make_copies.execute(notebook, where)
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "a lab shows at least one plot"
    return "".join(o.get("text", "") for o in outputs)


# Each copy of each lab; a measuring lab's student copy runs on recorded data below, as on a laptop without the
# tools: with them it would measure again what its teacher copy measures (a minute and a half each in CI).
COPIES = [(path, which) for path in NOTEBOOKS for which in ("student", "teacher")
          if not (which == "student" and path in MEASURING)]


@pytest.mark.slow
@pytest.mark.parametrize("path, which", COPIES, ids=[f"{p.name}-{w}" for p, w in COPIES])
def test_each_copy_runs_to_its_end_and_draws(path, which, tmp_path, monkeypatch):
    # Run where a student would: in a directory of their own, which the lab may write to; the AI lab judges a
    # published MLPerf Storage result where the shared corpus is (IOBOUND_CORPUS tells it where).
    if CORPUS.is_dir():
        monkeypatch.setenv("IOBOUND_CORPUS", str(CORPUS))
    printed = _run(make_copies.copy(_read(path), which), tmp_path)
    if path.name.startswith("8_") and (CORPUS / "mlperf-storage").is_dir():
        # the Micron run's description states the drive's write figure for reads: the false alarm exercise 3 is about
        assert "forgiven: nothing" in printed and "ABOVE-CEILING - read of 9.99 GiB/s" in printed


@pytest.fixture
def without_tools(tmp_path, monkeypatch):
    """PATH as it is, but for fio and iperf3: a folder of links to every other program on it."""
    hidden = tmp_path / "bin"
    hidden.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for program in Path(folder).glob("*") if Path(folder).is_dir() else ():
            target = hidden / program.name
            if program.name not in TOOLS and not target.exists() and os.access(program, os.X_OK):
                target.symlink_to(program)
    monkeypatch.setenv("PATH", str(hidden))


@pytest.mark.slow
@pytest.mark.parametrize("path", MEASURING, ids=lambda p: p.name)
def test_a_student_copy_runs_on_recorded_data_without_the_tools(path, tmp_path, without_tools):
    work = tmp_path / "work"
    work.mkdir()
    printed = _run(make_copies.copy(_read(path), "student"), work)
    assert "recorded" in printed


def test_the_labs_import_from_the_package_faces_only():
    """A lab uses what `assess`, `models`, `probes` and `topologies` export, not their inner modules, which may move."""
    for path in NOTEBOOKS:
        code = "\n".join(c.source for c in _read(path).cells if c.cell_type == "code")
        assert not re.findall(r"^\s*(?:from|import) (?:assess|models|probes|topologies)\.\S+", code, re.M), path.name


def test_every_chart_in_the_labs_speaks_one_visual_vocabulary():
    """Labs draw through the plot functions, whose styles tell a ceiling, a layer, a cache, a model and a run apart."""
    import matplotlib

    matplotlib.use("Agg")
    from assess.plotdata import Chart, Estimate, Line
    from assess.plots import STYLES, plot_chart

    styles = ("ceiling", "layer", "cache", "model", "bound")
    ax = plot_chart(Chart("t", "x", "y", tuple(Line(s, (1.0, 2.0), (1.0, 2.0), s) for s in styles),
                          ((1.0, Estimate("run", 1.0)),)))
    drawn = {line.get_label(): line for line in ax.get_lines()}
    looks = {s: (drawn[s].get_linewidth(), drawn[s].get_linestyle(), drawn[s].get_alpha()) for s in styles}
    assert len(set(looks.values())) == len(styles), looks
    assert looks["ceiling"][0] > 3 * looks["layer"][0] and looks["cache"][1] == "--" and looks["bound"][1] == ":"
    assert drawn["runs"].get_marker() == "o" and set(STYLES) == set(styles)
    for path in NOTEBOOKS:
        code = "\n".join(c.source for c in _read(path).cells if c.cell_type == "code")
        assert not re.search(r"\b(ax|plt)\.(plot|axhspan|axhline|fill_between)\(", code), path.name
        for label, style in re.findall(r'Line\("([^"]+)",[^)]*?"(\w+)"\)', code):
            assert style in STYLES or style == "least", (path.name, label)
            assert (style == "ceiling") == label.startswith("ceiling"), (path.name, label)


# A lab's solution says what the tool prints: its figures and the messages it quotes are checked against what the
# tool prints when the exercise is done as it says (issue 33: a solution said 2x where the check keeps an info up to
# 10x, and one compared with the 1 MiB reads a figure the lab took against the 128 KiB ones).

def _solution_after(cells, start: str) -> tuple[str, str]:
    """The text of the cell that starts with ``start`` (an exercise or a question) and of the solution after it."""
    at = next(i for i, c in enumerate(cells) if c.source.startswith(start))
    return cells[at].source, next(c.source for c in cells[at + 1:] if "solution" in _tags(c))


def test_lab_2_exercise_2_solution_says_what_check_prints(tmp_path, capsys):
    """Done as exercise 2 says (the clients' memory and its speed in a copy of lecture.toml, a data set column in a
    copy of the table), `iobound check` prints what the solution quotes, and SMALL-DATA-SET changes where it says:
    a warning below its first figure, an info (for the reads) below its second, nothing from there on."""
    import json

    from assess.cli import main
    from probes.core.units import Q_, format_quantity, parse_quantity
    from topologies.bundled import example_path

    exercise, solution = _solution_after(_read(HERE / "2_lecture_assessment.ipynb").cells, "2. Lustre's anomalous")
    stated = re.findall(r"`(memory(?:_bandwidth)? = \{[^`]*\})`", exercise)
    data_set = re.search(r"a `data_set` column \(e\.g\. `([^`]+)`\)", exercise)[1]
    assert len(stated) == 2
    topology = tmp_path / "lecture.toml"
    topology.write_text(example_path("lecture").read_text().replace("[clients.compute]\n",
                                                                    "[clients.compute]\n" + "\n".join(stated) + "\n"))

    def checked(size: str, *json_out: str) -> str:
        lines = example_path("lecture-results.csv").read_text().splitlines()
        results = tmp_path / "results.csv"
        results.write_text("\n".join(line if line.startswith("#") else line + (",data_set" if line.startswith("system,")
                                     else f",{size}") for line in lines) + "\n")
        assert main(["check", str(topology), str(results), "--fail-on", "never", *json_out]) == 0
        return capsys.readouterr().out

    def small(size) -> set[str]:
        doc = json.loads(checked(format_quantity(size), "--json"))
        return {f["severity"] for r in doc["runs"] for f in r["findings"] if f["code"] == "SMALL-DATA-SET"}

    printed = " ".join(checked(data_set).split())
    quoted = re.findall(r'"([^"]+)"', solution)
    assert quoted and [q for q in quoted if q not in printed] == []
    warning = parse_quantity(re.search(r"a warning below [^=]*= ([\d.]+ \w+)", solution)[1], what="")
    info = parse_quantity(re.search(r"an info below [^=]*= ([\d.]+ \w+)", solution)[1], what="")
    assert "warning" in small(warning * 0.99)
    assert small(warning) == small(info * 0.99) == {"info"}
    assert small(info) == set() and Q_(1, "B") < warning < info


@pytest.mark.slow
def test_lab_3_solutions_say_what_the_lab_prints_on_the_recorded_runs(tmp_path, without_tools):
    """The figures the predict-and-compare solutions give are those the lab prints on the recorded runs (against the
    disk's fastest direct 1 MiB read, as the prediction asks, and against the same 128 KiB read direct), and exercise
    4, done as it says, prints what its solution quotes."""
    from nbformat.v4 import new_code_cell

    source = _read(HERE / "3_cache_traps.ipynb")
    lab = make_copies.copy(source, "teacher")
    exercise, trust = _solution_after(source.cells, "4. **Trust in the topology.**")
    call = re.search(r"`(write_topology\([^`]*\))`", exercise)[1]
    lab.cells.append(new_code_cell(f'print("exercise 4:")\n{call}\n'
                                   'iobound("check", "one-disk.toml", "results.csv", "--fail-on", "never");'))
    work = tmp_path / "work"
    work.mkdir()
    printed = _run(lab, work)
    assert "recorded" in printed
    cached, direct = re.search(r"the page cache answered ([\d.]+)x the disk's fastest direct 1 MiB read \(the "
                               r"ceiling\), ([\d.]+)x the same 128 KiB read with direct=1", printed).groups()
    _, predicted = _solution_after(source.cells, "**Predict.** The same file, read buffered in 128 KiB requests")
    _, compared = _solution_after(source.cells, "**Compare.** How far off was your prediction?")
    assert f"{cached}× the disk's fastest direct 1 MiB read" in predicted
    assert f"{cached}× the disk's fastest direct 1 MiB read" in compared and f"{direct}× the same 128 KiB read" in compared
    after = " ".join(printed.split("exercise 4:", 1)[1].split())
    quoted = re.findall(r'"([^"]+)"', trust)
    assert quoted and [q for q in quoted if q not in after] == []
