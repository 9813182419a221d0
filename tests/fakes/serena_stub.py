"""A stand-in for Serena's `serena` CLI (serena-agent 2.1.0), for the serena engine's tests.

    serena --version
    serena start-mcp-server --project ROOT [the flags engines/serena/start-server passes]

`start-mcp-server` is an MCP server (the SDK's FastMCP) with Serena's tool name
and argument names, search_for_pattern(substring_pattern, ...), answering as
Serena does: JSON text mapping each file path (relative to ROOT) to its
matched lines, each `  >{n:4}:{text}` with n 0-based, files in walk order
(sorted here, for a stable test); `{}` when nothing matches; an invalid regex
raises, which the SDK reports with isError. Before serving it checks what
start-server promises: SERENA_HOME and the working directory are the engine's
state, its serena_config.yml names the language server and keeps the project
folder out of the tree; a broken promise exits with a message.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path


def check_start_server(argv: list[str]) -> Path:
    root = Path(argv[argv.index("--project") + 1])
    for flag, value in (("--context", "agent"), ("--agent-interface", "tools"),
                        ("--enable-web-dashboard", "false")):
        if argv[argv.index(flag) + 1] != value:
            sys.exit(f"serena stub: expected {flag} {value}")
    home = Path(os.environ["SERENA_HOME"])
    config = (home / "serena_config.yml").read_text()
    if home.parent != Path.cwd() or os.environ.get("SERENA_USAGE_REPORTING") != "false":
        sys.exit("serena stub: SERENA_HOME is not in the working directory, "
                 "or usage reporting is on")
    projects = f'"{Path.cwd()}/serena-projects/$projectFolderName"'
    if "ls_path:" not in config or projects not in config:
        sys.exit(f"serena stub: unexpected serena_config.yml:\n{config}")
    return root


def serve(root: Path) -> None:
    try:
        from mcp.server.fastmcp import FastMCP
    except ImportError:  # SDK 2.x names it MCPServer
        from mcp.server.mcpserver import MCPServer as FastMCP  # type: ignore[no-redef]

    server = FastMCP("serena")

    @server.tool(name="search_for_pattern")
    def search_for_pattern(substring_pattern: str, context_lines_before: int = 0,
                           context_lines_after: int = 0, paths_include_glob: str = "",
                           paths_exclude_glob: str = "", relative_path: str = "",
                           restrict_search_to_code_files: bool = False,
                           skip_ignored_files: bool = True, multiline: bool = True,
                           max_answer_chars: int = -1) -> str:
        """Searches for a regex pattern across project files (Serena's answer shape)."""
        try:
            pattern = re.compile(substring_pattern)
        except re.error as exc:
            raise ValueError(f"Invalid regular expression {substring_pattern!r}: {exc}") from exc
        found: dict[str, list[str]] = {}
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            lines = path.read_text(errors="replace").splitlines()
            matched = [f"  >{n:4}:{line}" for n, line in enumerate(lines) if pattern.search(line)]
            if matched:
                found[path.relative_to(root).as_posix()] = matched
        return json.dumps(found, ensure_ascii=False)

    server.run()


def main(argv: list[str]) -> int:
    if argv[:1] == ["--version"]:
        print("Serena 2.1.0 (stub)")
        return 0
    if argv[:1] != ["start-mcp-server"]:
        print(f"serena stub: unexpected arguments {argv}", file=sys.stderr)
        return 2
    serve(check_start_server(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
