"""The needle track: doc finding and blanking per language, summaries, filters, the track."""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus import setup
from codesearch_bench.corpus.config import Corpus, load_corpora
from codesearch_bench.corpus.layout import CorpusDir
from codesearch_bench.errors import CorpusError
from codesearch_bench.gold.grammars import definitions
from codesearch_bench.gold.needles import docs, summary
from codesearch_bench.gold.needles import track as needles
from codesearch_bench.gold.needles.generate import Params, candidate
from codesearch_bench.gold.resolve import resolve
from codesearch_bench.render.suite import suite_markdown
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run import plan

# One documented definition per language, the doc's words chosen so none is code.
SAMPLES = {
    "python": ("m.py", '''"""Module words vanish."""


class Pool:
    """Keeps idle sockets around for reuse by later callers."""

    def take(self):
        """Hands out the least recently returned socket first."""
        return None


def only_doc():
    """Nothing but documentation lives here."""
''', ["Keeps idle sockets", "least recently returned", "Module words", "Nothing but"]),
    "go": ("m.go", '''package m

// Drain empties the queue into the sink, blocking until
// every pending element was accepted.
func Drain(q int) int {
	return q // trailing remark stays
}

// Pool keeps idle connections around.
type Pool struct{}
''', ["empties the queue", "every pending element", "keeps idle connections"]),
    "rust": ("m.rs", '''/// Walks the directory tree breadth first,
/// yielding entries lazily.
#[inline]
pub fn walk() {}

// An ordinary comment that is not documentation of anything.

fn other() {}
''', ["Walks the directory", "yielding entries"]),
    "javascript": ("m.js", '''/**
 * Merge the defaults beneath the caller supplied options.
 * @param {object} opts
 */

function merge(opts) {
  return opts;
}
''', ["Merge the defaults", "caller supplied"]),
    "typescript": ("m.ts", '''export class Cache {
  /** Forget every entry older than the horizon in milliseconds. */
  prune(horizon: number): void {}
}
''', ["Forget every entry"]),
    "java": ("M.java", '''class M {
    /**
     * Returns a view whose iteration order follows insertion.
     */
    @Override
    public int view() { return 0; }
}
''', ["iteration order follows"]),
    "c": ("m.c", '''/* Compute a rolling checksum over the buffer
 * so that damaged frames are detected early. */
int sum(const char *buf) { return 0; }
''', ["rolling checksum", "damaged frames"]),
    "cpp": ("m.cc", '''namespace n {
// Rebalance the ring so that every shard owns a similar range of keys.
void Ring::Rebalance() {}
}
''', ["Rebalance the ring", "similar range"]),
}


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_blanking_removes_the_docs_and_keeps_every_line_and_span(language: str) -> None:
    _, text, phrases = SAMPLES[language]
    source = text.encode()
    found = docs.find(source, language)
    variant = docs.blanked(source, found.blank)
    for phrase in phrases:
        assert phrase.encode() in source and phrase.encode() not in variant
    # Line for line the same length: nothing moved, only doc bytes became spaces.
    assert [len(x) for x in variant.split(b"\n")] == [len(x) for x in source.split(b"\n")]
    before = [(d.qualname, d.kind, d.start, d.end) for d in definitions(source, language)]
    assert before == [(d.qualname, d.kind, d.start, d.end) for d in definitions(variant,
                                                                                  language)]
    assert found.docs, "every sample documents at least one definition"


def test_python_keeps_the_docstring_quotes_and_code_comments_stay() -> None:
    _, text, _ = SAMPLES["python"]
    variant = docs.blanked(text.encode(), docs.find(text.encode(), "python").blank).decode()
    assert variant.count('"""') == text.count('"""')
    compile(variant, "m.py", "exec")  # a def whose body was only a docstring still parses
    go = SAMPLES["go"][1].encode()
    assert b"trailing remark stays" in docs.blanked(go, docs.find(go, "go").blank)
    rust = SAMPLES["rust"][1].encode()
    found = docs.find(rust, "rust")
    assert [d.definition.name for d in found.docs] == ["walk"]  # a `//` comment is no doc


def test_which_definition_each_doc_belongs_to() -> None:
    owners = {lang: sorted(d.definition.qualname for d in docs.find(t.encode(), lang).docs)
              for lang, (_, t, _) in SAMPLES.items()}
    assert owners["python"] == ["Pool", "Pool.take", "only_doc"]
    assert owners["go"] == ["Drain", "Pool"]
    assert owners["javascript"] == ["merge"]  # JSDoc a blank line above still counts
    assert owners["typescript"] == ["Cache.prune"]
    assert owners["java"] == ["M.view"]  # above the annotation
    assert owners["c"] == ["sum"]


@pytest.mark.parametrize(("raw", "style", "name", "want"), [
    ("/**\n * Merge the defaults beneath the options. More words follow here.\n"
     " * @param {object} opts\n */", "comment", "merge",
     "Merge the defaults beneath the options. More words follow here."),
    ("// Drain empties the queue into the sink, blocking until\n"
     "// every pending element was accepted.", "comment", "Drain",
     "Empties the queue into the sink, blocking until every pending element was accepted."),
    ("Return the {@link Foo} for `name` in [the table](http://x).\n\nArgs:\n  name: x",
     "docstring", "lookup", "Return the Foo for name in the table."),
    ("/// Walks the tree.\n///\n/// # Examples\n/// walk()", "comment", "walk",
     "Walks the tree."),
])
def test_summaries_are_plain_first_sentences(raw: str, style: str, name: str,
                                             want: str) -> None:
    assert summary.summarize(raw, style, name) == want


def test_boilerplate_and_short_summaries_are_dropped_and_counted() -> None:
    defs = definitions(b"def load_settings(path):\n    pass\n", "python")
    dropped: Counter[str] = Counter()
    assert candidate("a.py", defs[0], "Initialize the object with its default values.",
                     "docstring", dropped) is None
    assert candidate("a.py", defs[0], "Load it.", "docstring", dropped) is None
    assert candidate("a.py", defs[0], "Reads the JSON file of settings and checks its keys.",
                     "docstring", dropped) is not None
    assert dropped == {"boilerplate summary": 1, "summary too short (words of prose)": 1}


_VOCAB = ("ledger", "harbor", "crate", "lantern", "meadow", "furnace", "cobalt", "quiver",
          "saddle", "thimble", "orchard", "beacon", "tundra", "marble", "walnut", "ember",
          "garnet", "kettle", "falcon", "prairie", "velvet", "anchor", "barley", "citadel")


def _doc(n: int) -> str:
    """A sentence of its own for needle n: no two share enough to be near-duplicates."""
    words = random.Random(n).sample(_VOCAB, 7)
    return f"Each parcel {' '.join(words[:3])} turns {' '.join(words[3:])} here."


def _project(base: Path, files: int = 12) -> Path:
    proj = base / "proj"
    for i in range(files):
        folder = proj / f"pkg{i % 3}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def f{i}_{j}(x):\n    \"\"\"{_doc(i * 4 + j)}\"\"\"\n    return x\n\n\n"
                       for j in range(4))
        (folder / f"m{i}.py").write_text(body)
    (proj / "pkg0" / "dup.py").write_text(
        'def a():\n    """Shared words that two definitions both carry here."""\n\n\n'
        'def b():\n    """Shared words that two definitions both carry here."""\n')
    queries = base / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": "where is a parcel turned into a record",
                                   "gold": [{"path": "pkg0/m0.py", "symbol": "f0_0"}]}) + "\n")
    toml = base / "corpora.toml"
    toml.write_text('[corpus.mini]\nsource = "path"\npath = "proj"\nqueries = "q.jsonl"\n'
                    'languages = ["python"]\ndefault = true\n')
    return toml


def test_the_track_on_disk_gold_equal_on_both_trees_and_cached(tmp_path: Path) -> None:
    toml = _project(tmp_path)
    corpus = load_corpora(toml)["mini"]
    root = tmp_path / "corpora"
    ready = plan.prepare(corpus, root, track="needles")
    assert ready.unit == "mini:needles" and ready.tree != root / "mini" / "tree"
    assert len(ready.queries) == 48  # 12 files x 4 defs; the shared doc pair dropped
    assert ready.track_info is not None
    assert ready.track_info["dropped"]["near-duplicate of another needle"] == 2
    assert ready.manifest.transform is not None
    assert ready.manifest.transform["files_with_moved_spans"] == 0
    original = root / "mini" / "tree"
    for q in ready.queries:
        g = q.gold[0]
        assert g.symbol is not None
        on_variant = ready.gold[q.id][0]
        assert resolve(original, g.path, g.symbol, kind=g.kind, line=g.line) == on_variant
        text = (ready.tree / g.path).read_text()
        assert "parcel" not in text and "parcel" in (original / g.path).read_text()
    assert [q.split for q in ready.queries[:4]] == ["dev", "test", "dev", "test"]
    again = plan.prepare(corpus, root, track="needles")
    assert again.query_set.sha256 == ready.query_set.sha256
    assert [q.model_dump() for q in again.queries] == [q.model_dump() for q in ready.queries]
    other = needles.prepare(corpus, CorpusDir(root.resolve() / "mini"),
                            Params(seed=1, per_corpus=10))
    assert other.query_set.sha256 != ready.query_set.sha256  # parameters are in the hash
    assert len(other.query_set.queries) == 10
    # Stratified: a capped set draws from every folder, not the first one.
    assert {q.gold[0].path.split("/")[0] for q in other.query_set.queries} == \
        {"pkg0", "pkg1", "pkg2"}


def test_per_file_cap(tmp_path: Path) -> None:
    toml = _project(tmp_path, files=3)
    corpus = load_corpora(toml)["mini"]
    built = needles.prepare(corpus, _setup(corpus, tmp_path), Params(per_file=2))
    assert Counter(q.gold[0].path for q in built.query_set.queries) == \
        {"pkg0/m0.py": 2, "pkg1/m1.py": 2, "pkg2/m2.py": 2}
    assert built.record["dropped"]["over the per-file cap"] == 6


def test_a_corpus_sets_its_own_per_file_cap_without_rebuilding_its_tree(tmp_path: Path) -> None:
    toml = _project(tmp_path, files=3)
    corpus = load_corpora(toml)["mini"]
    base = _setup(corpus, tmp_path)
    default = needles.prepare(corpus, base, Params(per_file=2))
    toml.write_text(toml.read_text() + "needles_per_file = 3\n")
    own = load_corpora(toml)["mini"]
    assert own.identity == corpus.identity  # a track parameter: the tree stays as set up
    assert setup.is_set_up((tmp_path / "corpora").resolve(), own)
    assert not needles.is_built(own, base, Params(per_file=2))
    built = needles.prepare(own, base, Params(per_file=2))
    assert built.record["params"]["per_file"] == 3
    assert Counter(q.gold[0].path for q in built.query_set.queries) == \
        {"pkg0/m0.py": 3, "pkg1/m1.py": 3, "pkg2/m2.py": 3}
    assert built.query_set.sha256 != default.query_set.sha256
    toml.write_text(toml.read_text().replace("needles_per_file = 3", "needles_per_file = 0"))
    with pytest.raises(CorpusError, match="needles_per_file"):
        load_corpora(toml)


def test_the_cap_follows_the_tree_tier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = _project(tmp_path, files=6)
    corpus = load_corpora(toml)["mini"]
    base = _setup(corpus, tmp_path)
    params = Params(per_corpus=3, per_corpus_larger=7)
    small = needles.prepare(corpus, base, params)
    assert len(small.query_set.queries) == 3  # the mini tree is small
    assert small.record["dropped"]["over the corpus cap"] > 0
    monkeypatch.setattr(needles, "tier", lambda files: "medium")
    needles.invalidate(base)
    larger = needles.prepare(corpus, base, params)
    assert len(larger.query_set.queries) == 7
    assert params.cap("large") == 7 and Params().cap("medium") == 1500


def _setup(corpus: Corpus, base: Path) -> CorpusDir:
    setup.setup(corpus, base / "corpora")
    return setup.dirs((base / "corpora").resolve(), corpus)


FAKE = '''
import json, sys
print(json.dumps({"hits": [{"path": "pkg0/m0.py", "start": 1, "end": 3}]}))
'''


def test_compare_runs_both_tracks_and_never_pools_them(tmp_path: Path) -> None:
    toml = _project(tmp_path)
    with toml.open("a") as fh:
        fh.write('[corpus.mini2]\nsource = "path"\npath = "proj"\nqueries = "q.jsonl"\n'
                 'languages = ["python"]\ndefault = true\n')
    (tmp_path / "fake.py").write_text(FAKE)
    spec = tmp_path / "fake.json"
    spec.write_text(json.dumps({
        "name": "fake", "spans": True,
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    out = tmp_path / "out.json"
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(spec), "--engine", "engines/grep.json",
                 "--query-set", "all", "--limit", "6", "--json", str(out)])
    assert code == 0
    result = ResultFile.load(out)
    assert set(result.corpora) == {"mini", "mini:needles", "mini2", "mini2:needles"}
    assert result.corpora["mini:needles"].track == "needles"
    assert result.corpora["mini:needles"].corpus == "mini"
    assert {r.track for r in result.rows if r.corpus.endswith(":needles")} == {"needles"}
    assert sorted((s.track, tuple(s.corpora)) for s in result.summaries) == [
        ("needles", ("mini:needles", "mini2:needles")), ("questions", ("mini", "mini2"))]
    assert result.summary is not None and result.summary.track == "questions"
    view = suite_markdown(result)
    assert "#### Questions track" in view and "#### Needles track" in view
    assert "| mini:needles | small |" in view and "MDD file MRR" in view


def test_the_suites(tmp_path: Path) -> None:
    from codesearch_bench.commands.suites import SUITES

    assert SUITES["quick"].corpus is None and SUITES["quick"].query_set == "all"
    assert SUITES["full"].corpus == "full" and SUITES["full"].query_set == "all"


def test_validate_checks_the_needle_track_too(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    toml = _project(tmp_path)
    assert main(["validate", "--corpora-file", str(toml), "--work", str(tmp_path / "w")]) != 0
    capsys.readouterr()  # not set up yet: said, nothing generated
    assert main(["setup", "--corpora-file", str(toml), "--work", str(tmp_path / "w")]) == 0
    capsys.readouterr()
    assert main(["validate", "--corpora-file", str(toml), "--work", str(tmp_path / "w")]) == 0
    out = capsys.readouterr().out
    assert "needles" in out and "48/48" in out
