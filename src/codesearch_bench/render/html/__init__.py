"""`bench report --format html`: a self-contained static report of a comparison.

`render_html(result, out_dir)` writes `out_dir/index.html`: per corpus and track
the headline table with intervals and significance tiers (sortable), the figures
inline, the paired comparisons, a per-query drill-down of any two engines, and the
run's provenance. A report too big for one page (pages.ONE_PAGE) is a summary page,
`index.html`, and a page per corpus beside it. Script, style, figures and the
drill-down's data (packed) are inline and no page fetches anything, so each opens
from file:// on a machine without network.

This module imports only what the exporter registry needs; the pages themselves are
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
    """Write the report into out_dir; returns the paths written, the entry page first."""
    from .pages import write_report

    return write_report(result, out_dir)


def export(result: ResultFile, opts: _Options, ui: UI) -> None:
    from .. import into_directory

    paths = into_directory(opts.out or Path("report"), f"html writes {PAGE}",
                           lambda d: render_html(result, d))
    ui.out.print(f"wrote {paths[0]}", markup=False, highlight=False)
    if len(paths) > 1:
        ui.out.print(f"  and {len(paths) - 1} corpus pages beside it, linked from it "
                     "(too big for one page)", markup=False, highlight=False)
