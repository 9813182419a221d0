"""Everything that prints: the terminal table, Markdown, JSON and PNG exporters, and views.

Only this package and cli.py touch rich. An exporter turns a result file into
one format, chosen by `bench report --format`; adding a format is adding an
entry to EXPORTERS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from ..results.schema import ResultFile
from .ui import UI


@dataclass(frozen=True)
class ExportOptions:
    out: Path | None = None  # a file (md, json) or a directory (png, html); None: stdout
    wide: bool = False  # table: every per_file pass and cutoff
    all_queries: bool = False  # json: the rows' per-query outcomes too (the whole file)


Exporter = Callable[[ResultFile, ExportOptions, UI], None]


def _table(result: ResultFile, opts: ExportOptions, ui: UI) -> None:
    from .table import render_compare

    render_compare(ui.out, result, wide=opts.wide)


def _markdown(result: ResultFile, opts: ExportOptions, ui: UI) -> None:
    from .markdown import render_markdown

    _text(render_markdown(result), opts.out, ui)


def _json(result: ResultFile, opts: ExportOptions, ui: UI) -> None:
    _text((result if opts.all_queries else summary(result)).dumps(), opts.out, ui)


def summary(result: ResultFile) -> ResultFile:
    """The result without its per-query outcomes: everything else, in the same schema.

    The outcomes are nearly all of a file's bytes (megabytes for a full suite), and
    what a reader of the numbers wants -- rows with their metrics and flags, the
    comparisons, summaries, corpora, engines -- fits in a page of it. Each row keeps
    its `n`; its `queries` is empty.
    """
    return result.model_copy(update={"rows": [r.model_copy(update={"queries": []})
                                              for r in result.rows]})


def into_directory(out_dir: Path, what: str, write: Callable[[Path], list[Path]]) -> list[Path]:
    """Run a directory exporter, its mistakes as usage errors naming --out."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir}: is a file; {what} into a directory",
                         hint=f"give a directory, e.g. --out {out_dir.stem or 'report'}/")
    try:
        return write(out_dir)
    except OSError as exc:
        raise UsageError(f"--out {out_dir}: cannot write there: {exc.strerror}") from None


def _png(result: ResultFile, opts: ExportOptions, ui: UI) -> None:
    from .plots import render_plots

    paths = into_directory(opts.out or Path("report"), "png writes one file per figure",
                           lambda d: render_plots(result, d))
    for path in paths:
        ui.out.print(f"wrote {path}", markup=False, highlight=False)


def _html(result: ResultFile, opts: ExportOptions, ui: UI) -> None:
    from .html import export

    export(result, opts, ui)


def _trec(result: ResultFile, opts: ExportOptions, ui: UI) -> None:
    from .trec import write_trec

    out_dir = opts.out or Path("report-trec")
    paths = into_directory(out_dir, "trec writes qrels and runs",
                           lambda d: write_trec(result, d))
    ui.out.print(f"wrote {len(paths)} files (qrels and runs) into {out_dir}", markup=False,
                 highlight=False)


def _text(text: str, out: Path | None, ui: UI) -> None:
    if out is None:
        ui.out.file.write(text)
        return
    if out.is_dir():
        raise UsageError(f"--out {out}: is a directory; this format writes one file",
                         hint=f"give a file name, e.g. --out {out / 'report.md'}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write there: {exc.strerror}") from None
    ui.out.print(f"wrote {out}", markup=False, highlight=False)


EXPORTERS: dict[str, Exporter] = {"table": _table, "md": _markdown, "json": _json, "png": _png,
                                   "html": _html, "trec": _trec}
