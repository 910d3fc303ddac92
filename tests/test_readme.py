"""The README's two commands are what CI runs, and the second works on a fresh Debian machine as written.

Issue 19: the second command ran ``apt-get install`` without ``apt-get update``, so on a fresh Debian
image apt knew no package ("Unable to locate package"), while CI updated first and stayed green.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    """The lines of the README's first ``sh`` block: the commands a reader copies."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```sh\n(.*?)^```$", text, re.M | re.S)
    assert block, "the README opens with a ```sh block of commands"
    return block[1].splitlines()


def _ci_commands() -> list[str]:
    """The commands .ci/run runs: each alone on a line, in a subshell so that set -e stops at its failure."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return [line[1:-1] for line in lines if line.startswith("(") and line.endswith(")")]


def _steps(command: str) -> list[str]:
    return [step.strip() for step in command.split("&&")]


def test_the_readme_has_two_commands_and_ci_runs_them_as_written():
    readme = _readme_commands()
    assert len(readme) == 2
    # the second first: on a bare Debian it installs python3-venv, which the first needs too
    assert _ci_commands() == readme[::-1]


def test_ci_stops_at_any_failure_of_a_command():
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert script.startswith("#!/usr/bin/env bash\n") and "\nset -euo pipefail\n" in script
    # Nothing else runs: what CI proves is what the README says.
    others = [line for line in script.splitlines() if line and not line.startswith(("#", "(")) and line not in (
        "set -euo pipefail", 'cd "$(dirname "$0")/.."', "export DEBIAN_FRONTEND=noninteractive")]
    assert others == []


def test_the_second_command_fetches_the_package_lists_and_python_venv_before_using_them():
    steps = _steps(_readme_commands()[1])
    install = next(i for i, step in enumerate(steps) if step.startswith("apt-get install -y "))
    assert steps.index("apt-get update") < install  # a fresh image has no package lists
    assert "python3-venv" in steps[install].split()  # a bare Debian's python3 cannot make a venv without it
    assert install < steps.index("python3 -m venv .venv")
    assert steps[-2:] == ["pip install -e '.[test]'", "python -m pytest"]


def test_the_first_command_installs_iobound_and_checks_the_lecture():
    assert _steps(_readme_commands()[0]) == ["python3 -m venv .venv", ". .venv/bin/activate", "pip install .",
                                             "iobound check lecture lecture-results.csv --fail-on never"]


def test_every_package_the_second_command_installs_is_one_apt_knows():
    lists = Path("/var/lib/apt/lists")
    if shutil.which("apt-cache") is None or not any(lists.glob("*_Packages*")):
        pytest.skip("needs apt-cache and apt's package lists (apt-get update)")
    install = next(step for step in _steps(_readme_commands()[1]) if step.startswith("apt-get install -y "))
    packages = install.split()[3:]
    done = subprocess.run(["apt-cache", "show", "--no-all-versions", *packages], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    found = set(re.findall(r"^Package: (\S+)$", done.stdout, re.M))
    assert found == set(packages)


def test_every_data_file_of_the_packages_is_installed_by_the_first_command():
    """`pip install .` (not editable) ships the catalogues and examples: the first command reads them.

    A line break in a package_data value makes setuptools split it by lines only, so one line of
    comma-separated patterns became a single pattern that matched nothing, and the installed
    iobound had no examples (stop 28). setuptools' own reader says what it will ship.
    """
    from setuptools.config.setupcfg import read_configuration

    shipped = read_configuration(ROOT / "setup.cfg")["options"].get("package_data", {})
    unshipped = []
    for package in ("assess", "models", "probes", "topologies"):
        root = ROOT / package
        for path in root.rglob("*"):
            if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(root)
            if not any(relative.match(pattern) and len(relative.parts) == len(Path(pattern).parts)
                       for pattern in shipped.get(package, [])):
                unshipped.append(str(path.relative_to(ROOT)))
    assert not unshipped, f"setup.cfg's package_data misses {unshipped}"
