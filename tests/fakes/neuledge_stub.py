"""A stand-in for Neuledge Context's `context` CLI, for the bridge tests.

    context --version
    context add DIR --name NAME --pkg-version VERSION [--path P] [--lang L]
    context serve [--libs NAME ...]

`add` records NAME@VERSION under $HOME/.context/packages (failing, as the real
CLI does, when DIR holds no Markdown); `serve` is an MCP server with the real
tool `get_docs(library, topic)`, answering JSON text shaped like the real one:
{library, version, results: [{title, content, source}]}, or {error, message}
for a package that is not installed. A topic with an unbalanced double quote
kills the process, as an FTS5 syntax error is reported to do.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

PACKAGES = Path(os.environ.get("HOME", ".")) / ".context" / "packages"


def add(argv: list[str]) -> int:
    source = Path(argv[0])
    name = argv[argv.index("--name") + 1]
    version = argv[argv.index("--pkg-version") + 1]
    docs = sorted(p.relative_to(source).as_posix() for p in source.rglob("*.md"))
    if not docs:
        print("Error: No markdown files found. Use --path to specify or --lang all to "
              "include all languages.", file=sys.stderr)
        return 1
    PACKAGES.mkdir(parents=True, exist_ok=True)
    sections = [{"source": doc, "content": (source / doc).read_text()} for doc in docs]
    (PACKAGES / f"{name}@{version}.json").write_text(json.dumps(sections))
    print(f"Built {name}@{version}: {len(sections)} sections")
    return 0


def serve() -> int:
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError:  # SDK 2.x names it MCPServer
        from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[no-redef]

    server = FastMCP("context")

    @server.tool(name="get_docs")
    def get_docs(library: str, topic: str) -> str:
        """Sections of an installed package matching every word of the topic."""
        if topic.count('"') % 2:
            print("Error: fts5: syntax error near unterminated string", file=sys.stderr,
                  flush=True)
            os._exit(1)
        file = PACKAGES / f"{library}.json"
        if not file.exists():
            return json.dumps({"error": f"Package not found: {library}",
                               "message": "Use search_packages, then download_package."})
        words = [w for w in topic.lower().replace('"', " ").split() if w]
        results = [
            {"title": f"{s['source']} > section", "content": s["content"], "source": s["source"]}
            for s in json.loads(file.read_text())
            if all(w in s["content"].lower() for w in words)
        ]
        version = library.partition("@")[2]
        return json.dumps({"library": library, "version": version, "results": results})

    server.run()
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print("1.2.2-stub")
        return 0
    if argv[:1] == ["add"]:
        return add(argv[1:])
    if argv[:1] == ["serve"]:
        return serve()
    print(f"context stub: unknown command {argv!r}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
