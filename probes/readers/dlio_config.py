"""The DLIO configuration of a run, read from the files found beside its ``summary.json``.

DLIO (MLPerf Storage's benchmark) keeps a run's ``config.yaml`` and ``overrides.yaml`` beside its summary or in
``dlio_config/``, ``.hydra/`` or ``configs/``, with rank 0's per-epoch statistics; the summary's reader
(:mod:`probes.readers.mlperf`) takes its shape and its figures' context from them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.inputs import read_input
from probes.readers.jsonfields import check, describe, field, number

__all__ = ["Config", "folder_of", "whole", "positive"]

# Where a run keeps its DLIO configuration, relative to its summary: beside it (v1.0), in dlio_config/
# (v3.0), .hydra/ or configs/ (v0.5).
_CONFIG_FOLDERS = ("", "dlio_config", ".hydra", "configs")


def whole(value: Any, where: str, source: str, *, least: int = 1) -> int:
    """A whole number of at least ``least``; an error names the field."""
    check(value, int, where, source)
    if value < least:
        raise ToolOutputError(source, where, f"expected a whole number of at least {least}; found {describe(value)}")
    return value


def positive(value: Any, where: str, source: str, what: str) -> float:
    """A number above 0; an error names the field and what it is."""
    result = number(value, where, source, expected=f"{what} above 0")
    if result == 0:
        raise ToolOutputError(source, where, f"expected {what} above 0; found {describe(value)}")
    return result


class Config:
    """The DLIO configuration of a run, from the files beside its summary; every value is None where absent."""

    def __init__(self, folder: Path | None):
        self.found: list[str] = []
        self.body: dict = {}
        self.path = ""
        self.prefix = ""
        self.workload: str | None = None
        self.durations: tuple[float, ...] = ()
        self.durations_path = ""
        if folder is None:
            return
        config = self._first(folder, "config.yaml")
        if config is not None:
            document = _yaml(config)
            if not isinstance(document, dict):
                raise ToolOutputError(str(config), "line 1", f"expected DLIO's configuration, a mapping; found "
                                      f"{describe(document)}")
            self.prefix = "workload." if isinstance(document.get("workload"), dict) else ""
            self.body = document["workload"] if self.prefix else document
            self.path = str(config)
            self.found.append(_shown(config, folder))
        overrides = self._first(folder, "overrides.yaml")
        if overrides is not None:
            self.workload = _workload(overrides)
            self.found.append(_shown(overrides, folder))
        for name in ("per_epoch_stats.json", "0_per_epoch_stats.json"):
            if (folder / name).is_file():
                self.durations = _epoch_durations(folder / name)
                self.durations_path = name
                self.found.append(name)
                break

    @staticmethod
    def _first(folder: Path, name: str) -> Path | None:
        return next((folder / sub / name for sub in _CONFIG_FOLDERS if (folder / sub / name).is_file()), None)

    def get(self, *paths: str) -> tuple[Any, str]:
        """The first of ``paths`` (``"reader.batch_size"``) the config states, and its full name; (None, "") if none."""
        for path in paths:
            node: Any = self.body
            for key in path.split("."):
                if not isinstance(node, dict) or key not in node:
                    break
                node = node[key]
            else:
                return node, self.prefix + path
        return None, ""

    def whole(self, *paths: str, least: int = 1) -> int | None:
        value, where = self.get(*paths)
        return None if value is None else whole(value, where, self.path, least=least)

    def positive(self, what: str, *paths: str) -> float | None:
        value, where = self.get(*paths)
        if isinstance(value, dict) and "mean" in value:  # newer DLIO: computation_time: {mean: ..., stdev: ...}
            value, where = value["mean"], where + ".mean"
        return None if value is None else positive(value, where, self.path, what)

    def model(self) -> str | None:
        value, where = self.get("model.name", "model")
        return None if value is None else check(value, str, where, self.path)


def folder_of(source: str) -> Path | None:
    """The folder of the summary ``source`` names, if it names a file; a name that is no path finds none."""
    path = Path(source)
    try:
        return path.parent if path.is_file() else None
    except OSError:  # a name too long to be a path
        return None


def _shown(path: Path, folder: Path) -> str:
    return str(path.relative_to(folder))


def _yaml(path: Path) -> Any:
    """A YAML file beside the summary, parsed safely; an error names the file and the line."""
    import yaml  # only reading a DLIO run needs it

    text = read_input(path, error=ToolOutputError, what="the DLIO configuration beside the summary")
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "not YAML"
        raise ToolOutputError(str(path), f"line {mark.line + 1}" if mark else "", f"expected YAML; found {problem}") from None
    except (ValueError, RecursionError) as exc:
        raise ToolOutputError(str(path), "", f"expected YAML; found what Python cannot hold ({type(exc).__name__})") from None


def _workload(path: Path) -> str | None:
    """The workload hydra was told (``- workload=unet3d_h100``); None where overrides.yaml names none."""
    document = _yaml(path)
    if document is None:
        return None
    items = check(document, list, "overrides", str(path))
    for index, item in enumerate(items):
        text = check(item, str, f"overrides[{index}]", str(path))
        key, equals, value = text.partition("=")
        if equals and key.strip().lstrip("+") == "workload":
            if not value.strip():
                raise ToolOutputError(str(path), f"overrides[{index}]", "expected workload=<model>_<accelerator>; "
                                      "found no name")
            return value.strip()
    return None


def _epoch_durations(path: Path) -> tuple[float, ...]:
    """Each epoch's wall time in seconds, from rank 0's ``per_epoch_stats.json`` (epochs "1", "2" ...)."""
    source = str(path)
    try:
        document = json.loads(read_input(path, error=ToolOutputError, what="the per-epoch statistics beside the summary"))
    except (ValueError, RecursionError) as exc:
        raise ToolOutputError(source, "", f"expected DLIO's per-epoch statistics (JSON); found invalid JSON "
                              f"({type(exc).__name__})") from None
    check(document, dict, "per_epoch_stats", source)
    epochs = sorted((key for key in document if key.isdigit()), key=int)
    durations = []
    for epoch in epochs:
        entry = check(document[epoch], dict, epoch, source)
        value = field(entry, "duration", (str, int, float), epoch, source)
        try:
            seconds = float(value)
        except ValueError:
            seconds = math.nan
        if not 0 <= seconds < math.inf:
            raise ToolOutputError(source, f"{epoch}.duration", f"expected a duration in seconds; found {describe(value)}")
        durations.append(seconds)
    return tuple(durations)
