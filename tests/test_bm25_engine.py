"""The bm25 engine (scripts/bm25-engine) and its chunker (scripts/chunking.py).

Chunking, tokens, ranking, safety, both modes.
"""

from __future__ import annotations

import importlib.util
import json
import sqlite3
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "bm25-engine"


def _load() -> ModuleType:
    loader = SourceFileLoader("bm25_engine", str(SCRIPT))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


bm25 = _load()
chunking = sys.modules["chunking"]  # imported by the engine, from scripts/

CELLS = '''import unicodedata


def cell_width(text):
    """Number of terminal cells a string occupies on screen."""
    return sum(2 if unicodedata.east_asian_width(c) == "W" else 1 for c in text)


def pad_right(text, total):
    """Pad a string with spaces up to a total number of cells."""
    return text + " " * (total - cell_width(text))
'''

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

GRID_JS = '''// Grid layout helpers.
import { sum } from "./util";

/**
 * Width of a grid cell in pixels.
 */
function cellWidth(cell) {
  return cell.colspan * 10;
}

export class Grid {
  constructor(rows) {
    this.rows = rows;
  }
}
'''

RETRY = "".join(
    f"def backoff_{i}(attempt):\n    \"\"\"Backoff delay number {i}.\"\"\"\n"
    f"    return {i} * attempt\n\n\n" for i in range(6)
)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    files = {
        "pkg/cells.py": CELLS,
        "pkg/config.py": CONFIG,
        "pkg/retry.py": RETRY,
        "web/grid.js": GRID_JS,
        "docs/notes.md": "# Notes\n\nNothing about settings here, only prose.\n",
        ".git/config": "[core]\n\tsettings = json width\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "pkg" / "blob.bin").write_bytes(b"settings\0json\0width" * 10)
    (root / "pkg" / "huge.txt").write_text("settings json width\n" * 60_000)  # > 1 MB
    return root


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], input=stdin,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def state(tree: Path, tmp_path: Path) -> Path:
    out = tmp_path / "state"
    proc = run("index", str(tree), str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def search(state: Path, query: str, n: int = 10, per_file: int = 1) -> list[dict]:
    proc = run("search", str(state), str(n), str(per_file), query)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["hits"]


# --- tokens and chunks ---------------------------------------------------------
def test_words_split_identifiers_and_keep_them_whole() -> None:
    assert bm25.words("cellWidth") == ["cell", "width", "cellwidth"]
    assert bm25.words("cell_width") == ["cell", "width", "cellwidth"]
    assert bm25.words("parseHTTPHeader_v2") == ["parse", "http", "header", "v", "2",
                                                "parsehttpheaderv2"]
    assert bm25.words("plain words") == ["plain", "words"]


def test_python_definitions_include_decorators_and_rest_is_windowed() -> None:
    lines = CONFIG.split("\n")[:-1]
    chunks = chunking.chunk_file("pkg/config.py", CONFIG)
    assert chunking.Chunk(4, 8, "load_settings") in chunks  # from the decorator line
    assert chunking.Chunk(11, 13, "save_settings") in chunks
    assert chunking.Chunk(1, 1, "") in chunks  # the import, blank edges trimmed
    covered = {i for c in chunks for i in range(c.start, c.end + 1)}
    assert all(i + 1 in covered for i, line in enumerate(lines) if line.strip())


def test_large_python_class_is_cut_into_header_and_methods() -> None:
    methods = "".join(f"    def m{i}(self):\n" + "        x = 1\n" * 8 + "\n" for i in range(6))
    source = "class Big:\n    \"\"\"Doc.\"\"\"\n\n    limit = 3\n\n" + methods
    chunks = chunking.chunk_file("big.py", source)
    names = [c.name for c in chunks]
    assert names[0] == "Big" and chunks[0].start == 1 and chunks[0].end == 4
    assert names[1:] == [f"Big.m{i}" for i in range(6)]


def test_small_class_stays_whole_and_long_definition_is_windowed() -> None:
    small = "class Small:\n    def a(self):\n        return 1\n"
    assert chunking.chunk_file("s.py", small) == [chunking.Chunk(1, 3, "Small")]
    long_def = "def long():\n" + "    x = 1\n" * 150
    chunks = chunking.chunk_file("l.py", long_def)
    assert all(c.name == "long" for c in chunks) and len(chunks) > 1
    assert chunks[0].start == 1 and chunks[-1].end == 151
    assert all(c.end - c.start + 1 <= chunking.DEF_WINDOW for c in chunks)


def test_brace_language_blocks_with_their_comments() -> None:
    chunks = chunking.chunk_file("web/grid.js", GRID_JS)
    assert chunking.Chunk(4, 9, "cellWidth") in chunks  # the doc comment belongs to it
    assert chunking.Chunk(11, 15, "Grid") in chunks
    c_source = ("/* a brace in a comment { */\n\nint\nmain(void)\n{\n  puts(\"}\");\n"
                "  return 0;\n}\n\nstatic int two = 2;\n")
    assert chunking.chunk_file("m.c", c_source) == [
        chunking.Chunk(1, 1, ""), chunking.Chunk(3, 8, "main"), chunking.Chunk(10, 10, "")]


def test_unparseable_python_falls_back_to_windows() -> None:
    source = "def broken(:\n" + "    pass\n" * 70
    chunks = chunking.chunk_file("broken.py", source)
    assert [(c.start, c.end) for c in chunks] == [(1, 40), (31, 70), (61, 71)]


def test_chunks_cover_every_line_of_real_sources() -> None:
    for path in sorted((REPO / "src" / "codesearch_bench").rglob("*.py")):
        text = path.read_text()
        lines = text.split("\n")
        chunks = chunking.chunk_file(path.name, text)
        covered = {i for c in chunks for i in range(c.start, c.end + 1)}
        missing = [i + 1 for i, line in enumerate(lines) if line.strip() and i + 1 not in covered]
        assert not missing, f"{path}: lines {missing[:5]} in no chunk"
        assert all(1 <= c.start <= c.end <= len(lines) for c in chunks), path


# --- index and search ------------------------------------------------------------
def test_index_skips_vcs_binary_and_huge_files_and_reports_counts(tree: Path,
                                                                 tmp_path: Path) -> None:
    proc = run("index", str(tree), str(tmp_path / "st"))
    assert proc.returncode == 0, proc.stderr
    counts = json.loads(proc.stdout.strip().splitlines()[-1])
    assert counts["files"] == 5  # cells, config, retry, grid.js, notes.md
    db = sqlite3.connect(tmp_path / "st" / "bm25.sqlite")
    paths = {p for (p,) in db.execute("SELECT DISTINCT path FROM chunks")}
    assert paths == {"pkg/cells.py", "pkg/config.py", "pkg/retry.py", "web/grid.js",
                     "docs/notes.md"}
    assert counts["chunks"] == db.execute("SELECT count(*) FROM chunks").fetchone()[0]


def test_obvious_chunk_ranks_first_with_real_text_and_lines(tree: Path, state: Path) -> None:
    hits = search(state, "where are the settings parsed from a json file")
    first = hits[0]
    assert (first["path"], first["start"], first["end"]) == ("pkg/config.py", 4, 8)
    lines = (tree / first["path"]).read_text().splitlines()
    assert first["text"] == "\n".join(lines[first["start"] - 1 : first["end"]])
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0


def test_query_word_finds_camel_and_snake_identifiers(state: Path) -> None:
    hits = search(state, "width", n=10, per_file=3)
    found = {(h["path"], h["start"]) for h in hits}
    assert ("web/grid.js", 4) in found  # cellWidth
    assert ("pkg/cells.py", 4) in found  # cell_width
    whole = search(state, "cellWidth", n=10, per_file=3)
    assert {"web/grid.js", "pkg/cells.py"} <= {h["path"] for h in whole}


def test_per_file_and_n_cap_the_results(state: Path) -> None:
    for per_file in (1, 2, 3):
        hits = search(state, "backoff delay attempt", n=20, per_file=per_file)
        per_path: dict[str, int] = {}
        for h in hits:
            per_path[h["path"]] = per_path.get(h["path"], 0) + 1
        assert per_path["pkg/retry.py"] == per_file
        assert max(per_path.values()) <= per_file
    assert len(search(state, "backoff delay attempt", n=2, per_file=3)) == 2


@pytest.mark.parametrize("query", [
    'x"; DROP TABLE chunks; -- settings',
    "settings NEAR(json width) OR body:json AND NOT *",
    '"unbalanced settings',
    "path : settings ^json {body} col*",
    "settings'); DELETE FROM fts; --",
])
def test_fts_syntax_in_a_query_is_just_text(state: Path, query: str) -> None:
    hits = search(state, query)
    assert any(h["path"] == "pkg/config.py" for h in hits)
    assert search(state, "settings json")[0]["path"] == "pkg/config.py"  # index intact


def test_match_expression_quotes_every_term() -> None:
    expr = bm25.match_expression(['dr"op', "settings", "or"])
    assert expr == '"dr""op"* OR "settings"* OR "or"'
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    db.execute("INSERT INTO t VALUES ('dr op settings or')")
    assert db.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expr,)).fetchone() == (1,)


def test_stopword_only_query_returns_no_hits(state: Path) -> None:
    assert search(state, "where is the") == []


def test_state_dir_with_uri_characters(tree: Path, tmp_path: Path) -> None:
    odd = tmp_path / "st?a#te %20"
    assert run("index", str(tree), str(odd)).returncode == 0
    assert search(odd, "settings json")[0]["path"] == "pkg/config.py"


def test_search_without_an_index_fails_clearly(tmp_path: Path) -> None:
    proc = run("search", str(tmp_path / "nothing"), "10", "1", "settings")
    assert proc.returncode != 0 and "no index" in proc.stderr


# --- persistent mode ------------------------------------------------------------------
def test_serve_answers_each_request_and_exits_on_eof(state: Path, tmp_path: Path) -> None:
    requests = [
        {"query": "settings parsed from json", "k": 5, "n": 5, "per_file": 1,
         "root": "/unused", "corpus": "mini", "state": str(state)},
        {"query": 'x"; DROP TABLE chunks', "k": 5, "n": 5, "per_file": 1, "state": str(state)},
        {"query": "backoff delay", "k": 5, "n": 10, "per_file": 2, "state": str(state)},
        {"query": "settings", "n": 5, "per_file": 1, "state": str(tmp_path / "missing")},
        {"query": "width", "n": 3, "per_file": 1, "state": str(state)},
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
    assert answers[0]["hits"][0]["path"] == "pkg/config.py"
    assert "hits" in answers[1]
    assert sum(h["path"] == "pkg/retry.py" for h in answers[2]["hits"]) == 2
    assert "hits" not in answers[3] and "no index" in answers[3]["error"]  # a failed query
    assert len(answers[4]["hits"]) <= 3
    assert answers[0]["hits"] == search(state, "settings parsed from json", n=5)


# --- through the harness -----------------------------------------------------------------
QUERIES = [
    {"id": "q1", "query": "where are the settings parsed from a json file",
     "gold": [{"path": "pkg/config.py", "symbol": "load_settings"}]},
    {"id": "q2", "query": "how many terminal cells does a string occupy",
     "gold": [{"path": "pkg/cells.py", "symbol": "cell_width"}]},
    {"id": "q3", "query": "delay before the next attempt", "gold": [{"path": "pkg/retry.py"}]},
]


def test_compare_grep_bm25_and_persistent_end_to_end(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.mini]\nsource = "path"\npath = "proj"\n'
                    'queries = "queries.jsonl"\nlanguages = ["python"]\ndefault = true\n')
    out = tmp_path / "out.json"
    work = tmp_path / "work"
    args = ["compare", "--corpora-file", str(toml), "--work", str(work),
            "--corpora-root", str(work / "corpora"), "--json", str(out)]
    for name in ("grep", "bm25", "bm25-persistent"):
        args += ["--engine", str(REPO / "engines" / f"{name}.json")]
    code = main(args)
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "!!" not in printed
    result = ResultFile.model_validate(json.loads(out.read_text()))
    rows = {(r.engine, r.per_file): r for r in result.rows}
    assert {e for e, _ in rows} == {"grep", "bm25", "bm25-persistent"}
    for engine in ("bm25", "bm25-persistent"):
        assert {p for e, p in rows if e == engine} == {1, 2, 3}
        head = rows[(engine, 1)]
        assert not head.flags and head.errors == 0
        assert head.index is not None and head.index.files == 5 and head.index.chunks
        by_id = {q.id: q for q in head.queries}
        assert by_id["q1"].first_file_slot == 1 and by_id["q1"].first_chunk_slot == 1
        assert by_id["q2"].first_chunk_slot == 1
    assert rows[("bm25-persistent", 1)].search is not None
    assert rows[("bm25-persistent", 1)].search.mode == "persistent"
