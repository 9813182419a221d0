"""A result shaped like a real run, for the terminal-width tests: every shipped engine's
name (read from engines/*.json, so a new long name is tested the day it ships), three
corpora with git, PyPI and Debian pins and deep tree paths, three per_file passes, flags,
a content-graded engine, a gap and a failure with a long message.

Rows are built by the harness from generated outcomes (tests/synthetic_result.py);
statistics by `analysis.statistics`, so the paired, tier and summary tables are real.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from synthetic_result import CUTOFFS, outcome, spec

from codesearch_bench.results.inputs import Gap
from codesearch_bench.results.schema import (
    CorpusOut,
    EngineOut,
    Estimate,
    Failure,
    IndexOut,
    ResultFile,
    Row,
    SearchOut,
)
from codesearch_bench.scoring import analysis
from codesearch_bench.scoring.rows import Pass, build_rows

REPO = Path(__file__).resolve().parent.parent

#: every shipped engine's name, longest first
SHIPPED = sorted((json.loads(p.read_text())["name"] for p in (REPO / "engines").glob("*.json")),
                 key=lambda name: (-len(name), name))

HOME = "/home/runner/work/codesearch-bench/codesearch-bench/.bench-work/corpora"
CORPORA = {
    "click": ("git https://github.com/pallets/click@"
              "8f9a3e1bd5c2a4471e8c06f3c1d2b9a7e5f40d13", f"{HOME}/click/tree", "medium"),
    "rich:needles": ("pypi rich==13.7.1 sha256:"
                     "0d4bbc6f9c1d0ba14dc4b0d8a45a9e5f3d3c81ab4e0c2b1ea2a6f2f5c7d84b19",
                     f"{HOME}/rich/needles/variant-tree", "medium"),
    "zstd": ("debian libzstd=1.5.4+dfsg2-5 sha256:"
             "f2bd6b1d9fc1a5b0c8e02ca3e35a7f3c0ac7b6c2d4f1e9a8b7c6d5e4f3a2b1c0",
             f"{HOME}/zstd/tree", "large"),
}
QUERIES = 24


def _rows(tmp_path: Path, name: str, corpus: str, rng: np.random.Generator,
          reach: int) -> list[Row]:
    loaded = spec(tmp_path, name, mode="persistent" if "persist" in name else "oneshot")
    passes = []
    for per_file in (1, 2, 3):
        ranks = [int(r) if r <= reach else None for r in rng.integers(1, 25, QUERIES)]
        outs = [outcome(f"{corpus}-{i:02d}", r, failed=i == 5 and reach < 8,
                        file_level=i % 6 == 0) for i, r in enumerate(ranks)]
        passes.append(Pass(per_file, outs, [0.004 * (1 + i % 7) for i in range(QUERIES)]))
    index = IndexOut(cached=False, command=["index"], wall_s=12.5, peak_rss_bytes=412 << 20,
                     files=1234, chunks=56789)
    persistent = loaded.spec.mode == "persistent"
    search = SearchOut(mode=loaded.spec.mode, command=["search"],
                       p50_s=0.0031 if persistent else 0.412, p95_s=2.25,
                       peak_rss_bytes=(1 << 30) + (87 << 20))
    rows = build_rows(loaded, corpus, Path(CORPORA[corpus][1]), CUTOFFS, index, search,
                      passes)
    track = "needles" if corpus.endswith(":needles") else "questions"
    tokens = Estimate(mean=12345.0, lo=11000.0, hi=13000.0, n=QUERIES)
    return [r.model_copy(update={"track": track, "token_column": "corpus",
                                 "metrics": {**r.metrics, "tokens@10": tokens}})
            for r in rows]


def realistic(tmp_path: Path) -> ResultFile:
    rng = np.random.default_rng(5)
    engines = list(SHIPPED)
    rows: list[Row] = []
    for corpus in CORPORA:
        for i, name in enumerate(engines):
            made = _rows(tmp_path, name, corpus, rng, reach=4 + i % 9)
            if name == "neuledge-context":  # graded by content: the chunk cell reads `c ...`
                made = [r.model_copy(update={"content_threshold": 80, "metrics": {
                    **r.metrics, "content.recall@10": r.metrics["file.recall@10"]}})
                    for r in made]
            if i % 4 == 1:
                made = [r.model_copy(update={"flags": [*r.flags, "!! depth=3",
                                                       "concurrent=2"]}) for r in made]
            rows += made
    result = ResultFile(
        protocol_version="5", bench_version="0", created="now", environment={},
        cutoffs=list(CUTOFFS),
        corpora={name: CorpusOut(
            name=name, pin=pin, identity="0" * 64, tree=tree, files=1234, tier=tier,
            languages={"python": 1234}, queries=QUERIES, query_set=f"{name}.jsonl",
            query_set_sha256="1" * 64, track="needles" if ":" in name else "questions",
            corpus=name.split(":")[0]) for name, (pin, tree, tier) in CORPORA.items()},
        engines={e: EngineOut(name=e, spec_file=f"engines/{e}.json", spec_sha256="2" * 64,
                              version=None, mode="oneshot", requires=None) for e in engines},
        rows=rows, comparisons=[],
        failures=[Failure(engine="pydocs-mcp-composite", corpus="zstd", stage="index",
                          message="the index command exited 1 after 12.5 s: "
                                  "pydocs-mcp could not read "
                                  f"{HOME}/zstd/tree/lib/compress/zstd_compress_internal.h",
                          stderr_tail="Traceback (most recent call last):\n  File \"/home/"
                                      "runner/.venvs/pydocs/lib/python3.11/site-packages/"
                                      "pydocs_mcp/indexer.py\", line 412, in walk\n"
                                      "UnicodeDecodeError: 'utf-8' codec can't decode byte")],
        gaps=[Gap(engine="context7", corpus="zstd",
                  reason="its spec covers rich and click only (covers)")])
    return result.model_copy(update=analysis.statistics(rows, engines).as_update())
