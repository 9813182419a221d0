"""RepoQA's Search-Needle-Function: each repository's files and needles, from its release file.

The release file (`repoqa-<date>.json`, or `.json.gz`) maps a language to its
repositories; each repository carries `repo`, `commit_sha`, `content` (path ->
file text) and `needles` (`name`, `path`, `start_line`, `end_line` as a
0-based, end-exclusive slice of the file's lines, `description`). Each
repository becomes one corpus whose tree is its `content`, materialized from
the dataset file itself; each needle one query: the description is the query,
the gold the needle's span. The span is named by its definition when the
grammar finds a definition of that name starting within two lines of the
needle (so chunk metrics use the same span policy as every corpus), and by the
needle's own lines otherwise; both counts are in the provenance.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..corpus.languages import language_for
from ..errors import UsageError
from ..gold.grammars import GoldError, definitions
from ..gold.queries import GoldRef, Query
from .base import ImportedCorpus, Importer, ImportOptions, Suite
from .files import REPEATED, Ids, Rows, digest, lines_within, safe_path

LANGUAGES = ("python", "cpp", "java", "typescript", "rust")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
NEAR = 2  # lines a definition's start may differ from the needle's


def _read(path: Path, rows: Rows) -> dict[str, Any]:
    if not path.is_file():
        raise UsageError(f"{path}: no such file", hint="pass RepoQA's release file "
                         "(repoqa-<date>.json or .json.gz) with --from")
    data = rows.json(path)
    if not isinstance(data, dict):
        raise UsageError(f"{path}: expected an object mapping a language to its repositories")
    return data


def _gold(content: dict[str, str], needle: dict[str, Any],
          counts: Counter[str]) -> GoldRef | None:
    path = str(needle.get("path", ""))
    start, end = needle.get("start_line"), needle.get("end_line")
    if path not in content or not lines_within(content[path], start, end):
        return None
    assert isinstance(start, int) and isinstance(end, int)  # lines_within checked them
    first, last = start + 1, end  # 1-based, inclusive
    language = language_for(path)
    name = str(needle.get("name", ""))
    if language is not None and name:
        try:
            defs = definitions(content[path].encode(), language)
        except GoldError:
            defs = []
        near = [d for d in defs if d.name == name and abs(d.start - first) <= NEAR]
        if len(near) == 1:
            counts["gold named by its definition"] += 1
            d = near[0]
            return GoldRef(path=path, symbol=d.qualname, kind=d.kind, line=d.start)
    counts["gold given by the needle's lines"] += 1
    return GoldRef(path=path, start=first, end=last)


def load(opts: ImportOptions) -> Suite:
    reader = Rows()
    data = _read(opts.source, reader)
    wanted = [lang for lang in data if lang in LANGUAGES] if opts.languages is None else \
        [lang for lang in opts.languages]
    unknown = [lang for lang in wanted if lang not in data]
    if unknown:
        raise UsageError(f"{opts.source}: no language {', '.join(unknown)}; the file has "
                         f"{', '.join(sorted(data))}")
    dropped = reader.dropped
    counts: Counter[str] = Counter()
    corpora: list[ImportedCorpus] = []
    ids = Ids()
    for lang in wanted:
        repos = data[lang] if isinstance(data[lang], list) else []
        for r, repo in enumerate(repos, 1):
            where = f"{opts.source}: {lang} repository {r}"
            if not isinstance(repo, dict) or not isinstance(repo.get("content") or {}, dict):
                reader.drop("repository that is not an object with a content table", where)
                continue
            content = {str(k): str(v) for k, v in (repo.get("content") or {}).items()
                       if reader.clean([k, v], f"{where}, file {str(k)[:80]!r}")}
            unsafe = [p for p in content if not safe_path(p)]
            dropped["file with an unsafe path"] += len(unsafe)
            content = {p: t for p, t in content.items() if p not in unsafe}
            raw = str(repo.get("repo", "repo"))
            label = _UNSAFE.sub("-", raw).strip("-").lower()
            name = ids.claim(f"{lang}\0{raw}", f"repoqa-{lang}-{label}")
            if name is None:
                reader.drop(REPEATED, where)
                continue
            queries: list[Query] = []
            needles = repo.get("needles") or []
            for i, needle in enumerate(needles if isinstance(needles, list) else []):
                if not isinstance(needle, dict) or \
                        not reader.clean(needle, f"{where}, needle {i + 1}"):
                    continue
                text = " ".join(str(needle.get("description", "")).split())
                if not text:
                    dropped["needle with no description"] += 1
                    continue
                gold = _gold(content, needle, counts)
                if gold is None:
                    dropped["needle whose path or lines are not in the repository"] += 1
                    continue
                nid = _UNSAFE.sub("_", str(needle.get("name", i)))
                queries.append(Query(id=f"{name}-{i + 1:03d}-{nid}"[:120], query=text,
                                     gold=[gold], tags=["repoqa", lang]))
            if not queries:
                dropped["repository with no usable needle"] += 1
                continue
            corpora.append(ImportedCorpus(
                name=name, files={p: t.encode() for p, t in content.items()},
                queries=queries[:opts.limit] if opts.limit else queries, languages=[lang],
                description=f"RepoQA {lang} repository {repo.get('repo')} at "
                f"{repo.get('commit_sha', '?')}, from the dataset file"))
    if not corpora:
        raise UsageError(f"{opts.source}: no repository with needles ({reader.summary()})")
    provenance: dict[str, Any] = {
        "dataset": "repoqa", "task": "Search-Needle-Function",
        "file": opts.source.name, "sha256": digest(opts.source),
        "bytes": opts.source.stat().st_size, "languages": wanted,
        "repositories": len(corpora), "needles_kept": sum(len(c.queries) for c in corpora),
        "gold": dict(sorted(counts.items())), "dropped": dict(sorted(dropped.items())),
        "license": opts.license or "RepoQA's release (Apache-2.0 tooling); each repository "
        "keeps its own license",
    }
    return Suite("repoqa", corpora, provenance,
                 kept=provenance["needles_kept"], dropped=dropped, first_at=reader.first_at)


# Not a hub dataset: the release file is an asset of a GitHub release, so --from is required.
RELEASE = ("https://github.com/evalplus/repoqa_release/releases/download/2024-06-23/"
           "repoqa-2024-06-23.json.gz")

IMPORTER = Importer("repoqa", "RepoQA Search-Needle-Function release files (all languages)",
                    load, download=f"RepoQA's release file, a GitHub release asset (not a "
                    f"Hugging Face dataset): download {RELEASE} (or another release's "
                    "repoqa-<date>.json.gz) and pass it with --from",
                    flags=frozenset({"--language", "--max-tasks"}))
