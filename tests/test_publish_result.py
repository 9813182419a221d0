"""tools/publish-result: the slim copy kept in docs/results recomputes every number."""

from __future__ import annotations

import importlib.util
from importlib.machinery import SourceFileLoader
from pathlib import Path

from codesearch_bench.results.schema import ResultFile
from codesearch_bench.scoring.analysis import statistics
from codesearch_bench.scoring.rows import aggregate

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "result-two-corpora.json"


def _script() -> object:
    loader = SourceFileLoader("publish_result", str(REPO / "tools" / "publish-result"))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_slim_keeps_every_number_and_round_trips_gzipped(tmp_path: Path) -> None:
    full = ResultFile.load(GOLDEN)
    slim = _script().slim(full)  # type: ignore[attr-defined]
    out = tmp_path / "slim.json.gz"
    slim.dump(out)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    back = ResultFile.load(out)
    for before, after in zip(full.rows, back.rows, strict=True):
        assert after.metrics == before.metrics
        assert aggregate(after.queries, full.cutoffs, after.token_column != "none") == \
            before.metrics
        if before.headline:
            assert after.queries == before.queries  # drill-down kept where it is shown
        else:
            assert all(not q.slots for q in after.queries)
    assert statistics(back.rows, list(back.engines)).comparisons == \
        statistics(full.rows, list(full.engines)).comparisons
