"""Engines that answer in text: items graded by whether they contain a gold span's text."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench.cli import main
from codesearch_bench.engine.spec import EngineSpec
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.scoring import content, values

GOLD = ("def load_settings(path):\n    \"\"\"Read the settings file and parse its JSON.\"\"\"\n"
        "    with open(path) as fh:\n        return json.load(fh)\n")
PARAPHRASE = ("To load the configuration, open the file at the given location and decode the "
              "JSON document it holds, returning the resulting mapping.")


@pytest.mark.parametrize(("item", "relevant"), [
    (GOLD, True),  # an exact copy
    ("Docs:\n\n" + GOLD.replace("\n", "\n\n  ") + "\nMore text after it.", True),  # re-spaced
    (GOLD.replace("json.load", "json.loads"), True),  # one character off
    (PARAPHRASE, False),  # the same meaning in other words is not the code
    ("def backoff(attempt):\n    return min(60, 2 ** attempt)\n", False),
    ("def load_settings(path):", False),  # a fragment of the gold does not contain it
    (GOLD[:-12], True),  # nearly all of it (the last few characters cut)
    ("", False),
])
def test_the_threshold_separates_copies_from_paraphrases(item: str, relevant: bool) -> None:
    gold = content.normalized(GOLD)
    assert content.relevant(content.normalized(item), gold, content.DEFAULT_THRESHOLD) is relevant


def test_each_gold_span_is_credited_once_at_its_first_item() -> None:
    golds = [content.normalized(GOLD), content.normalized("return min(60, 2 ** attempt)")]
    assert content.gains(["nothing", GOLD, GOLD + " return min(60, 2 ** attempt)"], golds,
                         85) == [0, 1, 1]


def test_spec_rules() -> None:
    base = {"name": "x", "search": {"command": ["x"]}}
    with pytest.raises(ValueError, match=r"parse\.text"):
        EngineSpec.model_validate({**base, "answer": "blob",
                                   "parse": {"format": "json", "path": None}})
    with pytest.raises(ValueError, match="answer 'text'"):
        EngineSpec.model_validate({**base, "parse": {"format": "json", "path": None}})
    with pytest.raises(ValueError):
        EngineSpec.model_validate({**base, "answer": "blob", "content_threshold": 101,
                                   "parse": {"format": "json", "path": None, "text": "t"}})


# Blob answers: q1 gets the gold function verbatim inside documentation prose, q2 a
# paraphrase, q3 an error; q4's gold is file-level.
FAKE = f'''
import json, sys
q = sys.argv[1]
gold = {GOLD!r}
if "settings parsed" in q:
    print(json.dumps({{"items": [{{"text": "Usage notes. " + gold}}, {{"text": "unrelated"}}]}}))
elif "terminal cells" in q:
    print(json.dumps({{"items": [{{"text": "It measures how wide text is on a terminal."}}]}}))
elif "retry" in q:
    sys.exit(3)
else:
    print(json.dumps({{"items": [{{"text": "anything"}}]}}))
'''


def _spec(tmp_path: Path, name: str, answer: str) -> Path:
    spec = tmp_path / f"{name}.json"
    spec.write_text(json.dumps({
        "name": name, "answer": answer, "tokens": True,
        "search": {"command": [sys.executable, "{{spec_dir}}/fake.py", "{{query}}"]},
        "parse": {"format": "json", "results": "items", "path": None, "text": "text"}}))
    return spec


def test_blob_and_text_engines_in_a_comparison(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path)
    (tmp_path / "fake.py").write_text(FAKE)
    out = tmp_path / "out.json"
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(_spec(tmp_path, "blob", "blob")),
                 "--engine", str(_spec(tmp_path, "texts", "text")), "--json", str(out)])
    assert code == 0  # q3 failed: a miss on its row, not a failed cell
    result = ResultFile.load(out)
    blob = next(r for r in result.rows if r.engine == "blob")
    texts = next(r for r in result.rows if r.engine == "texts")
    assert "content_graded" in blob.flags and blob.content_threshold == 85
    # A single blob enters only the rank-1 family; paths were never graded.
    assert set(k for k in blob.metrics if not k.startswith("tokens")) == \
        {"content.hit@1", "content.p@1"}
    hit1 = blob.metrics["content.hit@1"]
    # q1 found, q2 a paraphrase (miss), q3 failed (miss), q4 file-level (not entered).
    assert hit1.mean == pytest.approx(1 / 3) and hit1.n == 3
    by_id = {o.id: o for o in blob.queries}
    assert not by_id["q4"].content_entered
    assert math.isnan(values.query_value("content.hit@1", by_id["q4"]))
    assert values.query_value("content.hit@1", by_id["q3"]) == 0.0
    assert math.isnan(values.query_value("file.hit@10", by_id["q3"]))
    assert texts.metrics["content.mrr"].mean == pytest.approx(1 / 3)
    assert "content.recall@10" in texts.metrics and "file.mrr" not in texts.metrics


def test_a_corpus_the_engine_does_not_cover_is_a_gap_not_a_zero(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path)
    make_corpus(tmp_path, "other")
    (tmp_path / "fake.py").write_text(FAKE)
    spec = _spec(tmp_path, "blob", "blob")
    data = json.loads(spec.read_text())
    spec.write_text(json.dumps({**data, "covers": ["mini"]}))
    out = tmp_path / "out.json"
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                 "--engine", str(spec), "--engine", "engines/grep.json",
                 "--json", str(out)]) == 0
    result = ResultFile.load(out)
    assert {(r.engine, r.corpus) for r in result.rows if r.headline} == {
        ("blob", "mini"), ("grep", "mini"), ("grep", "other")}
    assert [(g.engine, g.corpus) for g in result.gaps] == [("blob", "other")]
    assert not result.failures
