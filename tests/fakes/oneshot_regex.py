"""Fake one-shot engine with human output: `path:12-20: text` between noise lines."""

from __future__ import annotations

import sys

OUTPUT = """\
Searching 3 files for {query!r}
src/a.py:12-20: def handle(request):
    continuation line: 1-2 that is not a result
./src/b.py:3-3: return handle(x)
src/c.py:40-7: end before start is a bad record
3 matches in 0.01s
"""


def main(argv: list[str]) -> None:
    sys.stdout.write(OUTPUT.format(query=argv[0] if argv else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
