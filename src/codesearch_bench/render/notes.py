"""The words under a comparison's terminal tables: the verdict, what each flag and column
means, the short names, the gaps, what the parser and the coverage check found, the
failed combinations.

Every line is wrapped to the console's width between words (a hyphenated name is never
broken), so a pipe or a CI log at 80 columns gets the same lines as a terminal.
"""

from __future__ import annotations

from rich.console import Console

from ..protocol import TIER_METRIC
from ..results.schema import ResultFile
from ..scoring import verdict as judged
from .fit import legend as names_legend
from .fit import wrapped
from .formats import FLAG_HELP, coverage_gaps, flags_used

#: the verdict wraps at 80 columns whatever the terminal's width: prose reads best there
PROSE = 80


def say(console: Console, text: str, *, plain: bool, indent: str = "",
        style: str | None = "dim", width: int | None = None) -> None:
    """text wrapped to width (the console's), every line but the first indented; styled
    only on a terminal."""
    for line in wrapped(text, width or console.width, indent):
        console.print(line, markup=False, highlight=False, soft_wrap=True,
                      style=None if plain else style)


def verdict_lines(result: ResultFile, width: int) -> list[str]:
    """The verdict's sentences as `- ` items wrapped to width."""
    out = []
    for line in judged.sentences(judged.verdict(result)):
        out += wrapped("- " + line, width, "  ")
    return out


def verdict(console: Console, result: ResultFile, *, plain: bool) -> None:
    """The verdict in words, in 80 columns whatever the terminal's width."""
    lines = verdict_lines(result, min(PROSE, console.width))
    if not lines:
        return
    console.print()
    console.print("verdict (significant after Holm on each corpus):" if plain else
                  "[bold]verdict[/] (significant after Holm on each corpus):",
                  markup=not plain, highlight=False)
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def legend(console: Console, result: ResultFile, *, wide: bool, plain: bool,
           short: dict[str, str]) -> None:
    def note(text: str) -> None:
        say(console, text, plain=plain)

    if short:
        note(names_legend(short))
    for flag in flags_used(result.rows):
        note(f"{flag}: {FLAG_HELP[flag]}")
    by_reason: dict[str, list[str]] = {}
    for g in result.gaps:
        by_reason.setdefault(g.reason, []).append(f"{g.engine} × {g.corpus}")
    for reason, found in by_reason.items():
        more = f" and {len(found) - 12} more" if len(found) > 12 else ""
        note(f"not covered (a gap, not a zero: {reason}): {', '.join(found[:12])}{more}")
    if result.tiers and not wide:
        note(f"tier: engines sharing a letter are not significantly different on {TIER_METRIC} "
             "(Holm-adjusted p >= 0.05)")
    if result.comparisons:
        note("MDD: the smallest difference each paired test had 80% power to detect at its "
             "Holm level; a pair that is not significant could not detect a difference "
             "smaller than that")
    if result.rows:
        if wide:
            note("file@k / chunk@k: recall at cutoff k (mean, 95% bootstrap CI); n/e: not "
                 "entered" + ("" if plain else "; dim rows: extra per_file passes"))
        else:
            note("file@10 / chunk@10: recall at 10, ± the larger side of its 95% bootstrap "
                 "interval; n/e: not entered; headline per_file only (--wide: every pass and "
                 "cutoff)")
    problems(console, result, plain=plain)


def problems(console: Console, result: ResultFile, *, plain: bool) -> None:
    """What the parser and the coverage check found on headline rows, the failed
    combinations with their stderr's last lines, an interrupted run."""
    for r in result.rows:
        if r.headline and r.parse_problems:
            for problem in r.parse_problems:
                say(console, f"!! parse: {r.engine} × {r.corpus}: {problem}", plain=plain,
                    indent="   ", style="bold red")
        if r.headline and r.coverage:
            say(console, f"!! coverage: {r.engine} × {r.corpus}: {coverage_gaps(r)}",
                plain=plain, indent="   ", style="bold red")
    if result.failures:
        console.print("failed combinations (gaps, not zeros):" if plain else
                      "[bold red]failed combinations[/] (gaps, not zeros):", highlight=False)
        for f in result.failures:
            # the message's own further lines under it, indented
            say(console, f"  {f.engine} × {f.corpus} [{f.stage}]: {f.message}", plain=plain,
                indent="    ", style=None)
            for line in (f.stderr_tail or "").splitlines()[-5:]:
                say(console, f"    {line}", plain=plain, indent="      ")
    if result.interrupted:
        unseen = [c for c in result.corpora if not any(r.corpus == c for r in result.rows)]
        say(console, "interrupted: partial results only" + (
            f"; no rows for {', '.join(unseen)}" if unseen else ""), plain=plain, style=None)
