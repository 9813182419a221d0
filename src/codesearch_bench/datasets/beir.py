"""BEIR format: `corpus.jsonl`, `queries.jsonl` and `qrels/<split>.tsv` (CoIR, CodeRAG-Bench...).

The format as BEIR defines it: each corpus line is `{"_id", "title", "text"}`,
each query line `{"_id", "text"}`, and qrels a tab-separated file with a
header (`query-id`, `corpus-id`, `score`). Every document becomes one file of
a generated tree, `docs/<hh>/<safe id>-<hash>.<ext>` (the id kept readable, a
hash of it making the name unique and stable; `<hh>` spreads the files over
256 folders), holding the title (when there is one), a blank line and the
text. Every qrels pair with a score above 0 is a file-level gold item with
its grade kept (`grade`); pairs whose document is not in the corpus, and
queries left with no gold, are dropped and counted.

With no --from, `--hub ID@REVISION` names a dataset on the Hugging Face hub in
the layout CoIR and MTEB publish: configurations `corpus` and `queries` (each
one split of that name) and the qrels (`query-id`, `corpus-id`, `score`) in the
default configuration, split --split; they are written as the folder above.
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..gold.queries import GoldRef, Query
from . import files as reader
from .base import Fetch, Hub, HubSource, ImportedCorpus, Importer, ImportOptions, Suite
from .files import NOT_FINITE, REPEATED, Ids, NotFinite, Rows, digest, json_line, number

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def doc_path(doc_id: str, extension: str) -> str:
    """A stable, safe file name for a document id (the id readable, a hash making it unique)."""
    tag = hashlib.sha256(doc_id.encode("utf-8", "surrogatepass")).hexdigest()
    readable = _UNSAFE.sub("_", doc_id).strip("._")[:60] or "doc"
    return f"docs/{tag[:2]}/{readable}-{tag[:10]}.{extension}"


def _qrels(path: Path, rows: Rows) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    for lineno, row in rows.tsv(path):
        if lineno == 1 and row[0].strip().lower() == "query-id":
            continue
        where = f"{path}:{lineno}"
        if len(row) < 3:
            rows.drop("qrels line without query-id, corpus-id and score (tab-separated)", where)
            continue
        try:
            score = number(row[2])
        except NotFinite:
            rows.drop(NOT_FINITE, where)
            continue
        except ValueError:
            rows.drop("qrels line whose score is not a number", where)
            continue
        out.append((row[0], row[1], int(score)))
    return out


def load(opts: ImportOptions) -> Suite:
    root = opts.source
    files = {"corpus": root / "corpus.jsonl", "queries": root / "queries.jsonl",
             "qrels": root / "qrels" / f"{opts.split}.tsv"}
    for what, path in files.items():
        if not path.is_file():
            raise UsageError(f"{path}: no such file; a BEIR dataset folder holds corpus.jsonl, "
                             f"queries.jsonl and qrels/<split>.tsv ({what} is missing)",
                             hint="pass the unpacked dataset folder with --from, and --split "
                             "for another qrels file")
    name = reader.safe_name(opts.name) if opts.name else \
        (reader.slug(root.resolve().name).lower()[:64] or "beir")
    rows = Rows()
    dropped = rows.dropped
    tree: dict[str, bytes] = {}
    path_of: dict[str, str] = {}
    for lineno, doc in rows.jsonl(files["corpus"]):
        doc_id = str(doc.get("_id", ""))
        if not doc_id:
            rows.drop("document with no `_id`", f"{files['corpus']}:{lineno}")
            continue
        if doc_id in path_of:
            rows.drop(REPEATED, f"{files['corpus']}:{lineno}")
            continue
        title, text = str(doc.get("title") or ""), str(doc.get("text") or "")
        rel = doc_path(doc_id, opts.extension)
        path_of[doc_id] = rel
        tree[rel] = ((f"{title}\n\n" if title else "") + text + "\n").encode()
    texts: dict[str, str] = {}
    for lineno, q in rows.jsonl(files["queries"]):
        qid = str(q.get("_id", ""))
        if qid in texts:
            rows.drop(REPEATED, f"{files['queries']}:{lineno}")
            continue
        texts[qid] = str(q.get("text") or "")
    gold: dict[str, list[GoldRef]] = {}
    grades: Counter[int] = Counter()
    for qid, doc_id, score in _qrels(files["qrels"], rows):
        if score <= 0:
            dropped["qrels pair with score 0 (not relevant)"] += 1
            continue
        if doc_id not in path_of:
            dropped["qrels pair whose document is not in the corpus"] += 1
            continue
        grades[score] += 1
        gold.setdefault(qid, []).append(GoldRef(path=path_of[doc_id], grade=score))
    ids = Ids(limit=120, names=False)
    queries: list[Query] = []
    for qid, refs in gold.items():
        text = texts.get(qid, "").strip()
        if not text:
            dropped["query with no text in queries.jsonl"] += 1
            continue
        qname = ids.claim(qid, f"{name}-{_UNSAFE.sub('_', qid)}")
        assert qname is not None  # gold's keys are distinct
        queries.append(Query(id=qname, query=text, gold=list(dict.fromkeys(refs)), split=None))
    dropped["query with no relevant document in qrels"] += len(set(texts) - set(gold))
    if opts.limit:
        queries = queries[:opts.limit]
    if not queries:
        raise UsageError(f"{root}: no query has a relevant document in the corpus "
                         f"({rows.summary()})")
    provenance: dict[str, Any] = {
        "dataset": "beir", "format": "BEIR (corpus.jsonl, queries.jsonl, qrels/*.tsv)",
        "folder": root.resolve().name, "split": opts.split,
        "files": {k: {"name": p.relative_to(root).as_posix(), "sha256": digest(p),
                      "bytes": p.stat().st_size} for k, p in files.items()},
        "documents": len(tree), "queries_kept": len(queries),
        "dropped": dict(sorted(dropped.items())),
        "grades": {str(k): v for k, v in sorted(grades.items())},
        "license": opts.license or "not stated by the files: see the dataset's card",
    }
    corpus = ImportedCorpus(name=name, files=tree, queries=queries,
                            languages=[] if opts.extension == "txt" else [opts.extension],
                            description=f"BEIR-format dataset {root.resolve().name}, "
                            f"{len(tree)} documents as files, qrels {opts.split}")
    return Suite("beir", [corpus], provenance, kept=len(queries), dropped=dropped,
                 first_at=rows.first_at)


def export(fetch: Fetch, source: HubSource, folder: Path, opts: ImportOptions) -> Path:
    """A hub dataset in the CoIR/MTEB layout -> the BEIR folder `load` reads."""
    root = folder / (_UNSAFE.sub("-", source.id.rsplit("/", 1)[-1]).strip("-").lower() or "beir")
    (root / "qrels").mkdir(parents=True)
    for config in ("corpus", "queries"):
        with (root / f"{config}.jsonl").open("w", encoding="utf-8") as fh:
            for row in fetch(config, config):
                fh.write(json_line(row))
    with (root / "qrels" / f"{opts.split}.tsv").open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, delimiter="\t", lineterminator="\n")
        out.writerow(["query-id", "corpus-id", "score"])
        for n, row in enumerate(fetch(source.config, opts.split), 1):
            if any(key not in row for key in ("query-id", "corpus-id", "score")):
                raise UsageError(f"{source.id}: qrels row {n} has {sorted(row)}; a BEIR qrels "
                                 "row has query-id, corpus-id and score",
                                 hint="--hub takes a dataset in the CoIR/MTEB layout "
                                 "(configurations corpus, queries, and the qrels as default)")
            out.writerow([row["query-id"], row["corpus-id"], row["score"]])
    return root


IMPORTER = Importer(
    "beir", "BEIR-format retrieval sets: corpus.jsonl, queries.jsonl, qrels", load,
    hub=Hub(variants={}, default=None, export=export),
    download="the unpacked dataset folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv); "
    "or, with no --from, name a hub dataset in the CoIR/MTEB layout with --hub ID@REVISION, "
    "e.g. --hub CoIR-Retrieval/cosqa@bc5efb7e9d437246ce393ed19d772e08e4a79535",
    flags=frozenset({"--name", "--split", "--ext"}))
