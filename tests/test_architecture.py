"""The layout's guard rails: the four packages are iobound's, and imports point one way only."""

import ast
import configparser
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# assess -> models -> topologies -> probes: a package may import only those after it.
LAYERS = ["assess", "models", "topologies", "probes"]


@pytest.mark.parametrize("package", LAYERS)
def test_every_package_is_marked_as_iobound(package):
    module = __import__(package)
    assert module.__project__ == "iobound"
    assert module.__doc__.strip()


def _imports(path: Path) -> list[str]:
    """Every absolute import of a module, at any depth (functions' and TYPE_CHECKING's too): ``from X import y``
    gives X and X.y, so that a submodule imported by name counts."""
    names = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def _modules() -> dict[str, Path]:
    """The four packages' modules by dotted name (a package by its own name)."""
    found = {}
    for package in LAYERS:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


@pytest.mark.parametrize("package", LAYERS)
def test_imports_point_one_way(package):
    allowed = set(LAYERS[LAYERS.index(package):])
    forbidden = set(LAYERS) - allowed
    offenders = [f"{path.relative_to(ROOT)}: {n}" for path in (ROOT / package).rglob("*.py")
                 for n in _imports(path) if n.split(".")[0] in forbidden]
    assert offenders == []


def test_no_module_imports_itself_through_a_circle():
    """An import circle makes the order of imports matter; a module that needs another's type holds it instead."""
    modules = _modules()
    edges = {name: {n for n in _imports(path) if n in modules and n != name} for name, path in modules.items()}
    circles, state = [], {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = "open"
        for other in sorted(edges[name]):
            if state.get(other) == "open":
                circles.append(" -> ".join(trail[trail.index(other):] + [name, other]) if other in trail
                               else f"{name} -> {other}")
            elif other not in state:
                visit(other, trail + [name])
        state[name] = "done"

    for name in sorted(modules):
        if name not in state:
            visit(name, [])
    assert circles == []


# Inside probes, the rooms import one way too: the lab runs probes, probes hand output to readers, all speak core.
ROOMS = ["probes.lab", "probes.measure", "probes.readers", "probes.core"]


@pytest.mark.parametrize("room", ROOMS)
def test_the_rooms_of_probes_import_one_way(room):
    forbidden = set(ROOMS[:ROOMS.index(room)])
    offenders = [f"{path.relative_to(ROOT)}: {n}" for path in (ROOT / room.replace(".", "/")).rglob("*.py")
                 for n in _imports(path) if any(n == r or n.startswith(r + ".") for r in forbidden)]
    assert offenders == []


def test_every_module_lives_in_a_room_named_for_its_trade():
    """probes holds no loose modules: a reader finds each line from the folder it is in."""
    assert sorted(p.name for p in (ROOT / "probes").glob("*.py")) == ["__init__.py"]
    assert {p.name for p in (ROOT / "probes").iterdir() if p.is_dir() and p.name != "__pycache__"} == \
        {"core", "measure", "readers", "lab"}


def test_topologies_keeps_its_builders_and_its_catalogues_in_rooms():
    """The type, its loader (with how a file states a capacity and a write's cost) and its editors stand loose;
    what turns a description into a topology is in described/, the tables of parts and rates with their loaders in
    catalogues/, examples in examples/."""
    folder = ROOT / "topologies"
    assert {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"} == \
        {"described", "catalogues", "examples"}
    assert {p.stem for p in folder.glob("*.py")} == \
        {"__init__", "bundled", "capacities", "edit", "load", "save", "topology", "write_cost"}
    assert [str(p.relative_to(folder)) for p in folder.rglob("*.toml")
            if p.parent.name != "catalogues" and "examples" not in p.parts] == []


def test_sizing_has_a_room_and_its_command_only_asks_and_shows():
    """models/sizing/ holds the question, the designs, the programme, the fabric and the bill; the command parses
    its options with the shared argparse types of assess/cli/inputs.py and shows the answer."""
    assert not (ROOT / "models" / "sizing.py").exists()
    assert {"question", "designs", "programme", "fabric", "bill"} <= {p.stem for p in (ROOT / "models" / "sizing").glob("*.py")}
    assert len((ROOT / "assess" / "cli" / "size.py").read_text(encoding="utf-8").splitlines()) < 350


# The modules that are over about 500 lines, and why each stays whole (none today).
_LONG: dict[str, str] = {}


def test_no_module_is_over_about_500_lines():
    """A module past 500 lines holds more than one trade; split it where its parts are named (see _LONG)."""
    long = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
            for path in _modules().values()}
    assert {path: lines for path, lines in long.items() if lines > 500 and path not in _LONG} == {}
    assert all(long.get(path, 0) > 500 for path in _LONG), "a module of _LONG is short now: take it out"


def _lines_matching(pattern: str, packages=LAYERS, *, besides: tuple[str, ...] = ()) -> list[str]:
    """Every ``path:line`` of ``packages`` (but the modules ``besides``) where ``pattern`` is found."""
    found = re.compile(pattern)
    return [f"{path.relative_to(ROOT)}:{number}" for package in packages for path in (ROOT / package).rglob("*.py")
            if str(path.relative_to(ROOT)) not in besides
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if found.search(line)]


def test_only_topologies_reads_a_topology_s_private_parts():
    """models and assess use what Topology names in public (front_end, reachable, ...), never _front."""
    assert _lines_matching(r"\btopology\._[a-z]", ("models", "assess")) == []


def test_a_run_s_tags_are_words_and_nothing_parses_a_number_back_from_them():
    """What only some tools report is a typed record of Run (probes/core/records.py); tags are labels."""
    assert _lines_matching(r"removesuffix\(\s*[\"'] ?(s|B|%)[\"']\s*\)", ("assess", "models", "topologies")) == []


def test_every_csv_is_written_by_the_one_writer_that_neutralises_formulas():
    """A cell a spreadsheet would run (=, +, -, @) gets its quote in probes/core/outputs.py's csv_text alone."""
    assert _lines_matching(r"csv\.(writer|DictWriter)\(", besides=("probes/core/outputs.py",)) == []


def test_distribution_installs_the_four_packages_and_the_command():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["metadata"]["name"] == "iobound"
    assert cfg["options.entry_points"]["console_scripts"].strip() == "iobound = assess.cli:main"
    assert set(cfg["options.packages.find"]["include"].replace("*", "").split(", ")) == set(LAYERS)


def test_python_dash_m_assess_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "assess", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0
    assert done.stdout.startswith("iobound 0.")


_HEAVY = ("matplotlib", "numpy", "scipy", "sympy", "networkx", "pint")
_LOADED = """
import contextlib, io, sys
from assess.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(" ".join(m for m in {heavy!r} if m in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["no-such-command"], ["predict", "--help"]],
                         ids=" ".join)
def test_the_command_line_starts_without_the_heavy_libraries(argv):
    """Structural, not timed: what `iobound --help` imports, in a fresh interpreter (benchmarks/startup.py times it)."""
    done = subprocess.run([sys.executable, "-c", _LOADED.format(heavy=_HEAVY), *argv], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    # predict --help builds predict's options, which parse quantities: pint may load, the model's libraries may not.
    allowed = {"pint"} if argv[0] == "predict" else set()
    assert set(done.stdout.split()) <= allowed


@pytest.mark.parametrize("argv", [("read", "topologies/examples/lecture-results.csv"),
                                  ("predict", "lecture", "--op", "read", "--transfer-size", "1MiB"),
                                  ("check", "lecture", "lecture-results.csv", "--fail-on", "never"),
                                  ("plan", "lecture", "--benchmark", "ior")], ids=lambda argv: argv[0])
def test_a_command_on_one_file_loads_pint_and_no_model_library(argv):
    """Reading, predicting, checking or planning one file computes with Python numbers in pint's quantities: numpy
    and scipy were a third of what each cost (benchmarks/startup.py), and none needs matplotlib, sympy or networkx."""
    done = subprocess.run([sys.executable, "-c", _LOADED.format(heavy=_HEAVY), *argv], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert set(done.stdout.split()) == {"pint"}


def test_a_report_draws_with_matplotlib_and_shows_its_formulas_without_sympy(tmp_path):
    """A report's formulas are text (models.formulas): sympy, half a second of its start, loads only for algebra."""
    argv = ("report", "lecture", "lecture-results.csv", "-o", str(tmp_path / "report"))
    done = subprocess.run([sys.executable, "-c", _LOADED.format(heavy=_HEAVY), *argv], capture_output=True, text=True,
                          cwd=ROOT / "topologies" / "examples", check=True)
    assert set(done.stdout.split()) == {"matplotlib", "numpy", "pint"} and (tmp_path / "report" / "report.md").exists()


@pytest.mark.parametrize("package", LAYERS)
def test_each_face_exports_documented_names_that_load_on_first_use(package):
    module = __import__(package)
    assert module.__all__ and set(module.__all__) <= set(dir(module))
    for name in module.__all__:
        value = getattr(module, name)
        if str(getattr(value, "__module__", "")).split(".")[0] in LAYERS:  # pint's Quantity is pint's to document
            assert getattr(value, "__doc__", None), f"{package}.{name} has no docstring"
    # A face name that is also a submodule's would be the function or the module by import order.
    submodules = {info.name for info in pkgutil.iter_modules(module.__path__)}
    assert not set(module.__all__) & submodules
    with pytest.raises(AttributeError, match="has no attribute 'nothing_here'"):
        getattr(module, "nothing_here")
    done = subprocess.run([sys.executable, "-c", f"import sys, {package}; print(' '.join(m for m in {_HEAVY!r} "
                           "if m in sys.modules))"], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == []


def test_whether_a_figure_is_assumed_is_decided_in_one_place():
    """Capacity.assumed says it (an assumption, or a range nobody stated): a probed or measured range is no assumption."""
    assert _lines_matching(r"kind == [\"']assumption[\"']", besides=("topologies/topology.py",)) == []


def test_a_table_of_published_results_is_read_by_the_band_alone():
    """Published metadata rates are information (assess/findings/published.py): no ceiling or finding reads them."""
    assert _lines_matching(r"metadata_rates", ("assess", "models"), besides=("assess/findings/published.py",)) == []


def test_descriptions_that_are_not_runs_stay_out_of_the_results_readers():
    """A system description or a PCIe matrix builds a topology; ``iobound read`` takes only what a tool measured."""
    from probes.readers import _MODULES

    assert not [module for module in _MODULES.values() if module.endswith("_system") or module == "nvidia_topo"]


def test_the_readers_sniff_samples_stand_in_one_table():
    """What each reader's ``looks_like`` takes is tried on every reader in tests/test_sniffs.py, so that a sample
    two readers would both take is caught: no reader keeps doctest samples of its own."""
    assert _lines_matching(r">>> .*looks_like\(", ("probes",)) == []


def test_pint_is_loaded_by_the_registry_alone():
    """probes/core/registry.py loads pint without the libraries it would import for nothing (numpy, scipy, dask); an
    ``import pint`` at a module's top (rather than for type annotations) would load them behind its back."""
    assert _lines_matching(r"^(import pint|from pint)", besides=("probes/core/registry.py",)) == []


def test_readers_compile_their_patterns_at_first_use():
    """A reader's regular expressions are probes.core.patterns.Pattern, compiled when first matched: ``iobound read``
    imports every reader to sniff a file, and compiling all their patterns cost more than reading one."""
    assert _lines_matching(r"^\S.*= re\.compile\(", ("probes/readers",)) == []


def test_the_implied_figure_search_has_a_module_of_its_own():
    """models/implied.py holds what a run implies of the figures it rests on; models/predict.py solves ceilings."""
    assert _lines_matching(r"^\s*def (implied|alone)\(", ("models",), besides=("models/implied.py",)) == []


def test_a_command_reads_the_batch_jobs_environment_through_one_module():
    """The job a command runs in describes that command's own run, not the results it judges: assess/cli/job.py is
    where a command asks for it, and says when it takes it (a result from another job is never placed on its nodes)."""
    assert _lines_matching(r"\bcurrent_job\(", ("assess",), besides=("assess/cli/job.py",)) == []


def test_only_probes_core_heap_sets_the_garbage_collector_aside():
    """gc.freeze keeps what a batch (a sweep, a list's review) holds out of the collector's walks, and gives it back
    when the batch ends: a process-wide setting taken in one place, probes/core/heap.py, which batches ask."""
    assert _lines_matching(r"\bgc\.(freeze|unfreeze|disable|set_threshold)\b", besides=("probes/core/heap.py",)) == []
