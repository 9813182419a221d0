"""Engine answers built by hand for the hostile output tests, and the engines that print them.

Shared by tests/test_hostile_output.py and tests/test_hostile_records.py: one json parse
spec, one way to write a record list as an answer, one spec for an engine that prints a
file's bytes for one query (fakes/hostile_output.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from codesearch_bench.engine.spec import ParseSpec

FAKES = Path(__file__).resolve().parent / "fakes"
HOSTILE = FAKES / "hostile_output.py"
FAULTY = FAKES / "faulty.py"
PARSE = {"format": "json", "results": "hits", "start": "start", "end": "end", "text": "text",
         "score": "score"}
JSON = ParseSpec(**PARSE)  # type: ignore[arg-type]


def answer(*records: str) -> bytes:
    return ('{"hits": [' + ", ".join(records) + "]}").encode()


def write_engine(tmp: Path, name: str, argv: list[str]) -> Path:
    data = {"name": name, "spans": True, "tokens": True, "parse": PARSE,
            "search": {"command": argv, "timeout": "10s"}}
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def hostile_engine(tmp: Path, garbage: bytes) -> Path:
    """An engine named `bad` that prints `garbage` for q2 only."""
    (tmp / "garbage.out").write_bytes(garbage)
    return write_engine(tmp, "bad", [sys.executable, str(HOSTILE), str(tmp / "garbage.out"),
                                     "{{query}}"])
