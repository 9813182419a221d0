from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_bench.errors import QueryError
from codesearch_bench.gold.queries import lint, load_queries


def write(tmp_path: Path, rows: list[dict | str]) -> Path:
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def q(qid: str, text: str, symbol: str | None = "cell_len", **extra: object) -> dict:
    gold = {"path": "rich/cells.py"}
    if symbol:
        gold["symbol"] = symbol
    return {"id": qid, "query": text, "gold": [gold], **extra}


def test_loads_and_hashes(tmp_path: Path) -> None:
    qs = load_queries(write(tmp_path, [q("a", "how wide is text"), q("b", "x", symbol=None)]))
    assert [x.id for x in qs.queries] == ["a", "b"]
    assert not qs.queries[0].file_level and qs.queries[1].file_level
    assert len(qs.sha256) == 64


def test_errors_carry_line_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, [q("a", "ok"), "{not json", {"id": "c", "query": "x", "gold": []},
                            {"id": "d", "query": "x", "gold": [{"path": "/abs"}]},
                            {**q("e", "x"), "colour": 1}])
    with pytest.raises(QueryError) as exc:
        load_queries(path)
    msg = str(exc.value)
    assert f"{path}:2: not JSON" in msg
    assert f"{path}:3: field `gold`" in msg
    assert f"{path}:4: field `gold.0.path`" in msg
    assert f"{path}:5: field `colour`" in msg


def test_lint_duplicates_and_leaks(tmp_path: Path) -> None:
    qs = load_queries(write(tmp_path, [
        q("a", "where is the width of a string in terminal cells computed"),
        q("a", "another question"),
        q("b", "what does cell_len do"),
        q("c", "how is the cell len found"),
        q("d", "Where is the width of a string in terminal cells computed"),
        q("e", "cancel the cellar", symbol="Cell"),
    ]))
    problems = lint(qs)
    assert "a: duplicate id" in problems
    assert any(p.startswith("b:") and "contains the gold symbol name" in p for p in problems)
    assert any(p.startswith("c:") and "spells out" in p for p in problems)
    assert any(p.startswith("d:") and "same query text" in p for p in problems)
    assert not any(p.startswith("e:") for p in problems)
