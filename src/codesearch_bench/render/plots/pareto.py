"""Figure 3: quality against latency, with the Pareto front marked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

from .figure import Ctx, add_legend, engine_handles, mean_of, ms_axis, new_figure, show_empty


def pareto_front(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    """Points no other point beats on both lower x (latency) and higher y (recall), by x."""
    front: list[tuple[float, float]] = []
    for x, y in sorted(points, key=lambda p: (p[0], -p[1])):
        if not front or y > front[-1][1]:
            front.append((x, y))
    return front


def draw_pareto(ctx: Ctx) -> Figure:
    from matplotlib.lines import Line2D

    k = ctx.k10
    pts = [(r, r.search.p50_s, mean_of(r, f"file.recall@{k}"), mean_of(r, f"chunk.recall@{k}"))
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
    handles = engine_handles(ctx, [r for r, *_ in drawn])
    handles += [Line2D([], [], marker="o", color="#444444", linestyle="none",
                       label=f"file recall@{k}"),
                Line2D([], [], marker="D", markerfacecolor="white", color="#444444",
                       linestyle="none", label=f"chunk recall@{k}"),
                Line2D([], [], color="#777777", label="Pareto frontier (file)"),
                Line2D([], [], color="#777777", linestyle=":", label="Pareto frontier (chunk)")]
    fig, main, foot = new_figure(4.6, len(handles), notes)
    fig.suptitle(ctx.title(f"recall@{k} vs query latency p50"), fontsize=11)
    ax = main.add_subplot()
    add_legend(foot, handles)
    if not drawn:
        show_empty(ax, "nothing to draw: no row has both a latency and a recall")
        return fig
    xs = [x for _, x, _, _ in drawn]
    ax.set_xscale("log")
    ax.set_xlim(min(xs) / 2.5, max(xs) * 2.5)
    ax.set_ylim(-0.03, 1.05)
    ms_axis(ax)
    for granularity, style in (("file", "-"), ("chunk", ":")):
        front = pareto_front([(x, est.mean) for _, x, f, c in drawn
                              if (est := f if granularity == "file" else c) is not None
                              and est.mean is not None])
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
