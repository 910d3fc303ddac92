"""Decode JSON that a tool prints invalid at times (IOR's releases do): trailing commas, missing commas between
values and bare ``nan``/``inf`` are repaired, each repair said, and anything else refused."""

from __future__ import annotations

import json
import re
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern
from probes.readers.textlines import line_of

__all__ = ["decode"]

# Repairs of invalid JSON, each applied outside strings only. Every repair keeps the line
# breaks, so a later syntax error's line is the line in the file.
_STRING = r'"(?:\\.|[^"\\\n])*"'
_TRAILING_COMMA = Pattern(_STRING + r"|(,)(\s*[}\]])")
# A value's end, then a line break, then a value's start, with no comma between.
_MISSING_COMMA = Pattern(_STRING + r"((?=\s*\n\s*[\"{\[]))?|([}\]0-9el])(\s*\n\s*)(?=[\"{\[])")
_BARE_NAN = Pattern(_STRING + r"|(?<=[:\[,\s])(-?(?:nan|inf|NaN|Infinity|-nan))(?=\s*[,}\]])")


def decode(text: str, opening: re.Match, source: str, what: str) -> tuple[Any, str]:
    """The JSON value at ``opening`` in ``text`` (``what`` names it in errors), and the repairs it needed ("" if none).

    Raises
    ------
    ToolOutputError
        If the JSON does not decode even repaired, Python cannot hold a value, or more follows the value.
    """
    start = opening.end() - 1
    prefix = "\n" * text.count("\n", 0, start)  # keep line numbers
    body = prefix + text[start:]
    repairs: list[str] = []
    for attempt in range(len(_REPAIRS) + 1):
        try:
            document, end = json.JSONDecoder().raw_decode(body, len(prefix))
        except json.JSONDecodeError as exc:
            if attempt == len(_REPAIRS):
                raise ToolOutputError(
                    source, f"line {exc.lineno}, column {exc.colno}",
                    f"expected valid JSON, found a syntax error ({exc.msg}) that iobound cannot repair"
                    + (f" (after repairing: {'; '.join(repairs)})" if repairs else "")
                    + ": the output is malformed or truncated") from None
            body, note = _repair(body, *_REPAIRS[attempt])
            if note:
                repairs.append(note)
            continue
        except (ValueError, RecursionError) as exc:
            raise ToolOutputError(source, "line 1", f"expected {what}, found a value Python cannot "
                                  f"read ({exc})") from None
        rest = body[end:].strip()
        if rest:
            line = line_of(body, end)
            raise ToolOutputError(source, f"line {line}", f"expected one JSON object; found more after it "
                                  f"({rest[:30]!r})")
        return document, "; ".join(repairs)
    raise AssertionError("unreachable")  # pragma: no cover


def _lines_of(body: str, positions: list[int]) -> str:
    lines = [line_of(body, p) for p in positions[:3]]
    more = ", ..." if len(positions) > 3 else ""
    return ", ".join(map(str, lines)) + more


def _repair(body: str, pattern: Pattern, fix, what: str) -> tuple[str, str]:
    """Apply one repair at every match ``fix`` accepts (it returns the new text and where, or None); say what it did."""
    positions: list[int] = []

    def replace(m: re.Match) -> str:
        done = fix(m)
        if done is None:
            return m.group(0)
        text, at = done
        positions.append(at)
        return text

    fixed = pattern.sub(replace, body)
    return fixed, (f"{what.format(n=len(positions))} (line {_lines_of(body, positions)})" if positions else "")


def _missing_comma(m: re.Match) -> tuple[str, int] | None:
    if m.group(2) is None:  # a string, followed by a line break and a value or not
        return None if m.group(1) is None else (m.group(0) + ",", m.end())
    return m.group(2) + "," + m.group(3), m.end(2)


# The repairs, tried one more at a time while the JSON does not decode.
_REPAIRS = (
    (_TRAILING_COMMA, lambda m: None if m.group(1) is None else (m.group(2), m.start(1)), "removed {n} trailing comma(s)"),
    (_MISSING_COMMA, _missing_comma, "inserted {n} missing comma(s)"),
    (_BARE_NAN, lambda m: None if m.group(1) is None else ("null", m.start(1)), "read {n} bare nan/inf value(s) as null"),
)
