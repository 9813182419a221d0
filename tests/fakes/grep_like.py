"""Fake grep-like engine: exit statuses as grep's, one answer per query.

    grep_like.py QUERY

The query says what happens: `settings` prints one `path:line:text` match and
exits 1 (a tool that prints and exits 1), `cells` prints one and exits 0,
`broken` writes an error to stderr and exits 2, anything else prints nothing
and exits 1 (grep's "no match").
"""

from __future__ import annotations

import sys

query = sys.argv[1]
if "settings" in query:
    print("pkg/config.py:4:def load_settings(path):")
    sys.exit(1)
if "cells" in query:
    print("pkg/cells.py:1:def cell_len(text):")
    sys.exit(0)
if "broken" in query:
    print("grep_like: unmatched ( in the pattern", file=sys.stderr)
    sys.exit(2)
sys.exit(1)
