"""A three-file Python corpus with four queries, shared by the compare and fault tests."""

from __future__ import annotations

import json
from pathlib import Path

SOURCES = {
    "pkg/config.py": (
        "import json\n\n\n"
        "def load_settings(path):\n"
        "    \"\"\"Read the settings file and parse its JSON.\"\"\"\n"
        "    with open(path) as fh:\n"
        "        return json.load(fh)\n\n\n"
        "def save_settings(path, data):\n"
        "    with open(path, 'w') as fh:\n"
        "        json.dump(data, fh)\n"
    ),
    "pkg/cells.py": (
        "def cell_len(text):\n"
        "    \"\"\"Terminal cell width of a string.\"\"\"\n"
        "    return sum(2 if ord(c) > 0x1100 else 1 for c in text)\n\n\n"
        "class Segment:\n"
        "    def split_cells(self, cut):\n"
        "        return self, cut\n"
    ),
    "pkg/retry.py": (
        "import time\n\n\n"
        "def backoff(attempt):\n"
        "    \"\"\"Exponential backoff delay before the next retry attempt.\"\"\"\n"
        "    return min(60, 2 ** attempt)\n"
    ),
}

QUERIES = [
    {"id": "q1", "query": "where are the settings parsed from a json file",
     "gold": [{"path": "pkg/config.py", "symbol": "load_settings"}]},
    {"id": "q2", "query": "how wide is a string when shown in terminal cells",
     "gold": [{"path": "pkg/cells.py", "symbol": "cell_len"}]},
    {"id": "q3", "query": "how long to wait before the next retry attempt",
     "gold": [{"path": "pkg/retry.py", "symbol": "backoff"}]},
    {"id": "q4", "query": "which module writes settings", "gold": [{"path": "pkg/config.py"}]},
]


def make_corpus(base: Path, name: str = "mini", *, default: bool = True) -> Path:
    """Write the project, its query set and a corpora.toml naming it; returns the toml."""
    proj = base / f"{name}-proj"
    for rel, text in SOURCES.items():
        (proj / rel).parent.mkdir(parents=True, exist_ok=True)
        (proj / rel).write_text(text)
    queries = base / f"{name}.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    toml = base / "corpora.toml"
    entry = (f'[corpus.{name}]\nsource = "path"\npath = "{proj.name}"\n'
             f'queries = "{queries.name}"\nlanguages = ["python"]\n'
             f'default = {"true" if default else "false"}\n')
    with toml.open("a") as fh:
        fh.write(entry)
    return toml
