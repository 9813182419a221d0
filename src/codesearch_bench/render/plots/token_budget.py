"""Figure 4: share of queries whose first gold chunk is shown within a token budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...results.schema import Row

if TYPE_CHECKING:
    from matplotlib.figure import Figure

from .figure import OKABE_ITO, Ctx, add_legend, new_figure, row_label, show_empty

BUDGETS = (250, 500, 1000, 2000, 4000, 8000, 16000)


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





def _budget_label(b: int) -> str:
    return f"{b // 1000}k" if b >= 1000 and b % 1000 == 0 else str(b)


MARKERS = "osD^vP*X"
STYLES = ("-", "--", "-.", ":")


def _marker(i: int) -> str:
    """Past the eighth engine colours repeat, so shift the marker to keep pairs unique."""
    return MARKERS[(i + 3 * (i // len(OKABE_ITO))) % len(MARKERS)]


def _style(i: int) -> Any:  # one of STYLES; matplotlib types linestyle as a Literal
    return STYLES[(i + i // len(OKABE_ITO)) % len(STYLES)]


def draw_budget(ctx: Ctx) -> Figure:
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
                      linestyle=_style(i), markersize=5.5, label=row_label(r)
                      + f" (n={sum(q.chunk_entered for q in r.queries)})"
                      + ("*" if r.token_column == "corpus" else ""))
               for i, (r, _) in enumerate(curves)]
    fig, main, foot = new_figure(4.4, len(handles), notes)
    fig.suptitle(ctx.title("first gold chunk within a token budget"), fontsize=11)
    ax = main.add_subplot()
    add_legend(foot, handles)
    if not curves:
        show_empty(ax, "nothing to draw: no row has a token column and chunk-graded queries")
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
