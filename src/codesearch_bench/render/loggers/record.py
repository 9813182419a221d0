"""What every logger logs about one row: who was measured on what, and the numbers.

One flat description serves every logger, so a jsonl line and an MLflow run of
the same row carry the same facts under the same names.
"""

from __future__ import annotations

import math
from pathlib import Path

from ...errors import UsageError
from ...results.schema import ResultFile, Row


def split_of(row: Row) -> str:
    """The row's split (`all` for rows measured on every query)."""
    return row.split


def params(result: ResultFile, row: Row) -> dict[str, str | int | bool | None]:
    """The row's identity: enough to know what was measured and to find it again."""
    engine = result.engines.get(row.engine)
    corpus = result.corpora.get(row.corpus)
    return {
        "engine": row.engine,
        "engine_version": engine.version if engine else None,
        "spec_sha256": engine.spec_sha256 if engine else None,
        "corpus": row.corpus,
        "corpus_pin": corpus.pin if corpus else None,
        "query_set_sha256": corpus.query_set_sha256 if corpus else None,
        "tree": row.tree,
        "per_file": row.per_file,
        "split": split_of(row),
        "headline": row.headline,
        "protocol_version": result.protocol_version,
        "bench_version": result.bench_version,
        "created": result.created,
    }


def aggregates(row: Row) -> dict[str, float]:
    """Every aggregate as one number: metric means with `.lo`/`.hi`, counts, cost."""
    out: dict[str, float] = {}
    for name, est in row.metrics.items():
        for suffix, value in (("", est.mean), (".lo", est.lo), (".hi", est.hi)):
            if value is not None and math.isfinite(value):
                out[name + suffix] = float(value)
    cost: dict[str, float | int | None] = {
        "queries": len(row.queries), "errors": row.errors,
        "index.wall_s": row.index.wall_s, "index.peak_rss_bytes": row.index.peak_rss_bytes,
        "search.p50_s": row.search.p50_s, "search.p95_s": row.search.p95_s,
        "search.peak_rss_bytes": row.search.peak_rss_bytes,
        "search.restarts": row.search.restarts,
    }
    out.update({k: float(v) for k, v in cost.items() if v is not None})
    return out


def check_artifacts(paths: list[Path]) -> None:
    for path in paths:
        if not path.is_file():
            raise UsageError(f"{path}: no such file to log as an artifact",
                             hint="write the report before logging, or leave it out")
