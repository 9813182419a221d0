"""Writing a result file, its rows streamed in one at a time.

A large comparison's rows hold every query's outcome (its slots, gains and
gold), far more than the rest of the file; `bench compare` keeps them in its
journal rather than in memory (results/held.py), so the writer takes the rows
as an iterable, and formats each query's outcome on its own: it never holds
more than one row, nor the text of more than one outcome. The text is exactly what
`json.dumps(result.model_dump(mode="json"), indent=1)` gives for the whole file
(tests/test_held_rows.py).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from ..errors import StorageError

# Stands in for a list while the rest of its model is formatted.
_ITEMS = "\x00items\x00"


#: A row and its queries, which may be read from the journal as they are written.
RowItems = tuple[BaseModel, Iterable[BaseModel]]


def dump(result: BaseModel, path: Path, rows: Iterable[RowItems]) -> None:
    """Write `result` (a schema.ResultFile, which imports this module) with `rows` in
    place of its own, atomically (a reader never sees half a file), gzipped when the
    name ends in .gz. Each row's own `queries` are not read: its pair's are."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise _unwritable(path, exc) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            if path.suffix == ".gz":
                with gzip.GzipFile(fileobj=fh, mode="wb", mtime=0) as gz:
                    _write(gz.write, result, rows)
            else:
                _write(fh.write, result, rows)
        # mkstemp makes the file 0600; a result is meant to be shared, so the
        # user's umask decides, as for any file they write.
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _unwritable(path, exc) from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _unwritable(path: Path, exc: OSError) -> StorageError:
    """The file is left as it was (written whole or not at all); a comparison's journal
    beside it still holds every finished cell."""
    return StorageError.of(path, exc, "the result file",
                           hint="free space, then run the same command again; a comparison's "
                                "journal keeps every finished cell, so add --resume "
                                f"{path} to `bench compare`")


def _write(put: Callable[[bytes], object], result: BaseModel,
           rows: Iterable[RowItems]) -> None:
    for part in chunks(result, rows):
        put(part.encode())


def chunks(result: BaseModel, rows: Iterable[RowItems]) -> Iterator[str]:
    """The file's text in pieces: everything but the rows, then each row as it comes,
    and each row's queries one at a time (they are most of a row's size)."""
    yield from _pieces(result, "rows", 0, rows,
                       lambda pair, depth: _pieces(pair[0], "queries", depth, pair[1]))
    yield "\n"


Pieces = Callable[[Any, int], Iterator[str]]


def _pieces(model: BaseModel, field: str, depth: int, items: Iterable[Any],
            item: Pieces | None = None) -> Iterator[str]:
    """`model` as json.dumps(indent=1) writes it `depth` levels deep, its list `field`
    replaced by `items`, written one at a time (by `item`, or whole)."""
    pad = " " * depth
    frame = model.model_dump(mode="json", exclude={field})
    # The field back in its declared place, so the keys keep a whole dump's order.
    ordered = {name: (_ITEMS if name == field else frame[name])
               for name in type(model).model_fields if name in frame or name == field}
    text = json.dumps(ordered, indent=1).replace("\n", "\n" + pad)
    before, after = text.split(f'"{field}": {json.dumps(_ITEMS)}', 1)
    yield before + f'"{field}": ['
    inner = " " * (depth + 2)  # an item sits two levels deeper than its model
    first = True
    for one in items:
        yield ("\n" if first else ",\n") + inner
        if item is not None:
            yield from item(one, depth + 2)
        else:
            yield json.dumps(one.model_dump(mode="json"), indent=1).replace("\n", "\n" + inner)
        first = False
    yield ("]" if first else "\n" + " " * (depth + 1) + "]") + after
