"""The needle track of a corpus: a doc-blanked variant of its tree and the needles on it.

Built once per corpus identity, generator version, parameters and grammar
versions (the track key); `track.json` records them with the counts kept and
dropped by reason, the variant's manifest records the transform, and the
query set's hash covers the key, so changing any of them makes a new set.
The variant keeps every line where it was: a doc is replaced by spaces (a
Python docstring keeps its quotes, so the code still parses the same), and
the transform checks that every file's definitions keep their spans.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...corpus import fingerprint as fp
from ...corpus.config import Corpus
from ...corpus.languages import language_for
from ...corpus.layout import CorpusDir
from ...corpus.setup import recorded_content
from ...corpus.tree import Manifest, tier, tree_files
from ...errors import CorpusError
from ..grammars import GoldError, definitions, grammar_versions
from ..queries import QuerySet, load_queries
from ..sets import POLICY_VERSION
from . import docs
from .generate import GROUP_COMMENT, MOVED, Candidate, Params, candidate, choose

GENERATOR_VERSION = 3
TRACK = "needles"
#: The needles whose query holds words of the gold's own name: a breakout, not the headline.
NAMED = "needles-named"
TRANSFORM = "doc-blanking"


@dataclass(frozen=True)
class Track:
    dirs: CorpusDir
    manifest: Manifest
    query_set: QuerySet
    record: dict[str, Any]
    named: QuerySet | None = None  # the needles-named breakout, on the same variant tree


def track_key(corpus: Corpus, params: Params, content: str | None = None) -> str:
    """What the track is made from; `content`: a `path` corpus's folder as setup copied it,
    so an edit to the folder makes a new track (a pinned corpus's tree cannot change)."""
    made_of: dict[str, Any] = {"corpus": corpus.identity, "generator": GENERATOR_VERSION,
                               "params": params.as_dict(), "grammars": grammar_versions(),
                               "policy": POLICY_VERSION}
    if content is not None:
        made_of["content"] = content
    return hashlib.sha256(json.dumps(made_of, sort_keys=True).encode()).hexdigest()


def is_built(corpus: Corpus, base: CorpusDir, params: Params | None = None) -> bool:
    where = base.track(TRACK)
    try:
        record = json.loads(where.record.read_text())
    except (OSError, ValueError):
        return False
    key = track_key(corpus, _effective(corpus, params), recorded_content(base))
    return bool(record.get("key") == key and where.tree.is_dir() and where.queries.is_file())


def prepare(corpus: Corpus, base: CorpusDir, params: Params | None = None) -> Track:
    """The corpus's needle track, built from its set-up tree unless already built."""
    params = _effective(corpus, params)
    where = base.track(TRACK)
    key = track_key(corpus, params, recorded_content(base))
    try:
        record = json.loads(where.record.read_text())
        if record.get("key") == key and where.tree.is_dir() and where.queries.is_file():
            return _loaded(where, record)
    except (OSError, ValueError):
        pass
    return build(corpus, base, params, key)


def _effective(corpus: Corpus, params: Params | None) -> Params:
    return (params or Params()).for_corpus(corpus.spec.needles_per_file)


def named_path(where: CorpusDir) -> Path:
    return where.base / "named.jsonl"


def _loaded(where: CorpusDir, record: dict[str, Any]) -> Track:
    loaded = load_queries(where.queries)
    qs = QuerySet(where.queries, loaded.queries, _set_hash(record["key"], loaded.sha256))
    named = None
    if named_path(where).is_file():
        aside = load_queries(named_path(where))
        named = QuerySet(aside.path, aside.queries, _set_hash(f"{record['key']}:{NAMED}",
                                                               aside.sha256))
    return Track(where, Manifest.read(where.manifest), qs, record, named)


def _set_hash(key: str, file_sha: str) -> str:
    return hashlib.sha256(f"{key}:{file_sha}".encode()).hexdigest()


def build(corpus: Corpus, base: CorpusDir, params: Params, key: str) -> Track:
    where = base.track(TRACK)
    where.base.mkdir(parents=True, exist_ok=True)
    where.record.unlink(missing_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".tree.", dir=where.base))
    found: list[Candidate] = []
    dropped: Counter[str] = Counter()
    defined: Counter[str] = Counter()
    blanked_files = moved = total = 0
    langs: Counter[str] = Counter()
    try:
        files = tree_files(base.tree)
        for rel in files:
            source = (base.tree / rel).read_bytes()
            language = language_for(rel, h_as_cpp=corpus.spec.h_as_cpp)
            langs[language or "other"] += 1
            out = source
            if language is not None:
                documented = docs.find(source, language)
                defined.update(d.name for d in documented.definitions)
                out = docs.blanked(source, documented.blank)
                if out != source:
                    blanked_files += 1
                    if not _same_spans(documented, out, language):
                        moved += 1
                        dropped[MOVED] += len(documented.docs)
                        documented = docs.Documented(documented.definitions, (), ())
                lines = source.split(b"\n")
                for doc in documented.docs:
                    if not docs.documents_one(doc.definition, lines):
                        dropped[GROUP_COMMENT] += 1
                        continue
                    picked = candidate(rel, doc.definition, doc.raw, doc.style, dropped)
                    if picked is not None:
                        found.append(picked)
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(out)
            total += len(out)
        shutil.rmtree(where.tree, ignore_errors=True)
        os.replace(tmp, where.tree)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise CorpusError(f"corpus {corpus.name!r}: cannot build the needle track: {exc}",
                          hint=f"delete {where.base} and run again") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    chosen = choose(corpus.name, found, where.tree, params, dropped=dropped, defined=defined,
                    files=files, h_as_cpp=corpus.spec.h_as_cpp, tier=tier(len(files)))
    for path, queries in ((where.queries, chosen.queries), (named_path(where), chosen.named)):
        path.write_text("".join(q.model_dump_json(exclude_none=True) + "\n" for q in queries))
    transform = {"name": TRANSFORM, "version": GENERATOR_VERSION, "files_blanked": blanked_files,
                 "files_with_moved_spans": moved}
    manifest = Manifest(corpus=f"{corpus.name}:{TRACK}", pin=f"{corpus.pin} + {TRANSFORM} "
                        f"v{GENERATOR_VERSION}", files=len(files), bytes=total,
                        languages=dict(sorted(langs.items())), tier=tier(len(files)),
                        subtrees=list(corpus.spec.subtrees), fingerprint=fp.take(where.tree),
                        transform=transform)
    manifest.write(where.manifest)
    record = {"key": key, "track": TRACK, "generator_version": GENERATOR_VERSION,
              "params": params.as_dict(), "transform": transform,
              "candidates": chosen.candidates, "kept": len(chosen.queries),
              "named": len(chosen.named), "dropped": chosen.dropped_in_order(),
              "name_overlap": dict(sorted(chosen.overlap.items())),
              "found_elsewhere_in": dict(sorted(chosen.found_in.items())),
              "prefixes": chosen.prefixes}
    tmp_record = where.record.with_name(".track.json.tmp")
    tmp_record.write_text(json.dumps(record, indent=2) + "\n")
    os.replace(tmp_record, where.record)
    return _loaded(where, record)


def _same_spans(documented: docs.Documented, variant: bytes, language: str) -> bool:
    try:
        after = definitions(variant, language)
    except GoldError:
        return False
    before = [(d.qualname, d.kind, d.start, d.end) for d in documented.definitions]
    return before == [(d.qualname, d.kind, d.start, d.end) for d in after]


def invalidate(base: CorpusDir) -> None:
    """Forget a track whose tree an engine changed: the next prepare rebuilds it."""
    base.track(TRACK).record.unlink(missing_ok=True)
