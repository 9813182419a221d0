"""A suite on disk: each corpus's tree as a deterministic tarball pinned by its sha256.

    <out>/corpora.toml        [corpus.NAME] source = "path", sha256, queries, provenance
    <out>/<name>.tar.gz       the generated tree (sorted, mtime 0, no owners)
    <out>/<name>.jsonl        the query set

`bench compare --suite <out>` (or `--corpora-file <out>/corpora.toml`) runs it
like any corpora file; every result records the provenance table. The folder is
written beside <out> under a temporary name and renamed into place once it reads
back, so <out> holds a whole suite or nothing.
"""

from __future__ import annotations

import errno
import gzip
import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from ..corpus.config import load_corpora
from ..errors import BenchError, CorpusError, UsageError
from .base import ImportedCorpus, Suite
from .files import safe_name

_BARE = re.compile(r"[A-Za-z0-9_-]+")  # a TOML bare key


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


def _check(suite: Suite) -> None:
    """Each corpus name is one plain file name, and no two are the same: a name that could
    leave the folder, or overwrite another corpus's files, is a bug to refuse, not write."""
    seen: set[str] = set()
    for corpus in suite.corpora:
        safe_name(corpus.name, "corpus name")
        if corpus.name in seen:
            raise UsageError(f"two corpora of the suite are both named {corpus.name!r}",
                             hint="pass --name only for a dataset that makes one corpus")
        seen.add(corpus.name)


def _files(suite: Suite, out: Path) -> list[Path]:
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
        # A name with a dot is quoted: bare, TOML would read it as nested tables.
        key = corpus.name if _BARE.fullmatch(corpus.name) else json.dumps(corpus.name)
        entries.append(f"[corpus.{key}]\n" + "".join(
            f"{k} = {toml_value(v)}\n" for k, v in fields.items()))
        written.append(queries)
    toml = out / "corpora.toml"
    toml.write_text("\n".join(entries))
    return [toml, *written]


def write(suite: Suite, out: Path) -> list[Path]:
    """The suite in a temporary folder beside `out`, read back, then moved into place whole:
    a failed import (a full disk, a bad entry) leaves no folder for a rerun to refuse."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} is not empty: an import writes a new folder",
                         hint="pass another --out, or remove that folder")
    _check(suite)
    tmp: Path | None = None
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
        written = _files(suite, tmp)
        try:
            load_corpora(written[0])  # what was written must read back as a corpora file
        except BenchError as exc:  # named as where it was going, not the temporary folder
            raise type(exc)(exc.message.replace(str(tmp), str(out)) + "; nothing was "
                            "written", hint=exc.hint) from None
        if out.exists():
            out.rmdir()  # empty (checked above): rename() needs the name free
        os.rename(tmp, out)
        tmp = None
    except OSError as exc:
        cause = exc.strerror or str(exc)
        where = f" ({exc.filename})" if exc.filename else ""
        raise CorpusError(f"{out}: could not write the suite: {cause}{where}; nothing was "
                          "written there", hint="free space or pick another --out "
                          "(errno " + errno.errorcode.get(exc.errno or 0, "?") + "), then "
                          "run the import again") from None
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return [out / p.name for p in written]
