"""Benchmark: how much CPU each iobound command costs as a whole process, beside pip --help in the same run.

Why: a command line that answers in a blink is used; one that takes seconds to print its
help is not. Each command runs as a user runs it, a new process (``python -m assess``, what
the ``iobound`` console script runs), and is judged on the child's CPU time (user + sys,
from getrusage(RUSAGE_CHILDREN) around it), so other load on the machine does not count;
wall time is shown beside it. Every command and peer is run once per round, the rounds
repeated (15 rounds: on a VM whose speed drifts by a third from minute to minute, 5 rounds put
check anywhere from 0.95x to 1.10x pip within an hour), and the best round of each kept. Peers
measured in the same run: ``python -c pass`` (the interpreter's own start-up, the floor),
``pip --help`` of this venv, and ``pip --help`` of the base interpreter, the pip a fresh
``python3 -m venv`` brings (ensurepip's bundled pip: what a user who follows the README has).

Goals (issue 16): ``iobound --help``, ``--version`` and a usage error at most 0.5x the CPU of
pip --help; ``read``, ``predict`` and ``check`` on the bundled lecture example at most 1x, and (issue 34)
``plan`` as fast as ``predict``; ``report`` at most 4 s of CPU. Ratios are judged against this venv's pip; the ratio to the
other pip is shown too. Then, in a separate untimed pass (each command through a small
wrapper that runs assess.cli.main and lists what it imported), which heavy modules each
command loaded; that pass also warms the disk cache and the bytecode before any clock starts.

What a user sees: an installed iobound has its bytecode compiled (pip compiles it; an editable
install writes it at the first run), so every process here writes and reads bytecode in a scratch
cache (PYTHONPYCACHEPREFIX), even where the environment sets PYTHONDONTWRITEBYTECODE, which
would compile every module of iobound again in every run; --as-is keeps the environment's
setting. The header says which, and whether the iobound installed here is editable.

    python benchmarks/startup.py [--repeat 15] [--quick] [--check] [--as-is]

--quick runs one round. Exit status 0 (it is a report), or 1 with --check when a goal is missed
or a command exits with another status than it should.
"""

from __future__ import annotations

import argparse
import ensurepip
import importlib.metadata
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("matplotlib", "sympy", "scipy.optimize", "networkx", "pint", "numpy")
MARK = "benchmarks/startup.py heavy modules: "
# Runs iobound as the console script does, then lists the heavy modules it imported (at exit: usage errors exit early).
WRAPPER = f"""\
import atexit, json, sys
atexit.register(lambda: print({MARK!r} + json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)), file=sys.stderr))
from assess.cli import main
sys.exit(main(sys.argv[1:]))
"""
REPORT_DIR = "NEW_DIR"  # replaced by a fresh path that does not exist yet, for every run


@dataclass(frozen=True)
class Command:
    """An iobound command line, the exit status it should end with, and its goal: a ratio to pip --help or CPU seconds."""

    args: tuple[str, ...]
    status: int
    ratio: float | None = None
    seconds: float | None = None

    @property
    def label(self) -> str:
        return "iobound " + " ".join(self.args)

    @property
    def goal(self) -> str:
        return f"<= {self.ratio:g}x pip" if self.ratio is not None else f"<= {self.seconds:g} s CPU"


COMMANDS = (
    Command(("--help",), 0, ratio=0.5),
    Command(("--version",), 0, ratio=0.5),
    Command(("predict", "--no-such-option"), 2, ratio=0.5),
    Command(("read", "topologies/examples/lecture-results.csv"), 0, ratio=1.0),
    Command(("predict", "lecture", "--op", "read", "--transfer-size", "1MiB"), 0, ratio=1.0),
    Command(("check", "lecture", "lecture-results.csv", "--fail-on", "never"), 0, ratio=1.0),
    Command(("plan", "lecture", "--benchmark", "ior"), 0, ratio=1.0),
    Command(("report", "lecture", "lecture-results.csv", "-o", REPORT_DIR), 0, seconds=4.0),
)


@dataclass
class Timing:
    """The best (least CPU) of the runs of one command line that ended as ``expected``; every run's exit status; what
    a run said that ended otherwise."""

    expected: int = 0
    cpu: float = float("inf")
    wall: float = float("inf")
    statuses: list[int] = field(default_factory=list)
    error: str = ""

    @property
    def status(self) -> str:
        return "/".join(map(str, sorted(set(self.statuses))))


def run(argv: list[str], timing: Timing, scratch: Path, env: dict[str, str]) -> None:
    """Run ``argv`` once from the project root; keep its CPU (user + sys of the child and what it waited for) if the best."""
    argv = [str(scratch / f"report-{time.monotonic_ns()}") if a == REPORT_DIR else a for a in argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, timeout=300, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != timing.expected and done.returncode not in timing.statuses:
        timing.error = done.stderr.strip()
    timing.statuses.append(done.returncode)
    if done.returncode == timing.expected:  # a run that failed did other work: its time is not the command's
        timing.cpu, timing.wall = min(timing.cpu, cpu), min(timing.wall, wall)


def heavy_modules(command: Command, scratch: Path, env: dict[str, str]) -> tuple[int, list[str] | None]:
    """The exit status and the heavy modules ``command`` imported, run through WRAPPER (untimed)."""
    argv = [str(scratch / "report-heavy") if a == REPORT_DIR else a for a in command.args]
    done = subprocess.run([sys.executable, "-c", WRAPPER, *argv], cwd=ROOT, stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=300, env=env)
    lines = [line for line in done.stderr.splitlines() if line.startswith(MARK)]
    return done.returncode, json.loads(lines[-1][len(MARK):]) if lines else None


def pip_version(python: str) -> str | None:
    """The version of the pip ``python -m pip`` runs, or None if that interpreter has none."""
    done = subprocess.run([python, "-m", "pip", "--version"], capture_output=True, text=True, timeout=120)
    words = done.stdout.split()
    return words[1] if done.returncode == 0 and len(words) > 1 and words[0] == "pip" else None


def installed() -> str:
    """How iobound is installed in this interpreter: editable (from which folder) or not, or not at all."""
    try:
        found = importlib.metadata.distribution("iobound")
    except importlib.metadata.PackageNotFoundError:
        return "not installed (the commands run from the project root)"
    where = json.loads(found.read_text("direct_url.json") or "{}")
    if where.get("dir_info", {}).get("editable"):
        return f"an editable install of {where.get('url', '?').removeprefix('file://')}"
    return f"installed, not editable ({found.locate_file('')})"


def bytecode_env(scratch: Path, as_is: bool) -> tuple[dict[str, str], str]:
    """The children's environment, and a line that says how they treat bytecode (see the module's docstring)."""
    env = dict(os.environ)
    unset = os.environ.get("PYTHONDONTWRITEBYTECODE")
    said = "this environment sets PYTHONDONTWRITEBYTECODE" if unset else "this environment writes bytecode"
    if as_is:
        return env, f"bytecode: {said}; timed as it is (--as-is)" + (
            ": every run compiles iobound's modules again, which an installed iobound does not" if unset else "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(scratch / "pycache")
    return env, (f"bytecode: {said}; timed with bytecode written once to a scratch cache (PYTHONPYCACHEPREFIX), "
                 "as an installed iobound has it (--as-is: as this environment runs)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="rounds; each command's best is kept (default 15)")
    parser.add_argument("--quick", action="store_true", help="one round (a smoke run: the figures are noisier)")
    parser.add_argument("--check", action="store_true", help="exit 1 when a goal is missed")
    parser.add_argument("--as-is", action="store_true",
                        help="keep the environment's bytecode setting (default: write bytecode to a scratch cache)")
    args = parser.parse_args()
    rounds = 1 if args.quick else args.repeat

    base = getattr(sys, "_base_executable", sys.executable)
    venv_pip, base_pip = pip_version(sys.executable), pip_version(base)
    peers = {"python -c pass": ([sys.executable, "-c", "pass"], 0)}
    peers[f"pip --help (pip {venv_pip}, this venv)"] = ([sys.executable, "-m", "pip", "--help"], 0)
    if base_pip and base != sys.executable:
        whose = "a fresh venv's" if base_pip == ensurepip.version() else "the base interpreter's"
        peers[f"pip --help (pip {base_pip}, {whose})"] = ([base, "-m", "pip", "--help"], 0)
    venv_label, base_label = list(peers)[1], list(peers)[2] if len(peers) > 2 else None
    scratch = Path(tempfile.mkdtemp(prefix="iobound-startup-"))
    env, bytecode = bytecode_env(scratch, args.as_is)
    print(f"python {platform.python_version()} ({sys.executable}); CPU time = user + sys of the child process, "
          f"best of {rounds} round{'s' if rounds > 1 else ''}")
    print(f"pip of this venv: {venv_pip} ({sys.executable} -m pip); pip of the base interpreter: "
          f"{base_pip or 'none'} ({base} -m pip); ensurepip, what python3 -m venv installs, bundles pip "
          f"{ensurepip.version()}")
    print(f"iobound: {installed()}; the commands run as python -m assess from {ROOT}")
    print(bytecode)

    try:
        loaded = {}
        for command in COMMANDS:  # untimed: the heavy modules, and a warm cache for the timed rounds
            loaded[command] = heavy_modules(command, scratch, env)
        for label, (argv, _) in peers.items():
            run(argv, Timing(), scratch, env)
        timings = {label: Timing() for label in peers} | {command.label: Timing(command.status) for command in COMMANDS}
        for _ in range(rounds):  # one of each per round, so a change of load touches all alike
            for label, (argv, _) in peers.items():
                run(argv, timings[label], scratch, env)
            for command in COMMANDS:
                run([sys.executable, "-m", "assess", *command.args], timings[command.label], scratch, env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    pip = timings[venv_label].cpu
    other = timings[base_label].cpu if base_label else None
    other_head = f"x pip {base_pip}" if base_label else ""
    width = max(map(len, timings))
    print(f"\n{'command':{width}}  exit   CPU s  wall s  {'x pip ' + str(venv_pip):>11}  {other_head:>11}  "
          f"{'goal':15}  verdict")

    def row(label: str, timing: Timing, goal: str = "", verdict: str = "") -> None:
        ratio = f"{timing.cpu / pip:10.3f}x" if pip > 0 else f"{'-':>11}"
        versus = f"{timing.cpu / other:10.3f}x" if other else ""
        print(f"{label:{width}}  {timing.status:>4}  {timing.cpu:6.3f}  {timing.wall:6.3f}  {ratio}  {versus:>11}  "
              f"{goal:15}  {verdict}".rstrip())

    for label in peers:
        row(label, timings[label], "peer")
    missed, broken = [], []
    for command in COMMANDS:
        timing = timings[command.label]
        if set(timing.statuses) != {command.status}:
            verdict = f"FAIL: exit {timing.status}, expected {command.status}"
            broken.append(command)
        elif command.ratio is not None:
            verdict = "PASS" if timing.cpu <= command.ratio * pip else "MISS"
        else:
            verdict = "PASS" if timing.cpu <= command.seconds else "MISS"
        if verdict == "MISS":
            missed.append(command)
        row(command.label.replace(REPORT_DIR, "<new dir>"), timing, command.goal, verdict)
    for command in broken:
        print(f"\n{command.label.replace(REPORT_DIR, '<new dir>')} said:\n{timings[command.label].error[-2000:]}")

    print("\nheavy modules each command loaded (untimed pass through a wrapper around assess.cli.main):")
    for command, (status, modules) in loaded.items():
        said = "not reported" if modules is None else ", ".join(modules) or "none"
        print(f"  {command.label.replace(REPORT_DIR, '<new dir>'):{width}}  {said}"
              + (f" (exit {status})" if status != command.status else ""))
    met = len(COMMANDS) - len(missed) - len(broken)
    print(f"\ngoals met: {met}/{len(COMMANDS)}" + (f"; missed: {', '.join(c.label for c in missed)}" if missed else "")
          + (f"; failed: {', '.join(c.label.replace(REPORT_DIR, '<new dir>') for c in broken)}" if broken else ""))
    return 1 if args.check and (missed or broken) else 0


if __name__ == "__main__":
    sys.exit(main())
