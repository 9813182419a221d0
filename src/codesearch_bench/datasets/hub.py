"""`bench import NAME` with no --from: the importer's pinned dataset revision, through `datasets`.

The `datasets` library is an optional extra (`pip install
'codesearch-bench[datasets]'`), never required: without it, and for a dataset
that is not on the hub (RepoQA's release file), the error names what to
download for --from. Each split is loaded with `datasets.load_dataset(id,
name=config, split=split, revision=commit)`; the importer's `Hub.export` writes
the rows in the format --from reads to a temporary folder, and the importer's
own `load` reads them, so a hub import and a --from import of the same rows
give the same suite. The provenance keeps every field --from records and adds
a `hub` table: dataset id, revision, config, split, the library's version and
the rows read per config/split. A failed load (no route to the hub, a split
the revision lacks) is an error naming the cause and the --from way round.
"""

from __future__ import annotations

import importlib
import re
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import CorpusError, UsageError
from .base import Fetch, HubSource, Importer, ImportOptions, Suite
from .files import json_line

EXTRA = "pip install 'codesearch-bench[datasets]'"
_REF = re.compile(r"(?P<id>[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*)@(?P<revision>[0-9a-f]{40})")
_CAUSE = 400  # characters of a library error kept in the message


def parse_ref(ref: str) -> HubSource:
    """`owner/name@<full commit sha>` -> a source; anything looser is refused (a pin is exact)."""
    match = _REF.fullmatch(ref.strip())
    if match is None:
        raise UsageError(f"--hub {ref!r}: give ID@REVISION, the dataset's owner/name on the "
                         "Hugging Face hub and a full (40-hex) commit of its repository",
                         hint="the commit is on the dataset's 'Files and versions' page, "
                         "under 'History'; a branch name is not a pin")
    return HubSource(id=match["id"], revision=match["revision"])


def source_of(importer: Importer, variant: str | None, ref: str | None) -> HubSource:
    """What to load: the named (or default) variant's pin, or the dataset --hub names."""
    hub = importer.hub
    if hub is None:
        raise UsageError(f"{importer.name}: its dataset is not on the Hugging Face hub, so "
                         "there is no pinned revision to load; pass the downloaded file with "
                         "--from", hint=importer.download or "download the dataset and pass "
                         "it with --from PATH")
    if variant is not None and variant not in hub.variants:
        known = ", ".join(hub.variants) if hub.variants else "none: name the dataset with --hub"
        raise UsageError(f"{importer.name}: no variant {variant!r} (variants: {known})")
    base = hub.variants.get(variant or hub.default or "")
    if ref is not None:
        named = parse_ref(ref)
        return named if base is None else replace(base, id=named.id, revision=named.revision)
    if base is None:
        raise UsageError(f"{importer.name}: name the dataset to load with --hub ID@REVISION, "
                         "or pass the downloaded files with --from",
                         hint=importer.download or "run `bench import --help`")
    return base


def _library(importer: Importer) -> Any:
    try:
        return importlib.import_module("datasets")
    except ImportError as exc:
        raise UsageError(f"{importer.name} with no --from loads the dataset from the Hugging "
                         f"Face hub, which needs the `datasets` library ({exc})",
                         hint=f"install the extra: {EXTRA}; or download the dataset and pass it "
                         f"with --from ({importer.download or 'see docs/importing.md'})") from None


def load(importer: Importer, opts: ImportOptions, *, variant: str | None = None,
         ref: str | None = None) -> Suite:
    """The suite of the pinned hub revision; `opts.source` is replaced by the exported rows."""
    source = source_of(importer, variant, ref)
    assert importer.hub is not None  # source_of refused an importer without one
    library = _library(importer)
    rows_read: dict[str, int] = {}

    def fetch(config: str | None, split: str) -> list[dict[str, Any]]:
        where = f"{source.id}@{source.revision} ({config or 'default'}/{split})"
        try:
            data = library.load_dataset(source.id, name=config, split=split,
                                        revision=source.revision)
            rows = [dict(row) for row in data]
        except Exception as exc:  # the library's own errors: network, missing split...
            cause = " ".join(f"{type(exc).__name__}: {exc}".split())[:_CAUSE]
            raise CorpusError(
                f"{where}: could not load it from the Hugging Face hub: {cause}",
                hint="a split or config the revision lacks (check --split and --variant), or "
                "no route to the hub (check the network, or HF_ENDPOINT for a mirror); "
                f"without the hub, download it and pass it with --from: "
                f"{importer.download or 'see docs/importing.md'}") from None
        rows_read[f"{config or 'default'}/{split}"] = len(rows)
        return rows

    with tempfile.TemporaryDirectory(prefix="bench-import-") as tmp:
        try:
            path = importer.hub.export(fetch, source, Path(tmp), opts)
        except OSError as exc:  # a full or failing disk under the temporary folder
            raise CorpusError(f"{exc.filename or tmp}: could not write the rows loaded from "
                              f"the hub: {exc.strerror or exc}",
                              hint="free space there, or point TMPDIR at a disk with room") \
                from None
        suite = importer.load(replace(opts, source=path))
    table: dict[str, Any] = {"id": source.id, "revision": source.revision,
                             "config": source.config or "default", "split": opts.split}
    if variant or (ref is None and importer.hub.default):
        table["variant"] = variant or importer.hub.default
    table["library"] = f"datasets {getattr(library, '__version__', 'unknown')}"
    table["rows"] = rows_read
    suite.provenance["hub"] = table
    return suite


def export_rows(fetch: Fetch, source: HubSource, folder: Path, opts: ImportOptions) -> Path:
    """One split as JSON lines (SWE-bench's and LCA's --from format); dates and such as text."""
    rows = fetch(source.config, opts.split)
    label = "-".join(re.sub(r"[^A-Za-z0-9._-]+", "-", part).strip("-") for part in
                     (source.id.rsplit("/", 1)[-1], source.config or "", opts.split) if part)
    path = folder / f"{label}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json_line(row))
    return path
