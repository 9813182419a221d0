"""bench report --format trec: trec_eval (through ir-measures) re-scores the harness's numbers."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import ir_measures
import pytest
from ir_measures import AP, RR, P, R, Success, nDCG
from minicorpus import make_corpus
from test_behaviour_golden import FAKE

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
# the harness's file-level metric -> the trec_eval measure PROTOCOL.md names for it
MEASURES = {"file.map@10": AP @ 10, "file.ndcg@10": nDCG @ 10, "file.mrr": RR @ 20,
            "file.p@1": P @ 1, "file.recall@5": R @ 5, "file.hit@10": Success @ 10}


def _read(path: Path, run: bool) -> list[object]:
    out: list[object] = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if run:
            out.append(ir_measures.ScoredDoc(parts[0], parts[2], float(parts[4])))
        else:
            out.append(ir_measures.Qrel(parts[0], parts[2], int(parts[3])))
    return out


@pytest.fixture
def result(tmp_path: Path) -> tuple[ResultFile, Path]:
    toml = make_corpus(tmp_path)
    (tmp_path / "fake.py").write_text(FAKE)
    fake = tmp_path / "fake.json"
    fake.write_text(json.dumps({
        "name": "fake", "spans": True, "per_file": [1, 2],
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    out = tmp_path / "out.json"
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(REPO / "engines" / "grep.json"), "--engine", str(fake),
                 "--json", str(out)]) == 0
    trec = tmp_path / "trec"
    assert main(["report", str(out), "--format", "trec", "--out", str(trec)]) == 0
    return ResultFile.load(out), trec


def test_file_level_runs_rescore_to_the_rows(result: tuple[ResultFile, Path]) -> None:
    loaded, trec = result
    qrels = _read(trec / "qrels.file.txt", run=False)
    checked = 0
    for row in loaded.rows:
        run = _read(trec / f"run.{row.engine}.{row.corpus}.pf{row.per_file}.file.txt", run=True)
        per_query: dict[tuple[str, str], float] = {}
        for metric in ir_measures.iter_calc(list(MEASURES.values()), qrels, run):
            per_query[(str(metric.measure), metric.query_id)] = metric.value
        qids = [f"{row.corpus}/{q.id}" for q in row.queries]
        for name, measure in MEASURES.items():
            # a query absent from the run (failed or empty) scores 0, as trec_eval -c
            mean = sum(per_query.get((str(measure), q), 0.0) for q in qids) / len(qids)
            assert mean == pytest.approx(row.metrics[name].mean, abs=1e-9), (row.engine, name)
            checked += 1
    assert checked == len(loaded.rows) * len(MEASURES)


def test_qrels_and_runs_cover_both_granularities(result: tuple[ResultFile, Path]) -> None:
    _, trec = result
    chunk = (trec / "qrels.chunk.txt").read_text().splitlines()
    assert chunk and all(":" in line.split()[2] for line in chunk)
    assert (trec / "run.fake.mini.pf2.chunk.txt").read_text()


def test_chunk_level_mrr_and_p1_rescore(result: tuple[ResultFile, Path]) -> None:
    loaded, trec = result
    qrels = _read(trec / "qrels.chunk.txt", run=False)
    with_chunks = {line.split()[0] for line in (trec / "qrels.chunk.txt").read_text().splitlines()}
    for row in loaded.rows:
        run = _read(trec / f"run.{row.engine}.{row.corpus}.pf{row.per_file}.chunk.txt", True)
        got = {(str(m.measure), m.query_id): m.value
               for m in ir_measures.iter_calc([P @ 1], qrels, run)}
        qids = [qid for q in row.queries if (qid := f"{row.corpus}/{q.id}") in with_chunks]
        mean = sum(got.get((str(P @ 1), q), 0.0) for q in qids) / len(qids)
        assert mean == pytest.approx(row.metrics["chunk.p@1"].mean, abs=1e-9), row.engine
