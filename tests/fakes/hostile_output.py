"""A one-shot engine that prints a chosen answer for one query and good answers for the rest.

    hostile_output.py ANSWER_FILE QUERY

A query mentioning "terminal" gets the bytes of ANSWER_FILE verbatim, whatever
they are; every other query gets the answer faulty.py's `ok` mode gives
(pkg/config.py lines 4-7, the mini corpus in the tests).
"""

from __future__ import annotations

import json
import sys

GOOD = {"hits": [{"path": "pkg/config.py", "start": 4, "end": 7, "text": "def load_settings",
                  "score": 1.5}]}

if __name__ == "__main__":
    answer_file, query = sys.argv[1], sys.argv[2]
    if "terminal" in query:
        with open(answer_file, "rb") as fh:
            sys.stdout.buffer.write(fh.read())
    else:
        sys.stdout.write(json.dumps(GOOD) + "\n")
