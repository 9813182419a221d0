"""Everything that prints: the terminal table, Markdown, JSON and PNG exporters, and views.

Only this package and cli.py touch rich. An exporter turns a result file into
one format, chosen by `bench report --format`; adding a format is adding an
entry to EXPORTERS.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..results.schema import ResultFile
from .ui import UI

Exporter = Callable[[ResultFile, Path | None, UI], None]


def _table(result: ResultFile, out: Path | None, ui: UI) -> None:
    from .table import render_compare

    render_compare(ui.out, result)


def _markdown(result: ResultFile, out: Path | None, ui: UI) -> None:
    from .markdown import render_markdown

    _text(render_markdown(result), out, ui)


def _json(result: ResultFile, out: Path | None, ui: UI) -> None:
    _text(result.dumps(), out, ui)


def _png(result: ResultFile, out: Path | None, ui: UI) -> None:
    from .plots import render_plots

    for path in render_plots(result, out or Path("report")):
        ui.out.print(f"wrote {path}", markup=False, highlight=False)


def _text(text: str, out: Path | None, ui: UI) -> None:
    if out is None:
        ui.out.file.write(text)
        return
    out.write_text(text)
    ui.out.print(f"wrote {out}", markup=False, highlight=False)


EXPORTERS: dict[str, Exporter] = {"table": _table, "md": _markdown, "json": _json, "png": _png}
