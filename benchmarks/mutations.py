"""Mutations of real tool outputs that a reader must survive: cut, repeated, corrupted.

benchmarks/readers.py fuzzes every reader with them, and tests/test_read.py a few hundred times;
they live here because benchmarks import nothing from tests.
"""

from __future__ import annotations

import random

__all__ = ["mutate", "MUTATIONS", "mutate_bytes", "BYTE_MUTATIONS"]


def _truncate(text: str, rng: random.Random) -> str:
    return text[: rng.randrange(len(text) + 1)]


def _drop_lines(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    for _ in range(rng.randint(1, 5)):
        if lines:
            del lines[rng.randrange(len(lines))]
    return "".join(lines)


def _repeat_lines(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    if not lines:
        return text
    i = rng.randrange(len(lines))
    return "".join(lines[:i] + lines[i: i + rng.randint(1, 4)] * rng.randint(2, 3) + lines[i:])


def _flip_characters(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(rng.randint(1, 20)):
        if chars:
            chars[rng.randrange(len(chars))] = rng.choice("0123456789.-e:,{}[]\"\n \t\x00é∞nanINF")
    return "".join(chars)


def _swap_numbers(text: str, rng: random.Random) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i].isdigit() and rng.random() < 0.05:
            j = i
            while j < len(text) and (text[j].isdigit() or text[j] == "."):
                j += 1
            out.append(rng.choice(["0", "-1", "1e308", "nan", "inf", "99999999999999999999", "", "0.0.0", "١٢"]))
            i = j
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def _splice(text: str, rng: random.Random) -> str:
    a, b = sorted(rng.randrange(len(text) + 1) for _ in range(2))
    return text[:a] + text[b:] + text[a:b]


MUTATIONS = (_truncate, _drop_lines, _repeat_lines, _flip_characters, _swap_numbers, _splice)


def mutate(text: str, rng: random.Random) -> str:
    """One to three random mutations of ``text``."""
    for _ in range(rng.randint(1, 3)):
        text = rng.choice(MUTATIONS)(text, rng)
    return text


# What can happen to a file's bytes on the way to a reader: another encoding, bytes that are no UTF-8, an emoji,
# NULs where a crash left a hole, Windows line ends. benchmarks/readers.py fuzzes the opener with them.

def _invalid_bytes(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 10)):
        out.insert(rng.randrange(len(out) + 1), rng.randrange(0x80, 0x100))
    return bytes(out)


def _utf16(data: bytes, rng: random.Random) -> bytes:
    return data.decode("utf-8", "replace").encode(rng.choice(["utf-16", "utf-16-be", "utf-16-le"]))


def _astral(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    return data[:i] + rng.choice(["🚀", "𝔘", "\U0010ffff"]).encode() + data[i:]


def _hole(data: bytes, rng: random.Random) -> bytes:
    i = rng.randrange(len(data) + 1)
    return data[:i] + b"\x00" * rng.choice([1, 100, 4096, 65536]) + data[i:]


def _crlf(data: bytes, rng: random.Random) -> bytes:
    return data.replace(b"\n", rng.choice([b"\r\n", b"\r", b"\n\n"]))


def _byte_order_mark(data: bytes, rng: random.Random) -> bytes:
    return rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]) + data


BYTE_MUTATIONS = (_invalid_bytes, _utf16, _astral, _hole, _crlf, _byte_order_mark)


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One or two random mutations of a file's bytes (``data``)."""
    for _ in range(rng.randint(1, 2)):
        data = rng.choice(BYTE_MUTATIONS)(data, rng)
    return data
