"""Across corpora, when the result file has a summary: macro means with their stratified
intervals (engine by metric), and the win/tie/loss record of every engine pair.

The summary is newer than the first result files; it is read with getattr and
mapping lookups, and a file without one simply has no such section.
"""

from __future__ import annotations

from typing import Any

from ...results.schema import ResultFile
from .markup import Markup, esc, join, tag
from .tables import td, th
from .tiers import get


def _interval(mean: Any, lo: Any, hi: Any) -> Markup:
    if not isinstance(mean, int | float):
        return esc("")
    text = [tag("span", f"{mean:.2f}", class_="mean")]
    if isinstance(lo, int | float) and isinstance(hi, int | float):
        text.append(tag("span", f" [{lo:.2f}, {hi:.2f}]", class_="ci"))
    return join(text)


def summary_section(result: ResultFile) -> Markup:
    """One section per track's summary (a file written before tracks has only `summary`)."""
    main = getattr(result, "summary", None)
    # `summary` is the main one and stands for its track; `summaries` adds the others.
    found = [main] if main is not None else []
    found += [s for s in getattr(result, "summaries", None) or []
              if main is None or _track(s) != _track(main)]
    named = len(found) > 1
    return join([_one(s, named) for s in found]) if found else esc("")


def _track(summary: object) -> str:
    return str(get(summary, "track") or "questions")


def _one(summary: object, named: bool) -> Markup:
    track = _track(summary)
    macro = list(get(summary, "macro") or [])
    pairs = list(get(summary, "pairs") or [])
    corpora = [str(c) for c in get(summary, "corpora") or []]
    title = f"Across corpora, {track} track" if named or track != "questions" else \
        "Across corpora"
    parts = [tag("h2", title),
             tag("p", f"Over {len(corpora)} corpora ({', '.join(corpora)}): the mean of the "
                 "per-corpus means, with a 95% bootstrap interval resampling queries within "
                 "each corpus; an engine is averaged over the corpora where it has a row.",
                 class_="note")]
    if macro:
        metrics = list(dict.fromkeys(str(get(m, "metric")) for m in macro))
        engines = list(dict.fromkeys(str(get(m, "engine")) for m in macro))
        cell = {(str(get(m, "engine")), str(get(m, "metric"))): m for m in macro}
        body = []
        for engine in engines:
            cells = [td(tag("b", engine), None, "name")]
            for metric in metrics:
                m = cell.get((engine, metric))
                mean = get(m, "mean") if m is not None else None
                n = len(get(m, "corpora") or []) if m is not None else 0
                cells.append(td(_interval(mean, get(m, "lo"), get(m, "hi")) if m is not None
                                else "", mean if isinstance(mean, int | float) else None,
                                "num", f"over {n} corpora" if n else None))
            body.append(tag("tr", *cells, data_engine=engine))
        parts.append(tag("div", tag("table", tag("thead", tag("tr", th("engine", "text"),
                                                              *[th(m) for m in metrics])),
                                    tag("tbody", *body), class_="sortable macro"),
                         class_="scroll"))
    if pairs:
        body = []
        for p in pairs:
            outcomes = get(p, "outcomes") or {}
            body.append(tag("tr", td(get(p, "metric")),
                            td(f"{get(p, 'engine_a')} vs {get(p, 'engine_b')}"),
                            td(get(p, "wins"), get(p, "wins"), "num"),
                            td(get(p, "ties"), get(p, "ties"), "num"),
                            td(get(p, "losses"), get(p, "losses"), "num"),
                            td(", ".join(f"{k}: {v}" for k, v in dict(outcomes).items()))))
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
