"""The reference BM25 engine (scripts/bm25s-engine, engines/bm25s*.json) on tiny trees.

Analyzer, Lucene BM25 scores checked by hand, index and search, dash queries,
per_file, a missing package, both modes, and the specs through the harness.
Skipped as a whole where bm25s is not installed (`pip install bm25s==0.3.16`).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sqlite3
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("bm25s", reason="bm25s is not installed: pip install bm25s==0.3.16")

from codesearch_bench.cli import main
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "bm25s-engine"
SPECS = ("bm25s.json", "bm25s-persistent.json")


def _load() -> ModuleType:
    loader = SourceFileLoader("bm25s_engine", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[loader.name] = module  # dataclasses look their module up there
    loader.exec_module(module)
    return module


engine = _load()

CONFIG = '''import json


@register("settings")
def load_settings(path):
    """Read the settings file and parse its JSON."""
    with open(path) as fh:
        return json.load(fh)


def save_settings(path, data):
    with open(path, "w") as fh:
        json.dump(data, fh)
'''

CELLS = '''def cell_width(text):
    """Number of terminal cells a string occupies on screen."""
    return sum(2 if wide(c) else 1 for c in text)
'''

GRID_JS = '''/** Width of a grid cell in pixels. */
function cellWidth(cell) {
  return cell.colspan * 10;
}
'''

RETRY = "".join(
    f"def backoff_{i}(attempt):\n    \"\"\"Backoff delay number {i}.\"\"\"\n"
    f"    return {i} * attempt\n\n\n" for i in range(6)
)

HELP = '''def print_help(parser):
    """Show the -h usage text of the command line."""
    parser.print_usage()
'''


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        "pkg/config.py": CONFIG,
        "pkg/cells.py": CELLS,
        "pkg/retry.py": RETRY,
        "pkg/cli.py": HELP,
        "web/grid.js": GRID_JS,
        "docs/notes.md": "# Notes\n\nNothing about settings here, only prose.\n",
        ".git/config": "[core]\n\tsettings = json width\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "pkg" / "blob.bin").write_bytes(b"settings\0json\0width" * 10)
    return root


def run(*args: str, stdin: str | None = None,
        env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], input=stdin, env=env,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def state(tree: Path, tmp_path: Path) -> Path:
    out = tmp_path / "state"
    proc = run("index", str(tree), str(out))  # the command line once; the rest in-process
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["files"] == 6
    return out


def search(state: Path, query: str, n: int = 10, per_file: int = 1) -> list[dict]:
    """In-process, as `search` answers (a subprocess per query would cost ~0.4 s each)."""
    index = engine.open_index(str(state))
    try:
        return engine.search(index, query, n, per_file)
    finally:
        index.db.close()


def search_command(state: Path, query: str, n: int = 10, per_file: int = 1) -> list[dict]:
    proc = run("search", str(state), str(n), str(per_file), "--", query)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["hits"]


# --- the analyzer ---------------------------------------------------------------
def test_analyzer_splits_identifiers_keeps_them_whole_and_matches_queries() -> None:
    assert engine.words("parseHTTPHeader_v2") == ["parse", "http", "header", "v", "2",
                                                  "parsehttpheaderv2"]
    assert engine.analyze("cellWidth") == engine.analyze("cell_width") == [
        "cell", "width", "cellwidth"]
    assert engine.analyze("where is the json settings") == ["json", "setting"]
    assert engine.query_terms("settings settings json") == ["setting", "json"]
    assert engine.query_terms("-h") == [] and engine.query_terms("is the") == []


# --- index and search -------------------------------------------------------------
def test_index_skips_vcs_and_binary_files_and_reports_counts(state: Path) -> None:
    db = sqlite3.connect(state / "bm25s" / "chunks.sqlite")
    paths = {p for (p,) in db.execute("SELECT DISTINCT path FROM chunks")}
    assert paths == {"pkg/config.py", "pkg/cells.py", "pkg/retry.py", "pkg/cli.py",
                     "web/grid.js", "docs/notes.md"}
    meta = dict(db.execute("SELECT key, value FROM meta"))
    assert meta["files"] == "6" and meta["bm25s"] == sys.modules["bm25s"].__version__
    settings = json.loads(meta["settings"])
    assert settings == {"method": "lucene", "idf_method": "lucene", "k1": 1.5, "b": 0.75,
                        "dtype": "float32"}
    assert int(meta["chunks"]) == db.execute("SELECT count(*) FROM chunks").fetchone()[0]


def test_obvious_chunk_ranks_first_with_real_text_and_lines(tree: Path, state: Path) -> None:
    hits = search(state, "where are the settings parsed from a json file")
    first = hits[0]
    assert (first["path"], first["start"], first["end"]) == ("pkg/config.py", 4, 8)
    lines = (tree / first["path"]).read_text().splitlines()
    assert first["text"] == "\n".join(lines[first["start"] - 1 : first["end"]])
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[-1] > 0
    assert set(first) == {"path", "start", "end", "text", "score"}


def test_query_word_finds_camel_and_snake_identifiers(state: Path) -> None:
    found = {(h["path"], h["start"]) for h in search(state, "cellWidth", per_file=3)}
    assert {("web/grid.js", 1), ("pkg/cells.py", 1)} <= found


@pytest.mark.parametrize("query", ["-h", "-- settings", "--help usage"])
def test_a_query_starting_with_a_dash_is_a_query(state: Path, query: str) -> None:
    proc = run("search", str(state), "10", "1", "--", query)
    assert proc.returncode == 0, proc.stderr
    assert "usage:" not in proc.stdout + proc.stderr
    hits = json.loads(proc.stdout)["hits"]
    assert hits == search(state, query)  # the command line answers as the function does
    if "settings" in query:
        assert hits[0]["path"] == "pkg/config.py"
    if "usage" in query:
        assert hits[0]["path"] == "pkg/cli.py"


def test_per_file_and_n_cap_the_results(state: Path) -> None:
    for per_file in (1, 2, 3):
        hits = search(state, "backoff delay attempt", n=20, per_file=per_file)
        per_path: dict[str, int] = {}
        for h in hits:
            per_path[h["path"]] = per_path.get(h["path"], 0) + 1
        assert per_path["pkg/retry.py"] == per_file
        assert max(per_path.values()) <= per_file
    assert len(search(state, "backoff delay attempt", n=2, per_file=3)) == 2


def test_no_known_term_gives_no_hits(state: Path) -> None:
    assert search(state, "where is the") == []
    assert search(state, "zyzzyva quux") == []


def test_scores_are_lucene_bm25_with_the_default_k1_and_b(tmp_path: Path) -> None:
    """Three one-chunk files; every score recomputed from Lucene's formula."""
    root = tmp_path / "t"
    root.mkdir()
    bodies = {"a.txt": "alpha beta beta", "b.txt": "beta gamma", "c.txt": "gamma gamma gamma"}
    for name, body in bodies.items():
        (root / name).write_text(body + "\n")
    engine.build_index(str(root), str(tmp_path / "st"))
    docs = {n: engine.analyze(n) + engine.analyze(b) for n, b in bodies.items()}
    avgdl = sum(len(d) for d in docs.values()) / len(docs)
    k1, b = 1.5, 0.75

    def lucene(terms: list[str], doc: list[str]) -> float:
        total = 0.0
        for t in terms:
            df = sum(t in d for d in docs.values())
            tf = doc.count(t)
            idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
            total += idf * tf / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        return total

    hits = search(tmp_path / "st", "beta gamma", n=10, per_file=1)
    assert {h["path"] for h in hits} == set(bodies)
    for h in hits:
        assert h["score"] == pytest.approx(lucene(["beta", "gamma"], docs[h["path"]]), rel=1e-5)


def test_a_tree_without_terms_indexes_and_answers_nothing(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    summary = engine.build_index(str(tmp_path / "empty"), str(tmp_path / "st"))
    assert (summary["files"], summary["chunks"]) == (0, 0)
    assert search(tmp_path / "st", "settings") == []
    (tmp_path / "empty" / "a").write_text("is it in the way\n")  # a chunk, no term
    summary = engine.build_index(str(tmp_path / "empty"), str(tmp_path / "st"))
    assert (summary["files"], summary["chunks"], summary["terms"]) == (1, 1, 0)
    assert search(tmp_path / "st", "way") == []
    (tmp_path / "empty" / "b").write_text("settings\n")  # beside a chunk with no term
    engine.build_index(str(tmp_path / "empty"), str(tmp_path / "st"))
    assert [h["path"] for h in search(tmp_path / "st", "settings")] == ["b"]


def test_reindex_replaces_the_index(tree: Path, state: Path) -> None:
    (tree / "pkg" / "config.py").unlink()
    engine.build_index(str(tree), str(state))
    assert all(h["path"] != "pkg/config.py" for h in search(state, "settings json"))
    assert not (state / "bm25s.tmp").exists()


def test_search_without_an_index_fails_clearly(tmp_path: Path) -> None:
    proc = run("search", str(tmp_path / "nothing"), "10", "1", "--", "settings")
    assert proc.returncode != 0 and "no bm25s index" in proc.stderr


def test_missing_package_names_it_and_the_install_line(tmp_path: Path) -> None:
    argv = [str(SCRIPT), "index", str(tmp_path), str(tmp_path / "s")]
    blocked = ("import runpy, sys; sys.modules['bm25s'] = None; "  # import bm25s then fails
               f"sys.argv = {argv!r}; runpy.run_path({str(SCRIPT)!r}, run_name='__main__')")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BM25S_")}
    proc = subprocess.run([sys.executable, "-c", blocked], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode != 0
    assert "bm25s package is not importable" in proc.stderr
    assert f"pip install {engine.PIN}" in proc.stderr and "BM25S_PYTHON" in proc.stderr


def test_bm25s_python_names_the_interpreter_it_cannot_run(tmp_path: Path) -> None:
    env = {**os.environ, "BM25S_PYTHON": str(tmp_path / "no-such-python")}
    env.pop("BM25S_ENGINE_REEXECUTED", None)
    proc = run("--version", env=env)
    assert proc.returncode != 0 and "cannot run BM25S_PYTHON=" in proc.stderr


def test_pin_matches_the_specs_and_version_prints_it() -> None:
    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"bm25s {sys.modules['bm25s'].__version__} ")
    for name in SPECS:
        load_spec(REPO / "engines" / name)
        requires = json.loads((REPO / "engines" / name).read_text())["requires"]
        assert f"pip install {engine.PIN}" in requires


# --- persistent mode ------------------------------------------------------------------
def test_serve_answers_each_request_and_exits_on_eof(state: Path, tmp_path: Path) -> None:
    requests = [
        {"id": 1, "query": "settings parsed from json", "k": 5, "n": 5, "per_file": 1,
         "root": "/unused", "corpus": "mini", "state": str(state)},
        {"id": 2, "query": "-h", "n": 5, "per_file": 1, "state": str(state)},
        {"id": 3, "query": "backoff delay", "n": 10, "per_file": 2, "state": str(state)},
        {"id": 4, "query": "settings", "n": 5, "per_file": 1, "state": str(tmp_path / "none")},
        {"id": 5, "query": "width", "n": 1, "per_file": 1, "state": str(state)},
    ]
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stdout is not None
    answers = []
    for request in requests:  # one line in, one line out, before the next request
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        answers.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    assert proc.wait(timeout=10) == 0
    assert [a["id"] for a in answers] == [1, 2, 3, 4, 5]
    assert answers[0]["hits"] == search_command(state, "settings parsed from json", n=5)
    assert answers[1]["hits"] == []
    assert sum(h["path"] == "pkg/retry.py" for h in answers[2]["hits"]) == 2
    assert "hits" not in answers[3] and "no bm25s index" in answers[3]["error"]
    assert len(answers[4]["hits"]) == 1


# --- through the harness -----------------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS)
def test_probe_with_a_dash_query(spec: str, small_tree: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["probe", "--engine", str(REPO / "engines" / spec), "--root", str(small_tree),
                 "--text=-h settings", "--work", str(tmp_path / "w")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "usage:" not in out and "error:" not in out
    assert "pkg/config.py" in out


QUERIES = [
    {"id": "q1", "query": "where are the settings parsed from a json file",
     "gold": [{"path": "pkg/config.py", "symbol": "load_settings"}]},
    {"id": "q2", "query": "how many terminal cells does a string occupy",
     "gold": [{"path": "pkg/cells.py", "symbol": "cell_width"}]},
    {"id": "q3", "query": "delay before the next attempt", "gold": [{"path": "pkg/retry.py"}]},
]


def test_compare_both_specs_end_to_end(tree: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.mini]\nsource = "path"\npath = "proj"\n'
                    'queries = "queries.jsonl"\nlanguages = ["python"]\ndefault = true\n')
    out = tmp_path / "out.json"
    work = tmp_path / "work"
    args = ["compare", "--corpora-file", str(toml), "--work", str(work),
            "--corpora-root", str(work / "corpora"), "--json", str(out),
            "--query-set", "questions"]
    for spec in SPECS:
        args += ["--engine", str(REPO / "engines" / spec)]
    code = main(args)
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "!!" not in printed
    result = ResultFile.model_validate(json.loads(out.read_text()))
    assert result.engines["bm25s"].version.startswith("bm25s ")
    rows = {(r.engine, r.per_file): r for r in result.rows}
    for name in ("bm25s", "bm25s-persistent"):
        assert {p for e, p in rows if e == name} == {1, 2, 3}
        head = rows[(name, 1)]
        assert not head.flags and head.errors == 0
        assert head.index is not None and head.index.files == 6 and head.index.chunks
        by_id = {q.id: q for q in head.queries}
        assert by_id["q1"].first_file_slot == 1 and by_id["q1"].first_chunk_slot == 1
        assert by_id["q2"].first_chunk_slot == 1
        assert by_id["q3"].first_file_slot == 1
    assert rows[("bm25s-persistent", 1)].search.mode == "persistent"
