"""Which pieces go in which file, and the writing of each a piece at a time.

A comparison is one page, `index.html`, while that page would stay under ONE_PAGE
bytes (as `estimate` reckons it before anything is written). Past it (the full suite:
30 corpora, five engines, ~49,000 outcomes), the report is a
summary page, `index.html` (the verdict, the summaries across corpora, the needle
tracks, a table of the corpora, provenance), and a page per corpus holding both its
tracks (their tables, paired comparisons, figures, failures and drill-down), each
linking back. Either way every file is written as its pieces are made, a corpus at a
time, so writing never holds the whole report.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from ...results.schema import ResultFile
from ...scoring.agreement import base_corpus
from ..plots.figure import corpora_of
from . import PAGE
from .figures import figures
from .markup import Markup, esc, tag
from .page import (
    Plots,
    closing,
    corpus_section,
    drill_data,
    drill_section,
    end_main,
    header,
    opening,
    reading,
    section_id,
    verdict_section,
)
from .provenance import provenance
from .summary import summary_section
from .tables import failures_block, td, th
from .texts import TEXT_BUDGET
from .tracks import SECTION, tracks_section

# One page up to 10 MB: past that a browser takes seconds to lay it out, and one
# corpus's page is what a reader opens anyway.
ONE_PAGE = 10_000_000
# What an outcome adds to a page once packed, without its text: 125 and 142 bytes on the
# committed full and default-sized results.
OUTCOME_BYTES = 150
SECTION_BYTES = 30_000  # a corpus's tables, comparisons and failures, without figures


@dataclass(frozen=True)
class Group:
    """One corpus with all its tracks: one page of a split report."""

    name: str
    file: str
    corpora: tuple[tuple[int, str], ...]  # (index in corpora_of, corpus name in rows)


def groups_of(result: ResultFile) -> list[Group]:
    """Corpora by the corpus they are a track of, in the result's order, each with a
    file name of its own (names are sanitized, so two could meet: they are numbered)."""
    found: dict[str, list[tuple[int, str]]] = {}
    for index, corpus in enumerate(corpora_of(result)):
        info = result.corpora.get(corpus)
        base = base_corpus(info) if info is not None else corpus.split(":", 1)[0]
        found.setdefault(base, []).append((index, corpus))
    used: set[str] = set()
    out = []
    for base, members in found.items():
        stem = "corpus-" + re.sub(r"[^A-Za-z0-9._-]+", "_", base)
        name, n = stem, 1
        while name.lower() in used:  # a case-insensitive file system is one name
            n += 1
            name = f"{stem}-{n}"
        used.add(name.lower())
        out.append(Group(base, f"{name}.html", tuple(members)))
    return out


def _link(text: str, href: str) -> Markup:
    return tag("a", text, href=href)


def one_page(result: ResultFile, plots: Plots, plots_note: str | None) -> Iterator[Markup]:
    corpora = corpora_of(result)
    summary = summary_section(result)
    generated = tracks_section(result)
    nav = [_link("across corpora", "#summary") if summary else esc(""),
           _link("needle tracks", f"#{SECTION}") if generated else esc(""),
           *[_link(c, f"#{section_id(i)}") for i, c in enumerate(corpora)],
           _link("drill-down", "#drill"), _link("provenance", "#provenance")]
    yield opening("codesearch-bench: " + ", ".join(corpora))
    yield header(result, ", ".join(corpora), nav)
    yield reading()
    yield summary
    yield verdict_section(result)
    yield generated
    for i, corpus in enumerate(corpora):
        yield corpus_section(result, corpus, i, plots.get(corpus), plots_note)
    if not corpora:
        yield failures_block(result, None)
    yield drill_section()
    yield provenance(result)
    yield end_main()
    yield from drill_data(result, list(enumerate(corpora)))
    yield closing()


def _corpora_table(result: ResultFile, groups: list[Group]) -> Markup:
    rows = []
    for group in groups:
        for index, corpus in group.corpora:
            info = result.corpora.get(corpus)
            engines = list(dict.fromkeys(r.engine for r in result.rows if r.corpus == corpus))
            failed = sum(f.corpus == corpus for f in result.failures)
            rows.append(tag(
                "tr", td(_link(corpus, f"{group.file}#{section_id(index)}"), None, "name",
                         key=corpus),
                td(info.track if info else ""), td(info.files if info else "",
                                                   info.files if info else None, "num"),
                td(info.queries if info else "", info.queries if info else None, "num"),
                td(", ".join(engines)), td(failed or "", failed, "num")))
    head = tag("tr", th("corpus", "text"), th("track", "text"), th("files"), th("queries"),
               th("engines with rows", "text"), th("failed", "rank",
                                                  "engine × corpus combinations that failed"))
    return tag("section", tag("h2", "Corpora"),
               tag("p", "Each corpus has a page of its own, with both its tracks: the "
                   "tables, paired comparisons, figures, failures and the per-query "
                   "drill-down.", class_="note"),
               tag("div", tag("table", tag("thead", head), tag("tbody", *rows),
                              class_="sortable corpora"), class_="scroll"), id="corpora")


def summary_page(result: ResultFile, groups: list[Group]) -> Iterator[Markup]:
    summary = summary_section(result)
    generated = tracks_section(result)
    nav = [_link("across corpora", "#summary") if summary else esc(""),
           _link("needle tracks", f"#{SECTION}") if generated else esc(""),
           _link("corpora", "#corpora"), *[_link(g.name, g.file) for g in groups],
           _link("provenance", "#provenance")]
    yield opening("codesearch-bench: " + ", ".join(g.name for g in groups))
    yield header(result, ", ".join(g.name for g in groups), nav)
    yield reading()
    yield summary
    yield verdict_section(result)
    yield generated
    yield _corpora_table(result, groups)
    yield provenance(result)
    yield end_main()
    yield closing()


def corpus_page(result: ResultFile, group: Group, groups: list[Group], plots: Plots,
                plots_note: str | None) -> Iterator[Markup]:
    at = groups.index(group)
    nav = [_link("← summary", PAGE),
           *[_link(corpus, f"#{section_id(i)}") for i, corpus in group.corpora],
           _link("drill-down", "#drill"), _link("provenance", f"{PAGE}#provenance"),
           _link(f"‹ {groups[at - 1].name}", groups[at - 1].file) if at else esc(""),
           _link(f"{groups[at + 1].name} ›", groups[at + 1].file)
           if at + 1 < len(groups) else esc("")]
    yield opening(f"codesearch-bench: {group.name}")
    yield header(result, group.name, nav)
    for index, corpus in group.corpora:
        yield corpus_section(result, corpus, index, plots.get(corpus), plots_note)
    yield drill_section()
    yield end_main()
    yield from drill_data(result, list(group.corpora))
    yield closing()


def estimate(result: ResultFile, plots: Plots) -> int:
    """The one page's size in bytes, near enough to choose the layout by: the figures
    exactly, the outcomes and sections by their measured weight, the text at most its
    budget's (gzipped code is a third of its characters, base64 four thirds of that)."""
    shown = sum(len(uri) for figures_of in plots.values() for _, uri in figures_of)
    outcomes = sum(len(r.queries) for r in result.rows)
    return (shown + outcomes * OUTCOME_BYTES + len(corpora_of(result)) * SECTION_BYTES
            + TEXT_BUDGET // 2)


class _File:
    """A page written a piece at a time into a hidden file, put in place whole at the end
    (a reader reloading the page never sees half of it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.tmp = path.with_name(f".{path.name}.tmp")
        self.file = self.tmp.open("wb")

    def __enter__(self) -> _File:
        return self

    def write(self, pieces: Iterable[str]) -> None:
        for piece in pieces:
            self.file.write(piece.encode("utf-8"))

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.file.close()
        if kind is None:
            self.tmp.replace(self.path)
        else:
            self.tmp.unlink(missing_ok=True)


def write_report(result: ResultFile, out_dir: Path) -> list[Path]:
    """Write the report into out_dir: one page, or a summary page and a page per corpus
    (see the module's docstring); returns the paths written, the entry page first."""
    plots, plots_note = figures(result)
    out_dir.mkdir(parents=True, exist_ok=True)
    index = out_dir / PAGE
    if estimate(result, plots) <= ONE_PAGE:
        with _File(index) as page:
            page.write(one_page(result, plots, plots_note))
        return [index]
    groups = groups_of(result)
    written = []
    for group in groups:
        with _File(out_dir / group.file) as page:
            page.write(corpus_page(result, group, groups, plots, plots_note))
        written.append(out_dir / group.file)
    with _File(index) as page:  # last: every page it links to is already there
        page.write(summary_page(result, groups))
    return [index, *written]


def render_page(result: ResultFile) -> str:
    """The one page as text, whatever its size (for a small result, or a test)."""
    plots, plots_note = figures(result)
    return "".join(one_page(result, plots, plots_note))
