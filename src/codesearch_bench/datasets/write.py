"""A suite on disk: each corpus's tree as a deterministic tarball pinned by its sha256.

    <out>/corpora.toml        [corpus.NAME] source = "path", sha256, queries, provenance
    <out>/<name>.tar.gz       the generated tree (sorted, mtime 0, no owners)
    <out>/<name>.jsonl        the query set

`bench compare --suite <out>` (or `--corpora-file <out>/corpora.toml`) runs it
like any corpora file; every result records the provenance table.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .base import ImportedCorpus, Suite


def _tarball(corpus: ImportedCorpus) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for rel in sorted(corpus.files):
            data = corpus.files[rel]
            info = tarfile.TarInfo(f"{corpus.name}/{rel}")
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(raw.getvalue())
    return out.getvalue()


def toml_value(value: Any) -> str:
    """A TOML value for str, int, float, bool, lists and tables (inline)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}"
                               for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")


def write(suite: Suite, out: Path) -> list[Path]:
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"{out} is not empty: an import writes a new folder",
                         hint="pass another --out, or remove that folder")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    entries: list[str] = [f"# Written by `bench import {suite.dataset}`: pins by content, "
                          "provenance in each entry.\n"]
    for corpus in suite.corpora:
        queries = out / f"{corpus.name}.jsonl"
        queries.write_text("".join(q.model_dump_json(exclude_none=True) + "\n"
                                   for q in corpus.queries))
        pin: dict[str, Any]
        if corpus.git is not None:
            pin = {"source": "git", "url": corpus.git[0], "commit": corpus.git[1]}
        else:
            archive = out / f"{corpus.name}.tar.gz"
            data = _tarball(corpus)
            archive.write_bytes(data)
            written.append(archive)
            pin = {"source": "path", "path": archive.name,
                   "sha256": hashlib.sha256(data).hexdigest()}
        fields = {"description": corpus.description, **pin,
                  "queries": queries.name, "languages": corpus.languages, "default": True,
                  "max_line_length": 0, "exclude_generated": False,
                  "provenance": suite.provenance}
        entries.append(f"[corpus.{corpus.name}]\n" + "".join(
            f"{k} = {toml_value(v)}\n" for k, v in fields.items()))
        written.append(queries)
    toml = out / "corpora.toml"
    tmp = toml.with_name(".corpora.toml.tmp")
    tmp.write_text("\n".join(entries))
    os.replace(tmp, toml)
    return [toml, *written]
