"""The caps on unpacking an archive: defaults, environment overrides, and the one counter.

An archive is refused, with the cap named and how to raise it, when it holds
more members, more unpacked bytes or a higher compression ratio than the caps
allow. The ratio is checked on the declared sizes before anything is inflated,
and again on the decompressed tar stream itself (headers and padding count),
so a bomb hidden outside member data is caught too.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import CorpusError

# Defaults that corpora.toml may one day override per corpus; for now the
# environment (ENV) or extract()'s keywords do. Real source archives are far
# below every one: source trees are rarely over a few hundred MiB, and source
# compresses 4-10x.
DEFAULT_MAX_BYTES = 4 << 30
DEFAULT_MAX_MEMBERS = 200_000
DEFAULT_MAX_RATIO = 200
# Below this many unpacked bytes no ratio is refused: a tiny archive of one
# zero-filled file is not a bomb.
DEFAULT_RATIO_FLOOR = 16 << 20
ENV = {"max_bytes": "BENCH_UNPACK_MAX_BYTES", "max_members": "BENCH_UNPACK_MAX_MEMBERS",
       "max_ratio": "BENCH_UNPACK_MAX_RATIO"}
# Fixed limits: file systems refuse longer components, engines break on longer
# paths, and tar headers are a few hundred bytes unless crafted to fill memory.
MAX_NAME_BYTES = 1024
MAX_COMPONENT_BYTES = 255
MAX_HEADER_BYTES = 1 << 20
# Member data is read in CHUNKs, well under the header cap, so one cap on every read
# bounds headers without touching data.
CHUNK = 256 << 10


@dataclass(frozen=True)
class Caps:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_members: int = DEFAULT_MAX_MEMBERS
    max_ratio: int = DEFAULT_MAX_RATIO
    ratio_floor: int = DEFAULT_RATIO_FLOOR


DEFAULTS = Caps()


def env_cap(var: str, default: int) -> int:
    """A positive whole number from the environment variable var, else the default."""
    raw = os.environ.get(var)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip().replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise CorpusError(f"environment variable {var}={raw!r} is not a positive whole number",
                          hint=f"set it to one (the default is {default}), or unset it")
    return value


def _from_env(field: str, default: int) -> int:
    return env_cap(ENV[field], default)


def caps(*, max_bytes: int | None = None, max_members: int | None = None,
         max_ratio: int | None = None, ratio_floor: int | None = None) -> Caps:
    """Each cap from its keyword, else from the environment, else the default."""
    given = {"max_bytes": max_bytes, "max_members": max_members, "max_ratio": max_ratio}
    chosen = {}
    for field, value in given.items():
        if value is not None and value <= 0:
            raise ValueError(f"unpack cap {field} must be positive, not {value}")
        chosen[field] = value if value is not None else _from_env(field, getattr(DEFAULTS, field))
    floor = DEFAULTS.ratio_floor if ratio_floor is None else ratio_floor
    return Caps(**chosen, ratio_floor=floor)


def _raise_hint(field: str, needed: int) -> str:
    return (f"if you trust this archive, raise the cap: run again with {ENV[field]}={needed} "
            f"in the environment (the default is {getattr(DEFAULTS, field)})")


def show(name: str) -> str:
    """A member name for a message: a crafted 1000-byte name is cut in the middle."""
    return repr(name if len(name) <= 160 else f"{name[:100]}…{name[-40:]}")


class Budget:
    """Counts members and bytes against the caps; the one place a cap is enforced."""

    def __init__(self, archive: Path, limits: Caps) -> None:
        self.archive, self.caps = archive, limits
        self.packed = max(archive.stat().st_size, 1)
        self.members = self.declared = self.written = 0
        self.current = ""  # the member being read, for messages
        self.ratio_limit = max(limits.ratio_floor, limits.max_ratio * self.packed)

    def member(self, name: str) -> None:
        self.current = name
        self.members += 1
        if self.members > self.caps.max_members:
            raise CorpusError(
                f"{self.archive}: member {show(name)} is one past the member cap of "
                f"{self.caps.max_members}; refusing to unpack",
                hint=_raise_hint("max_members", self.caps.max_members * 2))

    def add(self, name: str, size: int, *, declared: bool) -> None:
        """size more bytes for name: from its header (declared) or as written."""
        if declared:
            self.declared += size
            total = self.declared
        else:
            self.written += size
            total = self.written
        if total > self.caps.max_bytes:
            raise CorpusError(
                f"{self.archive}: member {show(name)} ({size} bytes) brings the unpacked size "
                f"to {total} bytes, over the cap of {self.caps.max_bytes} bytes; refusing to "
                "unpack", hint=_raise_hint("max_bytes", max(total, self.caps.max_bytes * 2)))
        if total > self.ratio_limit:
            raise self._ratio(f"member {show(name)} brings the unpacked size to {total} bytes",
                              total)

    def stream(self, position: int) -> None:
        """The decompressed tar stream reached position (headers and padding count too)."""
        if position > self.ratio_limit:
            after = f" after member {show(self.current)}" if self.current else ""
            raise self._ratio(f"inflating it{after} goes past {self.ratio_limit} bytes",
                              position)

    def header(self, size: int) -> None:
        if size < 0 or size > MAX_HEADER_BYTES:
            after = f" after member {show(self.current)}" if self.current else ""
            raise CorpusError(
                f"{self.archive}: a tar header{after} is {size} bytes, over the header cap of "
                f"{MAX_HEADER_BYTES} bytes (a fixed limit: real headers are a few hundred "
                "bytes); refusing to unpack")

    def _ratio(self, what: str, total: int) -> CorpusError:
        times = total // self.packed
        needed = max(times + 1, self.caps.max_ratio * 2)
        return CorpusError(
            f"{self.archive}: {what}, {times}x the archive's {self.packed} bytes: over the "
            f"compression-ratio cap of {self.caps.max_ratio}x (a decompression bomb?); "
            "refusing to unpack", hint=_raise_hint("max_ratio", needed))


class Stream(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...
    def seek(self, pos: int, whence: int = 0, /) -> int: ...
    def tell(self) -> int: ...
    def close(self) -> None: ...


class Inflated:
    """The decompressed tar stream, every read and seek checked against the budget first."""

    def __init__(self, inner: Stream, budget: Budget) -> None:
        self.inner, self.budget = inner, budget

    def read(self, size: int = -1, /) -> bytes:
        self.budget.header(size)  # data is read in CHUNKs, headers whole: a cap on both
        self.budget.stream(self.inner.tell() + size)
        return self.inner.read(size)

    def seek(self, pos: int, whence: int = 0, /) -> int:
        target = pos if whence == os.SEEK_SET else self.inner.tell() + pos
        self.budget.stream(target)
        return self.inner.seek(pos, whence)

    def tell(self) -> int:
        return self.inner.tell()

    def write(self, data: bytes, /) -> int:
        raise OSError("read-only")

    def close(self) -> None:
        self.inner.close()
