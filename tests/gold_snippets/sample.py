"""A module to resolve gold symbols in."""

from __future__ import annotations

import functools


@functools.cache
# a comment between decorators
@functools.wraps(len)
def cached(x):
    """Doc."""

    def helper(y):
        return y + 1

    return helper(x)
    # trailing comment, trimmed


class Console:
    """A console."""

    def print(self, *objects):
        return objects

    @property
    def width(self):
        return 80

    @width.setter
    def width(self, value):
        self._width = value

    class Options:
        async def update(self):
            pass
