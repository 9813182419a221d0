"""Reading dataset files: JSON lines with their line numbers, digests for provenance."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import UsageError


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-empty line as an object; a broken line is an error naming file and line."""
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{path}:{lineno}: not JSON: {exc.msg}") from None
            if not isinstance(value, dict):
                raise UsageError(f"{path}:{lineno}: expected a JSON object")
            yield lineno, value


def require(row: dict[str, Any], keys: tuple[str, ...], where: str, dataset: str, *,
            empty_ok: bool = False) -> None:
    """A row without one of the dataset's own fields (or with it empty, unless `empty_ok`)
    is an error naming the row and every missing field."""
    missing = [k for k in keys if (k not in row if empty_ok else not row.get(k))]
    if missing:
        raise UsageError(f"{where}: missing {', '.join(missing)} ({dataset}'s own field names)")
