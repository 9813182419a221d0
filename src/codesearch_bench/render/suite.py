"""The suite view as Markdown: per track, the summary across corpora, then one line per corpus.

Each corpus line gives every engine's file MRR and file recall at 10 on its
headline row, the engine pairs whose file-MRR difference is significant after
Holm (with the sign), and the smallest file-MRR difference the paired tests
could detect (MDD, their range over the pairs). It is what docs/results.md's full
results are generated from, so every figure comes from the result file.
"""

from __future__ import annotations

from ..protocol import FILE_HIT, FILE_MRR
from ..results.schema import ResultFile, Row
from ..results.statistics import ComparisonOut
from .formats import summaries
from .markdown import _cell, summary_block

METRIC = FILE_MRR  # the one number per engine and corpus
ALPHA = 0.05


def _significant(c: ComparisonOut) -> bool:
    return c.p_adjusted is not None and c.p_adjusted < ALPHA and bool(c.delta)


def _pair(c: ComparisonOut) -> str:
    better, worse = (c.engine_a, c.engine_b) if (c.delta or 0) > 0 else (c.engine_b,
                                                                          c.engine_a)
    return f"{better} > {worse}"


def _mdd(found: list[ComparisonOut]) -> str:
    values = sorted(c.mdd for c in found if c.mdd is not None)
    if not values:
        return "n/e"
    lo, hi = values[0], values[-1]
    return f"{lo:.3f}" if hi - lo < 0.0005 else f"{lo:.3f}-{hi:.3f}"


def _engine_cell(row: Row | None) -> str:
    if row is None:
        return "-"
    mrr = row.metrics.get(METRIC)
    hit = row.metrics.get(FILE_HIT)
    show = [f"{m.mean:.2f}" if m is not None and m.mean is not None else "n/e"
            for m in (mrr, hit)]
    return " / ".join(show)


def suite_markdown(result: ResultFile) -> str:
    engines = list(result.engines)
    head = {(r.engine, r.corpus): r for r in result.rows if r.headline}
    tracks = list(dict.fromkeys(info.track for info in result.corpora.values()))
    out: list[str] = []
    for track in tracks:
        units = [name for name, info in result.corpora.items() if info.track == track]
        out.append(f"#### {track.capitalize()} track\n")
        for summary in summaries(result):
            if summary.track == track:
                out += summary_block(result, summary, bold=False)
        columns = ["corpus", "tier", "queries", *[f"{e} MRR / file@10" for e in engines],
                   "significant on file MRR (Holm)", "MDD file MRR"]
        out.append("| " + " | ".join(columns) + " |")
        out.append("|" + "---|" * len(columns))
        for unit in units:
            info = result.corpora[unit]
            found = [c for c in result.comparisons if c.corpus == unit and c.metric == METRIC
                     and c.group is None]
            sig = [_pair(c) for c in found if _significant(c)]
            cells = [unit, info.tier, str(info.queries),
                     *[_engine_cell(head.get((e, unit))) for e in engines],
                     ", ".join(sig) or "none", _mdd(found)]
            out.append("| " + " | ".join(_cell(c) for c in cells) + " |")
        out.append("")
    return "\n".join(out)
