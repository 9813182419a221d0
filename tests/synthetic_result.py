"""Rows and result files built by the harness from generated outcomes, for the stats tests.

Each query has one gold item (a span, or file-level so chunk metrics do not
apply); an engine puts its gold file at a chosen slot or nowhere, or fails the
query. Outcomes are graded and scored by the harness itself (`grade`,
`evaluate.scores`), rows by `build_rows`, statistics by `analysis.statistics`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from codesearch_bench.engine.spec import LoadedSpec, load_spec
from codesearch_bench.model import Hit, Slot, Span
from codesearch_bench.results.schema import IndexOut, QueryOutcome, ResultFile, Row, SearchOut
from codesearch_bench.scoring import analysis
from codesearch_bench.scoring.evaluate import scores
from codesearch_bench.scoring.grade import grade
from codesearch_bench.scoring.rows import Pass, build_rows

CUTOFFS = (5, 10, 20)
SPAN_GOLD = [Span("gold.py", 10, 20, "answer")]
FILE_GOLD = [Span("gold.py")]


def spec(tmp_path: Path, name: str, *, mode: str = "oneshot") -> LoadedSpec:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({
        "name": name, "spans": True, "per_file": [1, 2], "mode": mode,
        "search": {"command": ["true", "{{query}}", "{{per_file}}"] if mode == "oneshot"
                   else ["serve", "{{root}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    return load_spec(path)


def outcome(qid: str, rank: int | None, *, failed: bool = False,
            file_level: bool = False) -> QueryOutcome:
    """A query whose gold chunk the engine puts at slot `rank` (None: not at all)."""
    if failed:
        return QueryOutcome(id=qid, error="timed out", chunk_entered=not file_level)
    filler = [Slot(f"other{i}.py", i + 1, (Hit(f"other{i}.py", 1, 3),)) for i in range(25)]
    slots = filler[:24]
    if rank is not None:
        slots = [*filler[:rank - 1], Slot("gold.py", rank, (Hit("gold.py", 12, 14),)),
                 *filler[rank - 1:24]]
    graded = grade(slots, FILE_GOLD if file_level else SPAN_GOLD, spans=True)
    return QueryOutcome(id=qid, chunk_entered=not file_level, scores=scores(graded, CUTOFFS),
                        file_gains=list(graded.file_gains[:20]),
                        chunk_gains=None if graded.chunk_gains is None
                        else list(graded.chunk_gains[:20]))


def rows_of(loaded: LoadedSpec, corpus: str, ranks: list[int | None],
            failed: frozenset[int] = frozenset(),
            file_level: frozenset[int] = frozenset()) -> list[Row]:
    outs = [outcome(f"{corpus}-{i:02d}", r, failed=i in failed, file_level=i in file_level)
            for i, r in enumerate(ranks)]
    passes = [Pass(1, outs, [0.01] * len(outs)), Pass(2, outs, [0.02] * len(outs))]
    search = SearchOut(mode=loaded.spec.mode, command=["true", "q", "1"])
    return build_rows(loaded, corpus, Path("/tree"), CUTOFFS, IndexOut(cached=False), search,
                      passes)


def _ranks(rng: np.random.Generator, size: int, reach: int) -> list[int | None]:
    return [int(r) if r <= reach else None for r in rng.integers(1, 25, size)]


def write_result(tmp_path: Path) -> Path:
    """Three engines on two corpora, one of them flaky; the result file's path."""
    rng = np.random.default_rng(17)
    engines = {name: spec(tmp_path, name) for name in ("alpha", "beta", "gamma")}
    rows: list[Row] = []
    for corpus, size in (("c1", 45), ("c2", 30)):
        file_level = frozenset(int(i) for i in rng.choice(size, 5, replace=False))
        alpha = _ranks(rng, size, 12)
        beta = _ranks(rng, size, 8)
        # gamma is alpha with a few answers moved: few differing queries, an exact p
        gamma = [r if i % 7 else (None if r else 3) for i, r in enumerate(alpha)]
        flaky = frozenset(int(i) for i in rng.choice(size, 6, replace=False))
        rows += rows_of(engines["alpha"], corpus, alpha, file_level=file_level)
        rows += rows_of(engines["beta"], corpus, beta, failed=flaky, file_level=file_level)
        rows += rows_of(engines["gamma"], corpus, gamma, file_level=file_level)
    result = ResultFile(protocol_version="3", bench_version="0", created="now",
                        environment={}, cutoffs=list(CUTOFFS), corpora={}, engines={},
                        rows=rows, comparisons=[], failures=[])
    result = result.model_copy(update=analysis.statistics(rows, list(engines)).as_update())
    out = tmp_path / "result.json"
    result.dump(out)
    return out
