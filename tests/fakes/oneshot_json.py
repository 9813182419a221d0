"""Fake one-shot engine: prints {"hits": [...]} plus what it was given.

    oneshot_json.py [--fixture FILE] [--n N] [ARGS...]

Hits come from FILE (a JSON list) or a built-in pair. The output also echoes
argv, cwd, FAKE_* environment variables and stdin, so tests can check exactly
what reached the engine.
"""

from __future__ import annotations

import json
import os
import sys

DEFAULT_HITS = [
    {"file": "src/a.py", "from": 3, "to": 9, "body": "def a(): ...", "score": 2.5},
    {"file": "src/b.py", "from": 1, "to": 2, "body": "import a", "score": 1.0},
]


def main(argv: list[str]) -> None:
    hits = DEFAULT_HITS
    n = None
    if "--fixture" in argv:
        with open(argv[argv.index("--fixture") + 1], encoding="utf-8") as f:
            hits = json.load(f)
    if "--n" in argv:
        n = int(argv[argv.index("--n") + 1])
    stdin = "" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    print(json.dumps({
        "argv": argv,
        "cwd": os.getcwd(),
        "env": {k: v for k, v in os.environ.items() if k.startswith("FAKE_")},
        "stdin": stdin,
        "hits": hits[:n] if n is not None else hits,
    }))


if __name__ == "__main__":
    main(sys.argv[1:])
