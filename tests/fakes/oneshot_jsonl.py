"""Fake one-shot engine: one JSON object per line, in a nested shape.

Each hit looks like {"data": {"path": {"text": ...}}, "lines": ...}, with the
line range written as "12-30", [12, 30] or a bare number. A blank line and,
with --bad-line, a line that is not JSON are mixed in.
"""

from __future__ import annotations

import json
import sys

HITS = [
    {"data": {"path": {"text": "pkg/one.py"}}, "lines": "12-30", "score": 0.9},
    {"data": {"path": {"text": "pkg/two.py"}}, "lines": [4, 8], "score": 0.5},
    {"data": {"path": {"text": "pkg/three.py"}}, "lines": 7, "score": 0.1},
]


def main(argv: list[str]) -> None:
    for i, hit in enumerate(HITS):
        print(json.dumps(hit))
        if i == 0:
            print()
            if "--bad-line" in argv:
                print("warning: this is not JSON")


if __name__ == "__main__":
    main(sys.argv[1:])
