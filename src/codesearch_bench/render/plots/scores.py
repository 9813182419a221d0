"""Figure 1: file and chunk scores per engine, with their intervals."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...results.schema import Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from .figure import HATCHES, Ctx, add_legend, engine_handles, mean_of, new_figure, show_empty

MAX_BARS = 15  # bars per metric group beyond which the extra per_file passes are left out


def _same_file_scores(a: Row, b: Row) -> bool:
    names = [m for m in a.metrics if m.startswith("file.")]
    return all(_value(a, m) == _value(b, m) for m in names) and \
        {m for m in b.metrics if m.startswith("file.")} == set(names)


def _value(row: Row, metric: str) -> float | None:
    est = row.metrics.get(metric)
    return None if est is None or est.mean is None else round(est.mean, 9)


def draw_scores(ctx: Ctx, per_file: bool | None) -> Figure:
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
    handles = engine_handles(ctx, ctx.headline)
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
    fig, main, foot = new_figure(4.9, len(handles), notes)
    fig.suptitle(ctx.title("file and chunk recall@k, MRR"), fontsize=11)
    axes = main.subplots(2, 1, sharex=True)
    add_legend(foot, handles)
    if not ctx.headline:
        for ax in axes:
            show_empty(ax, "no rows: every engine failed on this corpus")
        return fig
    groups = [f"recall@{k}" for k in ctx.cutoffs] + ["MRR"]
    for ax, level, rows in zip(axes, ("file", "chunk"), (file_rows, chunk_rows), strict=True):
        names = [f"{level}.recall@{k}" for k in ctx.cutoffs] + [f"{level}.mrr"]
        width = 0.86 / len(rows)
        for j, row in enumerate(rows):
            colour = ctx.colours[row.engine]
            for g, metric in enumerate(names):
                x = g - 0.43 + width * (j + 0.5)
                est = mean_of(row, metric)
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
