"""`bench setup`, `bench validate` and `probe --corpus` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from minicorpus import QUERIES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.run.plan import interleave

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    proj = tmp_path / "proj" / "lib"
    proj.mkdir(parents=True)
    (proj / "retry.py").write_text(
        "def backoff(attempt):\n    return 2 ** attempt\n\n\n"
        "class Policy:\n    def should_retry(self, error):\n        return True\n"
    )
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(q) + "\n" for q in [
        {"id": "ok", "query": "how long to wait between attempts",
         "gold": [{"path": "lib/retry.py", "symbol": "backoff"}]},
        {"id": "badpath", "query": "is another try allowed",
         "gold": [{"path": "lib/retri.py", "symbol": "Policy.should_retry"}]},
        {"id": "badsym", "query": "is another try allowed after a failure",
         "gold": [{"path": "lib/retry.py", "symbol": "Policy.shuold_retry"}]},
        {"id": "leak", "query": "what does backoff compute",
         "gold": [{"path": "lib/retry.py", "symbol": "backoff"}]},
    ]))
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.mini]\nsource = "path"\npath = "proj"\nqueries = "q.jsonl"\n')
    return toml


def args(corpus: Path, *rest: str) -> list[str]:
    work = corpus.parent / "work"
    return [*rest, "--corpora-file", str(corpus), "--work", str(work)]


def test_validate_reports_failures_with_suggestions(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args(corpus, "setup", "--corpus", "mini")) == 0
    code = main(args(corpus, "validate", "--corpus", "mini"))
    out = " ".join(capsys.readouterr().out.split())
    assert code == 3
    assert "2/4" in out  # two of four gold items resolve
    assert "lib/retri.py: no such file in the tree; did you mean 'lib/retry.py'?" in out
    assert "Policy.should_retry" in out  # the nearest symbol is suggested
    assert "leak: query text contains the gold symbol name 'backoff'" in out


def test_validate_unset_corpus_says_run_setup(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args(corpus, "validate")) == 3
    assert "bench setup --corpus mini" in " ".join(capsys.readouterr().out.split())


def test_probe_corpus_query_shows_the_gold_span(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(args(corpus, "setup", "--corpus", "mini")) == 0
    code = main(args(corpus, "probe", "--engine", str(REPO / "engines" / "grep.json"),
                     "--corpus", "mini", "--query", "ok"))
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0, out
    assert "lib/retry.py:backoff (lines 1-2)" in out
    assert "file slot: 1" in out


def test_setup_failure_is_reported_and_exit_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.gone]\nsource = "path"\npath = "missing-dir"\n')
    assert main(["setup", "--corpus", "gone", "--corpora-file", str(toml),
                 "--work", str(tmp_path / "w")]) == 3
    assert "does not exist" in capsys.readouterr().out


def test_engine_order_rotates_per_corpus() -> None:
    specs = ["a", "b", "c"]
    orders = [interleave(specs, i) for i in range(3)]  # type: ignore[arg-type]
    assert orders == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]
    assert {o[0] for o in orders} == set(specs)


def _needles_only(tmp_path: Path, queries: str | None) -> Path:
    """A documented corpus whose corpora.toml entry names `queries` (or none)."""
    proj = tmp_path / "proj" / "lib"
    proj.mkdir(parents=True)
    (proj / "retry.py").write_text(
        'def backoff(attempt):\n    """Exponential delay before the next retry attempt."""\n'
        "    return 2 ** attempt\n"
    )
    key = f'queries = "{queries}"\n' if queries is not None else ""
    toml = tmp_path / "corpora.toml"
    toml.write_text(f'[corpus.docs]\nsource = "path"\npath = "proj"\n{key}')
    return toml


@pytest.mark.parametrize(("queries", "because"), [
    (None, "corpora.toml names no `queries` file for it"),
    ("empty.jsonl", "empty.jsonl holds no question"),
])
def test_a_corpus_without_questions_is_a_note_and_runs_on_its_needles(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], queries: str | None, because: str
) -> None:
    toml = _needles_only(tmp_path, queries)
    (tmp_path / "empty.jsonl").write_text("\n")
    assert main(args(toml, "setup", "--corpus", "docs")) == 0
    capsys.readouterr()
    assert main(args(toml, "validate", "--corpus", "docs")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "no hand-written questions" in out and because in out
    assert "run on its needle track only" in out and "1/1" in out  # its one needle resolves
    # compare agrees: both tracks asked, the questions track is skipped, the needles run
    result = tmp_path / "out.json"
    assert main(args(toml, "compare", "--corpus", "docs", "--query-set", "all", "--engine",
                     str(REPO / "engines" / "grep.json"), "--json", str(result))) == 0
    assert "docs: no hand-written questions" in capsys.readouterr().err
    assert set(json.loads(result.read_text())["corpora"]) == {"docs:needles"}
    # and the questions track alone says what to run instead
    assert main(args(toml, "compare", "--corpus", "docs", "--query-set", "questions",
                     "--engine", str(REPO / "engines" / "grep.json"))) == 3
    assert "--query-set needles" in " ".join(capsys.readouterr().err.split())


def test_a_named_query_file_that_is_missing_still_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _needles_only(tmp_path, "qs/typo.jsonl")
    assert main(args(toml, "setup", "--corpus", "docs")) == 0
    capsys.readouterr()
    assert main(args(toml, "validate", "--corpus", "docs")) == 3
    out = " ".join(capsys.readouterr().out.split())
    assert "typo.jsonl: no such query set" in out and "key `queries`" in out
    assert "drop the key" in out


def test_no_questions_and_no_needles_is_nothing_to_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    toml = _needles_only(tmp_path, None)
    (tmp_path / "proj" / "lib" / "retry.py").write_text("def backoff(a):\n    return a\n")
    assert main(args(toml, "setup", "--corpus", "docs")) == 0
    capsys.readouterr()
    assert main(args(toml, "validate", "--corpus", "docs")) == 3
    assert "nothing to run" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(("splits", "said"), [
    (["dev", "test", None, None], "2 of its 4 queries lack a `split`"),
    ([None] * 4, "no query of the 4 has a `split`"),
])
def test_queries_without_a_split_are_a_warning_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], splits: list[str | None], said: str
) -> None:
    toml = make_corpus(tmp_path)
    queries = [{**q, "split": s} if s else q for q, s in zip(QUERIES, splits, strict=True)]
    (tmp_path / "mini.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    assert main(args(toml, "setup", "--corpus", "mini")) == 0
    capsys.readouterr()
    assert main(args(toml, "validate", "--corpus", "mini")) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"mini.jsonl: {said}" in out
    assert "only `--split all` (the default) runs them" in out
    # every query with a split: nothing to say
    (tmp_path / "mini.jsonl").write_text("".join(
        json.dumps({**q, "split": "test"}) + "\n" for q in QUERIES))
    assert main(args(toml, "validate", "--corpus", "mini")) == 0
    assert "split" not in capsys.readouterr().out
