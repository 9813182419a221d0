"""The paired comparisons of a corpus: corrected p, the paired difference with its
interval, the failed queries on each side, and — when the result records them — the
minimum detectable difference and the queries that differ.

A result written before comparisons had an MDD or a count of differing queries
(results/upgrade.py leaves them None) shows no such column; a field of a comparison
this page does not name still gets a column of its own.
"""

from __future__ import annotations

from ...results.schema import ResultFile
from ...results.statistics import ComparisonOut
from ..formats import delta, pvalue, significant
from . import tiers as tiering
from .markup import Markup, esc, join, tag
from .tables import td, th

#: fields with a column of their own, or folded into another's
_SHOWN = {"corpus", "per_file", "metric", "engine_a", "engine_b", "n", "delta", "lo", "hi",
          "p", "p_adjusted", "test", "mdd", "mdd_alpha", "failed_a", "failed_b",
          "failed_either", "differing", "exact", "group"}


def _value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(_value(v) for v in value)
    return str(value)


def _test(c: ComparisonOut) -> str:
    return c.test + ("" if c.exact is None else " (exact)" if c.exact else " (Monte Carlo)")


def comparisons_table(result: ResultFile, corpus: str) -> Markup:
    comps = [c for c in result.comparisons if c.corpus == corpus]
    if not comps:
        engines = {r.engine for r in result.rows if r.corpus == corpus and r.headline}
        why = ("fewer than two engines have rows here" if len(engines) < 2 else
               f"none was recorded although {len(engines)} engines have rows here")
        return tag("p", f"No paired comparisons: {why}.", class_="note")
    extras = sorted({name for c in comps for name in type(c).model_fields} - _SHOWN)
    has_mdd = any(c.mdd not in (None, 0) for c in comps)
    has_group = any(c.group is not None for c in comps)
    has_differing = any(c.differing is not None for c in comps)
    head = [th("per_file"), th("group", "text", "the queries compared: all, or a split or "
                                "tag") if has_group else None,
            th("metric", "text"), th("A − B", "text"),
            th("difference [95% CI]", title="mean paired difference A − B over the queries"),
            th("p", "rank"), th("p (Holm)", "rank", "corrected across the corpus's pairs"),
            th("MDD", "rank", "minimum detectable difference: the smallest true difference "
               "this test finds with 80% power at the Holm level") if has_mdd else None,
            th("n"),
            th("failed A / B", "text", "of the n queries, those each engine failed (scored "
               "as misses)"),
            th("differing", title="queries whose two values differ") if has_differing
            else None,
            th("test", "text"), *[th(name, "text") for name in extras]]
    body = []
    for c in comps:
        mdd, alpha = c.mdd, c.mdd_alpha
        mark = tag("span", " ★", class_="star", title="significant after Holm correction "
                   "(p < 0.05)") if significant(c) else ""
        cells = [td(c.per_file, c.per_file, "num"),
                 td(c.group or "all") if has_group else None,
                 td(c.metric), td(f"{c.engine_a} − {c.engine_b}"),
                 td(delta(c, ", "), c.delta, "num"), td(pvalue(c.p), c.p, "num"),
                 td(join([esc(pvalue(c.p_adjusted)), esc(mark)]), c.p_adjusted, "num"),
                 td(_value(mdd) or "—", mdd, "num",
                    f"at level {alpha:.4g}" if alpha is not None else
                    "no difference up to 1 would be found" if mdd is None else None)
                 if has_mdd else None,
                 td(c.n, c.n, "num"),
                 td(f"{c.failed_a} / {c.failed_b}", None, "num"),
                 td(_value(c.differing), c.differing, "num") if has_differing else None,
                 td(_test(c)), *[td(_value(getattr(c, name, None))) for name in extras]]
        body.append(tag("tr", *[x for x in cells if x is not None],
                        class_="sig" if significant(c) else None))
    table = tag("table", tag("thead", tag("tr", *[h for h in head if h is not None])),
                tag("tbody", *body), class_="sortable paired")
    note = ("Paired over the same queries: exact McNemar for hit@10, a paired test for MRR, "
            "Holm-corrected across the corpus's pairs; ★ p < 0.05 after correction.")
    if has_mdd:
        note += (" A difference smaller than the MDD that is not significant says these "
                 "queries cannot tell, not that the engines are equal.")
    return join([tag("div", table, class_="scroll"), tag("p", note, class_="note"),
                 _grouped_tiers(result, corpus)])


def _grouped_tiers(result: ResultFile, corpus: str) -> Markup:
    groups = tiering.grouped(result, corpus)
    if not groups:
        return esc("")
    rows = [tag("tr", td(group), td(metric), td(per_file, per_file, "num"),
                td(", ".join(cells))) for group, metric, per_file, cells in groups]
    return join([tag("h4", "Tiers on subsets of the queries"),
                 tag("table", tag("thead", tag("tr", th("group", "text"), th("metric", "text"),
                                              th("per_file"), th("engines and letters", "text"))),
                     tag("tbody", *rows), class_="sortable")])
