"""A tiny stdio MCP server (the SDK's FastMCP) for the mcp-bridge tests.

Each tool answers in one of the shapes real servers use; the query decides
what is found. Tools:
    search_structured(query, limit)  structuredContent {"items": [...]} (+ JSON text)
    search_json(query)               text content holding {"results": [...]}
    search_markdown(query)           Markdown, one `## symbol — path:start-end` per hit
    docs_blob(query)                 one text blob, no paths
    error_text(query)                text starting "Error: ..." (not flagged isError)
    raise_error(query)               raises: the SDK answers with isError
    crash_on_quote(query)            exits the process if the query holds an odd number of `"`
    slow(query, seconds)             sleeps, then answers one hit
    chatty(query)                    writes ~1 MB to stderr, then answers one hit
    count_setup(path)                a setup tool: appends a line to `path`
A query containing `crash` makes every search tool exit the process first.
Flags: --starts FILE appends a line to FILE each time the server starts.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

try:
    from mcp.server.fastmcp import FastMCP
except ImportError:  # SDK 2.x names it MCPServer
    from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[no-redef]

args = sys.argv[1:]
if "--starts" in args:
    with open(args[args.index("--starts") + 1], "a") as fh:
        fh.write(f"{os.getpid()}\n")

server = FastMCP("bench-fake")

ITEMS = [
    {"path": "pkg/cells.py", "start_line": 1, "end_line": 3, "score": 2.5,
     "text": "def cell_len(text):"},
    {"path": "pkg/config.py", "start_line": 4, "end_line": 7, "score": 1.25,
     "text": "def load_settings(path):"},
]


def _maybe_crash(query: str) -> None:
    if "crash" in query:
        print("fake mcp server: crashing as asked", file=sys.stderr, flush=True)
        os._exit(3)


@server.tool()
def search_structured(query: str, limit: int = 10) -> dict[str, Any]:
    """Hits as structured content."""
    _maybe_crash(query)
    if not isinstance(limit, int):
        raise TypeError(f"limit must be an int, got {type(limit).__name__}")
    items = [dict(item, query=query) for item in ITEMS][:limit]
    return {"items": items, "total": len(items)}


@server.tool()
def search_json(query: str) -> str:
    """Hits as JSON text, the way servers without structured output answer."""
    _maybe_crash(query)
    results = [{"file": {"name": item["path"]}, "lines": [item["start_line"], item["end_line"]],
                "body": item["text"]} for item in ITEMS]
    return json.dumps({"library": "pkg", "results": results})


@server.tool()
def search_markdown(query: str) -> str:
    """Hits as Markdown sections."""
    _maybe_crash(query)
    sections = ["[index: fresh]"]
    for item in ITEMS:
        symbol = item["text"].split("(")[0].removeprefix("def ")
        sections.append(f"## pkg.{symbol} — {item['path']}:{item['start_line']}-{item['end_line']}")
        sections.append(item["text"])
        sections.append("")
    return "\n".join(sections)


@server.tool()
def docs_blob(query: str) -> str:
    """One blob of documentation."""
    _maybe_crash(query)
    return f"### Docs about {query}\n\nSome prose.\n\n```python\ncell_len('x')\n```\n"


@server.tool()
def error_text(query: str) -> str:
    """An error reported as ordinary text."""
    return "Error fetching library context. Please try again later. TypeError: fetch failed"


@server.tool()
def raise_error(query: str) -> str:
    """An exception: the SDK turns it into a result with isError."""
    raise ValueError(f"no index for {query!r}")


@server.tool()
def crash_on_quote(query: str) -> str:
    """Dies on an unbalanced double quote, like an FTS query parser taken down with it."""
    if query.count('"') % 2:
        print("fake mcp server: unterminated string", file=sys.stderr, flush=True)
        os._exit(1)
    return json.dumps({"results": [{"source": "README.md", "content": query}]})


@server.tool()
def slow(query: str, seconds: float = 30.0) -> dict[str, Any]:
    """Takes its time."""
    time.sleep(seconds)
    return {"items": ITEMS[:1]}


@server.tool()
def chatty(query: str) -> dict[str, Any]:
    """Floods stderr before answering."""
    line = "debug: " + "." * 1000 + "\n"
    for _ in range(1000):
        sys.stderr.write(line)
    sys.stderr.flush()
    return {"items": ITEMS[:1]}


@server.tool()
def count_setup(path: str) -> str:
    """A setup step: records that it ran."""
    with open(path, "a") as fh:
        fh.write("setup\n")
    return "ok"


if __name__ == "__main__":
    server.run()
