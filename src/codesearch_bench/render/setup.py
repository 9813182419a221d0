"""Render `bench setup` and `bench validate`."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..corpus.setup import SetupOutcome
from ..corpus.sources.gitstore import StoreSummary, human
from ..gold.check import CorpusCheck


def render_setup(console: Console, outcomes: list[SetupOutcome]) -> None:
    table = Table(title="corpora")
    for col in ("corpus", "status", "files", "tier", "MiB", "languages", "how"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        if o.result is None:
            table.add_row(escape(o.name), "[red]failed[/]", "", "", "", "", escape(str(o.error)))
            continue
        m = o.result.manifest
        langs = ", ".join(f"{k} {v}" for k, v in sorted(m.languages.items(),
                                                          key=lambda kv: -kv[1])[:4])
        status = "cached" if o.result.cached else "[green]ready[/]"
        table.add_row(escape(o.name), status, str(m.files), m.tier, f"{m.bytes / 2**20:.1f}",
                      langs, escape(o.result.how))
    console.print(table)
    for o in outcomes:
        if o.result is not None:
            console.print(f"tree={escape(str(o.result.tree))}")
    for o in outcomes:
        if o.error is not None:
            console.print(f"[bold red]error[/] {escape(o.name)}: {escape(str(o.error))}")


def render_stores(console: Console, stores: list[StoreSummary]) -> None:
    """One line per shared git object store: its size, its pinned commits, who shares it."""
    for s in stores:
        console.print(f"git store {escape(str(s.store))}: {human(s.bytes)}, {s.commits} pinned "
                      f"commit{'s' if s.commits != 1 else ''}, shared by {len(s.corpora)} "
                      f"{'corpora' if len(s.corpora) != 1 else 'corpus'} "
                      f"({escape(', '.join(s.corpora))}) for {escape(s.url)}",
                      soft_wrap=True, highlight=False)


def render_validate(console: Console, checks: list[CorpusCheck]) -> None:
    table = Table(title="validate")
    for col in ("corpus", "files", "tier", "queries", "gold resolved", "lint", "needles",
                "status"):
        table.add_column(col)
    for c in checks:
        m = c.manifest
        gold = f"{c.report.resolved}/{c.report.total}" if c.report else "-"
        queries = "none" if c.needles_only else str(c.queries)
        needles = f"{c.needles.resolved}/{c.needles.total}" if c.needles else "-"
        verdict = "[green]ok[/]" if c.ok else "[red]FAILED[/]"
        table.add_row(escape(c.name), str(m.files) if m else "-", m.tier if m else "-",
                      queries, gold, str(len(c.lint)), needles, verdict)
    console.print(table)
    for c in checks:
        problems = c.errors + c.lint + (c.report.failures if c.report else []) + (
            [f"needle track: {f}" for f in c.needles.failures] if c.needles else [])
        for p in problems:
            console.print(f"[red]✗[/] {escape(c.name)}: {escape(p)}", soft_wrap=True)
    for c in checks:
        for note in c.notes:
            console.print(f"[yellow]![/] {escape(c.name)}: {escape(note)}", soft_wrap=True)


