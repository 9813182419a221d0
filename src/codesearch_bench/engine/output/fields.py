"""One field of one engine record -> a line number, path, text or score, or why not.

Each reader raises ValueError with the reason shown for that record; none
lets through a value that would mislead or crash a later stage: no line
number past any real file, no non-finite score (NaN included), no path that open() refuses
or no file system could hold. `show` formats any value for a message,
short, whatever its size or depth.
"""

from __future__ import annotations

import math
import re
import reprlib
from typing import Any

from .jsonread import HugeInt

MAX_PATH_BYTES = 4096  # PATH_MAX on Linux: no longer path names a file in the tree
MAX_LINE = 1_000_000_000  # no source file has a billion lines; past this it is garbage
_LINE_RANGE = re.compile(r"^\s*L?(\d+)\s*(?:[-:–]\s*L?(\d+))?\s*$")
_WHOLE = re.compile(r"\s*-?\d+\s*")
_SAFE_DIGITS = 18  # a digit string this short converts to int quickly and exactly
# C0, DEL and C1: a path holding one would split a TREC line or a TSV row, move a
# terminal's cursor, or name a file no tree holds; refused here, no export sees it.
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")
_PAST = f"is past any file (the limit is {MAX_LINE:,})"
_REPR = reprlib.Repr()
_REPR.maxstring, _REPR.maxother, _REPR.maxlist, _REPR.maxdict, _REPR.maxlevel = 40, 40, 6, 4, 3


def ordered(start: int | None, end: int | None) -> tuple[int | None, int | None]:
    """One given line stands for both; an end before the start is an error."""
    if end is None:
        end = start
    if start is None and end is not None:
        start = end
    if start is not None and end is not None and end < start:
        raise ValueError(f"end line {end} before start line {start}")
    return start, end


def line_range(value: Any) -> tuple[int | None, int | None]:
    """'12-30', 'L12-L30', '12:30', '12', [12, 30], [12] or 12."""
    if value is None:
        return None, None
    if isinstance(value, list | tuple) and 1 <= len(value) <= 2:
        start = line(value[0])
        end = line(value[-1])
    elif isinstance(value, str) and (m := _LINE_RANGE.match(value)):
        start = line(m.group(1))
        end = line(m.group(2) or m.group(1))
    elif isinstance(value, int | HugeInt) and not isinstance(value, bool):
        start = end = line(value)
    else:
        raise ValueError(f"cannot read a line range from {show(value)}")
    if start is not None and end is not None and end < start:
        raise ValueError(f"end line {end} before start line {start}")
    return start, end


def line(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"line {value!r} is not a number")
    if isinstance(value, HugeInt):
        raise ValueError(f"line {value!r} {_PAST}")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and _WHOLE.fullmatch(value):
        digits = len(value.strip().lstrip("-"))
        if digits > _SAFE_DIGITS:
            kind = "negative line number" if value.strip().startswith("-") else "line"
            raise ValueError(f"{kind} ({digits}-digit string) {_PAST}")
        value = int(value)
    if not isinstance(value, int):
        raise ValueError(f"line {show(value)} is not a whole number")
    if value < 0:
        raise ValueError(f"negative line number {show(value)}")
    if value > MAX_LINE:
        raise ValueError(f"line {show(value)} {_PAST}")
    return value


def path(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"no path (got {show(value)})")
    if "\x00" in value:
        raise ValueError("path contains a NUL byte")  # open() would refuse it
    if (bad := CONTROL.search(value)) is not None:
        raise ValueError(f"path contains the control character U+{ord(bad.group()):04X}")
    size = len(value.encode("utf-8", errors="surrogatepass"))
    if size > MAX_PATH_BYTES:
        raise ValueError(f"path is {size} bytes long (the limit is {MAX_PATH_BYTES})")
    return value


def text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return "\n".join(value)
        raise ValueError("text is a list with non-string items, not a string")
    raise ValueError(f"text is {kind(value)}, not a string")


def number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"score {value!r} is not a number")
    if isinstance(value, HugeInt):
        raise ValueError(f"score {value!r} is not a finite number")
    try:
        score = float(value)
    except OverflowError:
        raise ValueError(f"score {show(value)} is not a finite number") from None
    except (TypeError, ValueError):
        raise ValueError(f"score {show(value)} is not a number") from None
    # NaN and the infinities alike: a score that is no finite number is the record's
    # error, counted and flagged on the row (`!! records`), never a silent gap.
    if not math.isfinite(score):
        raise ValueError(f"score {show(value)} is not a finite number")
    return score


def kind(value: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float | HugeInt):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def show(value: Any) -> str:
    """A short repr: a message never holds a huge value, nor fails to format one."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"({_digits(abs(value))}-digit integer)"
    try:
        return _REPR.repr(value)
    except Exception:
        return f"<{type(value).__name__}>"


def _digits(value: int) -> int:
    try:
        return len(str(value))
    except ValueError:  # past the digit limit str() itself enforces
        return int(math.log10(value)) + 1
