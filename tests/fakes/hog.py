"""Fake engine that allocates N MiB, touches every page, and holds it ~0.5 s."""

from __future__ import annotations

import sys
import time

size = int(sys.argv[1]) * 1024 * 1024
buf = bytearray(size)
for i in range(0, size, 4096):
    buf[i] = 1
time.sleep(0.5)
print(len(buf))
