"""Markdown for a README or a pull request: a table per corpus, flags explained
under it, the paired comparisons, and the environment and pins in a footer."""

from __future__ import annotations

from ..protocol import FILE_MRR, TIER_METRIC
from ..results.schema import ResultFile, Row
from ..results.statistics import Summary
from ..scoring.verdict import sentences, verdict
from .formats import (
    FLAG_HELP,
    HEADLINE,
    coverage_gaps,
    delta,
    detectable,
    flags_used,
    fmt,
    headline,
    index_cells,
    mib,
    n_cell,
    pvalue,
    rows_of,
    secs,
    summaries,
    tier_letters,
)
from .tracks import tracks_markdown


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _row(result: ResultFile, r: Row, tier: str) -> list[str]:
    m = r.metrics
    idx_time, idx_rss = index_cells(r, " ", " MiB")
    tok = fmt(m.get("tokens@10"), 0) + ("\\*" if r.token_column == "corpus" else "")
    cells = [f"**{r.engine}**" if r.headline else r.engine, tier, str(r.per_file), r.search.mode,
             idx_time, idx_rss, secs(r.search.p50_s, " "), secs(r.search.p95_s, " "),
             mib(r.search.peak_rss_bytes, " MiB"), tok]
    cells += [fmt(m.get(f"file.recall@{k}"), ci=k == 10) for k in result.cutoffs]
    cells += [fmt(m.get(f"chunk.recall@{k}"), ci=k == 10) or "n/e" for k in result.cutoffs]
    cells += [fmt(m.get(FILE_MRR), ci=True), fmt(m.get("zero_miss")), " ".join(r.flags)]
    return [_cell(c) for c in cells]


def render_markdown(result: ResultFile) -> str:
    out: list[str] = []
    head = ["engine", "tier", "per_file", "mode", "index", "index RSS", "p50", "p95", "search RSS",
            "tok@10"]
    head += [f"file@{k}" for k in result.cutoffs] + [f"chunk@{k}" for k in result.cutoffs]
    head += ["MRR", "zero-miss", "flags"]
    for corpus, info in result.corpora.items():
        rows = rows_of(result, corpus, headline_only=False)
        out.append(f"### {corpus}: {info.files} files ({info.tier}), {info.queries} queries\n")
        out.append(f"`tree=` {info.tree}  \n`pin=` {info.pin}\n")
        if not rows:
            out.append("_no rows_\n")
        else:
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "---|" * len(head))
            tiers = tier_letters(result, corpus)
            out.extend("| " + " | ".join(_row(result, r, tiers.get((r.engine, r.per_file), ""))) +
                       " |" for r in rows)
            out.append("")
            used = flags_used(rows)
            notes = ["file@k / chunk@k: recall at cutoff k, mean with the 95% bootstrap "
                     "interval at k=10; n/e: not entered; bold: the headline row "
                     "(per_file 1)."]
            if tiers:
                notes.append(f"tier: engines sharing a letter are not significantly different "
                             f"on {TIER_METRIC} (Holm-adjusted p ≥ 0.05).")
            notes += [f"`{flag}`: {FLAG_HELP[flag]}" for flag in used]
            notes += [f"`!! coverage` {r.engine} (per_file {r.per_file}): {coverage_gaps(r)}"
                      for r in rows if r.coverage]
            out.extend(f"- {n}" for n in notes)
            out.append("")
        comps = [c for c in result.comparisons if c.corpus == corpus]
        if comps:
            out.append("Paired comparisons (Holm-corrected across pairs):\n")
            out.append("| metric | A | B | n | A − B [95% CI] | test | p (Holm) | reading |")
            out.append("|---|---|---|---|---|---|---|---|")
            for c in comps:
                out.append(f"| {c.metric} | {c.engine_a} | {c.engine_b} | {n_cell(c)} | "
                           f"{delta(c, sep=', ')} | {c.test} | {pvalue(c.p_adjusted)} | "
                           f"{detectable(c)} |")
            out.append("")
    out.extend(_summary(result))
    out.extend(tracks_markdown(result))
    said = sentences(verdict(result))
    if said:
        out.append("**Verdict** (significant after Holm on each corpus):\n")
        out.extend(f"- {_cell(line)}" for line in said)
        out.append("")
    failures = result.failures
    if failures:
        out.append("Failed combinations (gaps, not zeros):\n")
        out.extend(f"- {f.engine} × {f.corpus} ({f.stage}): {_cell(f.message.splitlines()[0])}"
                   for f in failures)
        out.append("")
    env = result.environment
    engines = ", ".join(f"{e.name} {e.version or ''}".strip() for e in result.engines.values())
    out.append(f"<sub>codesearch-bench {result.bench_version}, protocol {result.protocol_version}"
               f", {result.created}; Python {env.get('python')} on {env.get('os')} "
               f"({env.get('cpu')}, {env.get('cpus')} CPUs); engines: {_cell(engines)}"
               + ("; **interrupted: partial results**" if result.interrupted else "")
               + "</sub>")
    return "\n".join(out) + "\n"


def _summary(result: ResultFile) -> list[str]:
    return [line for s in summaries(result) for line in _one_summary(result, s)]


def _one_summary(result: ResultFile, summary: Summary) -> list[str]:
    from .table import summary_tables, summary_title

    head, macro, pairs = summary_tables(result, summary)
    if not macro:
        return []
    title = summary_title(summary, result)
    out = [f"### {title[:1].upper()}{title[1:]}\n",
           "Mean of the per-corpus means, with a 95% interval resampling queries within each "
           "corpus.\n", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in macro]
    if pairs:
        out += ["", "Corpora won, tied and lost (significant after Holm on each corpus):\n",
                "| metric | A − B | won/tied/lost |", "|---|---|---|"]
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in pairs]
    return [*out, ""]


def headline_markdown(result: ResultFile) -> str:
    """The headline view as Markdown: per corpus the headline table, then the summary across
    corpora -- what docs/results.md's default results are generated from."""
    out: list[str] = []
    for corpus, info in result.corpora.items():
        rows = rows_of(result, corpus, headline_only=True)
        if not rows:
            continue
        tiers = tier_letters(result, corpus)
        out.append(f"**{corpus}**: {info.files} files ({info.tier}), {info.queries} queries\n")
        out.append("| " + " | ".join(HEADLINE) + " |")
        out.append("|" + "---|" * len(HEADLINE))
        for r in rows:
            cells = headline(r, tiers.get((r.engine, r.per_file), ""))
            out.append("| " + " | ".join(_cell(c).replace("*", "\\*") for c in cells) + " |")
        out.append("")
    for summary in summaries(result):
        out += summary_block(result, summary)
    return "\n".join(out)


def summary_block(result: ResultFile, summary: Summary, *, bold: bool = True) -> list[str]:
    """One track's summary across corpora as Markdown lines: macro means, then pairs."""
    from .table import summary_tables, summary_title

    out: list[str] = []
    head, macro, pairs = summary_tables(result, summary)
    if macro:
        title = summary_title(summary, result)
        title = f"{title[:1].upper()}{title[1:]}"
        out.append(f"{f'**{title}**' if bold else title} (mean of per-corpus means, 95% "
                   "interval resampling queries within each corpus):\n")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in macro]
        out.append("")
        if pairs:
            out.append("Corpora won / tied / lost (significant after Holm on each corpus):\n")
            out.append("| metric | A − B | won/tied/lost |")
            out.append("|---|---|---|")
            out += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in pairs]
            out.append("")
    return out
