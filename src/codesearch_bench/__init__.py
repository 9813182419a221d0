"""codesearch-bench: score code-search tools on pinned corpora with one protocol."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("codesearch-bench")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"
