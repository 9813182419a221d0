"""`bench setup`, `bench validate` and `probe --corpus` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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
