"""PNG figures of a saved comparison: scores, timing, quality vs latency, token budget.

`render_plots(result, out_dir)` writes four PNGs per corpus, `<corpus>-scores.png`,
`<corpus>-timing.png`, `<corpus>-pareto.png` and `<corpus>-budget.png`, each
900 px wide so it reads at README width. Every figure names the corpus and its
query count, has a legend naming engine, per_file setting and mode, and lists
the failed engine × corpus combinations so a gap is not read as a zero.

matplotlib is an optional extra (`pip install 'codesearch-bench[plots]'`); it
is imported only when a figure is drawn, and drawn through the Agg canvas
directly so no interactive backend or pyplot state is touched.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..results import Estimate, ResultFile, Row

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# Okabe & Ito (2008), ordered so the first engines get the most distinct hues
# and yellow, weak on white, comes last.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
             "#F0E442")
BUDGETS = (250, 500, 1000, 2000, 4000, 8000, 16000)
HATCHES = ("///", "xxx", "...", "\\\\\\")
WIDTH_IN, DPI = 7.5, 120  # 900 px wide
NOTE_CHARS = 118
INSTALL_HINT = "pip install 'codesearch-bench[plots]'"


def budget_curve(row: Row, budgets: Sequence[int] = BUDGETS) -> list[float]:
    """Share of the row's chunk-graded queries whose first gold chunk is shown within each budget.

    A query counts at budget b when `tokens_to_first_gold <= b` (the tokens of
    every chunk shown up to and including the first gold one). Queries with
    `chunk_entered` False (file-level gold, or an engine without spans) are
    left out; failed queries and queries where no gold chunk was shown count as
    not found. Returns [] when nothing can be drawn: no token column, or no
    chunk-graded query.
    """
    if row.token_column == "none":
        return []
    graded = [q for q in row.queries if q.chunk_entered]
    if not graded:
        return []
    found = [q.tokens_to_first_gold for q in graded
             if q.error is None and q.tokens_to_first_gold is not None]
    return [sum(t <= b for t in found) / len(graded) for b in budgets]


def render_plots(result: ResultFile, out_dir: Path, *,
                 per_file: bool | None = None) -> list[Path]:
    """Write every figure for every corpus into out_dir; returns the paths written.

    per_file: draw the extra per_file passes, hatched, in the score bars; None
    (the default) draws them when a metric group stays at MAX_BARS bars or fewer.
    """
    mpl = _matplotlib()
    out_dir.mkdir(parents=True, exist_ok=True)
    colours = _colours(result)
    written: list[Path] = []
    with mpl.rc_context({"font.size": 9, "axes.titlesize": 9.5, "axes.labelsize": 8.5,
                         "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 8,
                         "hatch.linewidth": 0.8, "axes.spines.top": False,
                         "axes.spines.right": False}):
        for corpus in _corpora(result):
            ctx = _Ctx(result, corpus, colours)
            stem = re.sub(r"[^A-Za-z0-9._-]+", "_", corpus)
            for kind, draw in (("scores", _scores), ("timing", _timing),
                               ("pareto", _pareto), ("budget", _budget)):
                fig = draw(ctx, per_file) if kind == "scores" else draw(ctx)
                path = out_dir / f"{stem}-{kind}.png"
                _save(fig, path)
                written.append(path)
    return written


# --- shared ----------------------------------------------------------------------------


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError as exc:
        raise UsageError("plots need matplotlib, which is not installed",
                         hint=INSTALL_HINT) from exc
    return matplotlib


def _save(fig: Figure, path: Path) -> None:
    fig.savefig(path, dpi=DPI, facecolor="white")


def _corpora(result: ResultFile) -> list[str]:
    names = list(result.corpora)
    for name in [r.corpus for r in result.rows] + [f.corpus for f in result.failures]:
        if name not in names:
            names.append(name)
    return names


def _colours(result: ResultFile) -> dict[str, str]:
    """One colour per engine with rows, the same in every corpus's figures; engines that
    only failed are never drawn, so they take no colour."""
    drawn = {r.engine for r in result.rows}
    engines = [e for e in result.engines if e in drawn]
    engines += sorted(drawn - set(engines))
    return {e: OKABE_ITO[i % len(OKABE_ITO)] for i, e in enumerate(engines)}


class _Ctx:
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
            parts = [f"{f.engine} [{f.stage}]: {_short(f.message)}" for f in failed]
            out.append("failed combinations (gaps, not zeros): " + "; ".join(parts))
        errs = [f"{r.engine} per_file={r.per_file}: {r.errors}" for r in self.rows if r.errors]
        if errs:
            out.append("failed queries, scored as misses: " + ", ".join(errs))
        if self.result.interrupted:
            out.append("interrupted run: only finished cells are shown")
        return out


def _short(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _label(row: Row) -> str:
    return f"{row.engine} · per_file={row.per_file} · {row.search.mode}"


def _mean(row: Row, metric: str) -> Estimate | None:
    est = row.metrics.get(metric)
    return est if est is not None and est.mean is not None else None


def _figure(main_h: float, legend_items: int, notes: list[str],
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
    main, foot = fig.subfigures(2, 1, height_ratios=[main_h, foot_h])
    if lines:
        foot.text(0.012, 0.04, "\n".join(lines), transform=foot.transSubfigure, ha="left",
                  va="bottom", fontsize=7.5, color="#333333", linespacing=1.35)
    return fig, main, foot


def _legend(foot: Any, handles: list[Any], ncols: int = 2) -> None:
    if handles:
        foot.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.012, 0.98),
                    ncols=ncols, frameon=False, borderaxespad=0.0, handlelength=1.8,
                    columnspacing=2.0)


def _empty(ax: Axes, text: str) -> None:
    ax.set_axis_off()
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="#555555",
            bbox={"facecolor": "#f4f4f4", "edgecolor": "#cccccc", "pad": 8})


def _engine_handles(ctx: _Ctx, rows: list[Row]) -> list[Any]:
    from matplotlib.patches import Patch

    return [Patch(facecolor=ctx.colours[r.engine], label=_label(r)) for r in rows]


# --- 1. scores -------------------------------------------------------------------------

MAX_BARS = 15  # bars per metric group beyond which the extra per_file passes are left out


def _same_file_scores(a: Row, b: Row) -> bool:
    names = [m for m in a.metrics if m.startswith("file.")]
    return all(_value(a, m) == _value(b, m) for m in names) and \
        {m for m in b.metrics if m.startswith("file.")} == set(names)


def _value(row: Row, metric: str) -> float | None:
    est = row.metrics.get(metric)
    return None if est is None or est.mean is None else round(est.mean, 9)


def _scores(ctx: _Ctx, per_file: bool | None) -> Figure:
    from matplotlib.patches import Patch

    extras = {r.engine: ctx.extras(r) for r in ctx.headline}
    n_all = len(ctx.headline) + sum(len(v) for v in extras.values())
    show_extra = per_file if per_file is not None else n_all <= MAX_BARS
    chunk_rows: list[Row] = []
    file_rows: list[Row] = []
    repeated = False
    for row in ctx.headline:
        chunk_rows.append(row)
        file_rows.append(row)
        if show_extra:
            chunk_rows += extras[row.engine]
            differ = [x for x in extras[row.engine] if not _same_file_scores(row, x)]
            repeated = repeated or len(differ) < len(extras[row.engine])
            file_rows += differ
    extra_pf = sorted({r.per_file for r in chunk_rows if not r.headline})
    hatch_of = {pf: HATCHES[i % len(HATCHES)] for i, pf in enumerate(extra_pf)}
    handles = _engine_handles(ctx, ctx.headline)
    for pf in extra_pf:
        handles.append(Patch(facecolor="white", edgecolor="#444444", hatch=hatch_of[pf],
                             label=f"per_file={pf} pass (engine colour, hatched)"))
    notes = ["bars: mean over queries; whiskers: 95% bootstrap CI; n/e: chunk metrics not "
             f"entered (no spans, or file-level gold); MRR over the top {max(ctx.cutoffs)}."]
    if repeated:
        notes.append("file level: per_file passes whose file scores equal their headline "
                     "pass are not drawn again.")
    if n_all > len(ctx.headline) and not show_extra:
        notes.append(f"{n_all - len(ctx.headline)} extra per_file passes not drawn "
                     "(too many bars); they are in the table and the JSON.")
    notes += ctx.notes()
    fig, main, foot = _figure(4.9, len(handles), notes)
    fig.suptitle(ctx.title("file and chunk recall@k, MRR"), fontsize=11)
    axes = main.subplots(2, 1, sharex=True)
    _legend(foot, handles)
    if not ctx.headline:
        for ax in axes:
            _empty(ax, "no rows: every engine failed on this corpus")
        return fig
    groups = [f"recall@{k}" for k in ctx.cutoffs] + ["MRR"]
    for ax, level, rows in zip(axes, ("file", "chunk"), (file_rows, chunk_rows), strict=True):
        names = [f"{level}.recall@{k}" for k in ctx.cutoffs] + [f"{level}.mrr"]
        width = 0.86 / len(rows)
        for j, row in enumerate(rows):
            colour = ctx.colours[row.engine]
            for g, metric in enumerate(names):
                x = g - 0.43 + width * (j + 0.5)
                est = _mean(row, metric)
                if est is None or est.mean is None:
                    ax.text(x, 0.015, "n/e", rotation=90, ha="center", va="bottom",
                            fontsize=6.5, color="#555555")
                    continue
                ax.bar(x, est.mean, width * 0.9, color="white" if not row.headline else colour,
                       edgecolor=colour, linewidth=0.7,
                       hatch=None if row.headline else hatch_of[row.per_file])
                if est.lo is not None and est.hi is not None:
                    ax.errorbar(x, est.mean, yerr=[[est.mean - est.lo], [est.hi - est.mean]],
                                fmt="none", ecolor="#222222", elinewidth=0.7, capsize=1.2)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"{level} level")
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        for g in range(1, len(groups)):
            ax.axvline(g - 0.5, color="#bbbbbb", linewidth=0.6)
    axes[-1].set_xticks(range(len(groups)), groups)
    axes[-1].set_xlim(-0.5, len(groups) - 0.5)
    return fig


# --- 2. timing -------------------------------------------------------------------------


def _secs(v: float) -> str:
    if v < 0.01:
        return f"{v * 1000:.1f} ms".replace(".0 ", " ")
    return f"{v * 1000:.0f} ms" if v < 1 else f"{v:.1f} s".replace(".0 ", " ")


def _timing(ctx: _Ctx) -> Figure:
    rows = ctx.headline
    notes = ["index: wall time and peak RSS of the whole process tree (cached: state reused, "
             "rebuild with --reindex to measure it; none: the engine has no index step). Search "
             "RSS: persistent engines only. Headline per_file pass; the others are in the JSON."]
    notes += ctx.notes()
    handles = _engine_handles(ctx, rows)
    fig, main, foot = _figure(1.1 + 0.62 * max(len(rows), 2), len(handles), notes)
    fig.suptitle(ctx.title("index and search cost"), fontsize=11)
    axes = main.subplots(2, 2, sharey=True, gridspec_kw={"wspace": 0.06, "hspace": 0.1})
    _legend(foot, handles)
    if not rows:
        for ax in axes.flat:
            _empty(ax, "no rows: every engine failed on this corpus")
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
           [missing_index(r) or "not measured" for r in rows], _secs)
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
        _fmt(lambda v: f"{v:g}s" if top >= 1 else f"{v * 1000:g}ms"))
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


def _fmt(func: Any) -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda v, _: func(v) if v > 0 else "0")


def _hbars(ax: Axes, ctx: _Ctx, rows: list[Row], ys: list[int], title: str,
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


def _latency(ax: Axes, ctx: _Ctx, rows: list[Row], ys: list[int]) -> None:
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
        label = _secs(p50) + (f" / {_secs(p95)}" if p95 else "")
        ax.text(end * 1.15, y, label, va="center", ha="left", fontsize=7.5)
    ax.set_xlim(floor, right)
    _ms_axis(ax, (1.0,))


def _ms_axis(ax: Axes, subs: tuple[float, ...] = (1.0, 2.0, 5.0)) -> None:
    from matplotlib.ticker import LogLocator, NullFormatter

    ax.xaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.xaxis.set_major_formatter(_fmt(lambda v: _secs(v).replace(" ", "")))
    ax.xaxis.set_minor_formatter(NullFormatter())


# --- 3. quality vs latency -------------------------------------------------------------


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points no other point beats on both lower x (latency) and higher y (recall), by x."""
    front: list[tuple[float, float]] = []
    for x, y in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or y > front[-1][1]:
            front.append((x, y))
    return front


def _pareto(ctx: _Ctx) -> Figure:
    from matplotlib.lines import Line2D

    k = ctx.k10
    pts = [(r, r.search.p50_s, _mean(r, f"file.recall@{k}"), _mean(r, f"chunk.recall@{k}"))
           for r in ctx.headline]
    drawn = [(r, x, f, c) for r, x, f, c in pts if x and f]
    notes = [f"filled: file recall@{k}; hollow: chunk recall@{k} of the same engine (n/e: not "
             "drawn); lines: Pareto frontiers, where no engine is both faster and better. "
             "Intervals are in the scores figure. Latency is a property of the integration: "
             "a oneshot engine pays process start-up on every query."]
    skipped = [r.engine for r, x, f, _ in pts if not (x and f)]
    if skipped:
        notes.append("not drawn (no latency or no recall): " + ", ".join(skipped))
    notes += ctx.notes()
    handles = _engine_handles(ctx, [r for r, *_ in drawn])
    handles += [Line2D([], [], marker="o", color="#444444", linestyle="none",
                       label=f"file recall@{k}"),
                Line2D([], [], marker="D", markerfacecolor="white", color="#444444",
                       linestyle="none", label=f"chunk recall@{k}"),
                Line2D([], [], color="#777777", label="Pareto frontier (file)"),
                Line2D([], [], color="#777777", linestyle=":", label="Pareto frontier (chunk)")]
    fig, main, foot = _figure(4.6, len(handles), notes)
    fig.suptitle(ctx.title(f"recall@{k} vs query latency p50"), fontsize=11)
    ax = main.add_subplot()
    _legend(foot, handles)
    if not drawn:
        _empty(ax, "nothing to draw: no row has both a latency and a recall")
        return fig
    xs = [x for _, x, _, _ in drawn]
    ax.set_xscale("log")
    ax.set_xlim(min(xs) / 2.5, max(xs) * 2.5)
    ax.set_ylim(-0.03, 1.05)
    _ms_axis(ax)
    for pick, style in ((2, "-"), (3, ":")):
        front = pareto_front([(d[1], d[pick].mean) for d in drawn
                              if d[pick] is not None and d[pick].mean is not None])
        if front:
            fx = [p[0] for p in front] + [ax.get_xlim()[1]]
            fy = [p[1] for p in front] + [front[-1][1]]
            ax.plot(fx, fy, drawstyle="steps-post", color="#777777", linestyle=style,
                    linewidth=1.1, zorder=1)
    for r, x, f, c in drawn:
        colour = ctx.colours[r.engine]
        if c is not None and c.mean is not None:
            ax.plot([x, x], [f.mean, c.mean], color=colour, linewidth=0.8, alpha=0.5,
                    linestyle="--", zorder=2)
            ax.plot([x], [c.mean], marker="D", markersize=6, markerfacecolor="white",
                    color=colour, markeredgewidth=1.5, zorder=3)
        ax.plot([x], [f.mean], marker="o", markersize=7, color=colour, zorder=4)
    ax.set_xlabel("query latency p50 (log scale)")
    ax.set_ylabel(f"recall@{k}")
    ax.grid(alpha=0.3, which="major")
    _place_labels(fig, ax, [(r.engine, x, f.mean or 0.0) for r, x, f, _ in drawn],
                  [(x, c.mean) for _, x, _, c in drawn if c is not None and c.mean is not None])
    return fig


def _place_labels(fig: Figure, ax: Axes, labels: list[tuple[str, float, float]],
                  others: list[tuple[float, float]]) -> None:
    """Greedy placement: each label at the first offset whose box stays inside the axes and
    overlaps no placed label and no marker; a leader line when it lands away from its point."""
    fig.canvas.draw()  # lays the figure out, so data -> pixel transforms are final
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    px = fig.dpi / 72
    to_px = ax.transData.transform
    markers = [to_px((x, y)) for _, x, y in labels] + [to_px(p) for p in others]
    placed: list[tuple[float, float, float, float]] = []
    box = ax.get_window_extent()
    # engines drawn on (nearly) the same spot share one label
    merged: list[tuple[str, float, float]] = []
    for text, x, y in labels:
        cx, cy = to_px((x, y))
        for i, (t2, x2, y2) in enumerate(merged):
            mx, my = to_px((x2, y2))
            if abs(mx - cx) < 5 and abs(my - cy) < 5:
                merged[i] = (f"{t2} = {text}", x2, y2)
                break
        else:
            merged.append((text, x, y))
    for text, x, y in sorted(merged, key=lambda t: -t[2]):
        probe = ax.text(0, 0, text, fontsize=8)
        ext = probe.get_window_extent(renderer)
        probe.remove()
        w, h = ext.width, ext.height
        cx, cy = to_px((x, y))
        right, left = 7.0, -7.0 - w / px
        choices = [(right, -h / px / 2), (left, -h / px / 2), (right, 5.0), (left, 5.0),
                   (right, -h / px - 5), (left, -h / px - 5)]
        choices += [(dx, dy) for step in (1, 2, 3, 4) for dy in (step * 12.0, -step * 12.0 - 10)
                    for dx in (right, left)]
        best = choices[0]
        for dx, dy in choices:
            rect = (cx + dx * px, cy + dy * px, cx + dx * px + w, cy + dy * px + h)
            inside = box.x0 <= rect[0] and rect[2] <= box.x1 and box.y0 <= rect[1] and \
                rect[3] <= box.y1
            clash = any(_overlap(rect, p) for p in placed) or any(
                rect[0] - 5 <= mx <= rect[2] + 5 and rect[1] - 5 <= my <= rect[3] + 5
                for mx, my in markers)
            if inside and not clash:
                best = (dx, dy)
                break
        rect = (cx + best[0] * px, cy + best[1] * px, cx + best[0] * px + w,
                cy + best[1] * px + h)
        placed.append(rect)
        ax.annotate(text, (x, y), xytext=best, textcoords="offset points", fontsize=8,
                    ha="left", va="bottom", zorder=5,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.5},
                    arrowprops={"arrowstyle": "-", "color": "#888888", "linewidth": 0.6,
                                "shrinkA": 0, "shrinkB": 4})


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


# --- 4. recall at a token budget -------------------------------------------------------


def _budget_label(b: int) -> str:
    return f"{b // 1000}k" if b >= 1000 and b % 1000 == 0 else str(b)


MARKERS = "osD^vP*X"
STYLES = ("-", "--", "-.", ":")


def _marker(i: int) -> str:
    """Past the eighth engine colours repeat, so shift the marker to keep pairs unique."""
    return MARKERS[(i + 3 * (i // len(OKABE_ITO))) % len(MARKERS)]


def _style(i: int) -> str:
    return STYLES[(i + i // len(OKABE_ITO)) % len(STYLES)]


def _budget(ctx: _Ctx) -> Figure:
    from matplotlib.lines import Line2D
    from matplotlib.ticker import NullLocator

    curves: list[tuple[Row, list[float]]] = []
    no_tokens, no_chunks = [], []
    for r in ctx.headline:
        curve = budget_curve(r)
        if r.token_column == "none":
            no_tokens.append(r.engine)
        elif not curve:
            no_chunks.append(r.engine)
        else:
            curves.append((r, curve))
    notes = ["share of the chunk-graded queries whose first gold chunk is shown within the "
             "budget (tokens of every chunk shown up to and including it, top "
             f"{max(ctx.cutoffs)} files); failed queries count as not found, file-level gold is "
             "left out. Curves are nudged sideways so equal ones stay visible. *: priced from "
             "the corpus lines the tool pointed at."]
    if no_tokens:
        notes.append("no token column (no text, no text_from_corpus), not drawn: "
                     + ", ".join(no_tokens))
    if no_chunks:
        notes.append("no chunk-graded queries (no spans, or file-level gold), not drawn: "
                     + ", ".join(no_chunks))
    notes += ctx.notes()
    handles = [Line2D([], [], color=ctx.colours[r.engine], marker=_marker(i),
                      linestyle=_style(i), markersize=5.5, label=_label(r)
                      + f" (n={sum(q.chunk_entered for q in r.queries)})"
                      + ("*" if r.token_column == "corpus" else ""))
               for i, (r, _) in enumerate(curves)]
    fig, main, foot = _figure(4.4, len(handles), notes)
    fig.suptitle(ctx.title("first gold chunk within a token budget"), fontsize=11)
    ax = main.add_subplot()
    _legend(foot, handles)
    if not curves:
        _empty(ax, "nothing to draw: no row has a token column and chunk-graded queries")
        return fig
    for i, (r, curve) in enumerate(curves):
        nudge = 2 ** (0.05 * (i - (len(curves) - 1) / 2))
        ax.plot([b * nudge for b in BUDGETS], curve, marker=_marker(i),
                linestyle=_style(i), markersize=5.5, linewidth=1.6,
                color=ctx.colours[r.engine])
    ax.set_xscale("log", base=2)
    ax.set_xticks(BUDGETS, [_budget_label(b) for b in BUDGETS])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlim(BUDGETS[0] / 1.3, BUDGETS[-1] * 1.3)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("token budget of shown text (log2 scale)")
    ax.set_ylabel("share of queries")
    ax.grid(alpha=0.3)
    return fig
