"""Hostile dataset files: every bad row is dropped and counted, nothing escapes --out.

Each case builds its bad dataset here, in the format the importer reads (the
tests/test_import_*.py files show the good ones), runs `bench import`, and
checks the import ends with a clear error or a counted drop, never a traceback,
and that a failed import leaves no suite folder behind.
"""

from __future__ import annotations

import errno
import gzip
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import load_corpora

pytestmark = pytest.mark.hostile

PATCH = "--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x\n+y\n"
SHA = "a" * 40
CODE = "def take(timeout):\n    return timeout\n\n\ndef give():\n    return 1\n"


def _beir(base: Path, *, corpus: bytes | None = None, queries: bytes | None = None,
          qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t1\n") -> Path:
    folder = base / "set"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_bytes(corpus if corpus is not None else
                                          b'{"_id": "d1", "text": "def a(): pass"}\n')
    (folder / "queries.jsonl").write_bytes(queries if queries is not None else
                                           b'{"_id": "q1", "text": "find a"}\n')
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


def _task(iid: str, repo: str = "acme/app", patch: str = PATCH, **more: Any) -> dict[str, Any]:
    return {"instance_id": iid, "repo": repo, "base_commit": SHA,
            "problem_statement": f"bug {iid}", "patch": patch, **more}


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _repoqa(path: Path, repos: list[dict[str, Any]], gz: bool = False) -> Path:
    raw = json.dumps({"python": repos}).encode()
    path.write_bytes(gzip.compress(raw) if gz else raw)
    return path


def _repo(name: str, start: Any = 0, end: Any = 2) -> dict[str, Any]:
    return {"repo": name, "commit_sha": "0" * 40, "content": {"pool/core.py": CODE},
            "needles": [{"name": "take", "path": "pool/core.py", "start_line": start,
                         "end_line": end, "description": "wait for a connection"}]}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    return code, captured.out + captured.err


def _flat(text: str) -> str:
    """The output with all whitespace removed: the console wraps long paths."""
    return "".join(text.split())


def _provenance(out: Path) -> dict[str, Any]:
    corpora = load_corpora(out / "corpora.toml")
    prov = next(iter(corpora.values())).spec.provenance
    assert prov is not None
    return prov


def _queries(out: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / f"{name}.jsonl").read_text().splitlines()]


class TestHostileImports:
    def test_invalid_utf8_row_is_dropped_and_named(self, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
        corpus = (b'{"_id": "d1", "text": "def a(): pass"}\n'
                  b'{"_id": "d2", "text": "bad \xff\xfe bytes"}\n')
        out = tmp_path / "out"
        code, said = _run(["import", "beir", "--from", str(_beir(tmp_path, corpus=corpus)),
                           "--out", str(out)], capsys)
        assert code == 0
        assert _provenance(out)["dropped"]["row not valid UTF-8"] == 1
        assert "corpus.jsonl:2" in _flat(said)

    def test_lone_surrogate_row_is_dropped(self, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
        corpus = (b'{"_id": "d1", "text": "def a(): pass"}\n'
                  b'{"_id": "d2", "text": "half a pair \\ud800 here"}\n')
        out = tmp_path / "out"
        code, _ = _run(["import", "beir", "--from", str(_beir(tmp_path, corpus=corpus)),
                        "--out", str(out)], capsys)
        assert code == 0
        assert _provenance(out)["dropped"]["row with a lone surrogate (not text)"] == 1

    @pytest.mark.parametrize("score", ["inf", "1e400", "nan", "-inf"])
    def test_non_finite_qrels_score_is_dropped(self, tmp_path: Path, score: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
        qrels = f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t{score}\n"
        out = tmp_path / "out"
        code, _ = _run(["import", "beir", "--from", str(_beir(tmp_path, qrels=qrels)),
                        "--out", str(out)], capsys)
        assert code == 0
        assert _provenance(out)["dropped"]["row with a number that is not finite"] == 1

    def test_non_finite_number_in_a_json_row_is_dropped(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        corpus = (b'{"_id": "d1", "text": "def a(): pass"}\n'
                  b'{"_id": "d2", "text": "x", "weight": 1e400}\n'
                  b'{"_id": "d3", "text": "x", "weight": NaN}\n')
        out = tmp_path / "out"
        code, _ = _run(["import", "beir", "--from", str(_beir(tmp_path, corpus=corpus)),
                        "--out", str(out)], capsys)
        assert code == 0
        assert _provenance(out)["dropped"]["row with a number that is not finite"] == 2

    def test_duplicate_document_id_keeps_the_first(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        corpus = (b'{"_id": "d1", "text": "the first"}\n'
                  b'{"_id": "d1", "text": "the second"}\n')
        out = tmp_path / "out"
        code, _ = _run(["import", "beir", "--from", str(_beir(tmp_path, corpus=corpus)),
                        "--out", str(out)], capsys)
        assert code == 0
        assert _provenance(out)["dropped"]["row with an id an earlier row has"] == 1
        assert _provenance(out)["documents"] == 1

    def test_query_ids_colliding_after_slugging_stay_apart(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        queries = b'{"_id": "q 1", "text": "find a"}\n{"_id": "q_1", "text": "find b"}\n'
        qrels = "query-id\tcorpus-id\tscore\nq 1\td1\t1\nq_1\td1\t1\n"
        out = tmp_path / "out"
        code, _ = _run(["import", "beir", "--from", str(_beir(tmp_path, queries=queries,
                                                                 qrels=qrels)),
                        "--out", str(out)], capsys)
        assert code == 0
        ids = [q["id"] for q in _queries(out, "set")]
        assert len(ids) == 2 and len(set(ids)) == 2

    def test_repositories_colliding_after_slugging_both_kept(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        release = _repoqa(tmp_path / "r.json", [_repo("acme/pool"), _repo("Acme Pool")])
        out = tmp_path / "out"
        code, _ = _run(["import", "repoqa", "--from", str(release), "--out", str(out)], capsys)
        assert code == 0
        assert len(load_corpora(out / "corpora.toml")) == 2

    def test_repeated_instance_id_is_dropped(self, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
        rows = _jsonl(tmp_path / "t.jsonl", [_task("acme__app-1"), _task("acme__app-1")])
        out = tmp_path / "out"
        code, _ = _run(["import", "swebench", "--from", str(rows), "--out", str(out)], capsys)
        assert code == 0
        assert _provenance(out)["dropped"]["row with an id an earlier row has"] == 1
        assert len(load_corpora(out / "corpora.toml")) == 1

    def test_instance_ids_colliding_after_slugging_both_kept(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        rows = _jsonl(tmp_path / "t.jsonl", [_task("acme app-1"), _task("acme_app-1"),
                                             _task("Acme-App-1"), _task("acme..app-1."),
                                             _task("x" * 59 + ".y")])
        out = tmp_path / "out"
        code, _ = _run(["import", "swebench", "--from", str(rows), "--out", str(out)], capsys)
        assert code == 0
        assert len(load_corpora(out / "corpora.toml")) == 5

    @pytest.mark.parametrize("name", ["../../escaped", "/abs", "a/b", ".hidden", "a\nb"])
    def test_name_cannot_leave_out(self, tmp_path: Path, name: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
        out = tmp_path / "deep" / "out"
        code, said = _run(["import", "beir", "--from", str(_beir(tmp_path)), "--out", str(out),
                           "--name", name], capsys)
        assert code == 2 and "--name" in said
        assert not (tmp_path / "escaped.jsonl").exists() and not out.exists()

    @pytest.mark.parametrize(("start", "end"), [(-5, 2), (0, 10**9), (7, 9), (1, 1),
                                                (True, 2), (0.5, 2)])
    def test_gold_lines_outside_the_file_drop_only_that_needle(
            self, tmp_path: Path, start: Any, end: Any,
            capsys: pytest.CaptureFixture[str]) -> None:
        release = _repoqa(tmp_path / "r.json", [_repo("acme/good"),
                                                _repo("acme/bad", start, end)])
        out = tmp_path / "out"
        code, _ = _run(["import", "repoqa", "--from", str(release), "--out", str(out)], capsys)
        assert code == 0
        prov = _provenance(out)
        assert prov["dropped"]["needle whose path or lines are not in the repository"] == 1
        root = str(tmp_path / "corpora")
        assert main(["setup", "--suite", str(out), "--corpora-root", root]) == 0
        assert main(["validate", "--suite", str(out), "--corpora-root", root]) == 0

    @pytest.mark.parametrize("bad", ["../../etc/passwd", "/etc/passwd", "src/../../x.py",
                                     "src\\..\\x.py"])
    def test_patch_path_traversal_is_dropped(self, tmp_path: Path, bad: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
        evil = f"--- a/{bad}\n+++ b/{bad}\n@@ -1 +1 @@\n-x\n+y\n" + PATCH
        rows = _jsonl(tmp_path / "t.jsonl", [_task("acme__app-1", patch=evil),
                                             _task("acme__app-2")])
        out = tmp_path / "out"
        code, _ = _run(["import", "swebench", "--from", str(rows), "--out", str(out)], capsys)
        assert code == 0
        assert _provenance(out)["dropped"]["path outside the tree (absolute or ..)"] == 1
        assert len(load_corpora(out / "corpora.toml")) == 2

    def test_gzip_bomb_is_refused_by_the_cap(self, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
        monkeypatch.setenv("BENCH_IMPORT_MAX_BYTES", str(1 << 20))
        bomb = tmp_path / "r.json.gz"
        bomb.write_bytes(gzip.compress(b'{"python": ["' + b" " * (8 << 20) + b'"]}'))
        out = tmp_path / "out"
        code, said = _run(["import", "repoqa", "--from", str(bomb), "--out", str(out)], capsys)
        assert code == 3 and "BENCH_IMPORT_MAX_BYTES" in said
        assert not out.exists()

    def test_file_over_the_size_cap_is_refused(self, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
        monkeypatch.setenv("BENCH_IMPORT_MAX_BYTES", "100")
        rows = _jsonl(tmp_path / "t.jsonl", [_task(f"acme__app-{i}") for i in range(5)])
        out = tmp_path / "out"
        code, said = _run(["import", "swebench", "--from", str(rows), "--out", str(out)], capsys)
        assert code == 3 and "BENCH_IMPORT_MAX_BYTES" in said and str(rows) in _flat(said)

    def test_failed_write_leaves_nothing_and_a_rerun_works(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> None:
        rows = _jsonl(tmp_path / "t.jsonl", [_task("acme__app-1")])
        out = tmp_path / "out"
        real = Path.write_text

        def full(self: Path, *args: Any, **kwargs: Any) -> int:
            if self.name == "corpora.toml" or self.name.endswith(".toml.tmp"):
                raise OSError(errno.ENOSPC, "No space left on device", str(self))
            return real(self, *args, **kwargs)

        monkeypatch.setattr(Path, "write_text", full)
        code, said = _run(["import", "swebench", "--from", str(rows), "--out", str(out)], capsys)
        assert code == 3 and "No space left on device" in said and str(out) in _flat(said)
        assert not out.exists()
        assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]
        monkeypatch.setattr(Path, "write_text", real)
        code, _ = _run(["import", "swebench", "--from", str(rows), "--out", str(out)], capsys)
        assert code == 0 and (out / "corpora.toml").is_file()

    def test_blank_problem_statement_is_dropped_not_a_traceback(
            self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        blank = _task("acme__app-1")
        blank["problem_statement"] = "   \n "
        rows = _jsonl(tmp_path / "t.jsonl", [blank, _task("acme__app-2")])
        out = tmp_path / "out"
        code, _ = _run(["import", "swebench", "--from", str(rows), "--out", str(out)], capsys)
        assert code == 0
        assert len(load_corpora(out / "corpora.toml")) == 1

    def test_broken_lines_are_dropped_and_counted(self, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
        corpus = (b'{"_id": "d1", "text": "def a(): pass"}\n{"_id": "d2", "te\n[1, 2]\n'
                  b'{"text": "no id"}\n{"_id": "d3", "n": ' + b"9" * 5000 + b"}\n")
        qrels = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1 d1 1\nq1\td1\tmany\n"
        out = tmp_path / "out"
        code, said = _run(["import", "beir", "--from", str(_beir(tmp_path, corpus=corpus,
                                                                    qrels=qrels)),
                           "--out", str(out)], capsys)
        assert code == 0
        dropped = _provenance(out)["dropped"]
        assert dropped["line that is not a JSON object"] == 3
        assert dropped["document with no `_id`"] == 1
        assert dropped["qrels line whose score is not a number"] == 1
        assert dropped["qrels line without query-id, corpus-id and score (tab-separated)"] == 1
        assert "corpus.jsonl:2" in _flat(said)


def _fake_hub(monkeypatch: pytest.MonkeyPatch, rows: list[dict[str, Any]]) -> None:
    module = types.ModuleType("datasets")
    module.load_dataset = lambda *a, **k: [dict(r) for r in rows]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "datasets", module)


class TestHostileHubImports:
    def test_hub_rows_with_nan_and_surrogates_are_dropped(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> None:
        _fake_hub(monkeypatch, [_task("acme__app-1", score=float("nan")),
                                _task("acme__app-2", problem_statement="bad \udc80 text"),
                                _task("acme__app-3")])
        out = tmp_path / "out"
        code, _ = _run(["import", "swebench", "--out", str(out)], capsys)
        assert code == 0
        dropped = _provenance(out)["dropped"]
        assert dropped["row with a number that is not finite"] == 1
        assert dropped["row with a lone surrogate (not text)"] == 1
        assert len(load_corpora(out / "corpora.toml")) == 1

    def test_a_full_disk_writing_the_hub_rows_names_the_cause(
            self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
            capsys: pytest.CaptureFixture[str]) -> None:
        _fake_hub(monkeypatch, [_task("acme__app-1")])
        real = Path.open

        def full(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
            if "w" in mode and self.suffix == ".jsonl":
                raise OSError(errno.ENOSPC, "No space left on device", str(self))
            return real(self, mode, *args, **kwargs)

        monkeypatch.setattr(Path, "open", full)
        out = tmp_path / "out"
        code, said = _run(["import", "swebench", "--out", str(out)], capsys)
        assert code == 3 and "No space left on device" in said and not out.exists()
