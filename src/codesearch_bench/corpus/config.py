"""corpora.toml: pinned corpora, one `[corpus.NAME]` table each.

Loading validates every entry against its source kind's model (sources/) and
turns each problem into one CorpusError naming the file, the corpus, the key
and the fix. A corpus's identity hashes everything that shapes its tree, so
any change to the entry means a rebuild.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rapidfuzz import process as fuzz_process

from ..errors import CorpusError
from .entry import Entry
from .sources import SOURCES

MAX_NAME = 64
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}")


# Entry keys that shape a derived track, not the tree: left out of the identity.
TRACK_KEYS = {"needles_per_file"}


@dataclass(frozen=True)
class Corpus:
    name: str
    spec: Entry
    config_file: Path

    @property
    def pin(self) -> str:
        return self.spec.pin()

    @property
    def identity(self) -> str:
        """Hash of everything that shapes the tree: a change means a rebuild.

        Unset optional keys are left out, so a key added to the format later does not
        rebuild every corpus that never sets it. Track parameters reach the track's own
        key instead (gold/needles/track.py), so changing one never rebuilds the tree."""
        fields = self.spec.model_dump(mode="json", exclude_none=True, exclude=TRACK_KEYS)
        blob = json.dumps(fields, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def queries_path(self) -> Path | None:
        if self.spec.queries is None:
            return None
        return (self.config_file.parent / self.spec.queries).resolve()


# -- loading corpora.toml ------------------------------------------------------
def load_corpora(path: Path) -> dict[str, Corpus]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such file",
                          hint="run from the repository root or pass --corpora-file") from None
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{path}: not valid TOML: {exc}") from None
    extra = set(data) - {"corpus"}
    if extra:
        raise CorpusError(f"{path}: unknown top-level key(s) {sorted(extra)}; "
                          "corpora are declared as [corpus.NAME] tables")
    table = data.get("corpus", {})
    if not isinstance(table, dict):
        raise CorpusError(f"{path}: `corpus` must be a table of [corpus.NAME] entries")
    out: dict[str, Corpus] = {}
    for name, entry in table.items():
        if not _NAME.fullmatch(name):
            raise CorpusError(f"{path}: corpus {name!r}: a name is 1-{MAX_NAME} letters, digits, "
                              "'.', '_' or '-', starting with a letter or digit (it names a "
                              "directory)")
        if not isinstance(entry, dict):
            raise CorpusError(f"{path}: corpus {name!r} must be a table")
        out[name] = Corpus(name, _validate(path, name, entry), path.resolve())
    return out


def _validate(path: Path, name: str, entry: dict[str, Any]) -> Entry:
    source = entry.get("source")
    kind = SOURCES.get(source) if isinstance(source, str) else None
    if kind is None:
        raise CorpusError(f"{path}: corpus `{name}`: key `source`: must be one of "
                          f"{', '.join(SOURCES)} (got {source!r})")
    model = kind.model
    try:
        return model.model_validate(entry)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            if err["type"] == "extra_forbidden":
                fields = list(model.model_fields)
                match = fuzz_process.extractOne(str(err["loc"][-1]), fields, score_cutoff=60)
                tip = f"; did you mean `{match[0]}`?" if match else f"; known: {', '.join(fields)}"
                lines.append(f"{path}: corpus `{name}`: key `{key}`: unknown key{tip}")
            elif err["type"] == "missing":
                lines.append(f"{path}: corpus `{name}`: key `{key}`: required for "
                             f"source = {source!r}")
            else:
                msg = err["msg"].removeprefix("Value error, ")
                lines.append(f"{path}: corpus `{name}`: key `{key}`: {msg}")
        raise CorpusError("\n".join(lines)) from None


def select(corpora: dict[str, Corpus], names: str | None) -> list[Corpus]:
    """`a,b`, `all`, `full` (all but the optional ones), or None for the default set."""
    if names is not None and not [n for n in names.split(",") if n.strip()]:
        raise CorpusError(f"--corpus {names!r} names no corpus",
                          hint=f"name one or more of {', '.join(corpora)}, or `all`")
    if names is None or names == "default":
        chosen = [c for c in corpora.values() if c.spec.default]
        return chosen or list(corpora.values())
    if names == "all":
        return list(corpora.values())
    if names == "full":
        return [c for c in corpora.values() if not c.spec.optional]
    out = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name not in corpora:
            match = fuzz_process.extractOne(name, list(corpora), score_cutoff=50)
            tip = f"; did you mean {match[0]!r}?" if match else ""
            raise CorpusError(f"no corpus named {name!r} in corpora.toml{tip}",
                              hint=f"known corpora: {', '.join(corpora)}")
        out.append(corpora[name])
    return out
