"""The terminal view of a comparison: per corpus where its tree came from, a headline table
and the paired comparisons; then the summary across corpora, the tracks, the verdict and
what the flags mean (render/notes.py).

The default headline table fits 80 columns: one row per engine at its headline per_file
setting, recall at 10 with the larger side of its interval. `--wide` fits 120: every
per_file pass a row (rank, latency, memory), every pass and cutoff a row (recall), and
the index once per engine, so no table grows wider with more passes or cutoffs.

Every table is laid out for the console's width: a number is never cut (its column is as
wide as its widest cell); an engine's name is never cut either but shown by its short
form when its column has too little room (render/fit.py has the rule); the flags fold,
or, when they would squeeze the names, are listed under the table. When stdout is not a
terminal (a pipe, a CI log) the same tables print in plain ASCII with no styles.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..protocol import FILE_MRR, SUMMARY_METRICS
from ..results.schema import ResultFile, Row
from ..results.statistics import ComparisonOut, Summary
from . import notes
from .fit import short_names, where_lines
from .formats import (
    HEADLINE,
    delta,
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

Name = Callable[[str], str]

_NUMERIC = {"file@10", "chunk@10", "MRR", "tok@10", "p50", "p95", "index", "index RSS",
            "search RSS", "MDD", "τ file MRR", "k", "files/chunks"}
#: the only columns whose cells may fold: text of any length (a name pair folds at " − ")
_FOLD = ("flags", "A − B", "corpus")
#: columns that hold an engine's name (whole, or a pair of them)
_NAMES = ("engine", "A − B")
PAIRED = ("metric", "A − B", "difference [95% CI]", "p (Holm)", "MDD", "n")
PASSES = ("engine", "per_file", "MRR", "zero-miss", "tok@10", "p50", "p95", "search RSS",
          "flags")
CUTOFFS = ("engine", "per_file", "k", "file@k", "chunk@k")
INDEX = ("engine", "files/chunks", "index", "index RSS")

# SIMPLE_HEAD drawn in ASCII, for a console that is not a terminal.
_PLAIN_HEAD = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)


@dataclass(frozen=True)
class Block:
    """One table before it is drawn: plain-text cells, names as the caller gave them."""

    title: str
    head: tuple[str, ...]
    rows: list[list[str]]
    dim: list[bool] | None = None
    # the row each flags cell belongs to, said when the flags are listed under the table
    labels: tuple[str, ...] = ()


def _need(block: Block, i: int) -> int:
    """What column i needs: its widest cell, or a folding column its longest word."""
    cells = [block.head[i], *(row[i] for row in block.rows)]
    if block.head[i] in _FOLD:
        return max(len(word) for cell in cells for word in [*cell.split(), ""])
    return max(len(cell) for cell in cells)


def _room(block: Block, width: int) -> int:
    """The room the block's name column has at width, every other column at its need
    (one space between columns)."""
    col = next((i for i, name in enumerate(block.head) if name in _NAMES), None)
    if col is None:
        return width
    used = sum(_need(block, i) for i in range(len(block.head)) if i != col)
    return width - used - (len(block.head) - 1)


def _widest_name(block: Block) -> int:
    col = next((i for i, name in enumerate(block.head) if name in _NAMES), None)
    if col is None:
        return 0
    return max((len(part) for row in block.rows for part in row[col].split(" − ")), default=0)


def _without_flags(block: Block) -> Block:
    if "flags" not in block.head:
        return block
    i = block.head.index("flags")
    return Block(block.title, block.head[:i] + block.head[i + 1:],
                 [row[:i] + row[i + 1:] for row in block.rows], block.dim, block.labels)


def _flags_beside(block: Block, width: int) -> bool:
    """The flags stay in their column while every name shown still fits beside it."""
    return "flags" in block.head and _widest_name(block) <= _room(block, width)


def name_room(blocks: list[Block], width: int) -> int:
    """The room every name has in these tables at width: the least of their name columns'
    rooms, a table's flags moved out of it when the names would not fit beside them."""
    rooms = [_room(b if _flags_beside(b, width) else _without_flags(b), width) for b in blocks]
    return min(rooms, default=width)


# -- the tables' cells


def _wide_cells(r: Row, name: Name) -> list[str]:
    m = r.metrics
    return [name(r.engine), str(r.per_file), fmt(m.get(FILE_MRR), ci=True),
            fmt(m.get("zero_miss")), tokens(r), secs(r.search.p50_s), secs(r.search.p95_s),
            mib(r.search.peak_rss_bytes), " ".join(r.flags)]


def _cutoff_cells(result: ResultFile, r: Row, name: Name) -> list[list[str]]:
    m = r.metrics
    return [[name(r.engine), str(r.per_file), str(k), fmt(m.get(f"file.recall@{k}"), ci=True),
             fmt(m.get(f"chunk.recall@{k}"), ci=True) or "n/e"] for k in result.cutoffs]


def _index_cells(r: Row, name: Name) -> list[str]:
    idx_time, idx_rss = index_cells(r)
    fc = "/".join(str(v) if v is not None else "-" for v in (r.index.files, r.index.chunks))
    return [name(r.engine), fc if fc != "-/-" else "", idx_time, idx_rss]


def _paired(c: ComparisonOut, name: Name) -> list[str]:
    mark = " *" if significant(c) else ""
    mdd = "" if c.mdd is None else f"{c.mdd:.2f}"
    return [c.metric, f"{name(c.engine_a)} − {name(c.engine_b)}", delta(c),
            pvalue(c.p_adjusted) + mark, mdd, n_cell(c)]


def _label(r: Row, name: Name, wide: bool) -> str:
    return f"{name(r.engine)} (per_file {r.per_file})" if wide else name(r.engine)


def corpus_blocks(result: ResultFile, corpus: str, *, wide: bool, name: Name) -> list[Block]:
    """A corpus's tables: the headline table (--wide: passes, cutoffs and index), then its
    paired comparisons; none for a corpus with no rows."""
    info = result.corpora[corpus]
    title = f"{corpus}: {info.files} files ({info.tier}), {info.queries} queries"
    rows = rows_of(result, corpus, headline_only=not wide)
    labels = tuple(_label(r, name, wide) for r in rows)
    dim = [not r.headline for r in rows]
    if not rows:
        blocks = []
    elif wide:
        blocks = [Block(f"{title}: each per_file pass", PASSES,
                        [_wide_cells(r, name) for r in rows], dim, labels),
                  Block(f"{corpus}: recall at each cutoff k", CUTOFFS,
                        [c for r in rows for c in _cutoff_cells(result, r, name)],
                        [d for d in dim for _ in result.cutoffs]),
                  Block(f"{corpus}: index (one for every pass)", INDEX,
                        [_index_cells(r, name) for r in rows if r.headline])]
    else:
        tiers = tier_letters(result, corpus)
        blocks = [Block(title, HEADLINE,
                        [[name(r.engine), *headline(r, tiers.get((r.engine, r.per_file), ""))[1:]]
                         for r in rows], dim, labels)]
    pairs = [_paired(c, name) for c in result.comparisons if c.corpus == corpus]
    if pairs:
        blocks.append(Block(f"{corpus}: paired comparisons (Holm-corrected; * p < 0.05)",
                            PAIRED, pairs))
    return blocks


def summary_blocks(result: ResultFile, name: Name) -> list[Block]:
    out = []
    for summary in summaries(result):
        head, macro, pairs = summary_tables(result, summary, name=name)
        if not macro:
            continue
        out.append(Block(f"{summary_title(summary, result)}: mean of per-corpus means, 95% "
                         "interval resampling queries within each corpus", tuple(head), macro))
        if pairs:
            out.append(Block("corpora won, tied, lost (significant after Holm on each corpus)",
                             ("metric", "A − B", "won/tied/lost"), pairs))
    return out


def _all_blocks(result: ResultFile, *, wide: bool, name: Name) -> list[Block]:
    return [*(b for corpus in result.corpora
              for b in corpus_blocks(result, corpus, wide=wide, name=name)),
            *summary_blocks(result, name)]


def shortened(result: ResultFile, width: int, *, wide: bool) -> dict[str, str]:
    """The names the tables show shortened at width: name -> short form."""
    room = name_room(_all_blocks(result, wide=wide, name=str), width)
    names = [*result.engines, *(r.engine for r in result.rows),
             *(e for c in result.comparisons for e in (c.engine_a, c.engine_b))]
    return short_names(names, room)


# -- drawing


def rich_table(block: Block, *, plain: bool) -> Table:
    # One space between columns (the box's own divider) and none at the edges.
    table = Table(title=escape(block.title) if block.title else None, title_justify="left",
                  box=_PLAIN_HEAD if plain else box.SIMPLE_HEAD, padding=(0, 0),
                  show_edge=False)
    for i, name in enumerate(block.head):
        numeric = name in _NUMERIC or "@" in name
        whole = name not in _FOLD
        table.add_column(name, justify="right" if numeric else "left", no_wrap=whole,
                         min_width=_need(block, i) if whole else None, overflow="fold")
    for i, cells in enumerate(block.rows):
        table.add_row(*(escape(c) for c in cells),
                      style="dim" if block.dim is not None and block.dim[i] else None)
    return table


def draw(console: Console, block: Block, *, plain: bool) -> None:
    """A table, its flags under it when they would squeeze the names beside them."""
    beside = "flags" not in block.head or _flags_beside(block, console.width)
    console.print(rich_table(block if beside else _without_flags(block), plain=plain))
    if beside:
        return
    i = block.head.index("flags")
    flagged = [(label, row[i]) for label, row in zip(block.labels, block.rows, strict=True)
               if row[i]]
    if flagged:
        notes.say(console, "flags of the rows above:", plain=plain)
        for label, flags in flagged:
            notes.say(console, f"  {label}: {flags}", plain=plain, indent="    ")


def render_compare(console: Console, result: ResultFile, *, wide: bool = False) -> None:
    plain = not console.is_terminal
    short = shortened(result, console.width, wide=wide)

    def name(engine: str) -> str:
        return short.get(engine, engine)

    for corpus, info in result.corpora.items():
        blocks = corpus_blocks(result, corpus, wide=wide, name=name)
        if not blocks:
            # A corpus no cell finished on (a run stopped before it, every engine failed
            # there): an empty table says nothing the failures and the last line do not.
            continue
        console.print()
        for line in where_lines(info.tree, info.pin, console.width):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        for i, block in enumerate(blocks):
            if i:
                console.print()
            draw(console, block, plain=plain)
    for block in summary_blocks(result, name):
        console.print()
        draw(console, block, plain=plain)
    _tracks(console, result, plain=plain)
    notes.verdict(console, result, plain=plain)
    notes.legend(console, result, wide=wide, plain=plain, short=short)


def _tracks(console: Console, result: ResultFile, *, plain: bool) -> None:
    """The generated tracks' validity and their agreement with the questions, in 80
    columns whatever the terminal's width."""
    width = min(notes.PROSE, console.width)
    lines = validity_lines(result, width)
    title, head, rows = agreement_table(result)
    if not lines and not rows:
        return
    console.print()
    for line in lines:
        notes.say(console, line, plain=plain, indent="    ", style=None, width=width)
    if rows:
        # The title on its own line: a table's title wraps at the table's width.
        console.print()
        notes.say(console, title, plain=plain, style=None, width=width)
        console.print(rich_table(Block("", tuple(head), rows), plain=plain), width=width)
        notes.say(console, TAU_NOTE, plain=plain, width=width)


def summary_title(summary: Summary, result: ResultFile) -> str:
    """"across 8 corpora", with the track named when it is not the only one or not questions."""
    named = len(summaries(result)) > 1 or summary.track != "questions"
    return f"across {len(summary.corpora)} corpora" + (f", {summary.track} track" if named
                                                        else "")


def summary_tables(result: ResultFile, summary: Summary | None = None, *, name: Name = str,
                   ) -> tuple[list[str], list[list[str]], list[list[str]]]:
    """A suite summary (the result's main one by default) as (head, macro rows, pair rows):
    macro means with their stratified intervals per engine, then wins/ties/losses per pair,
    on SUMMARY_METRICS; each engine as name shows it."""
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
        cells = [name(engine)]
        for m in found:
            cells.append("" if m is None or m.mean is None else
                         f"{m.mean:.2f} [{m.lo:.2f},{m.hi:.2f}]" if m.lo is not None
                         and m.hi is not None else f"{m.mean:.2f}")
        cells.append(str(max((len(m.corpora) for m in found if m), default=0)))
        macro.append(cells)
    pairs = [[p.metric, f"{name(p.engine_a)} − {name(p.engine_b)}",
              f"{p.wins}/{p.ties}/{p.losses}"]
             for p in summary.pairs if p.metric in SUMMARY_METRICS]
    return head, macro, pairs
