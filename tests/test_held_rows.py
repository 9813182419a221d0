"""Rows held slim past a bound of outcomes: the same statistics, the same file.

`bench compare` keeps at most `CompareOptions.hold_outcomes` outcomes in memory with
their per-slot detail; the cells past it are held slim and written to the
result file from the journal, a cell at a time (results/held.py, write.py).
"""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from minicorpus import make_corpus
from test_behaviour_golden import quality

from codesearch_bench.engine.spec import load_spec
from codesearch_bench.results import journal, spool, write
from codesearch_bench.results.held import HeldRows
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run import cell as cell_module
from codesearch_bench.run import comparison
from codesearch_bench.run.options import CompareOptions, Events
from codesearch_bench.run.preflight import load_specs, plan_corpora

REPO = Path(__file__).resolve().parent.parent
ENGINES = [REPO / "engines" / "grep.json", REPO / "engines" / "bm25.json"]


def _run(tmp: Path, toml: Path, tag: str, **extra: object) -> comparison.Outcome:
    return comparison.execute(CompareOptions(
        engines=ENGINES, corpora_file=toml, corpora_root=tmp / "corpora", work=tmp / tag,
        json_out=tmp / f"{tag}.json", **extra))  # type: ignore[arg-type]


@pytest.mark.parametrize("jobs", [1, 2])
def test_slim_rows_give_the_same_statistics_and_the_whole_file(tmp_path: Path,
                                                               jobs: int) -> None:
    # hold_outcomes=0: every cell is spooled, and held slim while it runs (in a worker
    # process with jobs=2).
    make_corpus(tmp_path, "alpha")
    toml = make_corpus(tmp_path, "beta")
    full = _run(tmp_path, toml, "full", jobs=jobs)
    # What a run killed mid-cell leaves beside its journal goes with the next run.
    (tmp_path / "slim.json.journal.cell7").write_bytes(b'{"kind":"outcome"')
    slim = _run(tmp_path, toml, "slim", hold_outcomes=0, jobs=jobs)
    queries = [o for r in slim.result.rows for o in r.queries]
    assert queries and all(not o.slots and not o.gold and not o.file_gains for o in queries)
    assert any(o.slots for r in full.result.rows for o in r.queries)
    # What the statistics and the table read is all there.
    assert slim.result.comparisons == full.result.comparisons
    assert slim.result.tiers == full.result.tiers
    assert [r.metrics for r in slim.result.rows] == [r.metrics for r in full.result.rows]
    # The file has every detail back, from the journal.
    written = json.loads((tmp_path / "slim.json").read_text())
    assert quality(written) == quality(json.loads((tmp_path / "full.json").read_text()))
    assert any(q["slots"] and q["gold"] for r in written["rows"] for q in r["queries"])
    assert not journal.path_for(tmp_path / "slim.json").exists()  # done with it
    assert not list(tmp_path.glob("slim.json.journal.cell*"))  # and with every spool


def test_a_spooled_cell_holds_its_outcomes_slim_and_writes_them_whole(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path, "alpha")
    result = _run(tmp_path, toml, "run").result
    opts = CompareOptions(engines=ENGINES[:1], corpora_file=toml,
                          corpora_root=tmp_path / "corpora", work=tmp_path / "run")
    (plan,) = plan_corpora(opts, Events(), [], load_specs(ENGINES[:1], []))
    cell = comparison.cell_for(plan, load_spec(ENGINES[0]), opts)
    spooled_cell = dataclasses.replace(cell, spool=tmp_path / "spool")
    done = cell_module.run_cell(spooled_cell)
    held = [o for p in done.passes for o in p.outcomes]
    assert held and all(not o.slots and not o.gold and not o.file_gains for o in held)
    assert done.spooled is not None and [o for o, _ in done.spooled.at] == held
    lines = (tmp_path / "spool").read_bytes().splitlines()
    whole = [o for r in result.rows if r.engine == "grep" for o in r.queries]
    timeless = [o.model_copy(update={"latency_s": 0.0}) for o in whole]  # a second run
    assert [json.loads(line)["outcome"] | {"latency_s": 0.0} for line in lines] == [
        json.loads(o.model_dump_json()) for o in timeless]
    assert any(o.slots for o in whole)
    assert [spool.slim(o) for o in timeless] == [
        o.model_copy(update={"latency_s": 0.0}) for o in held]


def test_a_row_back_from_the_journal_writes_byte_for_byte_the_same(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path, "alpha")
    result = _run(tmp_path, toml, "run").result
    log = tmp_path / "cells.journal"
    header = journal.Header(protocol_version=result.protocol_version, cutoffs=result.cutoffs,
                            created=result.created)
    held = HeldRows(log, limit=len(result.rows[0].queries))  # the first cell only in full
    with journal.Journal(log, header, fresh=True) as book:
        for i, row in enumerate(result.rows):  # a row a cell: enough for the round trip
            offset = book.append(journal.CellRecord(
                engine=row.engine, corpus=row.corpus, rows=[row],
                engine_info=result.engines[row.engine],
                corpus_info=result.corpora[row.corpus]))
            held.add(i, [row], offset)
    assert held.slimmed and len(result.rows) > 1
    for name in ("whole.json", "whole.json.gz"):
        result.dump(tmp_path / name)
        write.dump(result, tmp_path / f"streamed-{name}", rows=held.full_rows())
    assert (tmp_path / "streamed-whole.json").read_bytes() == (tmp_path / "whole.json").read_bytes()
    assert (gzip.decompress((tmp_path / "streamed-whole.json.gz").read_bytes())
            == (tmp_path / "whole.json").read_bytes())
    assert ResultFile.load(tmp_path / "streamed-whole.json") == result


def test_the_streamed_text_is_a_whole_model_dump(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path, "alpha")
    result = _run(tmp_path, toml, "run").result
    no_queries = result.rows[0].model_copy(update={"queries": []})
    for rows in (result.rows, result.rows[:1], [no_queries, *result.rows[1:]], []):
        copy = result.model_copy(update={"rows": rows})
        expected = json.dumps(copy.model_dump(mode="json"), indent=1) + "\n"
        assert "".join(write.chunks(copy, [(r, r.queries) for r in rows])) == expected


@pytest.mark.hostile
def test_a_spool_that_cannot_be_written_fails_its_cell_with_the_reason(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path, "alpha")
    opts = CompareOptions(engines=ENGINES[:1], corpora_file=toml,
                          corpora_root=tmp_path / "corpora", work=tmp_path / "run")
    (plan,) = plan_corpora(opts, Events(), [], load_specs(ENGINES[:1], []))
    cell = comparison.cell_for(plan, load_spec(ENGINES[0]), opts)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    done = cell_module.run_cell(dataclasses.replace(cell, spool=blocked / "spool"))
    assert done.failure is not None and done.spooled is None
    assert f"cannot write this cell's outcomes to {blocked / 'spool'}" in done.failure.message


@pytest.mark.hostile
def test_an_interrupt_mid_spooled_cell_resumes_to_the_same_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every cell spooled: the first finishes (its spool copied into the journal), the
    # second is cut off mid-cell; the resumed run keeps the first, reruns the second.
    toml = make_corpus(tmp_path, "alpha")
    whole = _run(tmp_path, toml, "whole")
    asked = len(whole.result.rows[0].queries)
    calls = {"n": 0}
    evaluate = cell_module.evaluate

    def cut_off(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == asked * len({r.per_file for r in whole.result.rows
                                     if r.engine == "grep"}) + 2:
            raise KeyboardInterrupt
        return evaluate(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cell_module, "evaluate", cut_off)
    cut = _run(tmp_path, toml, "cut", hold_outcomes=0)
    assert cut.interrupted
    log = journal.path_for(tmp_path / "cut.json")
    _, cells, bad = journal.read(log)
    assert [c.engine for c in cells] == ["grep"] and bad == 0
    monkeypatch.setattr(cell_module, "evaluate", evaluate)
    resumed = _run(tmp_path, toml, "cut", hold_outcomes=0, resume=tmp_path / "cut.json")
    assert not resumed.interrupted
    def measured(name: str) -> list[dict[str, Any]]:
        # The same quality fields; only whether bm25's index was built in this run or
        # the interrupted one differs (it is cached: the cut-off cell built it).
        rows = quality(json.loads((tmp_path / name).read_text()))["rows"]
        return [{k: v for k, v in r.items() if k != "index"} for r in rows]

    assert measured("cut.json") == measured("whole.json")
    assert any(q["slots"] for r in measured("cut.json") for q in r["queries"])
    assert not log.exists() and not list(tmp_path.glob("cut.json.journal.cell*"))
