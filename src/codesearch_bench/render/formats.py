"""The words and numbers every view prints: formatted values, row order, flag help.

The terminal table, the piped table and the Markdown report all build their
cells here, so a number reads the same wherever it is shown.
"""

from __future__ import annotations

from ..protocol import CHUNK_RECALL, FILE_MRR, FILE_RECALL, TIER_METRIC
from ..results.schema import Estimate, ResultFile, Row
from ..results.statistics import ComparisonOut, Summary

FLAG_HELP = {
    "!! no_spans": "results carry no line spans although the spec says spans: true -- "
                   "fix the adapter's span fields",
    "!! depth": "raw results reached n but filled fewer file slots than the cutoff -- "
                "the tool was asked for too few results; raise `candidates`",
    "!! line_base": "results at line 0 although the spec says line_base 1 -- the tool counts "
                    "from zero: set line_base: 0",
    "!! tree_modified": "the engine changed files of its candidate tree (see tree_changes in "
                        "the JSON); its answers may rest on other files than the pin's, and "
                        "the tree was rebuilt for the next engine",
    "!! unsolicited": "a persistent engine printed lines that answered no request (or another "
                      "one); bench discarded them, but an engine that echoes no request id "
                      "may have had answers credited to the next query: echo `id`",
    "!! parse": "a parse path matched nothing in any answer (see parse_problems in the JSON, "
                "or run `bench probe`): the zeros may be the spec's, not the tool's",
    "!! records": "records of the engine's answers could not be read (a line that is no "
                  "number, a non-finite score, a path with a control character) and were "
                  "dropped; the query was scored on what was left: run `bench probe` on it "
                  "for the reasons, and fix the adapter",
    "!! coverage": "the engine never returned a file of an extension that holds gold for "
                   "5% of the queries or 3 (which, and for how many, is said with the row and "
                   "in `coverage` in the JSON): the tool leaves such files out of its index, "
                   "so its misses there are not ranking -- map the extension in the adapter",
    "!! empty": "every query was answered with no results at all: a wrong parse path, an "
                "empty index or a dead tool, not a measurement",
    "*": "tokens priced by reading the reported lines from the corpus (text_from_corpus)",
    "chunk_not_entered": "no spans, or no gold span: graded at file granularity only",
    "content_graded": "answers are text with no paths: an item counts when it contains a "
                      "gold span's text (partial_ratio >= content_threshold); the chunk column "
                      "shows content recall@10 (c ...), a single blob only its hit@1",
    "hosts≠": "rows of this corpus were measured on different machines (merged shards): "
               "compare their quality, not their latency or memory",
    "concurrent": "measured while other cells ran (compare --jobs; N: the most cells at once, "
                  "this one included): its quality stands, but its latency, index time and "
                  "memory are not comparable with rows measured alone",
    "content_not_entered": "no query had gold with a span: text answers cannot be graded",
    "errors": "queries that failed (crash, timeout, unreadable output); scored as misses",
    "outside": "results pointing outside the tree, dropped and never read",
    "undecodable": "bytes of output that were not UTF-8, replaced before parsing",
    "leftovers": "processes the engine left running after a query, killed and reaped",
}

#: The compact headline table: what fits 100 columns.
HEADLINE = ("engine", "tier", "mode", "file@10", "chunk@10", "MRR", "tok@10", "p50", "index",
            "flags")


def fmt(est: Estimate | None, digits: int = 2, ci: bool = False) -> str:
    if est is None or est.mean is None:
        return ""
    text = f"{est.mean:.{digits}f}"
    if ci and est.lo is not None and est.hi is not None:
        text += f" [{est.lo:.{digits}f},{est.hi:.{digits}f}]"
    return text


def plus_minus(est: Estimate | None) -> str:
    """`0.95 ±0.06`: the mean and the larger side of its 95% interval (intervals are skewed
    near 0 and 1, so the larger side is the honest one-number width)."""
    if est is None or est.mean is None:
        return ""
    if est.lo is None or est.hi is None:
        return f"{est.mean:.2f}"
    return f"{est.mean:.2f} ±{max(est.mean - est.lo, est.hi - est.mean):.2f}"


def secs(value: float | None, sep: str = "") -> str:
    """Milliseconds under a second, else seconds: `61ms` (terminal) or `61 ms` (sep=" ")."""
    if value is None:
        return ""
    if value < 0.01:
        return f"{value * 1000:.1f}{sep}ms"  # a persistent engine answers in a fraction of one
    return f"{value * 1000:.0f}{sep}ms" if value < 1 else f"{value:.1f}{sep}s"


def mib(value: int | None, unit: str = "M") -> str:
    return "" if value is None else f"{value / 2**20:.0f}{unit}"


def index_cells(row: Row, sep: str = "", unit: str = "M") -> tuple[str, str]:
    if row.index.cached:
        return "cached", "cached"
    if row.index.command is None:
        return "none", ""
    return (secs(row.index.wall_s, sep) or "-"), (mib(row.index.peak_rss_bytes, unit) or "-")


def tokens(row: Row, star: str = "*") -> str:
    return fmt(row.metrics.get("tokens@10"), 0) + (star if row.token_column == "corpus" else "")


def rows_of(result: ResultFile, corpus: str, *, headline_only: bool) -> list[Row]:
    """A corpus's rows in the order the engines were given, then by per_file setting."""
    rank = {name: i for i, name in enumerate(result.engines)}
    rows = [r for r in result.rows if r.corpus == corpus and (r.headline or not headline_only)]
    return sorted(rows, key=lambda r: (rank.get(r.engine, len(rank)), not r.headline,
                                       r.per_file))


def tier_letters(result: ResultFile, corpus: str, metric: str = TIER_METRIC,
                 ) -> dict[tuple[str, int], str]:
    """(engine, per_file) -> its letters in the significance tiers of corpus on metric."""
    out: dict[tuple[str, int], str] = {}
    for group in result.tiers:
        if group.corpus == corpus and group.metric == metric and group.group is None:
            for entry in group.engines:
                out[(entry.engine, group.per_file)] = entry.letters
    return out


def summaries(result: ResultFile) -> list[Summary]:
    """One summary per track, the main one (`summary`, which stands for its track) first."""
    main = result.summary
    rest = [s for s in result.summaries if main is None or s.track != main.track]
    return ([main] if main is not None else []) + rest


def headline(row: Row, tier: str = "") -> list[str]:
    """The cells of HEADLINE for one row (plain text, unescaped)."""
    m = row.metrics
    index, _ = index_cells(row)
    chunk = plus_minus(m.get(CHUNK_RECALL)) or "n/e"
    file, mrr = plus_minus(m.get(FILE_RECALL)), fmt(m.get(FILE_MRR))
    if row.content_threshold is not None:
        # No paths to grade: the chunk column shows content recall (a blob: its hit@1).
        file = "n/e"
        chunk = "c " + (plus_minus(m.get("content.recall@10")) or
                        plus_minus(m.get("content.hit@1")) or "n/e")
        mrr = fmt(m.get("content.mrr")) or "n/e"
    mode = "persistent" if row.search.mode == "persistent" else "oneshot"
    return [row.engine, tier, mode, file, chunk, mrr, tokens(row), secs(row.search.p50_s),
            index, " ".join(row.flags)]


def detectable(c: ComparisonOut) -> str:
    """What a comparison could see: significant, or the smallest difference it could detect."""
    if significant(c):
        return "significant"
    if c.mdd is None:
        return "could detect no difference (too few queries)"
    return f"could not detect a difference smaller than {c.mdd:.2f}"


def n_cell(c: ComparisonOut) -> str:
    return f"{c.n} ({c.failed_either} failed)" if c.failed_either else str(c.n)


def pvalue(p: float | None) -> str:
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def delta(c: ComparisonOut, sep: str = ",") -> str:
    text = "" if c.delta is None else f"{c.delta:+.3f}"
    if c.lo is not None and c.hi is not None:
        text += f" [{c.lo:+.3f}{sep}{c.hi:+.3f}]"
    return text


def significant(c: ComparisonOut) -> bool:
    return c.p_adjusted is not None and c.p_adjusted < 0.05


def flags_used(rows: list[Row]) -> list[str]:
    return sorted({f.split("=")[0] for r in rows for f in r.flags} & set(FLAG_HELP))


def coverage_gaps(row: Row) -> str:
    """`never returned a .tsx file, where 30 queries (12%) have gold`, each gap of a row."""
    return "; ".join(f"never returned a {g.extension} file, where {g.queries} "
                     f"quer{'y' if g.queries == 1 else 'ies'} ({_percent(g.share)}) have gold"
                     for g in row.coverage)


def _percent(share: float) -> str:
    return f"{share:.0%}" if share >= 0.01 else f"{share:.1%}"  # 3 of 1,000: 0.3%, not 0%
