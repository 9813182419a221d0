"""A stand-in for Context7's MCP server (@upstash/context7-mcp 4.x), for the bridge tests.

Same tool names and argument names as the real server, same answer shapes:
one Markdown blob as text, and failures as ordinary text (never isError).
    resolve-library-id(query, libraryName)  "Available Libraries: ..." text
    query-docs(libraryId, query)            a Markdown blob; a query containing
        `offline` gets the text the real server returns when it cannot reach its
        service, and an unknown library id the text for an HTTP 404.
Also answers `--version` like the real binary.
"""

from __future__ import annotations

import sys

if "--version" in sys.argv[1:]:
    print("4.1.1-stub")
    sys.exit(0)

try:
    from mcp.server.fastmcp import FastMCP
except ImportError:  # SDK 2.x names it MCPServer
    from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[no-redef]

server = FastMCP("Context7")
LIBRARIES = {"/textualize/rich": "Rich", "/pallets/click": "Click"}


@server.tool(name="resolve-library-id")
def resolve_library_id(query: str, libraryName: str) -> str:
    """Library name -> Context7 library ids."""
    found = [lib for lib, name in LIBRARIES.items() if name.lower() == libraryName.lower()]
    if not found:
        return "No libraries found matching the provided name."
    return "Available Libraries:\n\n" + "\n----------\n".join(
        f"- Title: {LIBRARIES[lib]}\n- Context7-compatible library ID: {lib}" for lib in found)


@server.tool(name="query-docs")
def query_docs(libraryId: str, query: str) -> str:
    """Documentation snippets for a library, as one Markdown blob."""
    if "offline" in query:
        return ("Error fetching library context. Please try again later. "
                "TypeError: fetch failed")
    if libraryId not in LIBRARIES:
        return ("The library you are trying to access does not exist. "
                "Please try with a different library ID.")
    return (f"### {LIBRARIES[libraryId]}: {query}\n\nSource: https://example.invalid/docs\n\n"
            "```python\nfrom rich.cells import cell_len\ncell_len('x')\n```\n")


if __name__ == "__main__":
    server.run()
