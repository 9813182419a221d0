"""The regression gate's report as Markdown, fit for a pull-request comment."""

from __future__ import annotations

from .baseline_report import EPS, BaselineReport, MetricDelta, RowKey, describe, format_p


def _num(v: float | None, signed: bool = False) -> str:
    if v is None:
        return "–"
    return f"{v:+.3f}" if signed else f"{v:.3f}"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _mark(d: MetricDelta) -> str:
    if d.lost:
        return "⚠️ lost"
    if d.p_holm is None:
        return "⚠️ untested"
    if d.regression:
        return "❌ worse"
    if d.significant and d.delta:
        return "✅ better"
    return "➖"


def _table(report: BaselineReport, lines: list[tuple[RowKey, MetricDelta]]) -> list[str]:
    splits = any(r.key[3] != "all" for r in report.rows)
    head = ["engine", "corpus", "per_file", *(["split"] if splits else []), "metric", "n",
            "old", "new", "Δ", "p (Holm)", ""]
    align = ["---", "---", "--:", *(["---"] if splits else []), "---", "--:", "--:", "--:",
             "--:", "--:", ":-:"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    for (engine, corpus, per_file, split), d in lines:
        cells = [_cell(engine), _cell(corpus), str(per_file),
                 *([_cell(split)] if splits else []), f"`{d.metric}`", str(d.n), _num(d.old),
                 _num(d.new), _num(d.delta, signed=True), format_p(d.p_holm), _mark(d)]
        out.append("| " + " | ".join(cells) + " |")
    return out


def to_markdown(report: BaselineReport, reasons: list[str] | None = None) -> str:
    """A PR comment: the gate's outcome when `reasons` (from `verdict`) is given, a table
    of the watched metrics that moved or were not tested, the unchanged ones folded away."""
    watched = ", ".join(f"`{m}`" for m in report.metrics)
    lines = [f"### codesearch-bench: `{_cell(report.new_label)}` against "
             f"`{_cell(report.old_label)}`", "",
             f"Protocol {report.protocol_version}; watched: {watched}; paired tests on the "
             f"queries both files ran, Holm across {report.tests} tests, α = {report.alpha:g}."]
    if reasons is not None:
        lines += ["", "**Gate: failed**" if reasons else "**Gate: passed**",
                  *(f"- {_cell(r)}" for r in reasons)]
    every = [(r.key, d) for r in report.rows for d in r.metrics]
    # A big comparison is hundreds of lines; a reader needs the ones that moved.
    moved: list[tuple[RowKey, MetricDelta]] = []
    still: list[tuple[RowKey, MetricDelta]] = []
    for line in every:
        delta = line[1].delta
        (moved if delta is None or abs(delta) > EPS else still).append(line)
    lines += ["", *(_table(report, moved) if moved else ["No watched metric moved."])]
    if still:
        lines += ["", f"<details><summary>{len(still)} unchanged</summary>", "",
                  *_table(report, still), "", "</details>"]
    lines += ["", "❌ significantly worse · ✅ significantly better · ➖ no significant "
              "difference · ⚠️ not tested (see notes)"]
    for title, items in ((f"Only in `{_cell(report.new_label)}`", report.only_new),
                         (f"Only in `{_cell(report.old_label)}`", report.only_old)):
        if items:
            lines += ["", f"**{title}:** " + "; ".join(
                _cell(describe(u.key)) + (f" — failed: {_cell(u.failure)}" if u.failure else "")
                for u in items)]
    untested = [f"{describe(r.key)} `{d.metric}`: {d.note}" for r in report.rows
                for d in r.metrics if d.note]
    if report.notes or untested:
        lines += ["", "**Notes:**", *(f"- {_cell(n)}" for n in [*report.notes, *untested])]
    return "\n".join(lines) + "\n"
