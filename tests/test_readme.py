"""The README's two commands are what CI runs, and the second works on a fresh Debian machine as written; the
commands it shows further down print what it says they print.

Issue 19: the second command ran ``apt-get install`` without ``apt-get update``, so on a fresh Debian
image apt knew no package ("Unable to locate package"), while CI updated first and stayed green.
"""

from __future__ import annotations

import json
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


@pytest.mark.slow
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


# What the README says of the tool, checked by running the commands it shows (issue 33: it promised cache ceilings
# and a knee that predict did not print, an --unit-alias predict refused, and a whatif that fit one sized file only).

def _prose() -> str:
    """The README with its line breaks and indents as single spaces, so that a sentence reads as one line."""
    return " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())


def _said(pattern: str) -> re.Match:
    found = re.search(pattern, _prose())
    assert found, f"the README no longer says {pattern!r}"
    return found


def _run(capsys, command: str, folder: Path | None = None) -> str:
    """What ``iobound ...`` as the README shows it prints (run in ``folder``); it must succeed."""
    import os
    import shlex

    from assess.cli import main

    words = shlex.split(command)
    assert words[0] == "iobound"
    here = Path.cwd()
    try:
        os.chdir(folder or here)
        status = main(words[1:])
    finally:
        os.chdir(here)
    out = capsys.readouterr()
    assert status == 0, (command, out.err)
    return out.out


def test_predict_prints_what_the_readme_says_it_prints(capsys):
    said = _said(r"`(iobound predict lecture [^`]*)` prints the ceiling \(([\d,]+ MiB/s)\), the component that binds "
                 r"\(`([\w.]+)`, the (client NICs)\), every layer's own limit, where adding nodes stops helping \(the "
                 r"knee: none within the lecture's (\d+) nodes\), and the assumptions\.")
    command, figure, component, layer, nodes = said.groups()
    out = _run(capsys, command)
    assert f"ceiling:   {figure}, bound by {layer} ({component})" in out
    scaling = next(line for line in out.splitlines() if line.startswith("scaling:"))
    assert f"up to all {nodes} of" in scaling and "no knee within the group" in scaling
    assert "\nassumptions:\n" in out and "if a cache serves" not in out  # the lecture states no memory
    cached = _said(r"For a topology that states the memory of its clients or servers, it adds the ceilings if their "
                   r"cache serves the data, with the data set against their memory \(`(iobound predict [^`]*)`\)")
    out = _run(capsys, cached[1])
    shown = out.split("if a cache serves the data instead:\n", 1)[1].split("\n\n")[0].splitlines()
    assert [line.split(":")[0].strip() for line in shown] == ["client cache", "server cache"]
    assert all("the data set is" in line and "the memory" in line for line in shown)


def test_unit_aliases_are_taken_where_the_readme_says(capsys, tmp_path):
    from assess.cli import build_parser
    from probes.core.units import Q_

    said = _said(r"`--unit-alias '([^']+)'` of the commands that read results \(([^)]*)\)")
    alias, named = said[1], re.findall(r"`(\w+)`", said[2])
    assert named
    for name in ("predict", *named):
        options = build_parser(name)._subparsers._group_actions[0].choices[name]._option_string_actions
        assert ("--unit-alias" in options) == (name in named), name
    _said(r"A topology file writes the unit it means \(the error says which to write\)")
    topology = tmp_path / "mb.toml"
    topology.write_text((ROOT / "topologies/examples/lecture.toml").read_text().replace('"110 MiB/s"', '"880 Mb/s"'))
    from assess.cli import main

    assert main(["predict", str(topology), "--op", "read"]) == 2
    assert "Write 'Mbit/s' or 'MB/s' instead." in capsys.readouterr().err
    results = tmp_path / "mb.csv"
    results.write_text("op,transfer_size,nodes,value,unit\nread,1 MiB,10,880,Mb/s\n")
    assert main(["read", str(results)]) == 2
    assert f"(--unit-alias '{alias}')" in capsys.readouterr().err  # the table's error suggests the alias
    assert main(["read", str(results), "--json", "--unit-alias", alias]) == 0
    (run,) = json.loads(capsys.readouterr().out)["runs"]
    assert Q_(run["samples"][0], run["unit"]) == Q_(880, alias.split("=")[1])  # Mb/s read as it says Mb/s means


@pytest.mark.slow
def test_whatif_runs_on_the_sized_topology_the_readme_makes(capsys, tmp_path):
    size = _said(r"usable for 512 client nodes\", as `(iobound size [^`]*)`")[1]
    whatif = _said(r"With the first question's answer written \(`-o (\S+)` added to it\), `(iobound whatif \1 [^`]*)` "
                   r"says how many more members of each group bring the target back .* a group no count lifts says "
                   r"so \(`([^`]+)`: another layer binds\)")
    name, command, none = whatif.groups()
    _run(capsys, f"{size} -o {name}", tmp_path)
    out = _run(capsys, command, tmp_path)
    rows = out.split("members added to one group to reach it", 1)[1].splitlines()
    assert [row for row in rows if re.match(r"\w+ \(\w+\) +\+\d+ ", row)]  # some group brings it back
    assert [row for row in rows if none in row]


def _console_blocks() -> list[tuple[str, list[str]]]:
    """The README's ```console blocks: the command ($ iobound ...) and the lines it shows ("..." for those left out)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [block.splitlines() for block in re.findall(r"^```console\n(.*?)^```$", text, re.M | re.S)]
    return [(lines[0].removeprefix("$ "), lines[1:]) for lines in blocks]


@pytest.mark.slow
@pytest.mark.parametrize("command, shown", _console_blocks(), ids=lambda v: v if isinstance(v, str) else "")
def test_each_console_block_shows_what_its_command_prints(capsys, command, shown):
    """Every line shown (spaces aside, a bundled file at the path of the source tree, a time as any time) is printed."""
    def plain(line: str) -> str:
        return re.sub(r"in \d+\.\d+ s;", "in N s;", " ".join(line.split()))
    printed = {plain(line.replace(f"{ROOT}/", "")) for line in _run(capsys, command).splitlines()}
    assert [line for line in shown if line.strip() not in ("", "...") and plain(line) not in printed] == []
