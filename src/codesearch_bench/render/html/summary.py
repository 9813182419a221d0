"""Across corpora, when the result file has a summary: macro means with their stratified
intervals (engine by metric), and the win/tie/loss record of every engine pair.
"""

from __future__ import annotations

from ...results.schema import ResultFile
from ...results.statistics import Summary
from ..formats import summaries
from .markup import Markup, esc, join, tag
from .tables import td, th


def _interval(mean: float | None, lo: float | None, hi: float | None) -> Markup:
    if mean is None:
        return esc("")
    text = [tag("span", f"{mean:.2f}", class_="mean")]
    if lo is not None and hi is not None:
        text.append(tag("span", f" [{lo:.2f}, {hi:.2f}]", class_="ci"))
    return join(text)


def summary_section(result: ResultFile) -> Markup:
    """One section per track's summary, the main one first."""
    found = summaries(result)
    named = len(found) > 1
    return join([_one(s, named) for s in found]) if found else esc("")


def _one(summary: Summary, named: bool) -> Markup:
    track = summary.track
    macro, pairs, corpora = summary.macro, summary.pairs, summary.corpora
    title = f"Across corpora, {track} track" if named or track != "questions" else \
        "Across corpora"
    parts = [tag("h2", title),
             tag("p", f"Over {len(corpora)} corpora ({', '.join(corpora)}): the mean of the "
                 "per-corpus means, with a 95% bootstrap interval resampling queries within "
                 "each corpus; an engine is averaged over the corpora where it has a row.",
                 class_="note")]
    if macro:
        metrics = list(dict.fromkeys(m.metric for m in macro))
        engines = list(dict.fromkeys(m.engine for m in macro))
        cell = {(m.engine, m.metric): m for m in macro}
        body = []
        for engine in engines:
            cells = [td(tag("b", engine), None, "name")]
            for metric in metrics:
                m = cell.get((engine, metric))
                n = len(m.corpora) if m is not None else 0
                cells.append(td(_interval(m.mean, m.lo, m.hi) if m is not None else "",
                                m.mean if m is not None else None,
                                "num", f"over {n} corpora" if n else None))
            body.append(tag("tr", *cells, data_engine=engine))
        parts.append(tag("div", tag("table", tag("thead", tag("tr", th("engine", "text"),
                                                              *[th(m) for m in metrics])),
                                    tag("tbody", *body), class_="sortable macro"),
                         class_="scroll"))
    if pairs:
        body = []
        for p in pairs:
            body.append(tag("tr", td(p.metric), td(f"{p.engine_a} vs {p.engine_b}"),
                            td(p.wins, p.wins, "num"), td(p.ties, p.ties, "num"),
                            td(p.losses, p.losses, "num"),
                            td(", ".join(f"{k}: {v}" for k, v in p.outcomes.items()))))
        head = tag("tr", th("metric", "text"), th("A vs B", "text"), th("won"), th("tied"),
                   th("lost"), th("per corpus (A's outcome)", "text"))
        table = tag("div", tag("table", tag("thead", head), tag("tbody", *body),
                               class_="sortable pairs"), class_="scroll")
        # Pairs grow with the square of the engines: a long list starts folded.
        parts += [tag("h3", "Engine pairs: corpora won, tied, lost"),
                  tag("details", tag("summary", f"{len(pairs)} records (engine pair × metric)"),
                      table, open=len(pairs) <= 12),
                  tag("p", "Won or lost: significant on that corpus after Holm correction; "
                      "tied: not significant there.", class_="note")]
    return tag("section", join(parts), id=f"summary-{track}" if named else "summary",
               class_="summary")
