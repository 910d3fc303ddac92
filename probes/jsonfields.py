"""Checking the fields of a tool's JSON output: an error says where, what was expected and what was found."""

from __future__ import annotations

from typing import Any

from probes.errors import ToolOutputError

__all__ = ["check", "describe"]

_KINDS = {str: "a string", int: "a whole number", dict: "an object", list: "a list", (int, float): "a number"}


def check(value: Any, kind: type | tuple[type, ...], where: str, source: str) -> Any:
    """``value`` if it is of ``kind`` (never a bool standing for a number), else ToolOutputError naming ``where``."""
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ToolOutputError(source, where, f"expected {_KINDS[kind]}; found {describe(value)}")
    return value


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
