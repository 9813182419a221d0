"""Render `bench probe`'s report."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..engine.driver import Rendered
from ..results.probe import ProbeReport

# The tool's own text against the tree's lines (ProbeHit.text_place), in four characters.
_PLACE = {"stated": "ok", "below": "+1", "above": "-1", "elsewhere": "no"}


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:.1f} MiB"


def _command(console: Console, label: str, rendered: Rendered | None) -> None:
    if rendered is None:
        console.print(f"[bold]{label}[/]: (none)")
        return
    console.print(f"[bold]{label}[/]:", escape(rendered.shell_line()), soft_wrap=True)
    if rendered.stdin is not None:
        console.print(f"  stdin: {escape(rendered.stdin[:200])!s}")


def render_probe(console: Console, report: ProbeReport) -> None:
    spec = report.loaded.spec
    console.rule(escape(f"probe {report.loaded.name} ({report.loaded.file})"))
    console.print(f"tree={escape(str(report.root))}")
    console.print(f"state={escape(str(report.state))}")
    console.print(escape(f"query{' ' + report.query_id if report.query_id else ''}: "
                         f"{report.query}"))
    console.print(f"k={report.k} n={report.n} per_file={report.per_file} mode={spec.mode}")
    _command(console, "index", report.index_command)
    if report.index_cached:
        console.print("  index: cached (finished index for this spec and tree); --reindex rebuilds")
    elif report.index is not None:
        m = report.index
        status = "ok" if m.ok else m.describe_failure()
        console.print(f"  index: {status}, {m.wall_s:.2f}s, peak RSS {_mib(m.peak_rss_bytes)}")
    search = report.search
    if search is not None:
        if spec.mode == "persistent":
            _command(console, "search (persistent, started once)", search.rendered)
        else:
            _command(console, "search", search.rendered)
        console.print(f"  latency {search.latency_s * 1000:.1f} ms")
        console.rule("raw output (excerpt)", style="dim")
        for line in report.raw_excerpt or ["(no output)"]:
            console.print(escape(line), soft_wrap=True, highlight=False)
    if report.error:
        console.print(f"[bold red]error:[/] {escape(report.error)}")
    if report.hits:
        _hits_table(console, report)
    elif search is not None and not report.error:
        console.print("[yellow]no results[/]")
    if report.expected:
        console.rule("expected", style="dim")
        for exp in report.expected:
            console.print(f"  {escape(exp.label)}")
        file_rank = report.expected_file_rank
        console.print(f"  file slot: {file_rank if file_rank else 'not found'}"
                      + ("" if file_rank is None or file_rank <= report.k else
                         f" (beyond k={report.k})"))
        if any(e.start is not None for e in report.expected):
            chunk = report.expected_chunk_rank
            console.print(f"  chunk hit at slot: {chunk if chunk else 'none'}")
    for note in report.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", soft_wrap=True)
    for warning in report.warnings:
        console.print(f"[bold red]!![/] {escape(warning)}", soft_wrap=True)


def _hits_table(console: Console, report: ProbeReport) -> None:
    table = Table(title=f"{len(report.hits)} parsed hits, {report.slots} file slots",
                  show_lines=False)
    for col in ("raw", "slot"):
        table.add_column(col, no_wrap=True, justify="right")
    table.add_column("path", overflow="fold", min_width=24)
    for col in ("exists", "span", "score"):
        table.add_column(col, no_wrap=True)
    placed = any(ph.text_place is not None for ph in report.hits)
    if placed:
        table.add_column("lines", no_wrap=True)
    wide = console.width >= 110  # the text column only where it fits beside the path
    if wide:
        table.add_column("text at span", overflow="ellipsis", no_wrap=True, max_width=44)
    for ph in report.hits[:60]:
        hit = ph.hit
        span = "-" if hit.start is None else f"{hit.start}-{hit.end}"
        if ph.past_eof:
            span += " (past EOF)"
        mark = ""
        if ph.expected_chunk:
            mark = " [green]◀ expected chunk[/]"
        elif ph.expected_file:
            mark = " [cyan]◀ expected file[/]"
        text = ph.span_text if ph.span_text is not None else (hit.text or "")
        first = text.strip().splitlines()[0][:44] if text.strip() else ""
        cells = [
            str(hit.rank + 1),
            "-" if ph.slot is None else str(ph.slot),
            escape(hit.path) + mark,
            "yes" if ph.exists else "[red]NO[/]",
            span,
            "-" if hit.score is None else f"{hit.score:.4g}",
        ]
        if placed:
            cells.append(_PLACE.get(ph.text_place or "", ""))
        table.add_row(*cells, *([escape(first)] if wide else []))
    console.print(table)
    if placed:
        console.print("lines: the tool's own text is the tree's at its lines (ok), one line "
                      "below them (+1), one above (-1), or not near them (no)",
                      style="dim", highlight=False)
    if len(report.hits) > 60:
        console.print(f"… {len(report.hits) - 60} more hits")
