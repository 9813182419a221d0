"""What the MCP-bridge tests share: the bridge script loaded as a module, the mcp marker, and a
bridge config's rendered tool arguments for one request."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
BRIDGE = REPO / "scripts" / "mcp-bridge"
HAVE_MCP = importlib.util.find_spec("mcp") is not None
needs_mcp = pytest.mark.skipif(
    not HAVE_MCP,
    reason="the MCP Python SDK is not installed (optional extra: pip install -e '.[mcp]')",
)


def load_bridge() -> ModuleType:
    """scripts/mcp-bridge as the module `mcp_bridge` (it puts scripts/ on sys.path)."""
    if "mcp_bridge" in sys.modules:
        return sys.modules["mcp_bridge"]
    loader = importlib.machinery.SourceFileLoader("mcp_bridge", str(BRIDGE))
    spec = importlib.util.spec_from_loader("mcp_bridge", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mcp_bridge"] = module
    loader.exec_module(module)
    return module


def rendered_arguments(config_path: Path, values: dict[str, str], query: str, *,
                       n: int = 10) -> dict[str, Any]:
    """The tool arguments a bridge config renders for one persistent request."""
    bridge = load_bridge()
    loaded = bridge.load_config(str(config_path), values)
    request = {"query": query, "k": 10, "n": n, "per_file": 1, "root": "/r", "corpus": "rich",
               "state": "/s"}
    result: dict[str, Any] = bridge.render_arguments(
        loaded, bridge.request_values(loaded, values, request))
    return result
