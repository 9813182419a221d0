"""The one reader of dataset files: every importer's rows come through here, validated.

A dataset file is read under a size cap (its bytes, and a gzip's unpacked
bytes: BENCH_IMPORT_MAX_BYTES, the archive caps' pattern); a row is kept only
when its text is UTF-8 with no lone surrogate and its numbers are finite, and
a bad row is dropped and counted by reason (`Rows.drop`, the first place each
reason was seen kept for the message), never a traceback. Ids are claimed once
(`Ids`: a repeat is dropped; two ids that slug alike get a hash each), names and
paths are confined (`safe_name`, `safe_path`) and gold lines checked against the
file (`lines_within`).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..corpus.caps import env_cap
from ..errors import CorpusError, UsageError

MAX_BYTES_ENV = "BENCH_IMPORT_MAX_BYTES"
# A dataset file is parsed in memory: the cap keeps a bomb from ending in a MemoryError.
# The largest supported release (RepoQA's) unpacks to a few hundred MiB.
DEFAULT_MAX_BYTES = 2 << 30
NOT_UTF8 = "row not valid UTF-8"
SURROGATE = "row with a lone surrogate (not text)"
NOT_JSON = "line that is not a JSON object"
NOT_FINITE = "row with a number that is not finite"
REPEATED = "row with an id an earlier row has"
BAD_ROW = "row with an empty text or a malformed repository name"
UNSAFE_PATH = "path outside the tree (absolute or ..)"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*")
#: owner/name of a repository on the forge: it becomes a URL, so nothing else is allowed.
REPO = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")
_CHUNK = 1 << 20


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def max_bytes() -> int:
    return env_cap(MAX_BYTES_ENV, DEFAULT_MAX_BYTES)


def _over(path: Path, what: str, cap: int) -> CorpusError:
    return CorpusError(f"{path}: {what} over the import cap of {cap} bytes; refusing to read it",
                       hint=f"if you trust this file, raise the cap: run again with "
                       f"{MAX_BYTES_ENV}={cap * 4} in the environment (the default is "
                       f"{DEFAULT_MAX_BYTES})")


def read_bytes(path: Path) -> bytes:
    """The file's bytes (a gzip's unpacked bytes), never more than the cap."""
    cap = max_bytes()
    size = path.stat().st_size
    if size > cap:
        raise _over(path, f"the file is {size} bytes,", cap)
    raw = path.read_bytes()
    if raw[:2] != b"\x1f\x8b":
        return raw
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as gz:
            while chunk := gz.read(_CHUNK):
                out.write(chunk)
                if out.tell() > cap:
                    raise _over(path, "it unpacks to more than the cap,", cap)
    except (OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"{path}: not a readable gzip file: {exc}") from None
    return out.getvalue()


def decode(data: bytes, path: Path) -> str:
    """UTF-8 text; otherwise an error naming the file, the line and the byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{path}:{line}: not valid UTF-8 (byte {exc.start}: "
                         f"{data[exc.start:exc.start + 1]!r})",
                         hint="re-export the dataset as UTF-8") from None


class NotFinite(ValueError):
    """A number that is not finite (NaN, Infinity, or out of a float's range)."""


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise NotFinite(text)
    return value


def _constant(text: str) -> float:
    raise NotFinite(text)  # NaN, Infinity, -Infinity: JSON has no such numbers


def loads(text: str) -> Any:
    """JSON with finite numbers only (`NotFinite` otherwise)."""
    return json.loads(text, parse_float=_finite_float, parse_constant=_constant)


def json_line(row: Any) -> str:
    """A row as one JSON line for the validated reader: text as is, unless it holds a lone
    surrogate, which no UTF-8 file can carry, so that row is escaped (and dropped on read)."""
    line = json.dumps(row, ensure_ascii=False, default=str)
    if _bad_text(line):
        line = json.dumps(row, default=str)
    return line + "\n"


def number(text: str) -> float:
    """A finite number from text: `NotFinite` for inf, nan, 1e400; ValueError for no number."""
    return _finite_float(text.strip())


def _bad_text(value: Any) -> bool:
    """Some string in the value holds a lone surrogate (JSON's "\\ud800" decodes to one)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_bad_text(k) or _bad_text(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_bad_text(v) for v in value)
    return False


@dataclass
class Rows:
    """Counts the rows dropped by reason, with the first place each reason was seen."""

    dropped: Counter[str] = field(default_factory=Counter)
    first_at: dict[str, str] = field(default_factory=dict)

    def drop(self, reason: str, where: str, count: int = 1) -> None:
        if count <= 0:
            return
        self.dropped[reason] += count
        self.first_at.setdefault(reason, where)

    def summary(self) -> str:
        """Every drop reason with its count and the first place it was seen (for an error
        that ends an import with nothing kept)."""
        return "; ".join(f"{reason}: {count}" + (f" (first at {self.first_at[reason]})"
                                                   if reason in self.first_at else "")
                         for reason, count in sorted(self.dropped.items()) if count) \
            or "no row dropped"

    def clean(self, value: Any, where: str) -> bool:
        """The value holds only text (no lone surrogate); else it is dropped, counted."""
        if _bad_text(value):
            self.drop(SURROGATE, where)
            return False
        return True

    def jsonl(self, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
        """Each non-empty line as an object; a line of bad text, bad numbers, or no JSON
        object at all (a truncated download's last line) is dropped and counted."""
        data = read_bytes(path)
        for lineno, raw in enumerate(data.split(b"\n"), 1):
            where = f"{path}:{lineno}"
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                self.drop(NOT_UTF8, where)
                continue
            if not line.strip():
                continue
            try:
                value = loads(line)
            except NotFinite:
                self.drop(NOT_FINITE, where)
                continue
            except ValueError:  # JSONDecodeError, or an int past Python's digit limit
                self.drop(NOT_JSON, where)
                continue
            if not isinstance(value, dict):
                self.drop(NOT_JSON, where)
                continue
            if self.clean(value, where):
                yield lineno, value

    def json(self, path: Path) -> Any:
        """A whole JSON file (gzip or not): bad UTF-8 or a non-finite number is an error
        naming the file (the rows inside are checked by the importer with `clean`)."""
        text = decode(read_bytes(path), path)
        try:
            return loads(text)
        except NotFinite as exc:
            raise UsageError(f"{path}: holds the number {exc}, which is not finite",
                             hint="JSON numbers are finite: re-export the dataset") from None
        except ValueError as exc:
            raise UsageError(f"{path}: not JSON: {exc}") from None

    def tsv(self, path: Path) -> Iterator[tuple[int, list[str]]]:
        """Each tab-separated line; a line of bad UTF-8 is dropped and counted."""
        data = read_bytes(path)
        for lineno, raw in enumerate(data.split(b"\n"), 1):
            try:
                line = raw.decode("utf-8").rstrip("\r")
            except UnicodeDecodeError:
                self.drop(NOT_UTF8, f"{path}:{lineno}")
                continue
            if line.strip():
                yield lineno, next(csv.reader([line], delimiter="\t"))


def require(row: dict[str, Any], keys: tuple[str, ...], where: str, dataset: str, *,
            empty_ok: bool = False) -> None:
    """A row without one of the dataset's own fields (or with it empty, unless `empty_ok`)
    is an error naming the row and every missing field."""
    missing = [k for k in keys if (k not in row if empty_ok else not row.get(k))]
    if missing:
        raise UsageError(f"{where}: missing {', '.join(missing)} ({dataset}'s own field names)")


def slug(text: str, sep: str = "-") -> str:
    return _SLUG.sub(sep, text).strip("._-")


def safe_name(name: str, flag: str = "--name") -> str:
    """A corpus name that is one plain file name: it cannot leave the suite folder."""
    if not _NAME.fullmatch(name) or len(name) > 64:
        raise UsageError(f"{flag} {name!r}: a corpus name is letters, digits, '-', '_' and "
                         "inner '.', at most 64 characters (it names files in --out)",
                         hint="pick a plain name such as my-suite")
    return name


def safe_path(rel: str) -> bool:
    """A path relative to the tree, with '/', that stays inside it."""
    parts = PurePosixPath(rel).parts
    return bool(parts) and not rel.startswith("/") and ".." not in parts and "\\" not in rel \
        and "\0" not in rel and not _bad_text(rel)


def lines_within(text: str, start: Any, end: Any) -> bool:
    """A 0-based, end-exclusive slice [start, end) that is inside the file's lines."""
    ok = all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end))
    return ok and 0 <= start < end <= len(text.splitlines())


def _tidy(name: str) -> str:
    """A slug as a corpus name `safe_name` accepts: no run of dots, no trailing '.', '-', '_'
    (a cut at the length limit can leave one)."""
    return re.sub(r"\.{2,}", ".", name).rstrip("._-") or "x"


class Ids:
    """Ids claimed once: a repeat is refused; two ids that slug alike both get a hash.

    With `names` (corpus names, which name files), each slug is also tidied to a name
    `safe_name` accepts."""

    def __init__(self, limit: int = 64, *, names: bool = True) -> None:
        self.limit, self.names = limit, names
        self.raw: set[str] = set()
        self.slugs: set[str] = set()

    def _cut(self, readable: str, limit: int) -> str:
        return _tidy(readable[:limit]) if self.names else readable[:limit]

    def claim(self, raw: str, readable: str) -> str | None:
        """The unique slug for raw (readable cut to the limit), or None for a repeat."""
        if raw in self.raw:
            return None
        self.raw.add(raw)
        name = self._cut(readable, self.limit)
        tag = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:8]
        while name in self.slugs:  # slugs alike: a hash of the id, rehashed if crafted to clash
            name = f"{self._cut(readable, self.limit - 9)}-{tag}"
            tag = hashlib.sha256(tag.encode()).hexdigest()[:8]
        self.slugs.add(name)
        return name
