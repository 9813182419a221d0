"""What every figure shares: palette, sizes, the per-corpus context, figure and legend.

matplotlib is imported only when a figure is drawn, and drawn through the Agg
canvas directly so no interactive backend or pyplot state is touched.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import UsageError
from ...results.schema import Estimate, ResultFile, Row

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# Okabe & Ito (2008), ordered so the first engines get the most distinct hues
# and yellow, weak on white, comes last.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
             "#F0E442")
HATCHES = ("///", "xxx", "...", "\\\\\\")
WIDTH_IN, DPI = 7.5, 120  # 900 px wide
NOTE_CHARS = 118
INSTALL_HINT = "pip install 'codesearch-bench[plots]'"

def matplotlib_module() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise UsageError("plots need matplotlib, which is not installed",
                         hint=INSTALL_HINT) from exc
    return matplotlib


def save_figure(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=DPI, facecolor="white")


def corpora_of(result: ResultFile) -> list[str]:
    names = list(result.corpora)
    for name in [r.corpus for r in result.rows] + [f.corpus for f in result.failures]:
        if name not in names:
            names.append(name)
    return names


def engine_colours(result: ResultFile) -> dict[str, str]:
    """One colour per engine with rows, the same in every corpus's figures; engines that
    only failed are never drawn, so they take no colour."""
    drawn = {r.engine for r in result.rows}
    engines = [e for e in result.engines if e in drawn]
    engines += sorted(drawn - set(engines))
    return {e: OKABE_ITO[i % len(OKABE_ITO)] for i, e in enumerate(engines)}


class Ctx:
    """One corpus of one result: its rows, query count, colours and failure notes."""

    def __init__(self, result: ResultFile, corpus: str, colours: dict[str, str]) -> None:
        self.result = result
        self.corpus = corpus
        self.colours = colours
        self.rows = [r for r in result.rows if r.corpus == corpus]
        order = list(colours)
        self.headline = sorted((r for r in self.rows if r.headline),
                               key=lambda r: order.index(r.engine))
        info = result.corpora.get(corpus)
        self.queries = info.queries if info else max((len(r.queries) for r in self.rows),
                                                     default=0)
        self.cutoffs = list(result.cutoffs) or [10]
        self.k10 = 10 if 10 in self.cutoffs else self.cutoffs[len(self.cutoffs) // 2]

    def title(self, what: str) -> str:
        return f"{self.corpus}: {what} — {self.queries} queries"

    def extras(self, row: Row) -> list[Row]:
        return [r for r in self.rows if r.engine == row.engine and not r.headline]

    def notes(self) -> list[str]:
        out = []
        failed = [f for f in self.result.failures if f.corpus == self.corpus]
        if failed:
            parts = [f"{f.engine} [{f.stage}]: {shorten(f.message)}" for f in failed]
            out.append("failed combinations (gaps, not zeros): " + "; ".join(parts))
        errs = [f"{r.engine} per_file={r.per_file}: {r.errors}" for r in self.rows if r.errors]
        if errs:
            out.append("failed queries, scored as misses: " + ", ".join(errs))
        if self.result.interrupted:
            out.append("interrupted run: only finished cells are shown")
        return out


def shorten(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def row_label(row: Row) -> str:
    return f"{row.engine} · per_file={row.per_file} · {row.search.mode}"


def mean_of(row: Row, metric: str) -> Estimate | None:
    est = row.metrics.get(metric)
    return est if est is not None and est.mean is not None else None


def new_figure(main_h: float, legend_items: int, notes: list[str],
            ncols: int = 2) -> tuple[Figure, Any, Any]:
    """A 900 px wide figure: a main subfigure of main_h inches over a footer subfigure
    sized for the legend and the wrapped notes. Returns the figure, main and footer."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lines = [w for n in notes for w in textwrap.wrap(n, NOTE_CHARS, subsequent_indent="  ")]
    legend_rows = -(-legend_items // ncols) if legend_items else 0
    foot_h = 0.14 + 0.2 * legend_rows + 0.145 * len(lines)
    fig = Figure(figsize=(WIDTH_IN, main_h + foot_h), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)  # so canvas.draw() lays the figure out before labels are placed
    # Two rows of subfigures come back as an array (matplotlib types it as either).
    pair: Any = fig.subfigures(2, 1, height_ratios=[main_h, foot_h])
    main, foot = pair
    if lines:
        # Notes quote engine messages: a `$` in them must not be read as mathtext.
        foot.text(0.012, 0.04, "\n".join(lines), transform=foot.transSubfigure, ha="left",
                  parse_math=False,
                  va="bottom", fontsize=7.5, color="#333333", linespacing=1.35)
    return fig, main, foot


def add_legend(foot: Any, handles: list[Any], ncols: int = 2) -> None:
    if handles:
        foot.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.012, 0.98),
                    ncols=ncols, frameon=False, borderaxespad=0.0, handlelength=1.8,
                    columnspacing=2.0)


def show_empty(ax: Axes, text: str) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="#555555",
            bbox={"facecolor": "#f4f4f4", "edgecolor": "#cccccc", "pad": 8})


def engine_handles(ctx: Ctx, rows: list[Row]) -> list[Any]:
    from matplotlib.patches import Patch

    return [Patch(facecolor=ctx.colours[r.engine], label=row_label(r)) for r in rows]


def ms_axis(ax: Axes, subs: tuple[float, ...] = (1.0, 2.0, 5.0)) -> None:
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(tick_format(lambda v: secs_label(v).replace(" ", "")))
    ax.xaxis.set_minor_formatter(NullFormatter())


def secs_label(v: float) -> str:
    if v < 0.01:
        return f"{v * 1000:.1f} ms".replace(".0 ", " ")
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s".replace(".0 ", " ")

def tick_format(func: Any) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: func(v) if v > 0 else "0")
