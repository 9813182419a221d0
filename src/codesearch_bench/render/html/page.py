"""The whole page: header and reading notes, a section per corpus (both tracks' tables,
paired comparisons, figures, failures), the drill-down, provenance, and the data and
script the drill-down runs on.

Everything is inline, so the one file opens from file:// with no network; the
tables are plain HTML, readable with scripts off, and the drill-down needs the script.
"""

from __future__ import annotations

from ...results.schema import ResultFile
from ...scoring.verdict import sentences, verdict
from ..formats import FLAG_HELP, flags_used, rows_of
from ..plots.figure import corpora_of
from .figures import figures
from .markup import Markup, asset, esc, inline_script, inline_style, join, json_script, tag, void
from .paired import comparisons_table
from .provenance import provenance
from .queries import drill_data
from .summary import summary_section
from .tables import TRACKS, failures_block, headline_table, parse_problems
from .tracks import SECTION, tracks_section

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


def _corpus_section(result: ResultFile, corpus: str, index: int,
                    plots: list[tuple[str, str]] | None, plots_note: str | None) -> Markup:
    sid = f"corpus-{index}"
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


def _drill_section() -> Markup:
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


def render_page(result: ResultFile) -> str:
    corpora = corpora_of(result)
    plots, plots_note = figures(result)
    title = "codesearch-bench: " + ", ".join(corpora)
    warnings = []
    if result.interrupted:
        warnings.append("Interrupted run: only finished cells are here.")
    if result.shard:
        warnings.append(f"One shard ({result.shard}) of a comparison: merge the shards with "
                        "`bench report --merge` for the whole picture.")
    summary = summary_section(result)
    said = sentences(verdict(result))
    found = esc("")
    if said:
        found = join([tag("section", tag("h2", "Verdict"),
                                     tag("p", "Significant after Holm on each corpus; for "
                                         "the rest, the smallest difference the run could "
                                         "detect.", class_="sub"),
                                     tag("ul", *[tag("li", line) for line in said]),
                                     id="verdict")])
    generated = tracks_section(result)
    nav = tag("nav", tag("a", "across corpora", href="#summary") if summary else "",
              tag("a", "needle tracks", href=f"#{SECTION}") if generated else "",
              *[tag("a", c, href=f"#corpus-{i}") for i, c in enumerate(corpora)],
              tag("a", "drill-down", href="#drill"), tag("a", "provenance", href="#provenance"))
    header = tag("header",
                 tag("h1", "Comparison: ", ", ".join(corpora) or "(no corpora)"),
                 tag("p", f"{len(result.engines)} engines ({', '.join(result.engines)}) · created "
                     f"{result.created} · bench {result.bench_version} · protocol "
                     f"{result.protocol_version}", class_="sub"),
                 *[tag("p", w, class_="warning") for w in warnings], nav, class_="top")
    reading = tag("details", tag("summary", "Reading a comparison honestly"),
                  tag("ul", *[tag("li", line) for line in READING]), class_="howto")
    sections = [_corpus_section(result, c, i, plots.get(c), plots_note)
                for i, c in enumerate(corpora)]
    orphans = failures_block(result, None) if not corpora else esc("")
    body = tag("main", header, reading, summary, found, generated, *sections, orphans,
               _drill_section(), provenance(result))
    head = join([void("meta", charset="utf-8"),
                 void("meta", name="viewport", content="width=device-width, initial-scale=1"),
                 # The page is a file: no request may leave it, whatever a string holds.
                 void("meta", http_equiv="Content-Security-Policy",
                      content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
                      "script-src 'unsafe-inline'"),
                 tag("title", title), inline_style(asset("report.css"))])
    page = join([Markup("<!doctype html>\n"),
                 tag("html", tag("head", head),
                     tag("body", body, json_script("bench-data", drill_data(result, corpora)),
                         inline_script(asset("report.js"))), lang="en")])
    return page + "\n"
