"""What makes a needle valid: name-blind, one right answer, a question, nothing left to find."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus import setup
from codesearch_bench.corpus.config import load_corpora
from codesearch_bench.gold.grammars import definitions
from codesearch_bench.gold.needles import docs, elsewhere, names, near, summary
from codesearch_bench.gold.needles import track as needles
from codesearch_bench.gold.needles.generate import candidate
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run import plan


@pytest.mark.parametrize(("query", "name", "prefixes", "tag"), [
    ("an error HTTP status", "HTTPStatusError", (), "name:full"),
    ("parsed link headers", "_parse_header_links", (), "name:full"),
    ("Set the I/O priority with ioprio_set()", "psutil_proc_ioprio_set", ("psutil",),
     "name:partial"),
    ("Returns a new configuration object for the machine", "NewConfig", (), "name:full"),
    ("modKey returns the module version of the sum", "modkey", (), "name:full"),
    ("Returns the filename parameter of the header", "FileName", (), "name:full"),
    ("Returns true if any bits are set in the word", "any", (), "name:full"),
    ("Calls the function for each element of the list", "forEach", (), "name:full"),
    ("Read numbers from a file on disk", "fromfile", (), "name:full"),
    ("Crop the span at the given offset", "right_crop", (), "name:partial"),
    ("Breaks f into a normalized fraction and a power of two", "Frexp", (), "name:none"),
    ("Keeps idle sockets around for reuse by later callers", "Pool", (), "name:none"),
])
def test_name_overlap(query: str, name: str, prefixes: tuple[str, ...], tag: str) -> None:
    assert names.measure(query, name, frozenset(prefixes)).tag == tag


def test_overlap_of_the_enclosing_names_is_its_own_tag() -> None:
    said = names.measure("Check if the given Signal is the same as this one", "Signal.expect",
                         frozenset())
    assert said.blind and said.tags == ["name:none", "scope:full"]
    assert names.measure("Hands out a socket", "take", frozenset()).tags == ["name:none"]


def test_common_prefixes_are_namespaces_not_verbs() -> None:
    defined = [f"psutil_{w}_x" for w in "abcdefghijklmnopqrstuvwxyz"] + \
        [f"get_{w}_y" for w in "abcdefghijklmnopqrstuvwxyz"] + ["other", "lone_name"]
    assert names.common_prefixes(defined) == frozenset({"psutil"})
    assert names.common_prefixes(defined[:10]) == frozenset()  # too few to be a convention


@pytest.mark.parametrize(("text", "debris"), [
    ("https://example.org/some/page", True),
    ("Reference: https://example.org/rfc7230", True),
    ("See RFC 7230 section 3.2 for the header grammar", True),
    ("Similar to the above but for sets of strings", True),
    ("If the match is successful in this branch, then:", True),
    ("true: after the sign comes the value of the field", True),
    ("Parses the header value into a list of links with their parameters.", False),
])
def test_references_and_fragments_are_no_question(text: str, debris: bool) -> None:
    assert summary.reference(text) is debris


def test_a_summary_is_whole_sentences_never_cut() -> None:
    long = "Returns " + " ".join(["the value of one more field"] * 60) + ". Then more."
    text = summary.summarize(long, "docstring", "f")
    assert summary.overlong(text) and text.endswith("field.")
    defs = definitions(b"def f():\n    pass\n", "python")
    dropped: Counter[str] = Counter()
    assert candidate("a.py", defs[0], long, "docstring", dropped) is None
    assert dropped == {"first sentence over 300 characters": 1}
    cut = 'Fetch the links of a page as a list of records like [ {"url": "x"'
    assert summary.unbalanced(cut) and not summary.unbalanced("Reads (and checks) the file.")


def test_code_blocks_and_literal_blocks_end_the_prose() -> None:
    raw = "Render the table as text rows for the terminal::\n\n    table.render()\n"
    assert summary.summarize(raw, "docstring", "render") == \
        "Render the table as text rows for the terminal:"
    raw = "Walks every node of the tree in order\n        walk(tree, visit)\n"
    assert summary.summarize(raw, "docstring", "walk") == "Walks every node of the tree in order"
    assert summary.too_short("Needed to make these globally visible.") or \
        summary.reference("Needed to make these globally visible.")


def test_urls_and_code_do_not_count_as_words() -> None:
    assert summary.too_short("See http://a.b/c and http://d.e/f for foo_bar() x.y.z details")
    assert not summary.too_short("Reads the JSON file of settings and checks its keys.")


def test_near_duplicates_go_in_pairs() -> None:
    texts = ["Returns True for 4xx status codes, False otherwise.",
             "A property which is True for 4xx status codes, False otherwise.",
             "Return True if this is a client error",
             "Splits the input into lines and strips each one of trailing space."]
    assert near.near_duplicates(texts) == {0, 1}
    assert near.near_duplicates(["Same words here in a row for a test."] * 2) == {0, 1}


def test_a_six_word_run_is_found_in_any_file(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.rst").write_text("It turns every parcel into a stored record.\n")
    (tmp_path / "code.c").write_text("/* keeps the idle sockets warm */\n")
    queries = ["Turns every parcel into a stored record for the ledger.",
               "Keeps the idle sockets warm for later callers.",  # five words in a row only
               "Nothing of this text stands anywhere else."]
    found = elsewhere.find(queries, tmp_path, ["docs/guide.rst", "code.c"])
    assert found.where == {0: "docs/guide.rst"} and found.kinds == {"documentation": 1}
    assert elsewhere.is_documentation("README") and not elsewhere.is_documentation("src/a.py")


def test_a_constant_macro_documents_a_group_not_itself() -> None:
    source = (b"/* Limits used by the evaluation below. */\n#define MAX_DELAY 5000\n\n"
              b"/* Adds two numbers and returns the sum of both. */\n"
              b"#define ADD(a, b) ((a) + (b))\n")
    found = docs.find(source, "c")
    lines = source.split(b"\n")
    kept = {d.definition.name for d in found.docs if docs.documents_one(d.definition, lines)}
    assert kept == {"ADD"}


PROSE = {
    "ledger.py": '''
def settle(accounts):
    """Moves every pending transfer into the book and closes the day for audit."""
    return accounts


def twice_a():
    """Counts the pallets that arrived late at the northern warehouse dock."""


def spread_butter(bread):
    """Spread butter across the bread slice evenly before serving breakfast."""
    return bread
''',
    "other.py": '''
def twice_a():
    """Counts the pallets that arrived late at the northern warehouse dock."""


def quiet(x):
    """Silences the alarm bell when the night shift has checked the gates."""
    return x
''',
    "docs/guide.rst": "The tool silences the alarm bell when the night shift has checked.\n",
}


def _corpus(tmp_path: Path) -> Path:
    for rel, text in PROSE.items():
        (tmp_path / "proj" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "proj" / rel).write_text(text)
    toml = tmp_path / "corpora.toml"
    toml.write_text('[corpus.mini]\nsource = "path"\npath = "proj"\nlanguages = ["python"]\n'
                    'default = true\n')
    return toml


def test_the_track_keeps_valid_name_blind_needles_and_sets_the_named_aside(
        tmp_path: Path) -> None:
    corpus = load_corpora(_corpus(tmp_path))["mini"]
    setup.setup(corpus, tmp_path / "corpora")
    built = needles.prepare(corpus, setup.dirs((tmp_path / "corpora").resolve(), corpus))
    record = built.record
    assert [q.gold[0].symbol for q in built.query_set.queries] == ["settle"]
    assert built.query_set.queries[0].tags[-1] == "name:none"
    assert built.query_set.queries[0].name_overlap == 0
    assert built.named is not None
    assert [(q.gold[0].symbol, q.name_overlap) for q in built.named.queries] == \
        [("spread_butter", 1.0)]
    assert "name:full" in built.named.queries[0].tags
    assert record["dropped"] == {"name defined more than once in the tree": 2,
                                 "six-word run found elsewhere in the tree": 1}
    assert record["kept"] == 1 and record["named"] == 1 and record["candidates"] == 5
    # Every candidate is accounted for: dropped by a rule, kept, or in the named breakout.
    assert record["candidates"] == sum(record["dropped"].values()) + record["kept"] + \
        record["named"]
    assert record["found_elsewhere_in"] == {"documentation": 1}
    assert record["name_overlap"] == {"name:full": 1, "name:none": 1}


FAKE = '''
import json, sys
print(json.dumps({"hits": [{"path": "ledger.py", "start": 1, "end": 4}]}))
'''


def test_the_named_breakout_runs_as_its_own_track(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    toml = _corpus(tmp_path)
    (tmp_path / "fake.py").write_text(FAKE)
    spec = tmp_path / "fake.json"
    spec.write_text(json.dumps({
        "name": "fake", "spans": True,
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}))
    out = tmp_path / "out.json"
    work = str(tmp_path / "w")
    assert main(["compare", "--corpora-file", str(toml), "--work", work, "--engine", str(spec),
                 "--query-set", "needles-named", "--json", str(out)]) == 0
    result = ResultFile.load(out)
    assert set(result.corpora) == {"mini:needles-named"}
    assert main(["validate", "--corpora-file", str(toml), "--work", work]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert "documentation file(s) (docs/guide.rst)" in said
    assert plan.TRACKS[-1] == "needles-named" and "needles-named" not in plan.HEADLINE_TRACKS
