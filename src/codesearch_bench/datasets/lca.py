"""Long Code Arena bug localization: issue title and body -> the files the fix changed.

Rows carry the dataset's own fields (`repo_owner`, `repo_name`, `base_sha`,
`issue_title`, `issue_body`, `diff`), from a JSON-lines or JSON export of its
`py`, `java` or `kt` configuration. Each row is a git pin of the repository
at `base_sha`; the query is the title, a blank line and the body; the gold the
non-test files the fix's diff changes that exist before it (diffs.py), so
Kotlin and Java rows are file-level like Python's. With no --from, the pinned
revision's configuration (`--variant py|java|kt`, default py) is loaded from the hub.
"""

from __future__ import annotations

import re
from typing import Any

from ..errors import UsageError
from ..gold.queries import GoldRef, Query
from .base import Hub, HubSource, ImportedCorpus, Importer, ImportOptions, Suite
from .diffs import gold_files
from .files import BAD_ROW, REPEATED, REPO, Ids, Rows, digest, require
from .hub import export_rows
from .swebench import rows_of

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_LANGUAGE = {"py": "python", "java": "java", "kt": "kotlin"}


def load(opts: ImportOptions) -> Suite:
    reader = Rows()
    rows = rows_of(opts.source, reader)
    dropped = reader.dropped
    corpora: list[ImportedCorpus] = []
    ids = Ids()
    for n, row in enumerate(rows, 1):
        where = f"{opts.source}: row {n}"
        require(row, ("repo_owner", "repo_name", "base_sha", "issue_title", "diff"),
                where, "Long Code Arena")
        if not re.fullmatch(r"[0-9a-f]{40}", str(row["base_sha"])):
            dropped["base_sha is not a full commit id"] += 1
            continue
        gold = gold_files(str(row["diff"]), dropped)
        if not gold:
            dropped["row with no non-test file changed"] += 1
            continue
        repo = f"{row['repo_owner']}/{row['repo_name']}"
        if not REPO.fullmatch(repo) or not str(row["issue_title"]).strip():
            reader.drop(BAD_ROW, where)
            continue
        key = str(row.get("id", row.get("text_id", n)))
        name = ids.claim(f"{repo}\0{key}", ("lca-" + _UNSAFE.sub(
            "-", f"{row['repo_name']}-{key}").strip("-").lower()))
        if name is None:
            reader.drop(REPEATED, where)
            continue
        text = f"{str(row['issue_title']).strip()}\n\n{str(row.get('issue_body') or '').strip()}"
        exts = {p.rsplit(".", 1)[-1] for p in gold if "." in p}
        corpora.append(ImportedCorpus(
            name=name, files={},
            languages=sorted({_LANGUAGE[e] for e in exts if e in _LANGUAGE}),
            queries=[Query(id=f"{name}-loc", query=text.strip(), gold=[GoldRef(path=p)
                                                                       for p in gold],
                           tags=["lca-bug-localization"])],
            description=f"Long Code Arena bug localization: {repo} at "
            f"{str(row['base_sha'])[:12]}", git=(f"https://github.com/{repo}",
                                                  str(row["base_sha"]))))
        if opts.limit and len(corpora) >= opts.limit:
            break
    if not corpora:
        raise UsageError(f"{opts.source}: no row has a non-test file changed ({reader.summary()})")
    provenance: dict[str, Any] = {
        "dataset": "lca-bug-localization", "file": opts.source.name,
        "sha256": digest(opts.source), "bytes": opts.source.stat().st_size,
        "rows_read": len(rows), "rows_kept": len(corpora),
        "dropped": dict(sorted(dropped.items())),
        "license": opts.license or "see the dataset's card; each repository keeps its own",
    }
    return Suite("lca-bug-localization", corpora, provenance, kept=len(corpora),
                 dropped=dropped, first_at=reader.first_at)


HUB = Hub(variants={config: HubSource("JetBrains-Research/lca-bug-localization",
                                      "7200215ac657d138c4523bf1ec323971f53a3068", config)
                    for config in ("py", "java", "kt")}, default="py", export=export_rows)

IMPORTER = Importer("lca", "Long Code Arena bug localization rows -> localization tasks", load,
                    hub=HUB, download="a JSON-lines export of one configuration's split, e.g. "
                    "`datasets.load_dataset('JetBrains-Research/lca-bug-localization', 'py', "
                    "split='test').to_json('lca-py.jsonl')`", flags=frozenset({"--max-tasks"}))
