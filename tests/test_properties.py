"""Property-based tests: no input crashes the parse layer or the spec loader."""

from __future__ import annotations

import contextlib
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from codesearch_bench.engine.output.parse import parse
from codesearch_bench.engine.spec import ParseSpec, load_spec
from codesearch_bench.errors import SpecError
from codesearch_bench.scoring.normalize import collapse, normalize

SPECS = [
    ParseSpec(format="json", results="hits", start="start", end="end", text="text",
              score="score"),
    ParseSpec(format="json", lines="lines"),
    ParseSpec(format="jsonl", path="data.path", start="a.b", score="s"),
    ParseSpec(format="regex", pattern=r"^(?P<path>\S+):(?P<start>\d+)-(?P<end>\d+)"
                                      r"(?: (?P<score>\S+))?"),
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(
        st.sampled_from(["hits", "path", "start", "end", "text", "score", "lines", "data",
                         "a", "b", "s", "x"]), inner, max_size=6),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000), st.sampled_from(SPECS))
def test_parse_never_raises_on_bytes(data: bytes, spec: ParseSpec) -> None:
    result = parse(spec, data)
    assert result.bad_records >= 0
    for hit in result.hits:
        assert isinstance(hit.path, str) and hit.path.strip()


@settings(max_examples=300, deadline=None)
@given(json_values, st.sampled_from(SPECS[:3]))
def test_parse_never_raises_on_json(value: object, spec: ParseSpec) -> None:
    data = json.dumps(value).encode()
    result = parse(spec, data + b"\n" + data)
    for hit in result.hits:
        if hit.start is not None and hit.end is not None:
            assert hit.start <= hit.end


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=20), st.integers(0, 1), st.integers(1, 3))
def test_normalize_and_collapse_keep_paths_inside(paths: list[str], base: int,
                                                  per_file: int) -> None:
    from codesearch_bench.model import Hit

    hits = [Hit(path=p or "x", start=1, end=2, rank=i) for i, p in enumerate(paths)]
    norm = normalize(hits, Path("/tree/root"), line_base=base)
    for hit in norm.hits:
        assert not hit.path.startswith(("/", "../")) and hit.path != ".."
    assert norm.outside + len(norm.hits) == len(hits)
    slots = collapse(norm.hits, per_file)
    assert len({s.path for s in slots}) == len(slots)
    assert all(1 <= len(s.chunks) <= per_file for s in slots)


spec_like = st.dictionaries(
    st.sampled_from(["name", "spans", "per_file", "candidates", "tokens", "text_from_corpus",
                     "strip_prefix", "line_base", "mode", "env", "index", "search", "parse",
                     "version", "requires", "bogus", "$schema"]),
    json_values, max_size=10,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec_like)
def test_spec_loader_only_raises_spec_errors(data: dict) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "engine.json"
        path.write_text(json.dumps(data))
        try:
            load_spec(path)
        except SpecError as exc:
            assert str(path) in str(exc)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=300))
def test_spec_loader_survives_arbitrary_bytes(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "engine.json"
        path.write_bytes(data)
        with contextlib.suppress(SpecError):
            load_spec(path)
