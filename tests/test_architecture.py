"""The layout's guard rails: the four packages are iobound's, and imports point one way only."""

import ast
import configparser
import pkgutil
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


@pytest.mark.parametrize("package", LAYERS)
def test_imports_point_one_way(package):
    allowed = set(LAYERS[LAYERS.index(package):])
    forbidden = set(LAYERS) - allowed
    offenders = []
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in forbidden]
    assert offenders == []


# Inside probes, the rooms import one way too: the lab runs probes, probes hand output to readers, all speak core.
ROOMS = ["probes.lab", "probes.measure", "probes.readers", "probes.core"]


@pytest.mark.parametrize("room", ROOMS)
def test_the_rooms_of_probes_import_one_way(room):
    forbidden = set(ROOMS[:ROOMS.index(room)])
    offenders = []
    for path in (ROOT / room.replace(".", "/")).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names
                          if any(n == r or n.startswith(r + ".") for r in forbidden)]
    assert offenders == []


def test_every_module_lives_in_a_room_named_for_its_trade():
    """probes holds no loose modules: a reader finds each line from the folder it is in."""
    assert sorted(p.name for p in (ROOT / "probes").glob("*.py")) == ["__init__.py"]
    assert {p.name for p in (ROOT / "probes").iterdir() if p.is_dir() and p.name != "__pycache__"} == \
        {"core", "measure", "readers", "lab"}


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


_HEAVY = ("matplotlib", "scipy.optimize", "sympy", "networkx", "pint")
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


def test_reading_a_results_file_loads_no_model_library():
    done = subprocess.run([sys.executable, "-c", _LOADED.format(heavy=_HEAVY), "read",
                           str(ROOT / "topologies" / "examples" / "lecture-results.csv")],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert set(done.stdout.split()) == {"pint"}


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
