"""Render a comparison: one table per corpus, then the paired comparisons."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..results.schema import Estimate, ResultFile, Row

FLAG_HELP = {
    "!! no_spans": "results carry no line spans although the spec says spans: true -- "
                   "fix the adapter's span fields",
    "!! depth": "raw results reached n but filled fewer file slots than the cutoff -- "
                "the tool was asked for too few results; raise `candidates`",
    "!! line_base": "results at line 0 although the spec says line_base 1 -- the tool counts "
                    "from zero: set line_base: 0",
    "*": "tokens priced by reading the reported lines from the corpus (text_from_corpus)",
    "chunk_not_entered": "no spans, or no gold span: graded at file granularity only",
    "errors": "queries that failed (crash, timeout, unreadable output); scored as misses",
    "outside": "results pointing outside the tree, dropped and never read",
    "undecodable": "bytes of output that were not UTF-8, replaced before parsing",
    "leftovers": "processes the engine left running after a query, killed and reaped",
}


def fmt(est: Estimate | None, digits: int = 2, ci: bool = False) -> str:
    if est is None or est.mean is None:
        return ""
    text = f"{est.mean:.{digits}f}"
    if ci and est.lo is not None and est.hi is not None:
        text += f" [{est.lo:.{digits}f},{est.hi:.{digits}f}]"
    return text


def secs(value: float | None, sep: str = "") -> str:
    """Milliseconds under a second, else seconds: `61ms` (terminal) or `61 ms` (sep=" ")."""
    if value is None:
        return ""
    return f"{value * 1000:.0f}{sep}ms" if value < 1 else f"{value:.1f}{sep}s"


def mib(value: int | None, unit: str = "M") -> str:
    return "" if value is None else f"{value / 2**20:.0f}{unit}"


def index_cells(row: Row, sep: str = "", unit: str = "M") -> tuple[str, str]:
    if row.index.cached:
        return "cached", "cached"
    if row.index.command is None:
        return "none", ""
    return (secs(row.index.wall_s, sep) or "-"), (mib(row.index.peak_rss_bytes, unit) or "-")


def corpus_table(result: ResultFile, corpus: str) -> Table:
    rows = [r for r in result.rows if r.corpus == corpus]
    info = result.corpora.get(corpus)
    title = escape(corpus)
    if info:
        title = f"{escape(corpus)}: {info.files} files ({info.tier}), {info.queries} queries"
    table = Table(title=title, title_justify="left")
    cols = ["engine", "per_file", "files/chunks", "index", "index RSS", "p50", "p95",
            "search RSS", "tok@10"]
    cols += [f"file@{k}" for k in result.cutoffs] + [f"chunk@{k}" for k in result.cutoffs]
    cols += ["MRR", "zero-miss", "flags"]
    for c in cols:
        table.add_column(c, overflow="fold", no_wrap=c in ("engine",))
    for r in rows:
        m = r.metrics
        idx_time, idx_rss = index_cells(r)
        fc = "/".join(str(v) if v is not None else "-" for v in (r.index.files, r.index.chunks))
        tok = fmt(m.get("tokens@10"), 0) + ("*" if r.token_column == "corpus" else "")
        cells = [escape(r.engine), str(r.per_file), fc if fc != "-/-" else "", idx_time, idx_rss,
                 secs(r.search.p50_s), secs(r.search.p95_s), mib(r.search.peak_rss_bytes),
                 tok]
        cells += [fmt(m.get(f"file.recall@{k}"), ci=k == 10) for k in result.cutoffs]
        cells += [fmt(m.get(f"chunk.recall@{k}"), ci=k == 10) or "n/e" for k in result.cutoffs]
        cells += [fmt(m.get("file.mrr"), ci=True), fmt(m.get("zero_miss")),
                  escape(" ".join(r.flags))]
        table.add_row(*cells, style=None if r.headline else "dim")
    return table


def render_compare(console: Console, result: ResultFile) -> None:
    for corpus, info in result.corpora.items():
        console.print(f"tree={escape(info.tree)}  pin={escape(info.pin)}")
        console.print(corpus_table(result, corpus))
        comps = [c for c in result.comparisons if c.corpus == corpus]
        if comps:
            ct = Table(title=f"{escape(corpus)}: paired comparisons (Holm-corrected across pairs)",
                       title_justify="left")
            for column in ("metric", "A", "B", "n", "A - B [95% CI]", "test", "p", "p (Holm)"):
                ct.add_column(column)
            for c in comps:
                delta = "" if c.delta is None else f"{c.delta:+.3f}"
                if c.lo is not None and c.hi is not None:
                    delta += f" [{c.lo:+.3f},{c.hi:+.3f}]"
                sig = c.p_adjusted is not None and c.p_adjusted < 0.05
                ct.add_row(c.metric, escape(c.engine_a), escape(c.engine_b), str(c.n), delta,
                           c.test, _pval(c.p), _pval(c.p_adjusted) + (" *" if sig else ""))
            console.print(ct)
    used = {f.split("=")[0] for r in result.rows for f in r.flags}
    for flag in sorted(used):
        if flag in FLAG_HELP:
            console.print(f"[dim]{escape(flag)}: {FLAG_HELP[flag]}[/]")
    if result.rows:
        console.print("[dim]file@k / chunk@k: recall at cutoff k (mean, 95% bootstrap CI at "
                      "k=10); n/e: not entered; dim rows: extra per_file passes[/]")
    if result.failures:
        console.print("[bold red]failed combinations[/] (gaps, not zeros):")
        for f in result.failures:
            console.print(f"  {escape(f.engine)} × {escape(f.corpus)} [{f.stage}]: "
                          f"{escape(f.message)}", soft_wrap=True)
            if f.stderr_tail:
                for line in f.stderr_tail.splitlines()[-5:]:
                    console.print(f"    [dim]{escape(line)}[/]", soft_wrap=True)
    if result.interrupted:
        console.print("[bold red]interrupted[/]: partial results only")


def _pval(p: float | None) -> str:
    if p is None:
        return ""
    return "<0.001" if p < 0.001 else f"{p:.3f}"
