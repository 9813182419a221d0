"""Hostile result files: someone else's file rendered, tampered numbers, exports, the gate.

A result file is untrusted input once it leaves the run that wrote it: its trees are
read only when their setup marker says they are that run's, its means are checked
against its own per-query values (here and under --resume), the TREC export carries
no id or path that could add a line or split a field, and the regression gate fails
closed when its evidence is missing.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.errors import UsageError
from codesearch_bench.render.html import render_html
from codesearch_bench.render.html.packed import blocks
from codesearch_bench.render.html.texts import tree_of
from codesearch_bench.render.trec import write_trec
from codesearch_bench.results import upgrade
from codesearch_bench.results.schema import GoldOut, ResultFile, SlotOut
from codesearch_bench.run.resume import load_previous

pytestmark = pytest.mark.hostile

GOLDEN = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"


def golden() -> ResultFile:
    return ResultFile.load(GOLDEN)


def raw() -> dict[str, object]:
    data: dict[str, object] = json.loads(GOLDEN.read_text())
    return data


def _write(tmp_path: Path, data: dict[str, object], name: str = "r.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def _row0(data: dict[str, object]) -> dict[str, object]:
    rows = data["rows"]
    assert isinstance(rows, list)
    row: dict[str, object] = rows[0]
    return row


# -- trees: read only when their setup marker is the run's --------------------------------


def _secret_tree(tmp_path: Path, marker: str | None) -> ResultFile:
    """The golden result with mini's tree pointed at a folder holding a 'secret' file that
    the first row's first slot names."""
    tree = tmp_path / "elsewhere" / "tree"
    tree.mkdir(parents=True)
    (tree / "os-release").write_text("SECRET-LINE-1\nSECRET-LINE-2\n")
    if marker is not None:
        (tree.parent / ".setup-done.json").write_text(marker)
    result = golden()
    info = result.corpora["mini"].model_copy(update={"tree": str(tree)})
    row = result.rows[0]
    first = row.queries[0].model_copy(update={"slots": [SlotOut("os-release", [(1, 2)])]})
    rows = [row.model_copy(update={"queries": [first, *row.queries[1:]]}), *result.rows[1:]]
    return result.model_copy(update={"corpora": {**result.corpora, "mini": info},
                                     "rows": rows})


def _everything(page: Path) -> str:
    """The page's text with its packed data blocks unpacked: the drill-down's text is
    compressed, so a plain search of the file would find nothing either way."""
    text = page.read_text()
    return text + json.dumps(blocks(text))


@pytest.mark.parametrize("marker", [None, "not json", "[]", '{"pin": "x"}',
                                    '{"identity": "another"}'])
def test_a_tree_without_the_runs_marker_is_never_read(tmp_path: Path,
                                                      marker: str | None) -> None:
    result = _secret_tree(tmp_path, marker)
    tree, note = tree_of(result, "mini")
    assert tree is None and note
    (page,) = render_html(result, tmp_path / "out")
    assert "SECRET" not in _everything(page)


def test_a_marker_with_another_pin_is_not_the_runs(tmp_path: Path) -> None:
    identity = golden().corpora["mini"].identity
    result = _secret_tree(tmp_path, json.dumps({"identity": identity, "pin": "other"}))
    assert tree_of(result, "mini")[0] is None


def test_a_tree_with_the_runs_marker_is_read(tmp_path: Path) -> None:
    info = golden().corpora["mini"]
    result = _secret_tree(tmp_path, json.dumps({"identity": info.identity, "pin": info.pin}))
    assert tree_of(result, "mini")[0] is not None
    (page,) = render_html(result, tmp_path / "out")
    assert "SECRET-LINE-1" in _everything(page)


def test_a_track_tree_is_read_only_under_its_corpus_marker_and_track_record(
        tmp_path: Path) -> None:
    base = tmp_path / "corpora" / "mini"
    tree = base / "tracks" / "needles" / "tree"
    tree.mkdir(parents=True)
    (base / ".setup-done.json").write_text(json.dumps({"identity": "corpus-id", "pin": "p"}))
    (tree.parent / "track.json").write_text(json.dumps({"key": "k1"}))
    identity = hashlib.sha256(b"corpus-id:k1").hexdigest()
    result = golden()
    info = result.corpora["mini"].model_copy(update={
        "tree": str(tree), "identity": identity, "track": "needles", "pin": "p"})
    result = result.model_copy(update={"corpora": {**result.corpora, "mini": info}})
    assert tree_of(result, "mini")[0] == tree
    (tree.parent / "track.json").write_text(json.dumps({"key": "k2"}))
    assert tree_of(result, "mini")[0] is None


# -- derived numbers: checked against the file's own per-query values ---------------------


@pytest.mark.parametrize(("metric", "field", "value"), [
    ("file.recall@5", "mean", 99.0), ("file.mrr", "mean", 0.123), ("zero_miss", "mean", 0.5),
    ("file.hit@10", "n", 40), ("tokens@5", "mean", 1.0), ("file.mrr", "lo", 2.0),
    ("file.mrr", "mean", None)])
def test_a_tampered_aggregate_is_an_error_naming_file_row_and_metric(
        tmp_path: Path, metric: str, field: str, value: float | None) -> None:
    data = raw()
    estimates = _row0(data)["metrics"]
    assert isinstance(estimates, dict)
    if estimates[metric][field] == value:
        value = 0.0
    estimates[metric][field] = value
    path = _write(tmp_path, data)
    with pytest.raises(UsageError) as err:
        ResultFile.load(path)
    text = str(err.value)
    assert str(path) in text and "rows[0]" in text and metric in text


def test_a_tampered_error_count_is_an_error(tmp_path: Path) -> None:
    data = raw()
    _row0(data)["errors"] = 3
    with pytest.raises(UsageError, match=r"rows\[0\].*errors"):
        ResultFile.load(_write(tmp_path, data))


def test_a_tampered_gzipped_file_is_refused_too(tmp_path: Path) -> None:
    data = raw()
    _row0(data)["metrics"]["file.recall@5"]["mean"] = 99.0  # type: ignore[index]
    path = tmp_path / "r.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    with pytest.raises(UsageError, match=r"file\.recall@5"):
        ResultFile.load(path)


def test_a_tampered_file_in_bench_s_own_layout_is_refused_too(tmp_path: Path) -> None:
    """A file bench wrote, its layout kept, one mean edited: the fast path of a current
    file must not skip the check."""
    result = golden()
    row = result.rows[0]
    mean = row.metrics["file.mrr"].model_copy(update={"mean": 0.123})
    edited = row.model_copy(update={"metrics": {**row.metrics, "file.mrr": mean}})
    path = tmp_path / "r.json"
    result.model_copy(update={"rows": [edited, *result.rows[1:]]}).dump(path)
    assert upgrade.current(path.read_bytes())  # the layout bench writes, read the fast way
    with pytest.raises(UsageError, match=r"rows\[0\].*file\.mrr"):
        ResultFile.load(path)


def test_a_row_without_per_query_values_is_said_unchecked_not_failed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = raw()
    _row0(data)["queries"] = []
    path = _write(tmp_path, data)
    loaded = ResultFile.load(path)
    assert len(loaded.unchecked) == 1 and "rows[0]" in loaded.unchecked[0]
    assert main(["report", str(path), "--format", "json"]) == 0
    assert "rows[0]" in capsys.readouterr().err


def test_the_untampered_files_load(tmp_path: Path) -> None:
    assert not golden().unchecked
    published = Path(__file__).resolve().parent.parent / "docs" / "results" / "default.json.gz"
    assert ResultFile.load(published).rows


@pytest.mark.parametrize(("field", "value"), [("delta", 0.9), ("n", 99)])
def test_a_tampered_comparison_is_refused_by_report(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: float) -> None:
    data = raw()
    comparisons = data["comparisons"]
    assert isinstance(comparisons, list)
    i = next(i for i, c in enumerate(comparisons) if c["group"] is None)
    comparisons[i][field] = value
    assert main(["report", str(_write(tmp_path, data)), "--format", "json"]) == 2
    assert f"comparisons[{i}]" in capsys.readouterr().err


def test_resume_refuses_a_tampered_earlier_file(tmp_path: Path) -> None:
    data = raw()
    _row0(data)["metrics"]["file.mrr"]["mean"] = 0.999  # type: ignore[index]
    path = _write(tmp_path, data)
    with pytest.raises(UsageError, match=r"rows\[0\].*file.mrr"):
        load_previous(path)


# -- TREC: nothing a run line cannot carry ------------------------------------------------


def _with_gold(result: ResultFile, *, path: str | None = None, qid: str | None = None,
               corpus: str | None = None) -> ResultFile:
    rows = []
    for row in result.rows:
        queries = []
        for i, o in enumerate(row.queries):
            slots = o.slots
            if path is not None and i == 0:
                slots = [SlotOut(path, [(1, 2)]), *slots]
            queries.append(o.model_copy(update={
                "gold": [GoldOut("pkg/config.py", 1, 12)], "slots": slots,
                "id": qid if qid is not None and i == 0 else o.id}))
        rows.append(row.model_copy(update={"queries": queries,
                                           "corpus": corpus or row.corpus}))
    return result.model_copy(update={"rows": rows})


def _lines_ok(paths: list[Path]) -> None:
    for p in paths:
        for line in p.read_text().splitlines():
            fields = line.split()
            assert len(fields) == (4 if p.name.startswith("qrels") else 6), (p.name, line)
            assert line == line.strip() and "\t" not in line and "\r" not in line
            assert all(ch.isascii() and ch.isprintable() for ch in line), line


@pytest.mark.parametrize("path", [
    "a.py\nmini/q1 Q0 pkg/config.py 1 999 grep", "with space.py", "tab\there.py",
    "cr\rhere.py", "nel\x85here.py", "ls\u2028here.py", "ünïcode.py", "100%.py"])
def test_a_slot_path_cannot_add_or_split_a_run_line(tmp_path: Path, path: str) -> None:
    result = _with_gold(golden(), path=path)
    written = write_trec(result, tmp_path / "trec")
    _lines_ok(written)
    runs = [p for p in written if p.name.startswith("run.")]
    lines = sum(len(p.read_text().splitlines()) for p in runs)
    plain = write_trec(_with_gold(golden(), path="plain.py"), tmp_path / "plain")
    assert lines == sum(len(p.read_text().splitlines()) for p in plain
                        if p.name.startswith("run."))


@pytest.mark.parametrize("qid", ["q 1", "q\t1", "q\n1", "q1\nmini/x Q0 y 1 1 z"])
def test_a_query_id_cannot_split_or_add_a_line(tmp_path: Path, qid: str) -> None:
    _lines_ok(write_trec(_with_gold(golden(), qid=qid), tmp_path / "trec"))


def test_encoded_ids_still_pair_runs_with_qrels(tmp_path: Path) -> None:
    """The same encoding on both sides: the docno a run gives is the qrel's."""
    result = _with_gold(golden(), qid="q 1", corpus="my corpus")
    written = write_trec(result, tmp_path / "trec")
    qrels = {(f[0], f[2]) for f in (line.split() for line in
             (tmp_path / "trec" / "qrels.file.txt").read_text().splitlines())}
    run = next(p for p in written if p.name.startswith("run.") and p.name.endswith(".file.txt"))
    hits = [(f[0], f[2]) for f in (line.split() for line in run.read_text().splitlines())]
    assert any(" " in q for q, _ in hits) is False
    assert any(q.startswith("my%20corpus/q%201") and (q, d) in qrels for q, d in hits)


def test_a_row_without_slots_is_refused_by_name_not_exported_empty(tmp_path: Path) -> None:
    result = _with_gold(golden())
    row = result.rows[0]
    bare = [o.model_copy(update={"slots": []}) for o in row.queries]
    result = result.model_copy(update={"rows": [row.model_copy(update={"queries": bare}),
                                                *result.rows[1:]]})
    with pytest.raises(UsageError, match=r"grep × mini \(per_file=1\)") as err:
        write_trec(result, tmp_path / "trec")
    assert "slots" in str(err.value)
    assert not (tmp_path / "trec").exists()


# -- the gate fails closed ----------------------------------------------------------------


def _gate(tmp_path: Path, new: dict[str, object], *extra: str) -> int:
    old = _write(tmp_path, raw(), "old.json")
    return main(["report", str(_write(tmp_path, new, "new.json")), "--baseline", str(old),
                 "--fail-on", "regression", *extra])


def _without(data: dict[str, object], engine: str) -> dict[str, object]:
    rows = data["rows"]
    assert isinstance(rows, list)
    return {**data, "rows": [r for r in rows if r["engine"] != engine]}


def test_a_new_file_missing_baseline_rows_fails_the_gate(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _gate(tmp_path, _without(raw(), "grep")) == 5
    err = capsys.readouterr().err
    assert "grep × mini (per_file=1)" in err and "missing" in err
    assert _gate(tmp_path, _without(raw(), "grep"), "--allow-missing") == 0


def test_a_new_file_missing_a_corpus_fails_the_gate(tmp_path: Path) -> None:
    data = raw()
    rows = data["rows"]
    assert isinstance(rows, list)
    assert _gate(tmp_path, {**data, "rows": [r for r in rows if r["corpus"] != "tiny"]}) == 5


def test_an_interrupted_new_file_fails_the_gate(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert _gate(tmp_path, {**raw(), "interrupted": True}) == 5
    assert "interrupted" in capsys.readouterr().err
    assert _gate(tmp_path, {**raw(), "interrupted": True}, "--allow-missing") == 0


def test_max_drop_alone_fails_closed_too(tmp_path: Path) -> None:
    old = _write(tmp_path, raw(), "old.json")
    new = _write(tmp_path, _without(raw(), "bm25"), "new.json")
    assert main(["report", str(new), "--baseline", str(old), "--max-drop", "0.5"]) == 5


def test_nan_scores_in_the_baseline_fail_the_gate(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    data = raw()
    for row in data["rows"]:  # type: ignore[attr-defined]
        for q in row["queries"]:
            q["scores"]["file.hit@10"] = math.nan
        row["metrics"]["file.hit@10"] = {"mean": None, "lo": None, "hi": None, "n": 0}
    # as a run with those scores would have written it: no pair, so no comparison
    data["comparisons"] = [c for c in data["comparisons"]  # type: ignore[attr-defined]
                           if c["metric"] != "file.hit@10"]
    old = _write(tmp_path, data, "old.json")
    new = _write(tmp_path, raw(), "new.json")
    assert main(["report", str(new), "--baseline", str(old), "--fail-on", "regression"]) == 5
    assert "NaN" in capsys.readouterr().err
    assert main(["report", str(new), "--baseline", str(old), "--fail-on", "regression",
                 "--allow-missing"]) == 0


def test_no_shared_query_fails_the_gate(tmp_path: Path) -> None:
    data = raw()
    for row in data["rows"]:  # type: ignore[attr-defined]
        for q in row["queries"]:
            q["id"] = "other-" + q["id"]
    assert _gate(tmp_path, data) == 5


def test_no_matching_row_is_refused(tmp_path: Path) -> None:
    data = raw()
    for row in data["rows"]:  # type: ignore[attr-defined]
        row["engine"] = "renamed-" + row["engine"]
    data["engines"] = {"renamed-" + k: {**v, "name": "renamed-" + k}
                       for k, v in data["engines"].items()}  # type: ignore[attr-defined]
    assert _gate(tmp_path, data) == 2
