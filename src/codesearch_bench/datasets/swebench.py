"""SWE-bench (full, Lite, Verified) as file localization: the issue -> the files the fix changed.

Rows are SWE-bench's own fields (`instance_id`, `repo`, `base_commit`,
`problem_statement`, `patch`), read from a JSON-lines or JSON export of the
dataset. Each task is one corpus, a git pin of `repo` at `base_commit`; its
one query is the problem statement and its gold the files the fix patch
changes, read from the diff's own headers: a file whose old side is
`/dev/null` (created by the fix) is not in the pinned tree and is left out,
and so is every test file (`is_test_path`). A task left with no gold file is
dropped and counted. With no --from, the pinned revision of the variant
(`--variant full|lite|verified`, default verified) is loaded from the hub.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..gold.queries import GoldRef, Query
from .base import Hub, HubSource, ImportedCorpus, Importer, ImportOptions, Suite
from .diffs import gold_files
from .files import BAD_ROW, REPEATED, REPO, Ids, Rows, digest, require
from .hub import export_rows

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def rows_of(path: Path, rows: Rows) -> list[dict[str, Any]]:
    """The rows of a JSON-lines or JSON export, each through the validated reader."""
    if not path.is_file():
        raise UsageError(f"{path}: no such file", hint="export the dataset split to JSON lines "
                         "(datasets: `ds.to_json(PATH)`) and pass it with --from")
    if path.suffix == ".json":
        data = rows.json(path)
        if not isinstance(data, list):
            raise UsageError(f"{path}: expected a list of task objects")
        return [r for n, r in enumerate(data, 1)
                if isinstance(r, dict) and rows.clean(r, f"{path}: row {n}")]
    return [row for _, row in rows.jsonl(path)]


def load(opts: ImportOptions) -> Suite:
    reader = Rows()
    rows = rows_of(opts.source, reader)
    dropped = reader.dropped
    corpora: list[ImportedCorpus] = []
    ids = Ids()
    for lineno, row in enumerate(rows, 1):
        where = f"{opts.source}: task {lineno}"
        require(row, ("instance_id", "repo", "base_commit", "problem_statement", "patch"),
                where, "SWE-bench")
        if not re.fullmatch(r"[0-9a-f]{40}", str(row["base_commit"])):
            dropped["base_commit is not a full commit id"] += 1
            continue
        if not REPO.fullmatch(str(row["repo"])) or not str(row["problem_statement"]).strip():
            reader.drop(BAD_ROW, where)
            continue
        gold = gold_files(str(row["patch"]), dropped)
        if not gold:
            dropped["task with no non-test file changed"] += 1
            continue
        iid = str(row["instance_id"])
        name = ids.claim(iid, ("swe-" + _UNSAFE.sub("-", iid).strip("-").lower()))
        if name is None:
            reader.drop(REPEATED, where)
            continue
        corpora.append(ImportedCorpus(
            name=name, files={}, languages=["python"],
            queries=[Query(id=f"{name}-loc", query=str(row["problem_statement"]).strip(),
                           gold=[GoldRef(path=p) for p in gold], tags=["swe-bench"])],
            description=f"SWE-bench task {row['instance_id']}: {row['repo']} at "
            f"{row['base_commit'][:12]}",
            git=(f"https://github.com/{row['repo']}", str(row["base_commit"]))))
        if opts.limit and len(corpora) >= opts.limit:
            break
    if not corpora:
        raise UsageError(f"{opts.source}: no task has a non-test file changed ({reader.summary()})")
    provenance: dict[str, Any] = {
        "dataset": "swe-bench", "task": "file localization", "file": opts.source.name,
        "sha256": digest(opts.source), "bytes": opts.source.stat().st_size,
        "tasks_read": len(rows), "tasks_kept": len(corpora),
        "dropped": dict(sorted(dropped.items())),
        "license": opts.license or "SWE-bench is MIT; each repository keeps its own license",
    }
    return Suite("swe-bench", corpora, provenance, kept=len(corpora), dropped=dropped,
                 first_at=reader.first_at)


# The dataset repositories' commits (the SWE-bench organization's, where princeton-nlp/*
# now redirects); docs/importing.md says how each was checked.
HUB = Hub(variants={
    "full": HubSource("SWE-bench/SWE-bench", "7074ef12ea2a6f70a228943c1336553333c22786"),
    "lite": HubSource("SWE-bench/SWE-bench_Lite", "b0dde1093fe417d83b7184254edf8199c1f0dff5"),
    "verified": HubSource("SWE-bench/SWE-bench_Verified",
                          "91aa3ed51b709be6457e12d00300a6a596d4c6a3"),
}, default="verified", export=export_rows)

IMPORTER = Importer("swebench", "SWE-bench / Lite / Verified rows -> file localization tasks",
                    load, hub=HUB, download="a JSON-lines export of the split, e.g. "
                    "`datasets.load_dataset('SWE-bench/SWE-bench_Verified', split='test')"
                    ".to_json('verified.jsonl')`", flags=frozenset({"--max-tasks"}))
