"""The result journal: outcome lines, then the cell's line; torn and unfinished cells.

A cell is journaled as one line per outcome and then its own line naming them
(results/journal.py), so the result file can be written from it a query at a
time. What a crash can leave -- a torn line, outcome lines without their cell
line, a resumed run appending after either -- must cost only that cell.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench.results import journal
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run.comparison import execute
from codesearch_bench.run.options import CompareOptions

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> ResultFile:
    tmp = tmp_path_factory.mktemp("journal")
    toml = make_corpus(tmp, "alpha")
    return execute(CompareOptions(
        engines=[REPO / "engines" / "grep.json"], corpora_file=toml,
        corpora_root=tmp / "corpora", work=tmp / "work")).result


def _record(result: ResultFile) -> journal.CellRecord:
    row = result.rows[0]
    # A split's row holds the same outcomes as the whole set's (a shallow copy here).
    test = row.model_copy(update={"split": "test", "queries": row.queries[::2]})
    return journal.CellRecord(engine=row.engine, corpus=row.corpus,
                              rows=[*result.rows, test],
                              engine_info=result.engines[row.engine],
                              corpus_info=result.corpora[row.corpus])


def _journaled(tmp_path: Path, result: ResultFile) -> tuple[Path, journal.CellRecord]:
    """A fresh journal holding one cell: its path and the cell."""
    log, record = tmp_path / "j", _record(result)
    with journal.Journal(log, _header(result), fresh=True) as book:
        book.append(record)
    return log, record


def _header(result: ResultFile) -> journal.Header:
    return journal.Header(protocol_version=result.protocol_version, cutoffs=result.cutoffs,
                          created=result.created)


def test_a_cell_is_its_outcome_lines_then_its_own_line(tmp_path: Path,
                                                       result: ResultFile) -> None:
    log = tmp_path / "j"
    record = _record(result)
    assert len(record.rows) > 1  # rows of one cell that share outcomes (its splits)
    with journal.Journal(log, _header(result), fresh=True) as book:
        offset = book.append(record)
    lines = log.read_bytes().splitlines()
    shared = len({id(o) for r in record.rows for o in r.queries})
    assert shared < sum(len(r.queries) for r in record.rows)
    assert len(lines) == 1 + shared + 1  # header, each outcome once, the cell
    assert all(b'"kind":"outcome"' in line for line in lines[1:-1])
    header, cells, bad = journal.read(log)
    assert header == _header(result) and bad == 0
    assert cells == [record]
    streamed = [(row, list(queries)) for row, queries in journal.rows_at(log, offset)]
    assert [r.model_copy(update={"queries": q}) for r, q in streamed] == record.rows
    assert all(not r.queries for r, _ in streamed)


@pytest.mark.hostile
def test_outcomes_without_their_cell_line_are_an_unfinished_cell(
        tmp_path: Path, result: ResultFile) -> None:
    log, record = _journaled(tmp_path, result)
    whole = log.read_bytes()
    cell_line = whole.rstrip(b"\n").rsplit(b"\n", 1)[1]
    for cut in (len(whole) - len(cell_line) - 1,       # every outcome, no cell line
                len(whole) - len(cell_line) // 2):     # the cell line torn
        log.write_bytes(whole + whole[whole.index(b"\n") + 1:cut])
        _, cells, bad = journal.read(log)
        assert cells == [record] and bad == 1  # one record lost, however many lines


@pytest.mark.hostile
def test_a_resumed_run_appends_after_a_torn_line_without_losing_its_cell(
        tmp_path: Path, result: ResultFile) -> None:
    log, record = _journaled(tmp_path, result)
    log.write_bytes(log.read_bytes()[:-40])  # killed mid-write of the cell line
    with journal.Journal(log, _header(result), fresh=False) as book:
        offset = book.append(record)
    _, cells, bad = journal.read(log)
    assert cells == [record] and bad == 1
    assert [r for r, _ in journal.rows_at(log, offset)] == [
        r.model_copy(update={"queries": []}) for r in record.rows]


def test_a_cell_line_with_its_queries_inline_still_reads(tmp_path: Path,
                                                         result: ResultFile) -> None:
    log = tmp_path / "j"
    record = _record(result)
    line = record.model_dump_json().encode()
    log.write_bytes(_header(result).model_dump_json().encode() + b"\n" + line + b"\n")
    _, cells, bad = journal.read(log)
    assert cells == [record] and bad == 0
    offset = log.read_bytes().index(line)
    assert [r.model_copy(update={"queries": list(q)})
            for r, q in journal.rows_at(log, offset)] == record.rows
