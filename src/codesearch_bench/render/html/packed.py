"""Data for the page's script, gzipped and base64'd in an inert script element.

The drill-down's per-query data is most of a page's weight and its JSON gzips about
six to one, so each corpus's data is one packed block, unpacked by the page's
script (the browser's DecompressionStream) only when that corpus is opened. A packed
block needs no escaping: base64's alphabet cannot end the element or open a comment.
`unpack` reads a block back in Python, for tests and for anyone reading a page's data.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
from collections.abc import Iterable
from typing import Any

from .markup import Markup, esc

ENCODING = "gzip+base64"
# Gzip's best: a page is written once and read many times, and level 9 costs ~1 s per
# 10 MB of JSON.
LEVEL = 9


def packed_script(element_id: str, pieces: Iterable[str]) -> Markup:
    """`pieces` (ASCII text, one JSON document when joined) as a packed data block,
    compressed as they come so the whole text is never held."""
    buf = io.BytesIO()
    # mtime 0: the same result renders to the same bytes.
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=LEVEL, mtime=0) as out:
        for piece in pieces:
            out.write(piece.encode("ascii"))
    text = base64.b64encode(buf.getvalue()).decode("ascii")
    return Markup(f'<script type="application/octet-stream" id="{esc(element_id)}" '
                  f'data-encoding="{ENCODING}">{text}</script>')


_BLOCK = re.compile(r'<script type="application/octet-stream" id="([^"]*)" '
                    rf'data-encoding="{re.escape(ENCODING)}">([A-Za-z0-9+/=]*)</script>')


def unpack(text: str) -> Any:
    """A packed block's content (its base64 text) as the JSON it was made from."""
    return json.loads(gzip.decompress(base64.b64decode(text, validate=True)))


def blocks(page: str) -> dict[str, Any]:
    """Every packed block of a page, by element id, unpacked."""
    return {m.group(1): unpack(m.group(2)) for m in _BLOCK.finditer(page)}
