"""A stand-in for the `code-index-mcp` server (2.17.1), for the code-index-mcp engine's tests.

    code-index-mcp --project-path ROOT --indexer-path DIR --transport stdio

An MCP server (the SDK's FastMCP) with the real tool and argument names,
search_code_advanced(pattern, case_sensitive, context_lines, file_pattern,
fuzzy, regex, start_index, max_results), answering structured content shaped
like the real one: {results: [{file: "./<path>", line (1-based), text}],
pagination: {...}}, sorted by path, then line. Before serving it checks what
engines/code-index-mcp/start-server promises: the index directory and TMPDIR
are inside the working directory (the engine's state), not the tree.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    root = Path(argv[argv.index("--project-path") + 1])
    indexer = Path(argv[argv.index("--indexer-path") + 1])
    state = Path.cwd()
    if indexer.parent != state or Path(os.environ["TMPDIR"]).parent != state:
        print("code-index stub: the index or TMPDIR is not in the working directory",
              file=sys.stderr)
        return 2

    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError:  # SDK 2.x names it MCPServer
        from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[no-redef]

    server = FastMCP("CodeIndexer")

    @server.tool(name="search_code_advanced")
    def search_code_advanced(pattern: str, case_sensitive: bool = True, context_lines: int = 0,
                             file_pattern: str | None = None, fuzzy: bool = False,
                             regex: bool | None = None, start_index: int = 0,
                             max_results: int | None = 10) -> dict[str, Any]:
        """Search for code pattern with pagination (code-index-mcp's answer shape)."""
        flags = 0 if case_sensitive else re.IGNORECASE
        compiled = re.compile(pattern if regex else re.escape(pattern), flags)
        matches = []
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if compiled.search(line):
                    matches.append({"file": "./" + path.relative_to(root).as_posix(),
                                    "line": n, "text": line})
        page = matches[start_index:][:max_results]
        return {"results": page, "pagination": {
            "total_matches": len(matches), "returned": len(page), "start_index": start_index,
            "has_more": start_index + len(page) < len(matches), "max_results": max_results,
            "end_index": start_index + len(page)}}

    server.run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
