"""Fake engine that fails: writes to stderr and exits with status 3."""

from __future__ import annotations

import sys

for i in range(30):
    print(f"crasher: stderr line {i}", file=sys.stderr)
print("crasher: fatal: index is corrupt", file=sys.stderr)
sys.exit(3)
