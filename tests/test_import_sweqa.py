"""`bench import sweqa`: SWE-QA-Pro / SWE-QA rows -> git-pinned corpora, gold = cited files."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import load_corpora
from codesearch_bench.datasets import sweqa
from codesearch_bench.datasets.base import ImportOptions
from codesearch_bench.errors import UsageError
from codesearch_bench.results.schema import ResultFile

FILES = {
    "src/app/core.py": "def serve(frames):\n    for frame in frames:\n        handle(frame)\n",
    "src/app/util.py": "def parse(raw):\n    return raw.split(b'|')\n",
    "src/app/log.py": "def note(msg):\n    print(msg)\n",
    "src/app/models.py": "class Frame:\n    pass\n",
    "src/app/db/models.py": "class Row:\n    pass\n",
    "docs/guide.rst": "Guide\n=====\n\nFrames are parsed before they are served.\n",
    "README.md": "# app\n",
    "tools/Makefile": "all:\n\ttrue\n",
}


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _clone(where: Path) -> str:
    """A real repository at `where` with FILES and a symlink; returns its commit."""
    for rel, text in FILES.items():
        (where / rel).parent.mkdir(parents=True, exist_ok=True)
        (where / rel).write_text(text)
    os.symlink("src/app/core.py", where / "link.py")
    _git("init", "-q", cwd=where)
    _git("add", ".", cwd=where)
    _git("commit", "-qm", "base", cwd=where)
    return _git("rev-parse", "HEAD", cwd=where)


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> sweqa.Tree:
    where = tmp_path_factory.mktemp("clone")
    found = sweqa.read_tree(where, _clone(where))
    assert found is not None
    return found


@pytest.mark.parametrize(("answer", "cited", "how", "path"), [
    ("see `src/app/core.py`.", "src/app/core.py", sweqa.EXACT, "src/app/core.py"),
    ("at src/app/util.py: line 1-2, it splits", "src/app/util.py", sweqa.EXACT,
     "src/app/util.py"),
    ("(`src/app/log.py:2`)", "src/app/log.py", sweqa.EXACT, "src/app/log.py"),
    ("```1:3:src/app/core.py\n```", "src/app/core.py", sweqa.EXACT, "src/app/core.py"),
    ("[the guide](docs/guide.rst#L4-L5)", "docs/guide.rst", sweqa.EXACT, "docs/guide.rst"),
    ("run ./src/app/core.py, then", "src/app/core.py", sweqa.EXACT, "src/app/core.py"),
    ("'tools/Makefile'", "tools/Makefile", sweqa.EXACT, "tools/Makefile"),
    ("in util.py (line 1)", "util.py", sweqa.SUFFIX, "src/app/util.py"),
    ("`app/log.py`", "app/log.py", sweqa.SUFFIX, "src/app/log.py"),
    ("https://github.com/acme/app/blob/0a1b2c3/src/app/core.py#L2", "//github.com/acme/app/"
     "blob/0a1b2c3/src/app/core.py", sweqa.CHECKOUT, "src/app/core.py"),
    ("/home/dev/repos/app/README.md", "/home/dev/repos/app/README.md", sweqa.CHECKOUT,
     "README.md"),
    ("`models.py`", "models.py", sweqa.AMBIGUOUS, None),
    ("see link.py", "link.py", sweqa.MISSING, None),  # a symlink is not a file of the tree
    ("src/app/gone.py", "src/app/gone.py", sweqa.MISSING, None),
])
def test_each_citation_shape_resolves(tree: sweqa.Tree, answer: str, cited: str, how: str,
                                      path: str | None) -> None:
    assert sweqa.citations(answer, tree) == [cited]
    found, paths = tree.resolve(cited, "app")
    assert found == how
    if path is not None:
        assert paths == [path]
    if how == sweqa.AMBIGUOUS:
        assert paths == ["src/app/db/models.py", "src/app/models.py"]


def test_words_that_are_not_paths_are_not_citations(tree: sweqa.Tree) -> None:
    text = ("It calls self.parse and os.path.join, then e.g. version 3.11 and and/or "
            "input/output: `src/app/` is a folder, and Makefile alone is a word.")
    assert sweqa.citations(text, tree) == []


def test_an_ambiguous_suffix_the_answer_already_names_adds_nothing(tree: sweqa.Tree) -> None:
    counts: Counter[str] = Counter()
    cited = sweqa.citations("`models.py` holds Row (src/app/db/models.py), and `models.py` "
                            "again; util.py parses", tree)
    assert sweqa.gold_of(cited, tree, "app", counts) == ["src/app/db/models.py",
                                                          "src/app/util.py"]
    assert counts == {sweqa.EXACT: 1, sweqa.SUFFIX: 1, sweqa.OWN: 1}


def _pro_rows(path: Path, sha: str) -> Path:
    rows = [
        {"repo": "acme/app", "commit_id": sha, "cluster": {"id": "3", "name": "parsing"},
         "qa_type": "how", "question": "How does the server turn raw bytes into frames?",
         "answer": "The loop in `src/app/core.py` (lines 1-3) hands raw input to `util.py:1`; "
         "the guide explains it (docs/guide.rst: line 4-4)."},
        {"repo": "acme/app", "commit_id": sha, "cluster": "logging",
         "qa_type": {"class_name": "Where", "sub_class_name": "location"},
         "question": "Where are messages written out?",
         "answer": "In /home/dev/repos/app/src/app/log.py, see also "
         "https://github.com/acme/app/blob/main/src/app/log.py#L1 and ```1:2:README.md```."},
        {"repo": "acme/app", "commit_id": sha, "cluster": "models", "qa_type": "why",
         "question": "Why are there two model modules?", "answer": "Because `models.py` is "
         "split by layer."},
        {"repo": "acme/app", "commit_id": sha, "cluster": "design", "qa_type": "what",
         "question": "What design principle guides the server?", "answer": "Keeping it small."},
        {"repo": "acme/app", "commit_id": "f" * 40, "cluster": "x", "qa_type": "what",
         "question": "A row pinned to a commit the clone lacks", "answer": "src/app/core.py"},
        {"repo": "acme/other", "commit_id": sha, "cluster": "x", "qa_type": "what",
         "question": "A row whose repository was not cloned", "answer": "src/app/core.py"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_pro_rows_keep_cited_files_qa_type_and_provenance(tmp_path: Path) -> None:
    sha = _clone(_mkdir(tmp_path / "clones" / "acme" / "app"))
    rows = _pro_rows(tmp_path / "test.jsonl", sha)
    suite = sweqa.load(ImportOptions(source=rows, repos=tmp_path / "clones"))
    (corpus,) = suite.corpora
    assert corpus.name == "sweqa-pro-app" and corpus.files == {}
    assert corpus.git == ("https://github.com/acme/app", sha)
    assert corpus.languages == ["python"]
    golds = [[g.path for g in q.gold] for q in corpus.queries]
    assert golds == [["src/app/core.py", "src/app/util.py", "docs/guide.rst"],
                     ["src/app/log.py", "README.md"]]
    assert [q.tags for q in corpus.queries] == [["swe-qa-pro", "how"], ["swe-qa-pro", "where"]]
    assert [q.id for q in corpus.queries] == ["sweqa-pro-app-001", "sweqa-pro-app-002"]
    prov = suite.provenance
    assert prov["dataset"] == "swe-qa-pro" and "Apache-2.0" in prov["license"]
    assert prov["rows_read"] == 6 and prov["rows_kept"] == 2 == suite.kept
    assert len(prov["files"]["test.jsonl"]["sha256"]) == 64
    assert prov["gold"] == {sweqa.CHECKOUT: 2, sweqa.EXACT: 3, sweqa.SUFFIX: 1}
    assert prov["dropped"] == {
        sweqa.AMBIGUOUS: 1,
        "row whose answer cites no file": 1,
        "row whose citations resolve to no file (ambiguous or not in the tree)": 1,
        "row whose commit is not in its clone": 1,
        "row whose repository has no clone under --repos": 1,
    }


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True)
    return path


def test_swe_qa_files_take_their_pins_from_repo_commit_txt(tmp_path: Path) -> None:
    checkout = _mkdir(tmp_path / "SWE-QA-Bench")
    sha = _clone(_mkdir(tmp_path / "repos" / "app"))
    (checkout / "repo_commit.txt").write_text(f"https://github.com/acme/app {sha[:7]}\n\n")
    bench = _mkdir(checkout / "Benchmark")
    (bench / "app.jsonl").write_text(json.dumps({
        "question": "Which module splits raw input?",
        "answer": "The helper in src/app/util.py, called from core.py."}) + "\n")
    (bench / "ghost.jsonl").write_text(json.dumps({
        "question": "Not in the pin list", "answer": "src/app/util.py"}) + "\n")
    suite = sweqa.load(ImportOptions(source=checkout, repos=tmp_path / "repos"))
    (corpus,) = suite.corpora
    assert corpus.name == "sweqa-app"
    assert corpus.git == ("https://github.com/acme/app", sha)  # the short pin, made full
    assert corpus.queries[0].tags == ["swe-qa"]
    assert [g.path for g in corpus.queries[0].gold] == ["src/app/util.py", "src/app/core.py"]
    assert suite.provenance["dataset"] == "swe-qa"
    assert set(suite.provenance["files"]) == {"app.jsonl", "ghost.jsonl", "repo_commit.txt"}
    assert suite.dropped["row with no commit id (none in the row or the pin list)"] == 1


def test_the_import_runs_end_to_end_on_the_pinned_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clones = tmp_path / "clones"
    sha = _clone(_mkdir(clones / "acme" / "app"))
    rows = _pro_rows(tmp_path / "test.jsonl", sha)
    out = tmp_path / "suite"
    assert main(["import", "sweqa", "--from", str(rows), "--repos", str(clones),
                 "--out", str(out)]) == 0
    corpora = load_corpora(out / "corpora.toml")
    assert list(corpora) == ["sweqa-pro-app"]
    spec = corpora["sweqa-pro-app"].spec
    assert spec.pin() == f"git https://github.com/acme/app@{sha}"
    assert spec.provenance is not None and spec.provenance["rows_kept"] == 2
    queries = [json.loads(x) for x in (out / "sweqa-pro-app.jsonl").read_text().splitlines()]
    assert queries[1]["gold"] == [{"path": "src/app/log.py"}, {"path": "README.md"}]
    # The clones stand in for the forge, through git's own redirection.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.file://{clones}/.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://github.com/")
    result_file = tmp_path / "r.json"
    assert main(["compare", "--suite", str(out), "--engine", "engines/grep.json",
                 "--work", str(tmp_path / "w"), "--json", str(result_file)]) == 0
    row = next(r for r in ResultFile.load(result_file).rows if r.headline)
    assert [q.tags for q in row.queries] == [["swe-qa-pro", "how"], ["swe-qa-pro", "where"]]


def test_without_clones_or_rows_it_says_what_to_pass(tmp_path: Path) -> None:
    rows = _pro_rows(tmp_path / "test.jsonl", "a" * 40)
    with pytest.raises(UsageError, match="--repos"):
        sweqa.load(ImportOptions(source=rows))
    with pytest.raises(UsageError, match="no row has a citation"):
        sweqa.load(ImportOptions(source=rows, repos=_mkdir(tmp_path / "empty")))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "x"}) + "\n")
    with pytest.raises(UsageError, match="missing question, answer"):
        sweqa.load(ImportOptions(source=bad, repos=tmp_path))
    (_mkdir(tmp_path / "plain" / "acme" / "app") / "core.py").write_text("x = 1\n")
    with pytest.raises(UsageError, match="not a git clone"):
        sweqa.load(ImportOptions(source=rows, repos=tmp_path / "plain"))


PRO_TEST = "https://huggingface.co/datasets/TIGER-Lab/SWE-QA-Pro-Bench/resolve/main/data/test.jsonl"


@pytest.mark.network
def test_the_published_rows_have_the_fields_the_importer_reads(tmp_path: Path) -> None:
    try:
        with urllib.request.urlopen(PRO_TEST, timeout=30) as response:
            data = response.read()
    except OSError as exc:
        pytest.skip(f"the Hugging Face hub cannot be reached: {exc}")
    rows = [json.loads(line) for line in data.decode().splitlines() if line.strip()]
    assert rows and all({"repo", "commit_id", "qa_type", "question", "answer"} <= set(r)
                        for r in rows)
    tree = sweqa.Tree.of("0" * 40, ["x.py"])  # any tree using .py: is anything path-like cited?
    assert sum(bool(sweqa.citations(str(r["answer"]), tree)) for r in rows) > len(rows) // 2
