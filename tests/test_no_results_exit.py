"""`no_results_exit`: a grep-like tool's "no match" status is zero results, not a failure."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import FAKES
from minicorpus import make_corpus

from codesearch_bench.cli import main
from codesearch_bench.engine.driver import Context, Searcher
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.errors import SpecError
from codesearch_bench.results.schema import ResultFile

REGEX = {"format": "regex", "pattern": r"^(?P<path>[^:]+):(?P<start>\d+):(?P<text>.*)$"}


def spec(tmp_path: Path, **extra: Any) -> Path:
    data = {"name": "greplike", "spans": True,
            "search": {"command": [sys.executable, str(FAKES / "grep_like.py"), "{{query}}"]},
            "parse": REGEX, **extra}
    path = tmp_path / "greplike.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def ctx(tmp_path: Path) -> Context:
    root = tmp_path / "tree"
    root.mkdir()
    state = tmp_path / "state"
    state.mkdir()
    return Context(root=root, state=state, corpus="mini", lang="python")


def ask(tmp_path: Path, ctx: Context, query: str, **extra: Any) -> Any:
    return Searcher(load_spec(spec(tmp_path, **extra)), ctx).search(query, 5, 1)


def test_listed_status_without_output_is_zero_results(tmp_path: Path, ctx: Context) -> None:
    result = ask(tmp_path, ctx, "nothing matches this", no_results_exit=[1])
    assert result.error is None and result.hits == []
    assert result.parsed is not None and not result.parsed.errors


def test_listed_status_with_output_is_parsed(tmp_path: Path, ctx: Context) -> None:
    result = ask(tmp_path, ctx, "settings", no_results_exit=[1])
    assert result.error is None
    assert [(h.path, h.start) for h in result.hits] == [("pkg/config.py", 4)]


def test_status_not_listed_is_still_a_failure(tmp_path: Path, ctx: Context) -> None:
    result = ask(tmp_path, ctx, "broken", no_results_exit=[1])
    assert result.error is not None and result.error.startswith("exited with status 2")
    assert "unmatched (" in result.error and result.hits == []


def test_without_the_field_exit_1_is_a_failure(tmp_path: Path, ctx: Context) -> None:
    result = ask(tmp_path, ctx, "nothing matches this")
    assert result.error is not None and result.error.startswith("exited with status 1")
    # and a hit printed before exit 1 is not taken either
    assert ask(tmp_path, ctx, "settings").error == "exited with status 1"


def test_listed_status_with_unreadable_output_is_an_error(tmp_path: Path,
                                                          ctx: Context) -> None:
    json_parse = {"format": "json", "results": "hits", "start": "line"}
    result = ask(tmp_path, ctx, "settings", no_results_exit=[1], parse=json_parse)
    assert result.error is not None and result.error.startswith("unparseable output: ")


def test_exit_0_is_unchanged(tmp_path: Path, ctx: Context) -> None:
    result = ask(tmp_path, ctx, "cells", no_results_exit=[1])
    assert result.error is None and [h.path for h in result.hits] == ["pkg/cells.py"]


def test_a_miss_in_a_comparison_is_no_failed_query(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path)
    out = tmp_path / "out.json"

    def run(**extra: Any) -> ResultFile:
        code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
                     "--corpora-root", str(tmp_path / "w" / "corpora"), "--json", str(out),
                     "--engine", str(spec(tmp_path, **extra))])
        assert code in (0, 1)
        return ResultFile.model_validate_json(out.read_text())

    listed = run(no_results_exit=[1])
    assert not listed.failures
    queries = {q.id: q for q in listed.rows[0].queries}
    # q1 (settings, printed and exit 1) found its file; q3 (exit 1, silent) is a plain miss.
    assert queries["q1"].error is None and queries["q1"].first_file_slot == 1
    assert queries["q3"].error is None and queries["q3"].scores["zero_miss"] == 1.0
    assert sum(q.error is not None for q in queries.values()) == 0

    unlisted = {q.id: q for q in run().rows[0].queries}
    assert unlisted["q3"].error is not None and "status 1" in unlisted["q3"].error
    assert unlisted["q1"].error is not None


# -- validation ----------------------------------------------------------------

@pytest.mark.parametrize(("value", "expected"), [
    ([0], "0 is success already"),
    ([256], "from 1 to 255"),
    ([-1], "from 1 to 255"),
    ([1, 1], "lists a status twice"),
    ([True], "no exit status"),
    (["1"], "no exit status"),
    ([1.5], "no exit status"),
    (1, "a list of exit statuses, not int"),
])
def test_bad_values_name_the_file_the_field_and_the_fix(tmp_path: Path, value: object,
                                                        expected: str) -> None:
    path = spec(tmp_path, no_results_exit=value)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    message = str(info.value)
    assert str(path) in message and "field `no_results_exit`" in message
    assert expected in message


def test_good_values_load(tmp_path: Path) -> None:
    assert load_spec(spec(tmp_path, no_results_exit=[1, 3])).spec.no_results_exit == [1, 3]
    assert load_spec(spec(tmp_path)).spec.no_results_exit == []


def test_persistent_engines_refuse_it(tmp_path: Path) -> None:
    path = spec(tmp_path, mode="persistent", no_results_exit=[1],
                search={"command": [sys.executable, str(FAKES / "persistent_echo.py")]})
    with pytest.raises(SpecError, match="no_results_exit is for one-shot search commands"):
        load_spec(path)


def test_inside_search_it_is_pointed_to_the_top_level(tmp_path: Path) -> None:
    path = spec(tmp_path, search={"command": ["grep", "{{query}}"], "no_results_exit": [1]})
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert ("field `search.no_results_exit`: unknown field; `no_results_exit` is a top-level "
            "field: move it out of `search`") in str(info.value)
