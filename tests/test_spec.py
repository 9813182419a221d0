"""Engine spec loading: defaults, path-qualified errors, templates, cross-field rules."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pydantic
import pytest

from codesearch_bench.engine.durations import parse_duration
from codesearch_bench.engine.spec import (
    DEFAULT_INDEX_TIMEOUT,
    DEFAULT_SEARCH_TIMEOUT,
    engine_json_schema,
    load_spec,
)
from codesearch_bench.errors import SpecError


def base() -> dict[str, Any]:
    return {
        "name": "acme",
        "spans": True,
        "per_file": [1, 2, 3],
        "candidates": 3,
        "tokens": True,
        "env": ["ACME_STATE={{state}}"],
        "index": {"command": ["acme", "index", "{{root}}"], "timeout": "2h"},
        "search": {"command": ["acme", "query", "-n", "{{n}}", "{{query}}"], "timeout": "2m"},
        "parse": {"format": "json", "results": "hits", "path": "file",
                  "start": "from", "end": "to", "text": "body", "score": "score"},
    }


def write(tmp_path: Path, data: object, name: str = "acme.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return path


def load_error(tmp_path: Path, data: object) -> str:
    path = write(tmp_path, data)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    message = str(info.value)
    assert str(path) in message
    return message


# -- loading ---------------------------------------------------------------

def test_design_example_loads(tmp_path: Path) -> None:
    path = write(tmp_path, base())
    loaded = load_spec(path)
    spec = loaded.spec
    assert loaded.name == "acme"
    assert loaded.file == path.resolve()
    assert loaded.spec_dir == tmp_path.resolve()
    assert len(loaded.sha256) == 64
    assert spec.search_timeout == 120.0
    assert spec.index_timeout == 7200.0
    assert spec.per_file == [1, 2, 3]
    assert spec.has_token_column
    assert spec.parse.has_spans() and spec.parse.has_text()


def test_defaults(tmp_path: Path) -> None:
    data = {"name": "min", "search": {"command": ["grep", "{{query}}"]},
            "parse": {"format": "jsonl"}}
    spec = load_spec(write(tmp_path, data)).spec
    assert spec.mode == "oneshot"
    assert spec.per_file == [1]
    assert spec.candidates == 1
    assert spec.line_base == 1
    assert spec.strip_prefix == ""
    assert spec.index is None and spec.index_timeout == 0.0
    assert spec.search_timeout == DEFAULT_SEARCH_TIMEOUT
    assert spec.parse.path == "path"
    assert not spec.has_token_column


def test_index_default_timeout(tmp_path: Path) -> None:
    data = base()
    del data["index"]["timeout"]
    assert load_spec(write(tmp_path, data)).spec.index_timeout == DEFAULT_INDEX_TIMEOUT


def test_sha256_is_of_the_file_bytes(tmp_path: Path) -> None:
    import hashlib

    path = write(tmp_path, base())
    assert load_spec(path).sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_spec_is_frozen(tmp_path: Path) -> None:
    spec = load_spec(write(tmp_path, base())).spec
    with pytest.raises(pydantic.ValidationError):
        spec.name = "other"  # type: ignore[misc]


def test_schema_key_is_accepted(tmp_path: Path) -> None:
    data = {"$schema": "../protocol/engine.schema.json", **base()}
    assert load_spec(write(tmp_path, data)).spec.schema_ == "../protocol/engine.schema.json"


def test_go_style_spec_loads_unchanged(tmp_path: Path) -> None:
    go = {
        "name": "acme",
        "spans": True,
        "per_file": [1, 2, 3],
        "candidates": 3,
        "env": ["ACME_STATE={{.State}}"],
        "index": {"command": ["acme", "index", "{{.Root}}"]},
        "search": {"command": ["acme", "query", "-n", "{{.N}}", "-k", "{{.K}}",
                               "--per-file", "{{.PerFile}}", "--lang", "{{.Lang}}",
                               "{{.Query}}"]},
        "parse": {"format": "json", "results": "hits",
                  "path": "file", "start": "from", "end": "to", "text": "body"},
    }
    loaded = load_spec(write(tmp_path, go))
    assert loaded.spec.index is not None
    assert loaded.spec.index.command[2] == "{{.Root}}"  # rewritten only when rendered


def test_json_schema() -> None:
    schema = engine_json_schema()
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert "$schema" in schema["properties"]
    assert "search" in schema["required"]


# -- file-level problems ---------------------------------------------------

def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="no such engine spec"):
        load_spec(tmp_path / "nope.json")


def test_invalid_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{\n  "name": "x",\n}\n')
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert f"{path}:3:1: not valid JSON" in str(info.value)
    assert "trailing commas" in str(info.value)


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec(path)


def test_not_an_object(tmp_path: Path) -> None:
    assert "a JSON object, not list" in load_error(tmp_path, [base()])


def test_spec_error_exit_code() -> None:
    assert SpecError("x").exit_code == 2


# -- field-level problems --------------------------------------------------

def test_misspelled_top_level_field(tmp_path: Path) -> None:
    data = base()
    data["candidtes"] = data.pop("candidates")
    message = load_error(tmp_path, data)
    assert "field `candidtes`: unknown field" in message
    assert "did you mean `candidates`?" in message


def test_misspelled_nested_field(tmp_path: Path) -> None:
    data = base()
    data["parse"]["scroe"] = data["parse"].pop("score")
    data["search"]["timout"] = data["search"].pop("timeout")
    message = load_error(tmp_path, data)
    assert "field `parse.scroe`: unknown field; did you mean `score`?" in message
    assert "field `search.timout`: unknown field; did you mean `timeout`?" in message


def test_unrecognisable_field_lists_known_fields(tmp_path: Path) -> None:
    data = base()
    data["zzzzqqq"] = 1
    message = load_error(tmp_path, data)
    assert "field `zzzzqqq`: unknown field; known fields:" in message
    assert "search" in message


def test_missing_required_field(tmp_path: Path) -> None:
    data = base()
    del data["search"]
    assert "field `search`: required but missing" in load_error(tmp_path, data)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"name": "../escape"}, "field `name`"),
        ({"per_file": [0]}, "whole number from 1 to 1000"),
        ({"per_file": [1, 1]}, "per_file lists a setting twice"),
        ({"per_file": []}, "field `per_file`"),
        ({"candidates": 0}, "field `candidates`"),
        ({"env": ["NOEQUALS"]}, "'NOEQUALS' is not KEY=value"),
        ({"env": ["1BAD=x"]}, "is not KEY=value"),
        ({"line_base": 2}, "field `line_base`"),
        ({"mode": "daemon"}, "field `mode`"),
        ({"search": {"command": []}}, "field `search.command`"),
        ({"search": {"command": "acme query {{query}}"}}, "field `search.command`"),
    ],
)
def test_bad_values(tmp_path: Path, change: dict[str, Any], expected: str) -> None:
    assert expected in load_error(tmp_path, {**base(), **change})


@pytest.mark.parametrize("timeout", ["2 minutes", "0s", -5, 0, True, "", "NaN", "Infinity"])
def test_bad_timeout(tmp_path: Path, timeout: object) -> None:
    data = base()
    data["search"]["timeout"] = timeout
    if timeout in ("NaN", "Infinity"):  # json.dumps would quote them; write the bare tokens
        path = tmp_path / "acme.json"
        text = json.dumps(data).replace(f'"{timeout}"', str(timeout))
        path.write_text(text)
        with pytest.raises(SpecError, match=r"field `search\.timeout`"):
            load_spec(path)
    else:
        assert "field `search.timeout`" in load_error(tmp_path, data)


# -- templates -------------------------------------------------------------

def test_unknown_template_variable_lists_available(tmp_path: Path) -> None:
    data = base()
    data["search"]["command"][-1] = "{{qurey}}"
    message = load_error(tmp_path, data)
    assert "field `search.command[4]`" in message
    assert "unknown template variable qurey" in message
    for name in ("query", "root", "state", "k", "n", "per_file", "spec_dir", "python"):
        assert name in message.split("available here:")[1]


def test_query_is_not_available_to_index(tmp_path: Path) -> None:
    data = base()
    data["index"]["command"].append("{{query}}")
    message = load_error(tmp_path, data)
    assert "field `index.command[3]`: unknown template variable query" in message


def test_env_gets_only_common_variables(tmp_path: Path) -> None:
    data = base()
    data["env"].append("ACME_Q={{query}}")
    assert "field `env[1]`: unknown template variable query" in load_error(tmp_path, data)


def test_persistent_start_command_gets_no_query(tmp_path: Path) -> None:
    data = base()
    data["mode"] = "persistent"
    message = load_error(tmp_path, data)
    assert "field `search.command[3]`: unknown template variable n" in message


def test_version_command_variables(tmp_path: Path) -> None:
    data = {**base(), "version": ["{{python}}", "{{spec_dir}}/x.py", "{{root}}"]}
    assert "field `version[2]`: unknown template variable root" in load_error(tmp_path, data)


def test_dir_and_stdin_are_checked(tmp_path: Path) -> None:
    data = base()
    data["search"]["dir"] = "{{rot}}"
    assert "field `search.dir`: unknown template variable rot" in load_error(tmp_path, data)
    data = base()
    data["search"]["stdin"] = "{{ query"
    assert "field `search.stdin`: template syntax error" in load_error(tmp_path, data)


@pytest.mark.parametrize(
    "template",
    ["{{ ''.__class__ }}", "{{ query.__class__.__mro__ }}", "{{ root.__init__.__globals__ }}"],
)
def test_sandbox_escape_refused_at_load(tmp_path: Path, template: str) -> None:
    data = base()
    data["search"]["command"][-1] = template
    message = load_error(tmp_path, data)
    assert "field `search.command[4]`: refused by the template sandbox" in message


# -- cross-field rules -----------------------------------------------------

def test_text_from_corpus_needs_spans(tmp_path: Path) -> None:
    data = {**base(), "spans": False, "text_from_corpus": True}
    assert "text_from_corpus needs spans: true" in load_error(tmp_path, data)


def test_spans_need_a_line_field(tmp_path: Path) -> None:
    data = base()
    del data["parse"]["start"], data["parse"]["end"]
    assert "spans is true but parse names no line field" in load_error(tmp_path, data)
    data["parse"]["lines"] = "range"
    assert load_spec(write(tmp_path, data)).spec.parse.has_spans()


def test_tokens_need_a_text_field(tmp_path: Path) -> None:
    data = base()
    del data["parse"]["text"]
    assert "tokens is true but parse names no text field" in load_error(tmp_path, data)


def test_regex_needs_a_path_group(tmp_path: Path) -> None:
    data = {**base(), "tokens": False,
            "parse": {"format": "regex", "pattern": r"^(?P<file>\S+):(?P<start>\d+)"}}
    message = load_error(tmp_path, data)
    assert "field `parse`" in message
    assert "(?P<path>...)" in message


def test_regex_needs_a_pattern(tmp_path: Path) -> None:
    data = {**base(), "spans": False, "tokens": False, "parse": {"format": "regex"}}
    assert "format 'regex' needs `pattern`" in load_error(tmp_path, data)


def test_regex_must_compile(tmp_path: Path) -> None:
    data = {**base(), "spans": False, "tokens": False,
            "parse": {"format": "regex", "pattern": "(?P<path>"}}
    assert "not a valid regex" in load_error(tmp_path, data)


def test_regex_unknown_group(tmp_path: Path) -> None:
    data = {**base(), "spans": False, "tokens": False,
            "parse": {"format": "regex", "pattern": r"(?P<path>\S+) (?P<lang>\w+)"}}
    assert "unknown named groups ['lang']" in load_error(tmp_path, data)


def test_regex_takes_no_field_mapping(tmp_path: Path) -> None:
    data = {**base(), "tokens": False,
            "parse": {"format": "regex", "pattern": r"(?P<path>\S+):(?P<start>\d+)",
                      "start": "from", "path": "file"}}
    assert "remove start, path" in load_error(tmp_path, data)


def test_regex_spans_and_text_come_from_groups(tmp_path: Path) -> None:
    data = {**base(),
            "parse": {"format": "regex",
                      "pattern": r"^(?P<path>\S+):(?P<start>\d+)-(?P<end>\d+): (?P<text>.*)$"}}
    parse = load_spec(write(tmp_path, data)).spec.parse
    assert parse.has_spans() and parse.has_text()


def test_pattern_only_for_regex(tmp_path: Path) -> None:
    data = base()
    data["parse"]["pattern"] = r"(?P<path>\S+)"
    assert "`pattern` is only for format 'regex'" in load_error(tmp_path, data)


def test_lines_or_start_end_not_both(tmp_path: Path) -> None:
    data = base()
    data["parse"]["lines"] = "range"
    assert "either `lines` or `start`/`end`" in load_error(tmp_path, data)


def test_persistent_takes_no_stdin(tmp_path: Path) -> None:
    data = base()
    data["mode"] = "persistent"
    data["search"] = {"command": ["acme", "serve", "{{root}}"], "stdin": "x"}
    assert "persistent engine's stdin carries the requests" in load_error(tmp_path, data)


# -- durations -------------------------------------------------------------

@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30s", 30.0), ("2m", 120.0), ("6h", 21600.0), ("1h30m", 5400.0), ("250ms", 0.25),
     ("1d", 86400.0), ("1.5s", 1.5), (" 2m ", 120.0), ("1m30s", 90.0), (45, 45.0), (0.5, 0.5)],
)
def test_parse_duration(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "bad", ["", "2", "two minutes", "2 m", "-1s", "0s", 0, -3, True, None, [1],
            math.nan, math.inf, "1h-30m"],
)
def test_parse_duration_rejects(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_duration(bad)
