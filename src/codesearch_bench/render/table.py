"""The terminal view of a comparison: per corpus a headline table, the paired comparisons,
then what the flags mean and what failed.

The default headline table fits 100 columns (80 with the flags folded): one row
per engine at its headline per_file setting, recall at 10 with the larger side
of its interval. `--wide` shows every per_file pass and every cutoff. When
stdout is not a terminal (a pipe, a CI log) the same tables print as plain
Markdown-style pipe tables, which never wrap a number.
"""

from __future__ import annotations

import textwrap

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..protocol import FILE_MRR, SUMMARY_METRICS, TIER_METRIC
from ..results.schema import ResultFile, Row
from ..results.statistics import ComparisonOut, Summary
from ..scoring.verdict import sentences, verdict
from .formats import (
    FLAG_HELP,
    HEADLINE,
    coverage_gaps,
    delta,
    flags_used,
    fmt,
    headline,
    index_cells,
    mib,
    n_cell,
    pvalue,
    rows_of,
    secs,
    significant,
    summaries,
    tier_letters,
    tokens,
)
from .tracks import TAU_NOTE, agreement_table, validity_lines

_NUMERIC = {"file@10", "chunk@10", "MRR", "tok@10", "p50", "index", "MDD", "τ file MRR"}
PAIRED = ("metric", "A − B", "difference [95% CI]", "p (Holm)", "MDD", "n")


def _wide_head(result: ResultFile) -> list[str]:
    cols = ["engine", "per_file", "files/chunks", "index", "index RSS", "p50", "p95",
            "search RSS", "tok@10"]
    cols += [f"file@{k}" for k in result.cutoffs] + [f"chunk@{k}" for k in result.cutoffs]
    return [*cols, "MRR", "zero-miss", "flags"]


def _wide(result: ResultFile, r: Row) -> list[str]:
    m = r.metrics
    idx_time, idx_rss = index_cells(r)
    fc = "/".join(str(v) if v is not None else "-" for v in (r.index.files, r.index.chunks))
    cells = [r.engine, str(r.per_file), fc if fc != "-/-" else "", idx_time, idx_rss,
             secs(r.search.p50_s), secs(r.search.p95_s), mib(r.search.peak_rss_bytes),
             tokens(r)]
    cells += [fmt(m.get(f"file.recall@{k}"), ci=k == 10) for k in result.cutoffs]
    cells += [fmt(m.get(f"chunk.recall@{k}"), ci=k == 10) or "n/e" for k in result.cutoffs]
    return [*cells, fmt(m.get(FILE_MRR), ci=True), fmt(m.get("zero_miss")), " ".join(r.flags)]


def _paired(c: ComparisonOut) -> list[str]:
    mark = " *" if significant(c) else ""
    mdd = "" if c.mdd is None else f"{c.mdd:.2f}"
    return [c.metric, f"{c.engine_a} − {c.engine_b}", delta(c), pvalue(c.p_adjusted) + mark,
            mdd, n_cell(c)]


def _pipe(head: list[str] | tuple[str, ...], rows: list[list[str]]) -> str:
    def line(cells: list[str] | tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"
    return "\n".join([line(head), "|" + "---|" * len(head), *(line(r) for r in rows)])


def _rich(title: str, head: list[str] | tuple[str, ...], rows: list[list[str]],
          dim: list[bool] | None = None) -> Table:
    # One space between columns (the box's own divider) and none at the edges: the
    # headline table then needs 80 columns for names up to 16 characters.
    table = Table(title=escape(title), title_justify="left", box=box.SIMPLE_HEAD,
                  padding=(0, 0), show_edge=False)
    for i, name in enumerate(head):
        numeric = name in _NUMERIC or "@" in name
        # A number is never cut: its column is as wide as its widest cell; names and
        # flags fold instead when the terminal is narrow.
        whole = numeric or name == "mode"
        widest = max([len(name), *(len(r[i]) for r in rows)]) if whole else None
        table.add_column(name, justify="right" if numeric else "left", no_wrap=whole,
                         min_width=widest, overflow="fold")
    for i, cells in enumerate(rows):
        table.add_row(*(escape(c) for c in cells),
                      style="dim" if dim is not None and dim[i] else None)
    return table


def render_compare(console: Console, result: ResultFile, *, wide: bool = False) -> None:
    plain = not console.is_terminal
    for corpus, info in result.corpora.items():
        title = f"{corpus}: {info.files} files ({info.tier}), {info.queries} queries"
        rows = rows_of(result, corpus, headline_only=not wide)
        head: list[str] | tuple[str, ...] = _wide_head(result) if wide else HEADLINE
        tiers = tier_letters(result, corpus)
        cells = [_wide(result, r) if wide else headline(r, tiers.get((r.engine, r.per_file), ""))
                 for r in rows]
        pairs = [c for c in result.comparisons if c.corpus == corpus]
        if not rows and not pairs:
            # A corpus no cell finished on (a run stopped before it, every engine failed
            # there): an empty table says nothing the failures and the last line do not.
            continue
        if plain:
            text = f"### {title}\n\ntree={info.tree}  pin={info.pin}\n\n"
            text += _pipe(head, cells) if rows else "_no rows_"
            if pairs:
                text += "\n\npaired comparisons (Holm-corrected across pairs; * p < 0.05):\n\n"
                text += _pipe(PAIRED, [_paired(c) for c in pairs])
            console.print(text + "\n", markup=False, highlight=False, soft_wrap=True)
            continue
        console.print()
        console.print(f"tree={info.tree}  pin={info.pin}", markup=False, highlight=False,
                      soft_wrap=True)
        console.print(_rich(title, head, cells, [not r.headline for r in rows]))
        if pairs:
            console.print()
            console.print(_rich(f"{corpus}: paired comparisons (Holm-corrected; * p < 0.05)",
                                PAIRED, [_paired(c) for c in pairs]))
    _summary(console, result, plain=plain)
    _tracks(console, result, plain=plain)
    _verdict(console, result, plain=plain)
    _legend(console, result, wide=wide, plain=plain)


def summary_title(summary: Summary, result: ResultFile) -> str:
    """"across 8 corpora", with the track named when it is not the only one or not questions."""
    named = len(summaries(result)) > 1 or summary.track != "questions"
    return f"across {len(summary.corpora)} corpora" + (f", {summary.track} track" if named
                                                        else "")


def summary_tables(result: ResultFile, summary: Summary | None = None
                   ) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """A suite summary (the result's main one by default) as (head, macro rows, pair rows):
    macro means with their stratified intervals per engine, then wins/ties/losses per pair,
    on SUMMARY_METRICS."""
    summary = summary if summary is not None else result.summary
    head = ["engine", *SUMMARY_METRICS, "corpora"]
    if summary is None:
        return head, [], []
    means = {(m.engine, m.metric): m for m in summary.macro}
    macro = []
    for engine in result.engines:
        found = [means.get((engine, metric)) for metric in SUMMARY_METRICS]
        if not any(found):
            continue
        cells = [engine]
        for m in found:
            cells.append("" if m is None or m.mean is None else
                         f"{m.mean:.2f} [{m.lo:.2f},{m.hi:.2f}]" if m.lo is not None
                         and m.hi is not None else f"{m.mean:.2f}")
        cells.append(str(max((len(m.corpora) for m in found if m), default=0)))
        macro.append(cells)
    pairs = [[p.metric, f"{p.engine_a} − {p.engine_b}", f"{p.wins}/{p.ties}/{p.losses}"]
             for p in summary.pairs if p.metric in SUMMARY_METRICS]
    return head, macro, pairs


def _summary(console: Console, result: ResultFile, *, plain: bool) -> None:
    for summary in summaries(result):
        _one_summary(console, result, summary, plain=plain)


def _one_summary(console: Console, result: ResultFile, summary: Summary, *,
                 plain: bool) -> None:
    head, macro, pairs = summary_tables(result, summary)
    if not macro:
        return
    title = (f"{summary_title(summary, result)}: mean of per-corpus means, 95% interval "
             "resampling queries within each corpus")
    pair_head = ["metric", "A − B", "won/tied/lost"]
    if plain:
        console.print(f"### {title}\n\n{_pipe(head, macro)}\n\n{_pipe(pair_head, pairs)}\n",
                      markup=False, highlight=False, soft_wrap=True)
        return
    console.print()
    console.print(_rich(title, head, macro))
    if pairs:
        console.print()
        console.print(_rich("corpora won, tied, lost (significant after Holm on each corpus)",
                            pair_head, pairs))


def _tracks(console: Console, result: ResultFile, *, plain: bool) -> None:
    """The generated tracks' validity and their agreement with the questions, in 80
    columns whatever the terminal's width."""
    width = min(80, console.width)
    lines = validity_lines(result, width)
    title, head, rows = agreement_table(result)
    if not lines and not rows:
        return
    if plain:
        blocks = ["\n".join(lines)] if lines else []
        if rows:
            blocks.append(f"{title}:\n\n{_pipe(head, rows)}")
        console.print("\n\n".join(blocks) + "\n", markup=False, highlight=False,
                      soft_wrap=True)
    else:
        console.print()
        for line in lines:
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        if rows:
            # The title on its own line: a table's title wraps at the table's width.
            console.print()
            console.print(title, markup=False, highlight=False, soft_wrap=True)
            console.print(_rich("", head, rows), width=width)
    if rows:
        for line in textwrap.wrap(TAU_NOTE, width=width):
            console.print(line if plain else f"[dim]{escape(line)}[/]", markup=not plain,
                          highlight=False, soft_wrap=True)


def _verdict(console: Console, result: ResultFile, *, plain: bool) -> None:
    """The verdict in words, in 80 columns whatever the terminal's width."""
    lines = sentences(verdict(result))
    if not lines:
        return
    width = min(80, console.width)
    console.print()
    console.print("verdict (significant after Holm on each corpus):" if plain else
                  "[bold]verdict[/] (significant after Holm on each corpus):",
                  markup=not plain, highlight=False)
    for line in lines:
        for i, piece in enumerate(textwrap.wrap(line, width=width - 2)):
            console.print(("- " if i == 0 else "  ") + piece, markup=False, highlight=False,
                          soft_wrap=True)


def _legend(console: Console, result: ResultFile, *, wide: bool, plain: bool) -> None:
    def say(text: str) -> None:
        console.print(text if plain else f"[dim]{escape(text)}[/]", markup=not plain,
                      highlight=False, soft_wrap=plain)

    for flag in flags_used(result.rows):
        say(f"{flag}: {FLAG_HELP[flag]}")
    by_reason: dict[str, list[str]] = {}
    for g in result.gaps:
        by_reason.setdefault(g.reason, []).append(f"{g.engine} × {g.corpus}")
    for reason, found in by_reason.items():
        more = f" and {len(found) - 12} more" if len(found) > 12 else ""
        say(f"not covered (a gap, not a zero: {reason}): {', '.join(found[:12])}{more}")
    if result.tiers and not wide:
        say(f"tier: engines sharing a letter are not significantly different on {TIER_METRIC} "
            "(Holm-adjusted p >= 0.05)")
    if result.comparisons:
        say("MDD: the smallest difference each paired test had 80% power to detect at its "
            "Holm level; a pair that is not significant could not detect a difference "
            "smaller than that")
    if result.rows:
        if wide:
            say("file@k / chunk@k: recall at cutoff k (mean, 95% bootstrap CI at k=10); "
                "n/e: not entered; dim rows: extra per_file passes")
        else:
            say("file@10 / chunk@10: recall at 10, ± the larger side of its 95% bootstrap "
                "interval; n/e: not entered; headline per_file only (--wide: every pass and "
                "cutoff)")
    for r in result.rows:
        if r.headline and r.parse_problems:
            for problem in r.parse_problems:
                console.print(f"!! parse: {r.engine} × {r.corpus}: {problem}", markup=False,
                              highlight=False, soft_wrap=True,
                              style=None if plain else "bold red")
        if r.headline and r.coverage:
            console.print(f"!! coverage: {r.engine} × {r.corpus}: {coverage_gaps(r)}",
                          markup=False, highlight=False, soft_wrap=True,
                          style=None if plain else "bold red")
    if result.failures:
        console.print("failed combinations (gaps, not zeros):" if plain else
                      "[bold red]failed combinations[/] (gaps, not zeros):", highlight=False)
        for f in result.failures:
            message = f.message.replace("\n", "\n    ")  # its own further lines under it
            console.print(f"  {f.engine} × {f.corpus} [{f.stage}]: {message}", markup=False,
                          highlight=False, soft_wrap=True)
            for line in (f.stderr_tail or "").splitlines()[-5:]:
                console.print(f"    {line}", markup=False, highlight=False, soft_wrap=True,
                              style=None if plain else "dim")
    if result.interrupted:
        unseen = [c for c in result.corpora if not any(r.corpus == c for r in result.rows)]
        console.print("interrupted: partial results only" + (
            f"; no rows for {', '.join(unseen)}" if unseen else ""), markup=False,
            highlight=False, soft_wrap=True)
