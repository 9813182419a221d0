"""Figure 2: index time, memory and search latency per engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...results.schema import Row

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

from .figure import (
    Ctx,
    add_legend,
    engine_handles,
    ms_axis,
    new_figure,
    secs_label,
    show_empty,
    tick_format,
)


def draw_timing(ctx: Ctx) -> Figure:
    rows = ctx.headline
    notes = ["index: wall time and peak RSS of the whole process tree (cached: state reused, "
             "rebuild with --reindex to measure it; none: the engine has no index step). Search "
             "RSS: persistent engines only. Headline per_file pass; the others are in the JSON."]
    notes += ctx.notes()
    handles = engine_handles(ctx, rows)
    fig, main, foot = new_figure(1.1 + 0.62 * max(len(rows), 2), len(handles), notes)
    fig.suptitle(ctx.title("index and search cost"), fontsize=11)
    axes = main.subplots(2, 2, sharey=True, gridspec_kw={"wspace": 0.06, "hspace": 0.1})
    add_legend(foot, handles)
    if not rows:
        for ax in axes.flat:
            show_empty(ax, "no rows: every engine failed on this corpus")
        return fig
    ys = list(range(len(rows)))[::-1]

    def missing_index(r: Row) -> str | None:
        if r.index.cached:
            return "cached"
        if r.index.command is None:
            return "none"
        return None

    _hbars(axes[0, 0], ctx, rows, ys, "index wall time",
           [(None if missing_index(r) else r.index.wall_s) for r in rows],
           [missing_index(r) or "not measured" for r in rows], secs_label)
    _hbars(axes[1, 0], ctx, rows, ys, "index peak RSS (MiB)",
           [(None if missing_index(r) or r.index.peak_rss_bytes is None
             else r.index.peak_rss_bytes / 2**20) for r in rows],
           [missing_index(r) or "not measured" for r in rows], lambda v: f"{v:.0f} MiB")
    _hbars(axes[1, 1], ctx, rows, ys, "search peak RSS (MiB)",
           [(None if r.search.peak_rss_bytes is None else r.search.peak_rss_bytes / 2**20)
            for r in rows],
           ["oneshot: not measured" if r.search.mode == "oneshot" else "not measured"
            for r in rows], lambda v: f"{v:.0f} MiB")
    _latency(axes[0, 1], ctx, rows, ys)
    top = max((r.index.wall_s or 0.0 for r in rows if not missing_index(r)), default=0.0)
    axes[0, 0].xaxis.set_major_locator(_max_n(5))
    axes[0, 0].xaxis.set_major_formatter(
        tick_format(lambda v: f"{v:g}s" if top >= 1 else f"{v * 1000:g}ms"))
    for ax in axes[1]:
        ax.xaxis.set_major_locator(_max_n(6))
    for ax in axes[:, 0]:
        ax.set_yticks(ys, [r.engine for r in rows])
    for ax in axes.flat:
        ax.set_ylim(-0.6, len(rows) - 0.4)
        ax.grid(axis="x", alpha=0.3)
        ax.set_axisbelow(True)
    return fig


def _max_n(n: int) -> Any:
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=n, steps=[1, 2, 2.5, 5, 10])


def _hbars(ax: Axes, ctx: Ctx, rows: list[Row], ys: list[int], title: str,
           values: list[float | None], missing: list[str], fmt: Any) -> None:
    top = max((v for v in values if v is not None), default=1.0) or 1.0
    for r, y, v, miss in zip(rows, ys, values, missing, strict=True):
        if v is None:
            ax.text(0.01 * top, y, miss, va="center", ha="left", fontsize=7.5, color="#555555",
                    style="italic")
            continue
        ax.barh(y, v, 0.62, color=ctx.colours[r.engine])
        ax.text(v + 0.02 * top, y, fmt(v), va="center", ha="left", fontsize=7.5)
    ax.set_xlim(0, top * 1.38)
    ax.set_title(title, loc="left")


def _latency(ax: Axes, ctx: Ctx, rows: list[Row], ys: list[int]) -> None:
    p50s = [r.search.p50_s for r in rows if r.search.p50_s]
    p95s = [r.search.p95_s or r.search.p50_s for r in rows if r.search.p50_s]
    ax.set_title("query latency: bar p50, whisker to p95 (log)", loc="left")
    ax.set_xscale("log")
    if not p50s:
        return
    floor = min(p50s) / 3
    right = max(x for x in p95s if x) * 12
    for r, y in zip(rows, ys, strict=True):
        p50, p95 = r.search.p50_s, r.search.p95_s
        if not p50:
            ax.text(floor * 1.1, y, "not measured", va="center", fontsize=7.5, color="#555555",
                    style="italic")
            continue
        ax.barh(y, p50 - floor, 0.62, left=floor, color=ctx.colours[r.engine])
        end = p95 if p95 and p95 > p50 else p50
        ax.plot([p50, end], [y, y], color="#222222", linewidth=1.0)
        ax.plot([end], [y], marker="|", markersize=9, color="#222222")
        label = secs_label(p50) + (f" / {secs_label(p95)}" if p95 else "")
        ax.text(end * 1.15, y, label, va="center", ha="left", fontsize=7.5)
    ax.set_xlim(floor, right)
    ms_axis(ax, (1.0,))
