"""An MCP tool result -> bench hits, by the bridge config's extraction mode.

structured, json_text: the document (the result's structuredContent, or its
    text parsed as JSON) is read by bench's own parser
    (codesearch_bench.engine.output.parse) with the ParseSpec the config's `extract`
    block makes: the same field paths, the same line and score coercion and
    the same `error` field as an engine spec's parse section.
markdown: bridge-specific, because ParseSpec's regex format matches line by
    line, while here one re.finditer runs over the whole text with the
    config's flags (a hit's text may span lines). Each match's named groups
    are then read as a record by the same parser.
blob: the whole text as one hit with no lines, labelled by a template.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from enginekit import brief, log
from mcpbridge_config import Config, ToolFailure, render_request

from codesearch_bench.engine.output.parse import lookup, parse
from codesearch_bench.engine.spec import ParseSpec

PROG = "mcp-bridge"


def result_text(result: Mapping[str, Any]) -> str:
    """The text content blocks of a tool result, joined by newlines."""
    parts = [block.get("text", "") for block in result.get("content") or []
             if isinstance(block, dict) and block.get("type") == "text"]
    return "\n".join(p for p in parts if isinstance(p, str))


def extract_hits(config: Config, result: Mapping[str, Any],
                 values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A tool result (as a JSON dict) -> hits; raises ToolFailure when it is an error."""
    text = result_text(result)
    if result.get("isError"):
        raise ToolFailure("tool error: " + brief(text or "(no text)"))
    stripped = text.lstrip()
    for prefix in config.error_prefixes:
        if stripped.startswith(prefix):
            raise ToolFailure(brief(stripped))
    if config.mode == "blob":
        label = render_request(config.label, values, "extract.path")
        if not stripped:
            return []
        return [{"path": str(label), "start": None, "end": None, "text": text, "score": None}]
    assert config.records is not None
    if config.mode == "markdown":
        assert config.pattern is not None
        records = [{name: match.group(name) for name in config.pattern.groupindex}
                   for match in config.pattern.finditer(text)]
        return read_records(config.records, records)
    if config.mode == "structured":
        doc = result.get("structuredContent")
        if doc is None:
            raise ToolFailure("tool result has no structuredContent: " + brief(text))
    else:
        try:
            doc = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ToolFailure(f"tool text is not JSON ({str(exc).splitlines()[0]}): "
                              + brief(text)) from None
    return read_records(config.records, doc)


def read_records(spec: ParseSpec, doc: Any) -> list[dict[str, Any]]:
    """The hits bench's parser reads from a JSON document; ToolFailure when it reads none."""
    parsed = parse(spec, json.dumps(doc).encode())
    if parsed.engine_error is not None:
        raise ToolFailure("tool answered with an error: " + brief(parsed.engine_error))
    if (doc if spec.results is None else lookup(doc, spec.results)) is None:
        # A tool may leave out an empty list anywhere in its answer, not only at the
        # top, where bench's own rule already reads it as no results.
        return []
    if parsed.fatal or (parsed.bad_records and not parsed.hits):
        raise ToolFailure("cannot read the tool result: " + "; ".join(parsed.errors))
    if parsed.bad_records:
        log(PROG, f"{parsed.bad_records} result record(s) skipped: " + "; ".join(parsed.errors))
    # bench's parser refuses non-finite scores, so the response line stays strict JSON.
    return [{"path": h.path, "start": h.start, "end": h.end, "text": h.text,
             "score": h.score} for h in parsed.hits]
