"""Reading text and JSON that people and programs hand us (level files, checkpoints, snapshots,
action files, episode folders): UTF-8 only, and every way it can be wrong is one error of the
caller's choosing that says what is wrong, never a UnicodeDecodeError, a RecursionError from
100,000 nested brackets or a ValueError from a 5,000-digit number.

    text = read_text(path, CheckpointError, what="checkpoint")
    doc = loads(text, CheckpointError, what="checkpoint")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_TEXT_BYTES = 512 << 20       # a file larger than this is not read


def decode(data: bytes, error: type[Exception], what: str = "file") -> str:
    """UTF-8 bytes -> text (a UTF-8 byte-order mark is dropped), or ``error``."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise error(f"{what} is UTF-16 text; save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise error(f"{what} is not UTF-8 text (byte {e.start}: {data[e.start:e.start + 1]!r}); "
                    "is it a binary file?") from None
    if "\x00" in text:
        raise error(f"{what} holds NUL characters; is it a binary file?")
    return text[1:] if text.startswith("\ufeff") else text


def read_text(path: str | Path, error: type[Exception], what: str = "", max_bytes: int = MAX_TEXT_BYTES) -> str:
    """A file's text (UTF-8), or ``error`` saying why it cannot be read."""
    what = what or str(path)
    try:
        with open(path, "rb") as f:      # in blocks: read(max_bytes + 1) allocates all of it up front
            parts, n = [], 0
            while n <= max_bytes:
                block = f.read(min(1 << 20, max_bytes + 1 - n))
                if not block:
                    break
                parts.append(block)
                n += len(block)
            data = b"".join(parts)
    except OSError as e:
        raise error(f"cannot read {what}: {e.strerror or e}") from None
    if len(data) > max_bytes:
        raise error(f"{what} is larger than {max_bytes >> 20} MiB")
    return decode(data, error, what)


def loads(text: str | bytes, error: type[Exception], what: str = "the text") -> Any:
    """json.loads, with every failure (syntax, nesting too deep for the parser, a number the
    parser refuses) raised as ``error``."""
    if isinstance(text, (bytes, bytearray)):
        text = decode(bytes(text), error, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{what} is not valid JSON ({e.msg} at line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise error(f"{what} is nested too deeply to read") from None
    except (ValueError, TypeError) as e:
        raise error(f"{what} cannot be read as JSON ({str(e)[:120]})") from None
