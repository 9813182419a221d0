"""Result files of earlier schema versions, brought to the current one before validation.

One step per version: a raw JSON object of version N in, the same object of
version N + 1 out, its docstring saying what version N + 1 changed. `upgrade`
runs the steps from the file's version up, so every model `ResultFile.load`
builds has the current shape and no view needs to know what older files lacked.
A field whose default means "not recorded" (an empty list, None, 0) needs no
step: validation fills it in. A step is for what a default cannot say.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

Raw = dict[str, Any]

#: the version `bench compare` writes: 2 since result files gained gold, splits, tiers and
#: the summary
SCHEMA_VERSION = 2


class TooNew(Exception):
    """The file's schema version is newer than this bench knows."""

    def __init__(self, version: int) -> None:
        super().__init__(version)
        self.version = version


def _to_2(data: Raw) -> Raw:
    """Version 2 only added fields, each with a default that means "not recorded":
    every outcome's resolved gold items (`queries[].gold`) and its split and tags, each
    row's split, the per-corpus split counts (`corpora[].splits`), the comparisons'
    failed-query counts, `differing`, `exact`, `mdd`, `mdd_alpha` and `group`, the
    result's `tiers` and `summary`, and the details behind the rows' flags
    (`parse_problems`, `tree_changes`, `unsolicited`, `leftovers`, `line_zero`,
    `replaced_bytes`). Nothing was renamed or removed."""
    return {**data, "schema_version": 2}


#: version N -> the step that makes it version N + 1, for every N below SCHEMA_VERSION
STEPS: dict[int, Callable[[Raw], Raw]] = {1: _to_2}


def _fill_summaries(data: Raw) -> Raw:
    """`summaries` (one per track) came within version 2, after `summary`: a file written
    before it has the one summary there was, of the questions track. The current shape
    lists every summary in `summaries`, the main one included."""
    if "summaries" in data or data.get("summary") is None:
        return data
    return {**data, "summaries": [data["summary"]]}


#: how bench writes a file's first field and its last (indent 1): see `current`
_FIRST = re.compile(rb'\{\s*"schema_version": (\d+),')
_LAST = b'\n "summaries": '


def current(data: bytes) -> bool:
    """True when these bytes are a file bench wrote in the current shape, so validation
    can read them as they are: the current version first and `summaries` (the last field
    added) at the top level. Anything else is parsed and upgraded, which is always right
    and for a large file slower (JSON to dicts, then dicts to models)."""
    first = _FIRST.match(data, 0, 64)
    return first is not None and int(first[1]) == SCHEMA_VERSION and data.rfind(_LAST) > 0


def parsed(data: bytes) -> Raw | None:
    """The JSON object these bytes hold, or None when they hold something else."""
    try:
        raw = json.loads(data)
    except ValueError:
        return None
    return raw if isinstance(raw, dict) else None


def version_of(data: Raw) -> int | None:
    """The file's schema version; None when it states none or not as a whole number (read
    as the current version, which is the model's default)."""
    version = data.get("schema_version")
    return version if isinstance(version, int) and not isinstance(version, bool) else None


def upgrade(data: Raw) -> Raw:
    """`data` in the current schema version; TooNew when it is newer than that."""
    version = version_of(data)
    if version is not None and version > SCHEMA_VERSION:
        raise TooNew(version)
    if version is not None:
        # No bench wrote a version below the first step's: one made by hand starts there.
        for step in range(max(version, min(STEPS)), SCHEMA_VERSION):
            data = STEPS[step](data)
    return _fill_summaries(data)
