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
from pathlib import Path

from ...results.schema import ResultFile
from .figure import Ctx, corpora_of, engine_colours, matplotlib_module, save_figure
from .pareto import draw_pareto, pareto_front
from .scores import draw_scores
from .timing import draw_timing
from .token_budget import BUDGETS, budget_curve, draw_budget

__all__ = ["BUDGETS", "budget_curve", "pareto_front", "render_plots"]


def render_plots(result: ResultFile, out_dir: Path, *,
                 per_file: bool | None = None) -> list[Path]:
    """Write every figure for every corpus into out_dir; returns the paths written.

    per_file: draw the extra per_file passes, hatched, in the score bars; None
    (the default) draws them when a metric group stays at MAX_BARS bars or fewer.
    """
    mpl = matplotlib_module()
    out_dir.mkdir(parents=True, exist_ok=True)
    colours = engine_colours(result)
    written: list[Path] = []
    with mpl.rc_context({"font.size": 9, "axes.titlesize": 9.5, "axes.labelsize": 8.5,
                         "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 8,
                         "hatch.linewidth": 0.8, "axes.spines.top": False,
                         "axes.spines.right": False}):
        for corpus in corpora_of(result):
            ctx = Ctx(result, corpus, colours)
            stem = re.sub(r"[^A-Za-z0-9._-]+", "_", corpus)
            figures = (("scores", lambda c: draw_scores(c, per_file)), ("timing", draw_timing),
                       ("pareto", draw_pareto), ("budget", draw_budget))
            for kind, draw in figures:
                fig = draw(ctx)
                path = out_dir / f"{stem}-{kind}.png"
                save_figure(fig, path)
                written.append(path)
    return written
