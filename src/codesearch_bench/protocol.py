"""The protocol version: bumped whenever a change could move a number.

protocol/PROTOCOL.md states the same version (a test keeps them equal).
Results measured under different protocol versions are never put side by
side.
"""

from __future__ import annotations

PROTOCOL_VERSION = "4"
