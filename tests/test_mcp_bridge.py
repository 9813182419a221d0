"""scripts/mcp-bridge: any stdio MCP server as a persistent bench engine.

The pure parts (templates, config checks, hit extraction) are tested by
importing the script and the sibling modules it loads from scripts/. The rest
drives the bridge through bench's own session and driver against tiny MCP
servers in tests/fakes/ (the SDK's FastMCP):
a generic one, and stand-ins for Context7 and Neuledge Context that mimic
their tool names and answer shapes. Those tests need the `mcp` package, an
optional extra, and skip without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bridgekit import load_bridge, needs_mcp
from helpers import alive, children, new_children

from codesearch_bench.cli import main
from codesearch_bench.engine import driver
from codesearch_bench.engine.session import EngineSession
from codesearch_bench.engine.spec import load_spec

REPO = Path(__file__).resolve().parent.parent
BRIDGE = REPO / "scripts" / "mcp-bridge"
FAKES = Path(__file__).resolve().parent / "fakes"
bridge = load_bridge()
bridge_config = sys.modules["mcpbridge_config"]  # imported by the bridge, from scripts/


def write_config(tmp_path: Path, tool: str, extract: dict[str, Any],
                 arguments: dict[str, Any] | None = None, **extra: Any) -> Path:
    config = {
        "server": {"command": sys.executable, "args": [str(FAKES / "mcp_server.py")]},
        "tool": tool,
        "arguments": arguments if arguments is not None else {"query": "{{ query }}"},
        "extract": extract,
        **extra,
    }
    path = tmp_path / f"{tool}.bridge.json"
    path.write_text(json.dumps(config))
    return path


def write_spec(tmp_path: Path, config: Path, *, spans: bool = True, name: str = "bridged",
               error_format: str = "plain") -> Path:
    spec = {
        "name": name,
        "spans": spans,
        "tokens": True,
        "mode": "persistent",
        "search": {"command": ["{{python}}", str(BRIDGE), "--config", str(config),
                               "--error-format", error_format,
                               "--set", "root={{root}}", "--set", "state={{state}}"],
                   "timeout": "60s"},
        "parse": {"format": "json", "results": "hits", "path": "path",
                  **({"start": "start", "end": "end"} if spans else {}),
                  "text": "text", "score": "score"},
    }
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(spec))
    return path


def run_queries(spec: Path, root: Path, state: Path, queries: list[str],
                corpus: str = "proj") -> tuple[list[driver.SearchResult], int]:
    """Every query through bench's own Searcher, as compare runs them; and the restarts."""
    loaded = load_spec(spec)
    ctx = driver.Context(root=root, state=state, corpus=corpus)
    with driver.Searcher(loaded, ctx) as searcher:
        results = [searcher.search(q, 20, 1) for q in queries]
        assert searcher.session is not None
        return results, searcher.session.restarts


@pytest.fixture
def no_leftovers() -> Iterator[None]:
    before = {c.pid for c in children()}
    yield
    deadline = time.monotonic() + 5
    while (left := new_children(before)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"left behind (pid, status): {left}"


# -- templates and configuration -----------------------------------------------

def test_render_keeps_a_whole_placeholders_type() -> None:
    values = {"query": 'x "y"', "n": 60, "corpus": "rich"}
    out = bridge_config.render(
        {"q": "{{ query }}", "limit": "{{n}}", "label": "{{ corpus }}:{{ n }}",
         "nested": ["{{ n }}", {"x": "{{ '{literal}' }} {{ corpus | upper }}"}], "flag": True},
        values)
    assert out == {"q": 'x "y"', "limit": 60, "label": "rich:60",
                   "nested": [60, {"x": "{literal} RICH"}], "flag": True}


def test_unknown_variable_names_the_file_the_field_and_the_known_ones(tmp_path: Path) -> None:
    path = write_config(tmp_path, "t", {"mode": "blob", "path": "x"},
                        {"q": "{{ qeury }}", "limit": "{{ n }}"})
    with pytest.raises(bridge.BridgeError,
                       match=r"t\.bridge\.json: `arguments\.q`: unknown template variable "
                             r"qeury; available here: corpus, k, n, per_file, query, root, state"):
        bridge.load_config(str(path), {})


@pytest.mark.parametrize(("change", "field"), [
    ({"arguments": {"query": "{query}"}}, "arguments.query"),
    ({"server": {"command": "x", "args": ["--root", "{root}"]}}, r"server\.args\[1\]"),
    ({"setup": [{"tool": "open", "arguments": {"path": "{root}/x"}}]}, r"setup\[0\]\.arguments"),
    ({"extract": {"mode": "blob", "path": "docs:{root}"}}, "extract.path"),
])
def test_the_old_placeholder_syntax_is_refused_with_the_new_spelling(
        tmp_path: Path, change: dict[str, Any], field: str) -> None:
    config = {"server": {"command": "x"}, "tool": "t", "extract": {"mode": "blob", "path": "x"},
              **change}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(config))
    name = "query" if "query" in json.dumps(change) else "root"
    with pytest.raises(bridge.BridgeError,
                       match=rf"old\.json: `{field}.*old bridge placeholder syntax.*"
                             rf"write \{{\{{ {name} \}}\}}"):
        bridge.load_config(str(path), {"root": "/r"})


def test_server_and_setup_see_only_the_set_values(tmp_path: Path) -> None:
    config = {"server": {"command": "x", "args": ["{{ query }}"]}, "tool": "t",
              "extract": {"mode": "blob", "path": "x"}}
    path = tmp_path / "early.json"
    path.write_text(json.dumps(config))
    with pytest.raises(bridge.BridgeError, match=r"server\.args\[0\]`: unknown .* query"):
        bridge.load_config(str(path), {"root": "/r"})
    loaded = bridge.load_config(str(path), {"query": "set", "root": "/r"})
    assert loaded.args == ["set"]


@pytest.mark.parametrize(("change", "message"), [
    ({"extract": {"mode": "regex"}}, "extract.mode"),
    ({"extract": {"mode": "markdown", "pattern": "^## (?P<file>.+)"}}, r"\(\?P<path>"),
    ({"extract": {"mode": "blob"}}, "label"),
    ({"extract": {"mode": "blob", "path": "x", "results": "items"}}, "do not apply"),
    ({"tool": None}, "`tool`"),
    ({"serve": {}}, "unknown keys"),
    ({"lookup": {"lib": {"key": "corpus"}}}, "lookup.lib"),
    ({"timeout": 0}, "timeout"),
])
def test_config_problems_are_named(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    config = {"server": {"command": "x"}, "tool": "t", "extract": {"mode": "blob", "path": "x"}}
    config.update(change)
    config = {k: v for k, v in config.items() if v is not None}
    path = tmp_path / "bridge.json"
    path.write_text(json.dumps(config))
    with pytest.raises(bridge.BridgeError, match=message):
        bridge.load_config(str(path), {})


def test_shipped_bridge_configs_load() -> None:
    values = {"root": "/r", "state": "/s", "corpus": "rich", "python": sys.executable,
              "spec_dir": str(REPO / "engines")}
    configs = sorted((REPO / "engines").glob("*/bridge.json"))
    assert {p.parent.name for p in configs} >= {"pydocs-mcp-mcp", "context7", "neuledge-context"}
    for path in configs:
        bridge.load_config(str(path), values)
    for name in ("pydocs-mcp", "pydocs-mcp-mcp", "context7", "neuledge-context"):
        assert load_spec(REPO / "engines" / f"{name}.json").name == name


# -- hit extraction ---------------------------------------------------------------

def config_for(tmp_path: Path, extract: dict[str, Any], **extra: Any) -> Any:
    return bridge.load_config(str(write_config(tmp_path, "t", extract, **extra)), {})


def text_result(text: str, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], **extra}


def test_structured_hits_by_dotted_paths(tmp_path: Path) -> None:
    config = config_for(tmp_path, {"mode": "structured", "results": "data.items",
                                   "path": "loc.file", "start": "loc.lines[0]",
                                   "end": "loc.lines[1]", "text": None, "score": "score"})
    result = {"content": [], "structuredContent": {"data": {"items": [
        {"loc": {"file": "a.py", "lines": [3, 9]}, "score": "1.5"},
        {"loc": {"file": "b.py", "lines": ["4", "4"]}, "score": 1.0},
    ]}}}
    assert bridge.extract_hits(config, result, {}) == [
        {"path": "a.py", "start": 3, "end": 9, "text": None, "score": 1.5},
        {"path": "b.py", "start": 4, "end": 4, "text": None, "score": 1.0},
    ]
    assert bridge.extract_hits(config, {"content": [], "structuredContent": {}}, {}) == []
    with pytest.raises(bridge.ToolFailure, match="no structuredContent"):
        bridge.extract_hits(config, text_result("just text"), {})


def test_a_list_index_in_a_field_path_is_written_in_brackets(tmp_path: Path) -> None:
    with pytest.raises(bridge.BridgeError, match=r"`extract\.start`.*'loc\.lines\[0\]'"):
        config_for(tmp_path, {"mode": "structured", "start": "loc.lines.0"})
    with pytest.raises(bridge.BridgeError, match=r"`extract\.path` names the field"):
        config_for(tmp_path, {"mode": "structured", "path": None})


def test_records_are_read_as_bench_reads_engine_output(tmp_path: Path) -> None:
    """Bench's own parser: a record it cannot read is skipped; none readable fails."""
    config = config_for(tmp_path, {"mode": "structured", "results": "data.items",
                                   "start": "lines[0]", "end": "lines[1]"})
    items = [{"path": "a.py", "lines": [3, 9], "score": "inf"},
             "not an object",
             {"path": "b.py", "lines": [9, 3]},
             {"path": "c.py", "lines": [4], "text": ["one", "two"]}]
    hits = bridge.extract_hits(config, {"structuredContent": {"data": {"items": items}}}, {})
    assert hits == [  # a.py: an infinite score is that record's error, as for any engine
        {"path": "c.py", "start": 4, "end": 4, "text": "one\ntwo", "score": None},
    ]
    with pytest.raises(bridge.ToolFailure, match="cannot read the tool result: result 0: "):
        bridge.extract_hits(config, {"structuredContent": {"data": {"items": [1, 2]}}}, {})
    with pytest.raises(bridge.ToolFailure, match=r"expected a list at `data\.items`"):
        bridge.extract_hits(config, {"structuredContent": {"data": {"items": "x"}}}, {})
    # A tool may leave an empty list out anywhere: no hits, not a failure.
    assert bridge.extract_hits(config, {"structuredContent": {"data": {"total": 0}}}, {}) == []


def test_json_text_hits_and_error_field(tmp_path: Path) -> None:
    config = config_for(tmp_path, {"mode": "json_text", "results": "results", "error": "error",
                                   "path": "source", "text": "content", "start": None,
                                   "end": None, "score": None})
    ok = text_result(json.dumps({"results": [{"source": "docs/a.md", "content": "A"}]}))
    assert bridge.extract_hits(config, ok, {}) == [
        {"path": "docs/a.md", "start": None, "end": None, "text": "A", "score": None}]
    missing = text_result(json.dumps({"error": "Package not found: x", "message": "..."}))
    with pytest.raises(bridge.ToolFailure, match="Package not found: x"):
        bridge.extract_hits(config, missing, {})
    with pytest.raises(bridge.ToolFailure, match="not JSON"):
        bridge.extract_hits(config, text_result("<html>"), {})


def test_markdown_hits_by_regex(tmp_path: Path) -> None:
    config = config_for(tmp_path, {
        "mode": "markdown",
        "pattern": r"^## \S+ — (?P<path>.+?):(?P<start>\d+)-(?P<end>\d+)$"})
    text = "[index: fresh]\n## a.f — a.py:3-9\nbody\n## b.g — b/c.py:10-12\n  ## not — x:1-2\n"
    assert [(h["path"], h["start"], h["end"]) for h in
            bridge.extract_hits(config, text_result(text), {})] == [
        ("a.py", 3, 9), ("b/c.py", 10, 12)]


def test_blob_is_one_hit_without_lines(tmp_path: Path) -> None:
    config = config_for(tmp_path, {"mode": "blob", "path": "docs:{{ library }}"},
                        lookup={"library": {"key": "corpus", "values": {"rich": "/x/y"}}})
    hits = bridge.extract_hits(config, text_result("### Docs\nsome text"), {"library": "/x/y"})
    assert hits == [{"path": "docs:/x/y", "start": None, "end": None,
                     "text": "### Docs\nsome text", "score": None}]
    assert bridge.extract_hits(config, text_result("  "), {"library": "/x/y"}) == []


def test_is_error_and_error_prefixes_become_failures(tmp_path: Path) -> None:
    config = config_for(tmp_path, {"mode": "blob", "path": "x"},
                        error_prefixes=["Error", "Rate limited"])
    with pytest.raises(bridge.ToolFailure, match="tool error: boom"):
        bridge.extract_hits(config, text_result("boom", isError=True), {})
    for text in ("Error fetching library context. TypeError: fetch failed",
                 "\n Rate limited or quota exceeded."):
        with pytest.raises(bridge.ToolFailure, match=text.split()[0]):
            bridge.extract_hits(config, text_result(text), {})
    plain = config_for(tmp_path, {"mode": "blob", "path": "x"})  # prefixes are opt-in
    assert len(bridge.extract_hits(plain, text_result("Error handling guide"), {})) == 1


def test_lookup_values_by_request_field(tmp_path: Path) -> None:
    config = config_for(tmp_path, {"mode": "blob", "path": "x"},
                        lookup={"lib": {"key": "corpus", "values": {"rich": "/textualize/rich"}}})
    merged = bridge.request_values(config, {"root": "/r"}, {"corpus": "rich", "query": "q"})
    assert merged == {"root": "/r", "corpus": "rich", "query": "q", "lib": "/textualize/rich"}
    with pytest.raises(bridge.ToolFailure, match=r"no entry for corpus='click'.*known: rich"):
        bridge.request_values(config, {}, {"corpus": "click"})


# -- through bench, against fake MCP servers --------------------------------------

@needs_mcp
@pytest.mark.parametrize(("tool", "extract", "arguments"), [
    # the fake raises unless `limit` arrives as an integer: "{{ n }}" keeps its type
    ("search_structured", {"mode": "structured", "results": "items", "start": "start_line",
                           "end": "end_line"}, {"query": "{{ query }}", "limit": "{{ n }}"}),
    ("search_json", {"mode": "json_text", "results": "results", "path": "file.name",
                     "start": "lines[0]", "end": "lines[1]", "text": "body", "score": None},
     None),
    ("search_markdown", {"mode": "markdown",
                         "pattern": r"^## \S+ — (?P<path>.+?):(?P<start>\d+)-(?P<end>\d+)$"},
     None),
])
def test_each_mode_through_bench(tmp_path: Path, small_tree: Path, no_leftovers: None,
                                 tool: str, extract: dict[str, Any],
                                 arguments: dict[str, Any] | None) -> None:
    spec = write_spec(tmp_path, write_config(tmp_path, tool, extract, arguments))
    (result,), restarts = run_queries(spec, small_tree, tmp_path / "state", ["terminal width"])
    assert result.error is None, result.error
    assert [(h.path, h.start, h.end) for h in result.hits] == [
        ("pkg/cells.py", 1, 3), ("pkg/config.py", 4, 7)]
    assert restarts == 0


@needs_mcp
def test_blob_through_probe(tmp_path: Path, small_tree: Path,
                            capsys: pytest.CaptureFixture[str]) -> None:
    config = write_config(tmp_path, "docs_blob", {"mode": "blob", "path": "README.md"})
    spec = write_spec(tmp_path, config, spans=False)
    code = main(["probe", "--engine", str(spec), "--root", str(small_tree), "--text",
                 "cell width", "--work", str(tmp_path / "work")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "README.md" in out and "Docs about cell width" in out


@needs_mcp
def test_failures_are_failed_queries_and_the_run_goes_on(
        tmp_path: Path, small_tree: Path, no_leftovers: None) -> None:
    """A crash mid-run fails that query; the bridge restarts its server, bench does not."""
    starts = tmp_path / "starts"
    config = json.loads(write_config(
        tmp_path, "search_structured",
        {"mode": "structured", "results": "items", "start": "start_line", "end": "end_line"},
        {"query": "{{ query }}", "limit": "{{ n }}"}).read_text())
    config["server"]["args"] += ["--starts", str(starts)]
    path = tmp_path / "crashy.json"
    path.write_text(json.dumps(config))
    spec = write_spec(tmp_path, path)
    results, restarts = run_queries(spec, small_tree, tmp_path / "state",
                                    ["first", "please crash now", "third", "crash again", "last"])
    assert [r.error is None for r in results] == [True, False, True, False, True]
    assert "MCP server died" in (results[1].error or "")  # McpError (SDK 1) or MCPError (2)
    assert all(len(r.hits) == 2 for r in results if r.error is None)
    assert restarts == 0  # the bridge itself never died
    pids = [int(p) for p in starts.read_text().split()]
    assert len(pids) == 3 and not any(alive(p) for p in pids)


@needs_mcp
@pytest.mark.parametrize(("tool", "needle"), [
    ("raise_error", "tool error: Error executing tool"),
    ("error_text", "Error fetching library context"),
])
def test_error_results_fail_the_query(tmp_path: Path, small_tree: Path, tool: str,
                                      needle: str) -> None:
    config = write_config(tmp_path, tool, {"mode": "blob", "path": "x"},
                          error_prefixes=["Error"])
    results, _ = run_queries(write_spec(tmp_path, config, spans=False), small_tree,
                             tmp_path / "state", ["a", "b"])
    for result in results:
        assert result.error is not None and needle in result.error, result.error
        assert result.hits == []


@needs_mcp
def test_json_error_line_is_a_failed_query_through_parse_error(
        tmp_path: Path, small_tree: Path) -> None:
    """The bridge's default error line {"error": ...} fails the query via parse.error."""
    config = write_config(tmp_path, "error_text", {"mode": "blob", "path": "x"},
                          error_prefixes=["Error"])
    spec = write_spec(tmp_path, config, spans=False, error_format="json")
    data = json.loads(spec.read_text())
    data["parse"]["error"] = "error"
    spec.write_text(json.dumps(data))
    (result,), _ = run_queries(spec, small_tree, tmp_path / "state", ["a"])
    assert json.loads(result.raw) == {"id": 1, "error": "Error fetching library context. "
                                      "Please try again later. TypeError: fetch failed"}
    assert result.error == ("engine error: Error fetching library context. Please try again "
                            "later. TypeError: fetch failed")
    assert result.hits == []


@needs_mcp
def test_a_hung_call_times_out_and_the_server_is_restarted(
        tmp_path: Path, no_leftovers: None) -> None:
    config = write_config(
        tmp_path, "slow", {"mode": "structured", "results": "items", "start": "start_line",
                           "end": "end_line"},
        {"query": "{{ query }}", "seconds": "{{ seconds }}"},
        lookup={"seconds": {"key": "query", "values": {"hang": 60, "quick": 0}}}, timeout=2)
    with EngineSession([sys.executable, str(BRIDGE), "--config", str(config)]) as s:
        hung = json.loads(s.request({"query": "hang"}, timeout=60).line or b"null")
        quick = json.loads(s.request({"query": "quick"}, timeout=60).line or b"null")
        unknown = json.loads(s.request({"query": "other"}, timeout=60).line or b"null")
    assert "no answer within 2s" in hung["error"]
    assert quick["hits"][0]["path"] == "pkg/cells.py"
    assert "no entry for query='other'" in unknown["error"]


@needs_mcp
def test_a_chatty_server_does_not_block(tmp_path: Path) -> None:
    config = write_config(tmp_path, "chatty", {"mode": "structured", "results": "items",
                                               "start": "start_line", "end": "end_line"})
    with EngineSession([sys.executable, str(BRIDGE), "--config", str(config)]) as s:
        replies = [s.request({"query": f"q{i}"}, timeout=60) for i in range(3)]
    assert all(r.error is None and b"pkg/cells.py" in (r.line or b"") for r in replies)


@needs_mcp
def test_setup_runs_once_and_eof_stops_the_server(tmp_path: Path, no_leftovers: None) -> None:
    starts, setups = tmp_path / "starts", tmp_path / "setups"
    config = json.loads(write_config(
        tmp_path, "docs_blob", {"mode": "blob", "path": "x"},
        setup=[{"tool": "count_setup", "arguments": {"path": "{{ state }}/setups"}}]).read_text())
    config["server"]["args"] += ["--starts", "{{ state }}/starts"]
    path = tmp_path / "setup.json"
    path.write_text(json.dumps(config))
    s = EngineSession([sys.executable, str(BRIDGE), "--config", str(path),
                       "--set", f"state={tmp_path}"])
    s.start()
    for q in ("a", "b", "c"):
        assert s.request({"query": q}, timeout=60).error is None
    (pid,) = (int(p) for p in starts.read_text().split())
    assert alive(pid)
    s.close()
    assert setups.read_text() == "setup\n"
    assert not alive(pid)


@needs_mcp
def test_term_stops_bridge_and_server_at_once(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    config = json.loads(write_config(tmp_path, "docs_blob",
                                     {"mode": "blob", "path": "x"}).read_text())
    config["server"]["args"] += ["--starts", str(starts)]
    path = tmp_path / "term.json"
    path.write_text(json.dumps(config))
    proc = subprocess.Popen([sys.executable, str(BRIDGE), "--config", str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b'{"query": "a"}\n')
    proc.stdin.flush()
    assert b"hits" in proc.stdout.readline()
    (pid,) = (int(p) for p in starts.read_text().split())
    proc.terminate()  # stdin stays open: the bridge must not wait for it
    assert proc.wait(timeout=15) == 128 + 15
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    proc.stdin.close()
    proc.stdout.close()


@needs_mcp
def test_stdout_carries_only_response_lines(tmp_path: Path) -> None:
    config = write_config(tmp_path, "docs_blob", {"mode": "blob", "path": "x"})
    requests = "".join(json.dumps({"query": q}) + "\n" for q in ("a", "b")) + "not json\n"
    out = subprocess.run([sys.executable, str(BRIDGE), "--config", str(config)],
                         input=requests, capture_output=True, text=True, timeout=60)
    lines = out.stdout.splitlines()
    assert len(lines) == 3, out.stdout
    assert [("hits" in json.loads(line)) for line in lines] == [True, True, False]
    assert "bad request line" in json.loads(lines[2])["error"]
    assert out.returncode == 0 and "MCP server ready" in out.stderr


@needs_mcp
def test_a_server_that_cannot_start_is_an_engine_that_is_down(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"server": {"command": str(tmp_path / "no-such-server")},
                                "tool": "t", "extract": {"mode": "blob", "path": "x"}}))
    with EngineSession([sys.executable, str(BRIDGE), "--config", str(path)], grace=1) as s:
        first = s.request({"query": "a"}, timeout=60)
        second = s.request({"query": "b"}, timeout=60)
    assert first.error is not None and "cannot start the MCP server" in first.error
    assert s.down_reason is not None and second.error is not None


@needs_mcp
def test_list_tools(tmp_path: Path) -> None:
    config = write_config(tmp_path, "docs_blob", {"mode": "blob", "path": "x"})
    out = subprocess.run([sys.executable, str(BRIDGE), "--config", str(config), "--list-tools"],
                         capture_output=True, text=True, timeout=60, check=True)
    tools = {t["name"]: t for t in json.loads(out.stdout)["tools"]}
    assert {"search_structured", "docs_blob", "crash_on_quote"} <= set(tools)
    assert "query" in tools["docs_blob"]["inputSchema"]["properties"]


# -- the shipped Context7 and Neuledge specs, against stand-ins -------------------

@pytest.fixture
def stub_bin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`context7-mcp` and `context` on PATH, running the stand-ins in tests/fakes."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, stub in (("context7-mcp", "context7_stub.py"), ("context", "neuledge_stub.py")):
        exe = bin_dir / name
        exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKES / stub}" "$@"\n')
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return bin_dir


@needs_mcp
def test_context7_spec_records_error_text_as_failures(
        tmp_path: Path, small_tree: Path, stub_bin: Path, no_leftovers: None) -> None:
    spec = REPO / "engines" / "context7.json"
    results, restarts = run_queries(
        spec, small_tree, tmp_path / "state",
        ["cell width of a string", "offline please", "wrap text"], corpus="rich")
    ok, offline, again = results
    assert offline.error is not None and "Error fetching library context" in offline.error
    for result in (ok, again):
        assert result.error is None, result.error
        (hit,) = result.hits
        assert hit.path == "context7:/textualize/rich" and hit.start is None
        assert hit.text is not None and "cell_len" in hit.text
    assert restarts == 0
    (unknown,), _ = run_queries(spec, small_tree, tmp_path / "state2", ["x"], corpus="proj")
    assert unknown.error is not None and "no entry for corpus='proj'" in unknown.error


@needs_mcp
def test_neuledge_spec_survives_a_crash_on_an_unbalanced_quote(
        tmp_path: Path, small_tree: Path, stub_bin: Path, no_leftovers: None) -> None:
    loaded = load_spec(REPO / "engines" / "neuledge-context.json")
    ctx = driver.Context(root=small_tree, state=tmp_path / "state", corpus="proj")
    _, measurement = driver.run_index(loaded, ctx)
    assert measurement is not None and measurement.ok, measurement.stderr_tail()
    assert (tmp_path / "state" / ".context" / "packages" / "proj@bench.json").exists()
    with driver.Searcher(loaded, ctx) as searcher:
        results = [searcher.search(q, 20, 1) for q in
                   ("settings json", 'the "settings', "settings json", "no such words")]
        assert searcher.session is not None and searcher.session.restarts == 0
    ok, crashed, again, empty = results
    assert crashed.error is not None and "MCP server died" in crashed.error
    for result in (ok, again):
        assert result.error is None, result.error
        assert [(h.path, h.start) for h in result.hits] == [("README.md", None)]
    assert empty.error is None and empty.hits == []


@needs_mcp
def test_neuledge_index_fails_without_markdown(
        tmp_path: Path, stub_bin: Path) -> None:
    tree = tmp_path / "code"
    tree.mkdir()
    (tree / "a.py").write_text("x = 1\n")
    loaded = load_spec(REPO / "engines" / "neuledge-context.json")
    _, measurement = driver.run_index(
        loaded, driver.Context(root=tree, state=tmp_path / "state", corpus="code"))
    assert measurement is not None and not measurement.ok
    assert "No markdown files found" in measurement.stderr_tail()
