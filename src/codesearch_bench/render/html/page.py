"""The pieces every page is made of: head, header and reading notes, the verdict, a
section per corpus (both tracks' tables, paired comparisons, figures, failures), the
drill-down with its packed data, and the script.

Everything is inline, so each file opens from file:// with no network; the tables are
plain HTML, readable with scripts off, and the drill-down needs the script. Which
pieces go on which page is pages.py's.
"""

from __future__ import annotations

from collections.abc import Iterator

from ...results.schema import ResultFile
from ...scoring.verdict import sentences, verdict
from ..formats import FLAG_HELP, flags_used, rows_of
from .markup import Markup, asset, esc, inline_script, inline_style, join, json_script, tag, void
from .packed import packed_script
from .paired import comparisons_table
from .queries import corpus_json, drill_index
from .tables import TRACKS, failures_block, headline_table, parse_problems
from .texts import Budget

READING = (
    "Intervals are 95% bootstrap intervals over the queries; on 30–50 queries they overlap "
    "more often than people expect, so read the paired comparisons for whether a difference "
    "survives (Holm-corrected).",
    "Chunk recall is at most file recall: the gap is where a tool finds the file and shows "
    "the wrong part of it. A chunk hit is an overlap, so read it next to the tokens shown.",
    "!! flags mean fix the adapter, not the tool: run `bench probe` on that engine.",
    "Failed queries score as misses (errors=N); a failed engine × corpus combination is a "
    "gap, listed under its corpus, never a zero.",
    "Latency is a property of the integration (a one-shot engine pays start-up per query); "
    "index cost compares only when every engine rebuilt from nothing (--reindex).",
)
# The page is a file: no request may leave it, whatever a string holds.
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
       "script-src 'unsafe-inline'")

Plots = dict[str, list[tuple[str, str]]]


def section_id(index: int) -> str:
    """A corpus section's anchor, by the corpus's place in the result: the same on the
    one page and on a corpus's own page, so links from the summary page can name it."""
    return f"corpus-{index}"


def opening(title: str) -> Markup:
    """Everything before the page's main content."""
    head = join([void("meta", charset="utf-8"),
                 void("meta", name="viewport", content="width=device-width, initial-scale=1"),
                 void("meta", http_equiv="Content-Security-Policy", content=CSP),
                 tag("title", title), inline_style(asset("report.css"))])
    return Markup(f'<!doctype html>\n<html lang="en"><head>{head}</head><body><main>')


def closing() -> Markup:
    return Markup(inline_script(asset("report.js")) + "</body></html>\n")


def end_main() -> Markup:
    return Markup("</main>")


def header(result: ResultFile, heading: str, nav: list[Markup]) -> Markup:
    warnings = []
    if result.interrupted:
        warnings.append("Interrupted run: only finished cells are here.")
    if result.shard:
        warnings.append(f"One shard ({result.shard}) of a comparison: merge the shards with "
                        "`bench report --merge` for the whole picture.")
    return tag("header",
               tag("h1", "Comparison: ", heading or "(no corpora)"),
               tag("p", f"{len(result.engines)} engines ({', '.join(result.engines)}) · created "
                   f"{result.created} · bench {result.bench_version} · protocol "
                   f"{result.protocol_version}", class_="sub"),
               *[tag("p", w, class_="warning") for w in warnings],
               tag("nav", *[link for link in nav if link]), class_="top")


def reading() -> Markup:
    return tag("details", tag("summary", "Reading a comparison honestly"),
               tag("ul", *[tag("li", line) for line in READING]), class_="howto")


def verdict_section(result: ResultFile) -> Markup:
    said = sentences(verdict(result))
    if not said:
        return esc("")
    return tag("section", tag("h2", "Verdict"),
               tag("p", "Significant after Holm on each corpus; for the rest, the smallest "
                   "difference the run could detect.", class_="sub"),
               tag("ul", *[tag("li", line) for line in said]), id="verdict")


def corpus_section(result: ResultFile, corpus: str, index: int,
                   plots: list[tuple[str, str]] | None, plots_note: str | None) -> Markup:
    sid = section_id(index)
    info = result.corpora.get(corpus)
    rows = rows_of(result, corpus, headline_only=False)
    title = (f"{corpus}: {info.files} files ({info.tier}), {info.queries} queries" if info
             else corpus)
    where = (tag("p", "tree ", tag("code", info.tree), " · pin ", tag("code", info.pin),
                 class_="sub") if info else esc(""))
    parts = [tag("h2", title), where]
    if any(not r.headline for r in rows):
        parts.append(tag("label", void("input", type="checkbox", class_="every-pass",
                                       data_section=sid),
                         " every pass (extra per_file settings)", class_="sub"))
    for track in TRACKS:
        parts += [tag("h3", f"{track} track"), headline_table(result, corpus, track)]
    used = flags_used(rows)
    if used:
        parts.append(tag("ul", *[tag("li", tag("code", f), ": ", FLAG_HELP[f]) for f in used],
                         class_="note"))
    parts.append(parse_problems(rows))
    parts += [tag("h3", "Paired comparisons"), comparisons_table(result, corpus)]
    parts.append(tag("h3", "Figures"))
    if plots:
        parts.append(tag("div", *[tag("figure", void("img", src=uri, alt=f"{corpus}: {cap}",
                                                      loading="lazy"),
                                      tag("figcaption", cap)) for cap, uri in plots],
                         class_="figures"))
    else:
        parts.append(tag("p", plots_note or "no figures for this corpus", class_="note"))
    parts.append(failures_block(result, corpus))
    return tag("section", join(parts), id=sid, class_="corpus", data_corpus=corpus)


def drill_section() -> Markup:
    def select(sid: str, label: str) -> Markup:
        return tag("label", label, " ", tag("select", id=sid))

    controls = tag("div", select("dd-corpus", "corpus"), select("dd-pass", "per_file"),
                   select("dd-a", "engine A"),
                   tag("button", "⇄", id="dd-swap", type="button", title="swap A and B"),
                   select("dd-b", "engine B"), select("dd-metric", "on"),
                   id="dd-controls", hidden=True)
    return tag("section",
               tag("h2", "Per-query drill-down"),
               tag("p", "Pick two engines: the list shows the queries where they differ "
                   "(A only, B only) and where both missed; open one to see each engine's "
                   "slots, with ✓ where the run credited gold, the lines each span points "
                   "at, and the gold beside them. The ranks are the first slot holding "
                   "gold.", class_="note"),
               tag("noscript", tag("p", "The drill-down needs JavaScript; the tables above "
                                   "do not.", class_="warning")),
               controls, tag("ul", id="dd-notes"), tag("div", id="dd-filters"),
               tag("div", id="dd-list"), tag("div", id="dd-detail"), id="drill")


def drill_data(result: ResultFile, corpora: list[tuple[int, str]]) -> Iterator[Markup]:
    """The drill-down's data for these (index, corpus) pairs: a packed block per corpus,
    made one at a time, then the small index block naming them. The corpora share one
    text budget (`texts.Budget`): theirs is one page."""
    budget = Budget(corpora=len(corpora))
    named = []
    for index, corpus in corpora:
        block = f"dd-data-{index}"
        share = budget.share()
        allowed = share.left
        yield packed_script(block, corpus_json(result, corpus, share))
        budget.spent(share, allowed)
        named.append((corpus, block))
    yield json_script("bench-data", drill_index(named))
