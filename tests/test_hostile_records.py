"""Hostile records: what an engine's answer holds that bench cannot read is never silent.

Class "records" of the hostile suite. A record that cannot be read (a line
number given as a word, a non-finite score, a path with a control character)
is dropped, and every drop is counted on the query's outcome and flagged on the
row (`!! records=N`) whatever survived beside it; NaN and ±Infinity scores are
treated alike; a path holding a newline, tab, NUL or any other C0/C1 control
character is refused at parse time, so no export or view ever carries it. A
`path` corpus's folder edited after setup is noticed (its files' sizes and
mtimes, then their content) and the tree rebuilt from it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from answers import FAULTY, JSON, answer, hostile_engine, write_engine
from minicorpus import QUERIES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.corpus import setup
from codesearch_bench.corpus.config import Corpus, load_corpora
from codesearch_bench.engine.output.parse import parse
from codesearch_bench.engine.spec import ParseSpec
from codesearch_bench.render.formats import FLAG_HELP
from codesearch_bench.results.schema import ResultFile, Row
from codesearch_bench.run.comparison import execute
from codesearch_bench.run.options import CompareOptions, Events

pytestmark = pytest.mark.hostile

REGEX = ParseSpec(format="regex", pattern=r"^(?P<path>.+?)\|(?P<start>\d+)$")
GOOD = '{"path": "pkg/cells.py", "start": 1, "end": 3, "score": 1.0}'


def compare(tmp: Path, garbage: bytes) -> tuple[int, Row]:
    """A whole `bench compare` over an engine printing `garbage` for q2 only; its headline."""
    bad = hostile_engine(tmp, garbage)
    toml = make_corpus(tmp)
    out = tmp / "out.json"
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp / "work"),
                 "--json", str(out), "--engine", str(bad)])
    assert out.is_file()
    row = next(r for r in ResultFile.load(out).rows if r.engine == "bad" and r.headline)
    return code, row


# -- a dropped record beside good ones is counted and flagged ---------------------------

DROPPED = [
    ("line-as-word", '{"path": "pkg/other.py", "start": "four"}', "is not a whole number"),
    ("score-Infinity", '{"path": "pkg/other.py", "start": 1, "score": Infinity}',
     "is not a finite number"),
    ("score-NaN", '{"path": "pkg/other.py", "start": 1, "score": NaN}', "is not a finite number"),
    ("path-newline", '{"path": "pkg/cells.py\\nq2 Q0 pkg/x.py 1 99 run", "start": 1}',
     "control character U+000A"),
    ("path-tab", '{"path": "pkg/cel\\tls.py", "start": 1}', "control character U+0009"),
]


@pytest.mark.parametrize(("record", "reason"), [c[1:] for c in DROPPED],
                         ids=[c[0] for c in DROPPED])
def test_dropped_record_beside_good_ones_is_counted_and_flagged(
        tmp_path: Path, record: str, reason: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, row = compare(tmp_path, answer(record, GOOD))
    assert code == 0
    q2 = next(q for q in row.queries if q.id == "q2")
    assert q2.error is None and q2.dropped_records == 1
    assert [s.path for s in q2.slots] == ["pkg/cells.py"]
    assert sum(q.dropped_records for q in row.queries) == 1
    assert "!! records=1" in row.flags
    capsys.readouterr()
    main(["probe", "--engine", str(tmp_path / "bad.json"), "--root", str(tmp_path / "mini-proj"),
          "--text", QUERIES[1]["query"], "--work", str(tmp_path / "probe-work")])
    shown = " ".join(capsys.readouterr().out.split())
    assert "1 result record(s) could not be read" in shown and reason in shown


def test_every_record_dropped_is_still_counted(tmp_path: Path) -> None:
    code, row = compare(tmp_path, answer('{"path": "a.py", "start": "four"}',
                                         '{"path": "b.py", "score": -Infinity}'))
    assert code == 0  # one failed query fails no combination
    q2 = next(q for q in row.queries if q.id == "q2")
    assert q2.error is not None and q2.error.startswith("unparseable output")
    assert q2.dropped_records == 2 and "!! records=2" in row.flags and "errors=1" in row.flags


def test_answer_unreadable_as_a_whole_is_an_error_not_a_record_count(tmp_path: Path) -> None:
    code, row = compare(tmp_path, b"this is not JSON\n")
    q2 = next(q for q in row.queries if q.id == "q2")
    assert code == 0 and q2.error is not None and q2.error.startswith("unparseable output")
    assert q2.dropped_records == 0 and "errors=1" in row.flags
    assert not any(f.startswith("!! records") for f in row.flags)


def test_records_flag_is_explained() -> None:
    assert "!! records" in FLAG_HELP and "probe" in FLAG_HELP["!! records"]


def test_outcome_without_the_count_still_loads() -> None:
    from codesearch_bench.results.schema import QueryOutcome
    assert QueryOutcome.model_validate({"id": "q"}).dropped_records == 0


# -- non-finite scores: one way -----------------------------------------------------------

@pytest.mark.parametrize("score", ["NaN", "Infinity", "-Infinity", "1e400", '"nan"', '"inf"',
                                   '"-Infinity"'])
def test_non_finite_scores_are_one_kind_of_error(score: str) -> None:
    result = parse(JSON, answer(f'{{"path": "a.py", "score": {score}}}', '{"path": "b.py"}'))
    assert [h.path for h in result.hits] == ["b.py"]
    assert result.bad_records == 1 and "is not a finite number" in result.errors[0]


# -- control characters in paths are refused at parse time -------------------------------

CONTROLS = ["\n", "\r", "\t", "\x00", "\x1b", "\x7f", "\x85", "\x9b", "\x1f"]


@pytest.mark.parametrize("char", CONTROLS, ids=[f"U+{ord(c):04X}" for c in CONTROLS])
def test_path_with_a_control_character_is_that_records_error(char: str) -> None:
    bad = json.dumps({"path": f"pkg/a{char}b.py", "start": 1})
    result = parse(JSON, answer(bad, '{"path": "ok.py"}'))
    assert [h.path for h in result.hits] == ["ok.py"]
    assert result.bad_records == 1
    # NUL keeps the reason it always had (open() refuses it), every other control its code
    want = "NUL byte" if char == "\x00" else f"control character U+{ord(char):04X}"
    assert want in result.errors[0]


def test_dotted_path_lookup_refuses_control_characters_too() -> None:
    spec = ParseSpec(format="json", results="hits", path="loc.file")
    result = parse(spec, answer('{"loc": {"file": "a\\u0085.py"}}', '{"loc": {"file": "b.py"}}'))
    assert [h.path for h in result.hits] == ["b.py"] and result.bad_records == 1


def test_regex_path_with_a_control_character_is_refused() -> None:
    result = parse(REGEX, b"a\x1b[31m.py|3\nb.py|4\n")
    assert [h.path for h in result.hits] == ["b.py"] and result.bad_records == 1


def test_ordinary_unicode_paths_still_pass() -> None:
    paths = ["caf\u00e9.py", "a b.py", "\u00a0nbsp.py", "\u65e5\u672c.py", "emoji\U0001f600.py"]
    result = parse(JSON, answer(*(json.dumps({"path": p}) for p in paths)))
    assert [h.path for h in result.hits] == paths and result.bad_records == 0


# -- a `path` corpus edited after setup is rebuilt, never measured as the old copy -------

def _mini(tmp: Path) -> tuple[Corpus, Path]:
    corpus = load_corpora(make_corpus(tmp))["mini"]
    root = tmp / "corpora"
    setup.setup(corpus, root)
    return corpus, root


def test_edited_folder_is_not_set_up_and_setup_rebuilds_it(tmp_path: Path) -> None:
    corpus, root = _mini(tmp_path)
    before = setup.content_identity(root, corpus)
    assert setup.is_set_up(root, corpus) and before is not None
    (tmp_path / "mini-proj" / "pkg" / "cells.py").write_text("def cell_len():\n    return 2\n")
    assert not setup.is_set_up(root, corpus)
    changes = setup.source_changes(root, corpus)
    assert changes and changes[0].startswith("modified: pkg/cells.py (size")
    done = setup.setup(corpus, root)
    assert not done.cached and "rebuilt, the folder changed since setup" in done.how
    assert (done.tree / "pkg" / "cells.py").read_text().endswith("return 2\n")
    assert setup.is_set_up(root, corpus) and setup.content_identity(root, corpus) != before


@pytest.mark.parametrize("edit", ["add", "remove"])
def test_added_or_removed_file_is_a_change(tmp_path: Path, edit: str) -> None:
    corpus, root = _mini(tmp_path)
    proj = tmp_path / "mini-proj"
    if edit == "add":
        (proj / "pkg" / "new.py").write_text("x = 1\n")
    else:
        (proj / "pkg" / "cells.py").unlink()
    assert not setup.is_set_up(root, corpus)
    done = setup.setup(corpus, root)
    assert ((done.tree / "pkg" / "new.py").exists()) == (edit == "add")
    assert (done.tree / "pkg" / "cells.py").exists() == (edit == "add")


def test_touched_but_unchanged_folder_stays_set_up(tmp_path: Path) -> None:
    corpus, root = _mini(tmp_path)
    before = setup.content_identity(root, corpus)
    target = tmp_path / "mini-proj" / "pkg" / "config.py"
    os.utime(target, ns=(1, 10**18))
    assert setup.is_set_up(root, corpus) and setup.source_changes(root, corpus) == []
    assert setup.setup(corpus, root).cached and setup.content_identity(root, corpus) == before


def test_changes_outside_the_selection_change_nothing(tmp_path: Path) -> None:
    corpus, root = _mini(tmp_path)
    git = tmp_path / "mini-proj" / ".git"
    git.mkdir()
    (git / "index").write_text("a git index moves on every status")
    assert setup.is_set_up(root, corpus)


def test_marker_without_a_folder_record_is_not_trusted(tmp_path: Path) -> None:
    corpus, root = _mini(tmp_path)
    marker = setup.dirs(root.resolve(), corpus).setup_marker
    marker.write_text(json.dumps({"identity": corpus.identity, "pin": corpus.pin}))
    assert not setup.is_set_up(root, corpus)
    assert "no record of what" in setup.source_changes(root, corpus)[0]
    assert not setup.setup(corpus, root).cached and setup.is_set_up(root, corpus)


def test_compare_after_an_edit_measures_the_new_folder(tmp_path: Path) -> None:
    engine = write_engine(tmp_path, "good", [sys.executable, str(FAULTY), "ok", "{{query}}"])
    toml = make_corpus(tmp_path)
    argv = ["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "work"),
            "--engine", str(engine)]
    assert main([*argv, "--json", str(tmp_path / "one.json")]) == 0
    (tmp_path / "mini-proj" / "pkg" / "extra.py").write_text("def extra():\n    pass\n")
    assert main([*argv, "--json", str(tmp_path / "two.json")]) == 0
    one, two = (ResultFile.load(tmp_path / f"{n}.json") for n in ("one", "two"))
    assert one.corpora["mini"].files == 3 and two.corpora["mini"].files == 4
    tree = Path(two.corpora["mini"].tree)
    assert (tree / "pkg" / "extra.py").is_file()
    # The edit is a new tree: its content identity is recorded, and no index or finished
    # cell of the old copy is taken for it.
    assert one.corpora["mini"].content and two.corpora["mini"].content
    assert one.corpora["mini"].content != two.corpora["mini"].content
    assert one.corpora["mini"].identity != two.corpora["mini"].identity


def test_compare_says_why_it_rebuilds_and_the_needles_follow_the_edit(tmp_path: Path) -> None:
    engine = write_engine(tmp_path, "good", [sys.executable, str(FAULTY), "ok", "{{query}}"])
    toml = make_corpus(tmp_path)

    def run(name: str) -> tuple[ResultFile, list[str]]:
        said: list[str] = []
        outcome = execute(CompareOptions(
            engines=[engine], corpora_file=toml, corpora_root=tmp_path / "work" / "corpora",
            work=tmp_path / "work", json_out=tmp_path / f"{name}.json",
            tracks=("needles",)), Events(stage=said.append))
        assert not outcome.failures, outcome.failures
        return outcome.result, said

    # A needle that survives the name-blind rule, so the track has one before the edit.
    (tmp_path / "mini-proj" / "pkg" / "ledger.py").write_text(
        'def tally(orders):\n    """Adds up every pending order of the day and reports the '
        'grand sum."""\n    return sum(orders)\n')
    one, _ = run("one")
    doc = "Count how many terminal cells a piece of text takes when it is printed."
    (tmp_path / "mini-proj" / "pkg" / "extra.py").write_text(
        f'def columns(text):\n    """{doc}"""\n    return len(text)\n')
    two, said = run("two")
    assert any(m.startswith("rebuilding corpus mini: its folder changed since setup "
                            "(added: pkg/extra.py") for m in said), said
    assert one.corpora["mini:needles"].identity != two.corpora["mini:needles"].identity
    # The needle variant is made again from the edited tree, not kept from the old copy.
    before, after = one.corpora["mini:needles"], two.corpora["mini:needles"]
    assert (before.files, after.files) == (4, 5)
    assert (Path(after.tree) / "pkg" / "extra.py").is_file()


def test_validate_and_probe_name_the_change_that_unset_a_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toml = make_corpus(tmp_path)
    work = tmp_path / "work"
    assert main(["setup", "--corpora-file", str(toml), "--work", str(work)]) == 0
    (tmp_path / "mini-proj" / "pkg" / "cells.py").write_text("def cell_len():\n    return 2\n")
    capsys.readouterr()
    assert main(["validate", "--corpora-file", str(toml), "--work", str(work)]) != 0
    said = capsys.readouterr()
    assert "its folder changed since setup (modified: pkg/cells.py" in said.out + said.err
    engine = write_engine(tmp_path, "good", [sys.executable, str(FAULTY), "ok", "{{query}}"])
    assert main(["probe", "--corpora-file", str(toml), "--work", str(work), "--engine",
                 str(engine), "--corpus", "mini", "--text", "a query"]) == 2
    said = capsys.readouterr()
    assert ("corpus 'mini' is not set up: its folder changed since setup (modified: "
            "pkg/cells.py") in said.err
