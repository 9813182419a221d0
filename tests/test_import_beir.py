"""`bench import beir`: a BEIR-format folder -> a suite compare runs, with provenance."""

from __future__ import annotations

import json
import re
import shlex
import tarfile
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import load_corpora
from codesearch_bench.datasets.base import ImportOptions
from codesearch_bench.datasets.beir import doc_path, load
from codesearch_bench.errors import UsageError
from codesearch_bench.results.schema import ResultFile

DOCS = [
    {"_id": "d1", "title": "retry", "text": "def backoff(attempt):\n    return 2 ** attempt\n"},
    {"_id": "d/2", "title": "", "text": "def parse_settings(text):\n    return json.loads(text)\n"},
    {"_id": "d3", "title": "width", "text": "def cell_width(s):\n    return len(s)\n"},
]
QUERIES = [
    {"_id": "q1", "text": "how long to wait before trying again"},
    {"_id": "q2", "text": "read settings from json text"},
    {"_id": "q3", "text": "a query whose only document is missing"},
    {"_id": "q4", "text": "a query without any qrels line"},
]
QRELS = "query-id\tcorpus-id\tscore\nq1\td1\t2\nq2\td/2\t1\nq2\td3\t0\nq3\tgone\t1\n"


def _dataset(base: Path) -> Path:
    folder = base / "toy-beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in DOCS))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(QRELS)
    return folder


def test_import_writes_a_pinned_suite_with_provenance(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    assert main(["import", "beir", "--from", str(_dataset(tmp_path)), "--out", str(out),
                 "--license", "CC-BY-4.0"]) == 0
    corpus = load_corpora(out / "corpora.toml")["toy-beir"]
    prov = corpus.spec.provenance
    assert prov is not None and prov["dataset"] == "beir" and prov["license"] == "CC-BY-4.0"
    assert prov["queries_kept"] == 2 and prov["documents"] == 3
    assert prov["dropped"] == {"qrels pair whose document is not in the corpus": 1,
                               "qrels pair with score 0 (not relevant)": 1,
                               "query with no relevant document in qrels": 2}
    assert len(prov["files"]["qrels"]["sha256"]) == 64
    queries = [json.loads(line) for line in (out / "toy-beir.jsonl").read_text().splitlines()]
    assert queries[0]["gold"] == [{"path": doc_path("d1", "txt"), "grade": 2}]
    with tarfile.open(out / "toy-beir.tar.gz") as tar:
        names = sorted(tar.getnames())
    assert names == sorted(f"toy-beir/{doc_path(d['_id'], 'txt')}" for d in DOCS)
    # Deterministic: the same input writes the same bytes (so the same sha256 pin).
    again = tmp_path / "again"
    main(["import", "beir", "--from", str(_dataset(tmp_path / "x")), "--out", str(again),
          "--name", "toy-beir", "--license", "CC-BY-4.0"])
    assert (again / "toy-beir.tar.gz").read_bytes() == (out / "toy-beir.tar.gz").read_bytes()


def test_safe_stable_file_names() -> None:
    assert doc_path("../../etc/passwd", "txt").startswith("docs/")
    assert ".." not in doc_path("../../etc/passwd", "txt")
    assert doc_path("a b", "py") != doc_path("a_b", "py")  # the hash keeps them apart
    assert doc_path("x", "py") == doc_path("x", "py")


def test_the_suite_runs_and_results_carry_provenance(tmp_path: Path) -> None:
    out = tmp_path / "suite"
    main(["import", "beir", "--from", str(_dataset(tmp_path)), "--out", str(out)])
    result_file = tmp_path / "r.json"
    code = main(["compare", "--suite", str(out), "--engine", "engines/grep.json",
                 "--work", str(tmp_path / "w"), "--json", str(result_file)])
    assert code == 0
    result = ResultFile.load(result_file)
    info = result.corpora["toy-beir"]
    assert info.provenance is not None and info.provenance["dataset"] == "beir"
    assert info.queries == 2
    # The qrels grade reaches the result: file nDCG@10 gains it (graded), the rest binary.
    (row,) = [r for r in result.rows if r.headline]
    q1 = next(q for q in row.queries if q.id.endswith("q1"))
    assert [g.grade for g in q1.gold] == [2]


def test_bad_input_names_the_file(tmp_path: Path) -> None:
    folder = _dataset(tmp_path)
    (folder / "qrels" / "test.tsv").write_text("q1\td1\n")
    with pytest.raises(UsageError) as err:
        load(ImportOptions(source=folder))
    assert "test.tsv:1" in str(err.value)
    assert main(["import", "beir", "--from", str(tmp_path / "nowhere"),
                 "--out", str(tmp_path / "o")]) == 2


def test_an_imported_suite_sets_up_validates_and_probes_by_suite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "suite"
    assert main(["import", "beir", "--from", str(_dataset(tmp_path)), "--out", str(out)]) == 0
    work = ["--work", str(tmp_path / "w")]
    assert main(["setup", "--suite", str(out), *work]) == 0
    assert main(["validate", "--suite", str(out), *work]) == 0
    capsys.readouterr()
    assert main(["probe", "--engine", "engines/grep.json", "--suite", str(out),
                 "--query", "toy-beir-q1", *work]) == 0
    shown = capsys.readouterr().out
    assert doc_path("d1", "txt") in shown  # the query's gold, found in the suite's one corpus
    assert main(["probe", "--engine", "engines/grep.json", "--suite", str(out),
                 "--query", "nope", *work]) == UsageError.exit_code
    assert "--query nope: no corpus of the suite has that query" in capsys.readouterr().err


def _said(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    return " ".join((captured.out + captured.err).split())  # rich may wrap a long line


def _named(text: str, label: str) -> list[str]:
    """The command after `label: ` in import's output, split as a shell would."""
    line = next(ln for ln in text.splitlines() if ln.startswith(f"{label}: "))
    words = shlex.split(line.removeprefix(f"{label}: "))
    assert words[0] == "bench"
    return words[1:]


def test_the_commands_import_prints_run_as_printed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # What a new user does: paste each line import printed, from where they ran it.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BENCH_WORK", str(tmp_path / "w"))
    monkeypatch.delenv("BENCH_CORPORA", raising=False)
    _dataset(tmp_path)
    capsys.readouterr()
    assert main(["import", "beir", "--from", "toy-beir", "--out", "suites/toy"]) == 0
    printed = capsys.readouterr().out
    validate = _named(printed, "check it")
    assert validate[0] == "validate" and "--suite" in validate
    # Before setup, validate fails; the command its hint names sets this suite up.
    assert main(validate) == 3
    hint = re.search(r"run `bench ([^`]*)`", _said(capsys))
    assert hint is not None and "--suite" in hint[1], "the hint must name the suite"
    assert main(shlex.split(hint[1])) == 0
    capsys.readouterr()
    assert main(validate) == 0, _said(capsys)
    assert "toy-beir" in _said(capsys)
    assert _named(printed, "set it up")[0] == "setup"
    assert main(_named(printed, "set it up")) == 0


def test_a_compare_hint_names_the_suite_it_ran(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "suite"
    assert main(["import", "beir", "--from", str(_dataset(tmp_path)), "--out", str(out)]) == 0
    queries = out / "toy-beir.jsonl"
    queries.write_text(queries.read_text().replace("docs/8b/", "docs/gone/"))
    capsys.readouterr()
    work = ["--work", str(tmp_path / "w")]
    assert main(["compare", "--suite", str(out), "--engine", "engines/grep.json", *work]) == 3
    hint = re.search(r"run `bench (validate [^`]*)`", _said(capsys))
    assert hint is not None, "compare names the validate command"
    assert main(shlex.split(hint[1])) == 3  # it runs, on this suite's corpus, and says why
    said = _said(capsys)
    assert "no corpus named" not in said and "docs/gone/" in said


def test_a_probe_hint_names_the_suite_it_probed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "suite"
    assert main(["import", "beir", "--from", str(_dataset(tmp_path)), "--out", str(out)]) == 0
    capsys.readouterr()
    work = ["--work", str(tmp_path / "w")]
    probe = ["probe", "--engine", "engines/grep.json", "--suite", str(out), "--query",
             "toy-beir-q1", *work]
    assert main(probe) == 2  # not set up yet
    hint = re.search(r"run `bench (setup [^`]*)`", _said(capsys))
    assert hint is not None
    assert main(shlex.split(hint[1])) == 0
    assert main(probe) == 0
