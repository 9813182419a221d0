"""Fake engine that exits 0 with output no parser should accept.

    garbage.py text         prose, not JSON
    garbage.py binary       bytes that are not UTF-8
    garbage.py huge MIB     MIB mebibytes of output
    garbage.py stderr MIB   MIB mebibytes on stderr, then a final marker line
"""

from __future__ import annotations

import sys

mode = sys.argv[1]
out = sys.stdout.buffer
if mode == "text":
    out.write(b"Traceback (most recent call last):\n  oops, not JSON {\n")
elif mode == "binary":
    out.write(b'{"hits": [{"path": "caf\xe9.py"}]}\xff\xfe\n')
elif mode in ("huge", "stderr"):
    stream = out if mode == "huge" else sys.stderr.buffer
    line = b"x" * 1023 + b"\n"
    for _ in range(int(sys.argv[2]) * 1024):
        stream.write(line)
    if mode == "stderr":
        stream.write(b"the last line\n")
out.flush()
