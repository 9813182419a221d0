"""`bench report --format html`: one self-contained static page of a comparison.

`render_html(result, out_dir)` writes `out_dir/index.html`: per corpus and track
the headline table with intervals and significance tiers (sortable), the figures
inline, the paired comparisons, a per-query drill-down of any two engines, and the
run's provenance. Script, style and figures are inline and the page fetches
nothing, so it opens from file:// on a machine without network.

This module imports only what the exporter registry needs; the page itself is
built on first use, so `bench` starts as fast with this format registered.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from ...results.schema import ResultFile
from ..ui import UI

PAGE = "index.html"


class _Options(Protocol):
    # render.ExportOptions; named structurally so this package never imports the
    # registry that imports it.
    @property
    def out(self) -> Path | None: ...


def render_html(result: ResultFile, out_dir: Path) -> list[Path]:
    """Write the page into out_dir; returns the paths written."""
    from .page import render_page

    text = render_page(result)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / PAGE
    tmp = path.with_name(f".{PAGE}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # a reader reloading the page never sees half of it
    return [path]


def export(result: ResultFile, opts: _Options, ui: UI) -> None:
    from .. import into_directory

    paths = into_directory(opts.out or Path("report"), f"html writes {PAGE}",
                           lambda d: render_html(result, d))
    for path in paths:
        ui.out.print(f"wrote {path}", markup=False, highlight=False)
