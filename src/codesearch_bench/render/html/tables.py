"""The page's tables: per corpus and track the headline table with intervals and
significance tiers; the failed combinations and parse problems under it.

A track is a granularity of the answer: `file` (did the right file come back)
and `chunk` (did the lines shown overlap the gold definition). Tables are
rendered here, server side, so they read without the script; the script only
sorts them (every sortable cell carries its number in `data-v`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ...protocol import CHUNK_RECALL, TIER_METRICS
from ...results.schema import Estimate, ResultFile, Row
from ..formats import FLAG_HELP, coverage_gaps, fmt, index_cells, rows_of, secs, tokens
from . import tiers as tiering
from .markup import Markup, esc, join, tag

TRACKS = ("file", "chunk")


def _num(value: float | int | None) -> str | None:
    return None if value is None else repr(float(value))


def td(text: object, value: float | int | None = None, cls: str | None = None,
        title: str | None = None, key: str | None = None) -> Markup:
    """A cell; `value` is what a numeric sort reads, `key` what a text sort reads when the
    cell shows more than its name."""
    return tag("td", text, data_v=_num(value), data_s=key, class_=cls, title=title)


def th(text: str, kind: str = "num", title: str | None = None) -> Markup:
    return tag("th", text, data_type=kind, title=title, tabindex="0")


def _interval(est: Estimate | None, *, bar: bool, digits: int = 2) -> Markup:
    """The mean, its 95% interval in small type and, for rates, a bar drawn to scale."""
    if est is None or est.mean is None:
        return esc("")
    parts = [tag("span", f"{est.mean:.{digits}f}", class_="mean")]
    if est.lo is not None and est.hi is not None:
        parts.append(tag("span", f" [{est.lo:.{digits}f}, {est.hi:.{digits}f}]", class_="ci"))
        if bar:
            lo, hi, mean = (max(0.0, min(1.0, v)) for v in (est.lo, est.hi, est.mean))
            style = f"left:{lo * 100:.1f}%;width:{max(hi - lo, 0.004) * 100:.1f}%"
            parts.append(tag("span", tag("span", class_="range", style=style),
                             tag("span", class_="tick", style=f"left:{mean * 100:.1f}%"),
                             class_="bar", aria_hidden="true"))
    return join(parts)


def _mean(row: Row, name: str) -> float | None:
    est = row.metrics.get(name)
    return None if est is None else est.mean


def _metrictd(row: Row, name: str, *, ci: bool = False, bar: bool = False) -> Markup:
    est = row.metrics.get(name)
    if est is None or est.mean is None:
        return td("n/e" if name.startswith("chunk.") else "", None, "ne")
    if ci:
        return td(_interval(est, bar=bar), est.mean, "num")
    return td(fmt(est), est.mean, "num")


def flag_spans(flags: Iterable[str]) -> Markup:
    out = []
    for flag in flags:
        key = flag.split("=")[0]
        cls = "flag bad" if flag.startswith("!!") else "flag"
        out.append(tag("span", flag, class_=cls, title=FLAG_HELP.get(key)))
    return join(out, " ")


def headline_table(result: ResultFile, corpus: str, track: str) -> Markup:
    rows = rows_of(result, corpus, headline_only=False)
    if track == "chunk" and not any(r.metrics.get(CHUNK_RECALL) for r in rows):
        return tag("p", "Chunk metrics are not entered for any engine on this corpus (no "
                   "line spans, or no gold span): see the file track.", class_="note")
    tiers: dict[tuple[str, int], tiering.Tier] = {}
    stated = False
    for per_file in sorted({r.per_file for r in rows}):
        given = tiering.recorded(result, corpus, per_file, track)
        stated = stated or given is not None
        for engine, t in (given or tiering.derived(result, corpus, per_file, track)).items():
            tiers[(engine, per_file)] = t
    ks = [k for k in result.cutoffs if k != 10]
    head = [th("engine", "text", "name and mode (one-shot: a process per query)"),
            th("tier", "rank", "significance tier: see the note under the table"),
            *[th(f"@{k}", title=f"{track} recall at {k}") for k in ks[:1]],
            th("recall@10 [95% CI]", title=f"{track} recall at 10, bootstrap interval"),
            *[th(f"@{k}", title=f"{track} recall at {k}") for k in ks[1:]],
            th("hit@10"), th("MRR [95% CI]"), th("nDCG@10"),
            th("zero-miss", "rank", "share of queries with no gold item in the top 10")
            if track == "file" else None,
            th("tok@10", "rank", "tokens shown in the top 10 slots"),
            th("p50 / p95", "rank", "query latency: median / 95th percentile (sorts by p50)"),
            th("index", "rank", "index wall time"), th("flags", "text")]
    body = []
    for r in rows:
        p = f"{track}."
        tier = tiers.get((r.engine, r.per_file)) if r.headline else None
        index_text, _ = index_cells(r)
        cells = [
            td(join([tag("b", r.engine) if r.headline else esc(r.engine),
                      tag("span", "" if r.headline else f" per_file={r.per_file}",
                          class_="pf"),
                      tag("span", r.search.mode, class_="mode")]), None, "name",
               key=r.engine),
            td(tag("span", tier.label, class_=f"tier t{tier.order}") if tier else "",
                tier.order if tier else None, "num", tier.title if tier else None),
            *[_metrictd(r, f"{p}recall@{k}") for k in ks[:1]],
            _metrictd(r, f"{p}recall@10", ci=True, bar=True),
            *[_metrictd(r, f"{p}recall@{k}") for k in ks[1:]],
            _metrictd(r, f"{p}hit@10"), _metrictd(r, f"{p}mrr", ci=True),
            _metrictd(r, f"{p}ndcg@10"),
            _metrictd(r, "zero_miss") if track == "file" else None,
            td(tokens(r), _mean(r, "tokens@10"), "num"),
            td(" / ".join(secs(v) or "–" for v in (r.search.p50_s, r.search.p95_s)),
                r.search.p50_s, "num"),
            td(index_text, None if r.index.cached else r.index.wall_s, "num"),
            td(flag_spans(r.flags), None, "flags"),
        ]
        body.append(tag("tr", *[c for c in cells if c is not None],
                        class_=None if r.headline else "extra", data_engine=r.engine,
                        data_per_file=str(r.per_file)))
    metric = TIER_METRICS[track]
    how = (f"Tiers as the result file states them, on {metric}: engines sharing a letter "
           "are not significantly different (Holm-adjusted p ≥ 0.05)" if stated else
           f"No tiers: no paired comparison on {metric} here" if not tiers else
           f"T1: the best engine on {metric} and every engine a Holm-corrected paired test "
           "(p < 0.05) does not separate from it; the first engine it separates starts T2, "
           "and so on; no tier: not compared. Equal tiers are not a tie: the test may lack the "
           "queries to tell")
    table = tag("table", tag("thead", tag("tr", *[h for h in head if h is not None])),
                tag("tbody", *body), class_="sortable headline", data_track=track,
                data_corpus=corpus)
    note = tag("p", f"Recall: fraction of a query's gold items found; 95% bootstrap interval "
               f"in brackets and drawn to scale. {how}. Bold: headline pass (per_file "
               "1); other passes are shown with “every pass”.", class_="note")
    return join([tag("div", table, class_="scroll"), note])


def failures_block(result: ResultFile, corpus: str | None) -> Markup:
    """Failed combinations are gaps, not zeros: each with its stage, message, stderr tail."""
    failed = [f for f in result.failures if corpus is None or f.corpus == corpus]
    if not failed:
        return esc("")
    items = []
    for f in failed:
        tail = (tag("details", tag("summary", "stderr (last lines)"),
                    tag("pre", "\n".join(f.stderr_tail.splitlines()[-20:])))
                if f.stderr_tail else "")
        items.append(tag("li", tag("b", f"{f.engine} × {f.corpus}"), f" [{f.stage}]: ",
                         tag("span", f.message, class_="msg"), tail))
    return tag("div", tag("h4", "Failed combinations (gaps, not zeros)"),
               tag("ul", *items), class_="failures")


def parse_problems(rows: list[Row]) -> Markup:
    items = [tag("li", f"{r.engine} per_file={r.per_file}: {p}")
             for r in rows for p in r.parse_problems]
    items += [tag("li", f"{r.engine} per_file={r.per_file}: tree modified: {change}")
              for r in rows for change in r.tree_changes[:10]]
    items += [tag("li", f"{r.engine} per_file={r.per_file}: !! coverage: {coverage_gaps(r)}")
              for r in rows if r.coverage]
    return tag("ul", *items, class_="problems") if items else esc("")
