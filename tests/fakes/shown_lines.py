"""Fake one-shot engine whose hits carry the text they show, for the mini corpus.

    shown_lines.py MODE ROOT QUERY [PER_FILE]

MODE right: 1-based lines and the tree's text at them; zero: the same text, its lines
counted from 0 (one less); unrelated: the right lines, with text found nowhere in the
tree. Each call appends a line to $SHOWN_LINES_CALLS when it is set.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

ANSWERS = {
    "where are the settings parsed from a json file": [("pkg/config.py", 4, 7),
                                                        ("pkg/config.py", 10, 12)],
    "how wide is a string when shown in terminal cells": [("pkg/cells.py", 1, 3),
                                                          ("pkg/cells.py", 6, 8)],
    "how long to wait before the next retry attempt": [("pkg/retry.py", 4, 6),
                                                       ("pkg/config.py", 4, 7)],
    "which module writes settings": [("pkg/config.py", 10, 12), ("pkg/cells.py", 2, 2)],
}
UNRELATED = "lorem ipsum dolor sit amet, consectetur adipiscing elit"

mode, root, query = sys.argv[1], Path(sys.argv[2]), sys.argv[3]  # per_file: ignored
if calls := os.environ.get("SHOWN_LINES_CALLS"):
    with open(calls, "a") as fh:
        fh.write(query + "\n")
hits = []
for path, start, end in ANSWERS.get(query, []):
    lines = (root / path).read_text().splitlines()[start - 1:end]
    text = UNRELATED if mode == "unrelated" else "\n".join(lines)
    shift = 1 if mode == "zero" else 0
    hits.append({"path": path, "start": start - shift, "end": end - shift, "text": text})
print(json.dumps({"hits": hits}))
