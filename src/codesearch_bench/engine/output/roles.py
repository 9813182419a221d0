"""Which field of the output a wrong parse path meant: by what its value holds, then its name.

Spelling alone points a mistyped `"path": "pth"` at `snippet` when the records
have `end, file, line, score, snippet`: it is the nearest name, and it holds
text. What the path is for says more -- a path is a string that looks like
one, a line a whole number, a score a number, a text a longer string -- so
the keys of the output are ranked by that fit first and by spelling only
among equals; a key another parse field already reads comes after one that
no field reads.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from rapidfuzz import fuzz

from .jsonread import HugeInt

Kind = Literal["null", "bool", "int", "float", "string", "list", "object", "other"]
#: The parse spec fields a did-you-mean is made for, and `results` (a document's key).
Role = Literal["path", "start", "end", "lines", "text", "score", "results"]

_EXT = re.compile(r"\.[A-Za-z0-9_+-]{1,10}$")
_RANGE = re.compile(r"^\s*L?\d+\s*(?:[-:–]\s*L?\d+)?\s*$")
_WHOLE = re.compile(r"^\s*\d+\s*$")
_NUMBER = re.compile(r"^\s*-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_PATH_NAMES = frozenset({"file", "path", "filename", "filepath", "file_path", "uri", "url",
                         "file_name", "relpath", "relative_path"})
#: a text longer than this is a text shown, not a name or a path
_SHORT = 20
#: a fit from which a key is suggested however it is spelt
LOOKS_RIGHT = 2
#: below this a name is too far from the path given to suggest on spelling alone
_SPELLING_CUTOFF = 50


@dataclass(frozen=True, slots=True)
class Shape:
    """What one record field's value looked like, the first time the key was seen."""

    kind: Kind
    slashed: bool = False  # a one-line string holding '/' or '\\': a path or a URI
    dotted: bool = False  # a one-line string ending in '.ext': a file name, or a qualname
    long: bool = False  # a string of several words or lines, or longer than a name
    whole: bool = False  # a string of digits: a line number written as text
    numeric: bool = False  # a string that reads as a number
    range: bool = False  # a line range: '12-30', 'L12', [12, 30]


def shape(value: Any) -> Shape:
    if value is None:
        return Shape("null")
    if isinstance(value, bool):
        return Shape("bool")
    if isinstance(value, int | HugeInt):
        return Shape("int")
    if isinstance(value, float):
        return Shape("float")
    if isinstance(value, str):
        one_line = "\n" not in value and "\t" not in value and value.count(" ") <= 1
        return Shape("string", slashed=one_line and ("/" in value or "\\" in value),
                     dotted=one_line and _EXT.search(value) is not None,
                     long=len(value) > _SHORT or not one_line,
                     whole=bool(_WHOLE.match(value)), numeric=bool(_NUMBER.match(value)),
                     range=bool(_RANGE.match(value)))
    if isinstance(value, list):
        lines = 1 <= len(value) <= 2 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value)
        return Shape("list", range=lines)
    if isinstance(value, dict):
        return Shape("object")
    return Shape("other")


def shapes_of(record: Mapping[str, Any], keys: Collection[str],
              into: dict[str, Shape]) -> None:
    """Each key's shape in `into`, as its first value looked (one answer's first record
    holding it); a key known already is left as it is."""
    for key in keys:
        if key not in into:
            into[key] = shape(record.get(key))


def merge(into: dict[str, Shape], more: Mapping[str, Shape]) -> None:
    """Shapes from another answer: a key null in the first answer takes a later value's."""
    for key, found in more.items():
        known = into.get(key)
        if known is None or (known.kind == "null" and found.kind != "null"):
            into[key] = found


def fit(role: Role, key: str, found: Shape | None, *, nested: bool) -> int:
    """How well a key's value suits the role: LOOKS_RIGHT or more looks right, 1 could
    be, 0 does not."""
    if found is None:
        return 0  # a key past the ones recorded: spelling alone decides
    if nested:
        # `loc.file`: the first part names an object holding the rest.
        return LOOKS_RIGHT if found.kind == "object" else 0
    kind = found.kind
    if role == "path":
        if kind != "string":
            return 0
        if found.slashed or key.lower() in _PATH_NAMES:
            return 3
        # `config.py` is a file name, but `Config.load` a qualified name ends so too.
        return LOOKS_RIGHT if found.dotted else 0 if found.long else 1
    if role in ("start", "end"):
        return 2 if kind == "int" else 1 if kind == "string" and found.whole else 0
    if role == "lines":
        if found.range and kind in ("string", "list"):
            return 2
        return 1 if kind == "int" else 0
    if role == "score":
        return 2 if kind == "float" else 1 if kind == "int" or found.numeric else 0
    if role == "text":
        if kind == "list":
            return 0 if found.range else 1  # lines of text, joined
        if kind != "string":
            return 0
        return 2 if found.long and not found.slashed else 1
    # results: the list of records
    return 2 if kind == "list" else 0


def best(role: Role, wanted: str, keys: Collection[str], shapes: Mapping[str, Shape],
         claimed: Collection[str] = ()) -> str | None:
    """The key the path `wanted` most likely meant, or None when none is near enough.

    Ranked by fit to the role, then by whether another parse field reads it
    already, then by spelling. A key that looks right is suggested whatever its
    spelling; one that only could be, or whose value is unknown, must also be
    spelt near the path given.
    """
    first = wanted.split(".")[0]
    nested = "." in wanted
    chosen, rank = None, (-1, False, -1.0)
    for key in sorted(keys):
        if key == first:
            continue  # present but null in every record: no other key is meant
        spelling = fuzz.WRatio(first, key)
        level = fit(role, key, shapes.get(key), nested=nested)
        if level < LOOKS_RIGHT and spelling < _SPELLING_CUTOFF:
            continue
        if (level, key not in claimed, spelling) > rank:
            chosen, rank = key, (level, key not in claimed, spelling)
    return chosen
