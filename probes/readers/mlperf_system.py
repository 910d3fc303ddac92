"""Read an MLPerf Storage submission's system description: the fields the file states, forgiving its common defects.

Three forms: v0.5 (``host_node``, ``storage_system``, ``host_to_storage_interconnect``; often not
JSON at all), v1.0 (a JSON schema: ``networks``, ``nodes``, ``benchmark_hosts``, ``storage_system``)
and v3.0 YAML (``system_under_test``). The defects forgiven on the way (comments, trailing commas,
single quotes, bare text values, fields nested under ``properties``) are named in ``forgiven``. A field's value is
as the file writes it: :func:`stated_number` and :func:`stated_words` read the figures and text
hand-written descriptions put in it.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from probes.core.errors import InputError
from probes.core.patterns import Pattern

__all__ = ["SystemDescription", "read_mlperf_description", "looks_like_system_description", "stated_number",
           "stated_words"]

_BARE = {"yes": "true", "no": "false", "True": "true", "False": "false", "None": "null"}
_WORD = Pattern(r"[A-Za-z_][A-Za-z0-9_]*")
# A value written bare, starting as a number does ("kernel_version": 5.14.0-70.el9), and what JSON takes as a number.
_BARE_VALUE = Pattern(r"-?\d[^\s,\]}]*")
_JSON_NUMBER = Pattern(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_CLOSES = Pattern(r"(?:\s|//[^\n]*|#[^\n]*)*[}\]]")  # what follows a trailing comma: a closing bracket
# Keys only a system description has, among the first of its file.
_MARKS = ('"benchmark_hosts"', '"host_to_storage_interconnect"', "system_under_test")
# v0.5's flat form (open division): the storage nodes' count beside their network or drives, one level deep.
_FLAT = Pattern(r'"node_count"\s*:[^{}]*"(?:network|\w+_drives)"\s*:|"(?:network|\w+_drives)"\s*:[^{}]*"node_count"\s*:')


@dataclass(frozen=True)
class SystemDescription:
    """A description's fields as the file states them (JSON or YAML), where it was read, and the defects forgiven."""

    fields: dict
    source: str
    forgiven: tuple[str, ...] = ()


def looks_like_system_description(head: str) -> bool:
    """Whether ``head``, the start of a .json or .yaml file, names the parts of an MLPerf Storage system."""
    return any(key in head for key in _MARKS) or _FLAT.search(head) is not None


def read_mlperf_description(text: str, *, source: str) -> SystemDescription:
    """A description's fields (JSON or YAML), and the defects forgiven to read them.

    Raises
    ------
    InputError
        If it is neither JSON (even forgiving) nor YAML, or not a mapping; one line naming the file.
    """
    forgiven: list[str] = []
    stripped = text.lstrip("\ufeff \t\r\n")
    if stripped.startswith(("{", '"')) and not stripped.startswith('"system_under_test"'):
        try:
            document = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError, ValueError):
            mended, forgiven = _relaxed(stripped)
            try:
                document = json.loads(mended)
            except json.JSONDecodeError as exc:
                raise InputError(source, f"line {exc.lineno}", f"expected an MLPerf Storage system description "
                                 f"(JSON); found invalid JSON even forgiving {', '.join(forgiven) or 'nothing'} "
                                 f"({exc.msg})") from None
            except (RecursionError, ValueError) as exc:  # nested beyond reason, a number of thousands of digits
                raise InputError(source, "", f"expected an MLPerf Storage system description (JSON); found one "
                                 f"Python cannot hold ({type(exc).__name__})") from None
    else:
        import yaml  # only a v3.0 description needs it

        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise InputError(source, f"line {mark.line + 1}" if mark else "", "expected an MLPerf Storage system "
                             f"description (YAML); found {getattr(exc, 'problem', None) or 'not YAML'}") from None
        except (RecursionError, ValueError) as exc:
            raise InputError(source, "", f"expected an MLPerf Storage system description (YAML); found one Python "
                             f"cannot hold ({type(exc).__name__})") from None
    if not isinstance(document, dict):
        raise InputError(source, "", f"expected an MLPerf Storage system description, a mapping; found "
                         f"{type(document).__name__}")
    inner = document.get("properties")
    if isinstance(inner, dict) and ("nodes" in inner or "storage_system" in inner):
        document = inner
        forgiven.append("fields nested under 'properties' (the schema's own layout, not a description)")
    return SystemDescription(document, source, tuple(forgiven))


def _relaxed(text: str) -> tuple[str, list[str]]:
    """JSON with the defects of hand-written descriptions mended, one scan outside strings, and what was mended."""
    out: list[str] = []
    found: dict[str, int] = {}
    open_: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            out.append(json.dumps(text[i + 1:j]))
            found["single-quoted strings"] = found.get("single-quoted strings", 0) + 1
            i = j + 1
        elif text.startswith("//", i) or c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            found["comments"] = found.get("comments", 0) + 1
            i = j
        elif c == ",":
            if _CLOSES.match(text, i + 1):
                found["trailing commas"] = found.get("trailing commas", 0) + 1
            else:
                out.append(c)
            i += 1
        elif (word := _WORD.match(text, i)) and word[0] in _BARE:
            out.append(_BARE[word[0]])
            found[f"bare {word[0]}"] = found.get(f"bare {word[0]}", 0) + 1
            i = word.end()
        elif word:
            out.append(word[0])
            i = word.end()
        elif bare := _BARE_VALUE.match(text, i):
            number = _JSON_NUMBER.fullmatch(bare[0]) is not None
            out.append(bare[0] if number else json.dumps(bare[0]))
            if not number:
                found["bare text values"] = found.get("bare text values", 0) + 1
            i = bare.end()
        else:
            if c in "{[":
                open_.append("}" if c == "{" else "]")
            elif c in "}]" and open_:
                open_.pop()
            out.append(c)
            i += 1
    if open_:
        out.append("".join(reversed(open_)))
        found[f"{len(open_)} bracket(s) left open at the end"] = 1
    mended = "".join(out).strip()
    if mended.startswith('"'):
        mended = "{" + mended + "}"
        found["no braces around the whole"] = 1
    return mended, [f"{k} ({v})" if v > 1 else k for k, v in found.items()]


def stated_number(value: Any) -> float | None:
    """A figure as a description writes it: a finite number, or one in a string ("14"); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*", value)
        return float(match[1]) if match else None
    return None


def stated_words(*parts: Any) -> str:
    """The text of fields a description writes as a string or a list of them, one space apart; "" for others."""
    return " ".join(p if isinstance(p, str) else " ".join(map(str, p)) if isinstance(p, list) else "" for p in parts)
