from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FAKES = Path(__file__).resolve().parent / "fakes"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture
def python() -> str:
    return sys.executable


@pytest.fixture
def small_tree(tmp_path: Path) -> Path:
    """A tiny project to search: three files in two folders."""
    root = tmp_path / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "config.py").write_text(
        "import json\n\n\ndef load_settings(path):\n"
        "    \"\"\"Read the settings file and parse it.\"\"\"\n"
        "    with open(path) as fh:\n        return json.load(fh)\n"
    )
    (root / "pkg" / "cells.py").write_text(
        "def cell_len(text):\n    \"\"\"Terminal cell width of a string.\"\"\"\n"
        "    return sum(2 if ord(c) > 0x1100 else 1 for c in text)\n"
    )
    (root / "README.md").write_text("# proj\n\nSettings live in a JSON file.\n")
    return root
