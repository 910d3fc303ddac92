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
