from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "ctags-engine"


def load_engine() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("ctags_engine", str(SCRIPT))
    spec = importlib.util.spec_from_loader("ctags_engine", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


ce = load_engine()


def tag(name: str, path: str = "pkg/mod.py", line: int = 1, end: int | None = None,
        **extra: object) -> dict:
    out: dict = {"_type": "tag", "name": name, "path": path, "line": line, "kind": "function"}
    if end is not None:
        out["end"] = end
    out.update(extra)
    return out


def ranked_names(tags: list[dict], query: str) -> list[str]:
    return [t["name"] for _, t in ce.Scorer(tags).rank(ce.keywords(query))]


def test_name_match_beats_scope_path_and_signature_matches() -> None:
    tags = [
        tag("run", scope="Parser", line=10, end=12),
        tag("load", path="parser/io.py", line=1, end=3),
        tag("check", signature="(parser: Parser)", line=20, end=22),
        tag("parse_header", line=30, end=40),
    ]
    assert ranked_names(tags, "how is the parser header read")[0] == "parse_header"
    scorer = ce.Scorer(tags)
    terms = ["parser"]
    by_name = {t["name"]: scorer.score(i, terms) for i, t in enumerate(tags)}
    assert by_name["run"] > by_name["load"] > 0  # scope 0.5 over path 0.3
    assert by_name["check"] > 0  # signature counts too
    assert by_name["parse_header"] > by_name["run"]  # prefix on the name beats exact on scope


def test_rare_name_words_outweigh_common_ones() -> None:
    tags = [tag(f"get_item_{i}", line=i * 10, end=i * 10 + 2) for i in range(1, 8)]
    tags.append(tag("render_item", line=100, end=110))
    tags.append(tag("get_widget", line=200, end=210))
    # 'get' is in 8 names, 'widget' in one: the rare word decides.
    assert ranked_names(tags, "get the widget")[0] == "get_widget"
    scorer = ce.Scorer(tags)
    assert scorer.idf("widget") > scorer.idf("get")


def test_whole_name_coverage_breaks_ties_between_equal_matches() -> None:
    tags = [tag("cell_width_cache", line=1, end=5), tag("cell_width", line=10, end=15)]
    assert ranked_names(tags, "cell width")[0] == "cell_width"


def test_identifier_words_and_stems_meet_query_keywords() -> None:
    tags = [tag("parseHTTPHeaders", line=1, end=9), tag("unrelated", line=20, end=22)]
    assert ranked_names(tags, "where are http headers parsed") == ["parseHTTPHeaders"]
    assert ce.match("wrapp", {"wrap"}) == ce.PREFIX  # 'wrapping' stems to 'wrapp'
    assert ce.match("abc", {"abcdef"}) == 0.0  # prefixes shorter than MIN_PREFIX do not count
    assert ce.match("width", {"width"}) == 1.0


def test_typename_prefix_of_typeref_is_not_a_word() -> None:
    scorer = ce.Scorer([tag("f", typeref="typename:int", line=1, end=2)])
    assert "typename" not in scorer.fields[0][3]


def test_no_query_terms_or_no_match_gives_nothing() -> None:
    tags = [tag("alpha", line=1, end=2)]
    assert ranked_names(tags, "the of and") == []
    assert ranked_names(tags, "zebra") == []


def test_span_uses_end_or_a_short_span() -> None:
    assert ce.span(tag("f", line=5, end=9)) == (5, 9)
    assert ce.span(tag("X", line=5)) == (5, 5 + ce.SHORT_SPAN - 1)
    assert ce.span(tag("X", line=5, end=3)) == (5, 5 + ce.SHORT_SPAN - 1)


def test_select_caps_per_file_skips_nested_spans_and_stops_at_n() -> None:
    ranked = [
        (9.0, tag("Outer", path="a.py", line=1, end=50)),
        (8.0, tag("inner", path="a.py", line=10, end=20)),  # inside Outer: nothing new
        (7.0, tag("other", path="a.py", line=60, end=70)),
        (6.0, tag("third", path="a.py", line=80, end=90)),
        (5.0, tag("b", path="b.py", line=1, end=3)),
        (4.0, tag("c", path="c.py", line=1, end=3)),
    ]
    got = ce.select(ranked, n=10, per_file=2)
    assert [(h["path"], h["start"]) for h in got] == [
        ("a.py", 1), ("a.py", 60), ("b.py", 1), ("c.py", 1)]
    assert [h["path"] for h in ce.select(ranked, n=2, per_file=1)] == ["a.py", "b.py"]


def test_load_tags_keeps_definitions_and_relative_paths(tmp_path: Path) -> None:
    lines = [
        {"_type": "ptag", "name": "TAG_PROGRAM_NAME", "path": "Universal Ctags"},
        {"_type": "tag", "name": "json", "path": "./pkg/a.py", "line": 1, "kind": "namespace",
         "nameref": "module:json"},
        {"_type": "tag", "name": "load", "path": "./pkg/a.py", "line": 3, "end": 5,
         "kind": "function"},
        {"_type": "tag", "name": "broken", "path": "pkg/a.py", "kind": "function"},
    ]
    file = tmp_path / "tags"
    file.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    tags = ce.load_tags(str(file))
    assert [(t["name"], t["path"]) for t in tags] == [("load", "pkg/a.py")]


def universal_ctags() -> bool:
    exe = shutil.which("ctags")
    if exe is None:
        return False
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    return "Universal Ctags" in out.stdout


@pytest.mark.real_engine
@pytest.mark.skipif(not universal_ctags(), reason="Universal Ctags (`ctags`) not installed")
def test_real_ctags_index_and_search(small_tree: Path, tmp_path: Path) -> None:
    (small_tree / ".git").mkdir()
    (small_tree / ".git" / "hidden.py").write_text("def load_settings_from_git():\n    pass\n")
    state = tmp_path / "state"
    idx = subprocess.run([sys.executable, str(SCRIPT), "index", str(small_tree), str(state)],
                         capture_output=True, text=True, check=True)
    counts = json.loads(idx.stdout.strip().splitlines()[-1])
    assert counts["files"] >= 2 and counts["chunks"] >= 2
    out = subprocess.run([sys.executable, str(SCRIPT), "search", str(small_tree), str(state),
                          "10", "1", "where are the settings loaded"],
                         capture_output=True, text=True, check=True)
    hits = json.loads(out.stdout)["hits"]
    first = hits[0]
    assert first["path"] == "pkg/config.py"
    assert (first["start"], first["end"]) == (4, 7)  # the whole def load_settings
    lines = (small_tree / first["path"]).read_text().splitlines()
    assert first["text"] == "\n".join(lines[first["start"] - 1 : first["end"]])
    assert all((small_tree / h["path"]).is_file() for h in hits)
    assert not any(h["path"].startswith((".git", "./", "/")) for h in hits)


def test_search_without_index_fails_clearly(small_tree: Path, tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, str(SCRIPT), "search", str(small_tree),
                          str(tmp_path / "none"), "10", "1", "settings"],
                         capture_output=True, text=True, check=False)
    assert out.returncode != 0
    assert "no index" in out.stderr
