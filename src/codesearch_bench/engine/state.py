"""An engine's state directory, and how bench knows the index in it is finished.

`<work>/state/<engine>/<corpus>` belongs to compare, `<work>/probe/<engine>/
<corpus>` to probe, so the step users are told to run first cannot warm the
index that compare then measures. A finished index leaves a marker naming the
spec hash and the corpus pin it was built from; any other marker (or none)
means the index is rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Literal

MARKER = ".bench-index.json"
Purpose = Literal["state", "probe"]


def state_dir(work: Path, purpose: Purpose, engine: str, corpus_key: str) -> Path:
    return work / purpose / engine / corpus_key


def root_key(root: Path) -> str:
    """A directory name for an ad-hoc --root: readable and unique per path."""
    resolved = root.resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    return f"{resolved.name or 'root'}-{digest}"


def clear(state: Path) -> None:
    if state.exists():
        shutil.rmtree(state)


def _marker(state: Path) -> dict[str, object]:
    try:
        data = json.loads((state / MARKER).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def index_finished(state: Path, spec_sha256: str, corpus_pin: str) -> bool:
    data = _marker(state)
    return data.get("spec_sha256") == spec_sha256 and data.get("corpus_pin") == corpus_pin


def index_counts(state: Path) -> tuple[int | None, int | None]:
    """The files/chunks an engine reported when it built this index."""
    data = _marker(state)
    files, chunks = data.get("files"), data.get("chunks")
    return (files if isinstance(files, int) else None,
            chunks if isinstance(chunks, int) else None)


def mark_finished(state: Path, spec_sha256: str, corpus_pin: str,
                  files: int | None = None, chunks: int | None = None) -> None:
    state.mkdir(parents=True, exist_ok=True)
    (state / MARKER).write_text(json.dumps({"spec_sha256": spec_sha256, "corpus_pin": corpus_pin,
                                            "files": files, "chunks": chunks}))


def dir_bytes(path: Path) -> int:
    """Bytes of every file under path, links not followed (the index's size on disk)."""
    total = 0
    for base, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(base, name)).st_size
    return total
