"""Checking the fields of a tool's JSON output: an error says where, what was expected and what was found."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from probes.core.errors import ToolOutputError
from probes.core.patterns import Pattern

__all__ = ["check", "field", "number", "describe", "json_object", "JSON_OPENING"]

# Where a tool's JSON object starts: a line that opens with '{' (after blanks or a byte-order mark).
JSON_OPENING = Pattern(r"^[ \t\ufeff]*\{", re.MULTILINE)

_KINDS = {str: "a string", int: "a whole number", dict: "an object", list: "a list", (int, float): "a number"}


def check(value: Any, kind: type | tuple[type, ...], where: str, source: str) -> Any:
    """``value`` if it is of ``kind`` (never a bool standing for a number), else ToolOutputError naming ``where``."""
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ToolOutputError(source, where, f"expected {_KINDS[kind]}; found {describe(value)}")
    return value


def field(obj: dict, key: str, kind: type | tuple[type, ...], path: str, source: str) -> Any:
    """``obj[key]`` checked as :func:`check` does; a missing key names the fields that are there."""
    where = f"{path}.{key}" if path else key
    if key not in obj:
        present = ", ".join(repr(k) for k in list(obj)[:8]) or "nothing"
        raise ToolOutputError(source, where, f"expected this field; it is missing (found {present})")
    return check(obj[key], kind, where, source)


def number(value: Any, where: str, source: str, *, expected: str = "a finite number of at least 0",
           below: float = math.inf) -> float:
    """``value`` as a float from 0 up to (not including) ``below``; ``expected`` says so in the error."""
    check(value, (int, float), where, source)
    try:
        result = float(value)
    except OverflowError:  # a whole number too large for a float
        result = math.inf
    if not 0 <= result < below:
        raise ToolOutputError(source, where, f"expected {expected}; found {describe(value)}")
    return result


def describe(value: Any) -> str:
    """A JSON value as an error message shows it: ``an object``, ``null``, ``the string 'x'``, ``the number 3``."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return f"the number {repr(value)[:40]}"


def json_object(text: str, source: str, what: str) -> dict:
    """The JSON object that ``text`` is (``what`` names it in errors: "hyperfine's JSON (--export-json)").

    Raises
    ------
    ToolOutputError
        If the text is not JSON, is JSON Python cannot hold (a number of thousands of digits, nesting beyond
        recursion), or is not an object; one line saying where.
    """
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ToolOutputError(source, f"line {exc.lineno}, column {exc.colno}",
                              f"expected {what}; found invalid JSON ({exc.msg})") from None
    except (ValueError, RecursionError) as exc:
        raise ToolOutputError(source, "line 1", f"expected {what}; found JSON Python cannot hold "
                              f"({type(exc).__name__})") from None
    if not isinstance(document, dict):
        raise ToolOutputError(source, "line 1", f"expected {what}, an object; found {describe(document)}")
    return document
