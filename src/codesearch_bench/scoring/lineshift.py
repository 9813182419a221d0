"""The tool's own text against the tree's lines at each of its spans: there, or one line off.

An engine whose results carry text (parse.text) says twice where each result is: by
its line numbers and by the text it shows. When the two disagree by exactly one line on
most spans, the tool counts lines differently from how its spec says (`line_base`), and
every chunk metric would be scored on spans one line off. `bench probe` says so with the
fix; `bench compare` checks the first answers of each cell and stops the cell
(run/cell.py) rather than score it.

Each span's text is compared with the tree's lines at the span and one line either way,
all whitespace-normalized. A text shorter than the lines is looked for inside them
(rapidfuzz's partial_ratio: a snippet may be a part of its span); a text as long as the
lines or longer is compared with them whole (ratio), so lines that are only a part of
what the tool shows never count as its place. A text under SHORT characters (a name, a
brace) is compared only for a one-line span: a few lines holding it, or equal to it once
their blank lines are gone, say nothing. No window starts before line 1.

A span's text sits where it scores highest, if that is at least MATCH; a tie goes to the
stated lines. So a snippet that fits one line off as well as where it is said to be (a
line from the middle of a long span) never counts against the engine, and a text that
matches nowhere (a summary, a signature the tool rewrote, a text with context around its
span) claims nothing at all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from rapidfuzz import fuzz

from ..corpus.tree import TreeText
from ..engine.spec import EngineSpec
from ..model import Hit
from .content import normalized

MATCH = 90  # partial_ratio at least this: the text is the tree's text there
SHORT = 20  # characters; a shorter text is compared with a one-line span only, whole
MAX_LINES = 200  # longer spans are not compared: a snippet fits one either way, and cost
MAX_CHARS = 20_000  # a text this long is not compared (the alignment's cost grows with it)
SPANS_PER_ANSWER = 20  # the spans compared per answer, as slots are graded
WATCHED_ANSWERS = 5  # compare looks at a cell's first answers with text at their spans
MIN_OFF = 3  # spans one line off before compare stops a cell

#: Where a span's text was found: at its stated lines, one line below them (the tool's
#: numbers are one too low), one line above them (one too high), or nowhere near.
Place = Literal["stated", "below", "above", "elsewhere"]


def applies(spec: EngineSpec) -> bool:
    """An engine whose results carry both lines and the text they show."""
    return spec.answer == "ranked" and spec.spans and spec.parse.has_text()


def place(hit: Hit, tree: TreeText) -> Place | None:
    """Where the hit's text is in the tree near its (normalized) lines; None when there is
    nothing to compare: no text, no lines, no such file, or a span too long to tell."""
    if hit.text is None or hit.start is None or hit.end is None:
        return None
    shown = normalized(hit.text)
    if not shown or len(shown) > MAX_CHARS or not 0 <= hit.end - hit.start < MAX_LINES:
        return None
    if len(shown) < SHORT and hit.start != hit.end:
        return None  # a word or a brace, equal to some window of a few lines by chance
    lines = tree.lines(hit.path)
    if lines is None:
        return None
    at = {offset: _score(shown, _window(lines, hit.start + offset, hit.end + offset))
          for offset in (0, 1, -1)}
    best = max(at.values())
    if best < MATCH:
        return "elsewhere"
    if at[0] == best:
        return "stated"
    if at[1] == at[-1]:
        return "elsewhere"  # as well one line up as down, and not where it says: no claim
    return "below" if at[1] == best else "above"


def _window(lines: list[str], start: int, end: int) -> str:
    """The lines start..end normalized; none before line 1 (no line is numbered 0), and a
    span running past the end of its file is cut there (an end-exclusive last line)."""
    return normalized("\n".join(lines[start - 1:end])) if start >= 1 else ""


def _score(shown: str, window: str) -> float:
    if not window:
        return 0.0
    if SHORT <= len(shown) < len(window):
        return 100.0 if shown in window else fuzz.partial_ratio(shown, window)
    return fuzz.ratio(shown, window)


@dataclass(slots=True)
class Shifts:
    """How many spans' text sat at each place."""

    stated: int = 0
    below: int = 0
    above: int = 0
    elsewhere: int = 0

    def add(self, where: Place | str) -> None:
        """Count one span at `where`, a Place (as a probe report keeps it, a string)."""
        setattr(self, where, getattr(self, where) + 1)

    def add_hits(self, hits: Iterable[Hit], tree: TreeText) -> int:
        """Tally each hit's place; the number of hits that had one."""
        counted = 0
        for hit in hits:
            where = place(hit, tree)
            if where is not None:
                self.add(where)
                counted += 1
        return counted

    @property
    def compared(self) -> int:
        return self.stated + self.below + self.above + self.elsewhere

    def off(self) -> tuple[Literal["below", "above"], int] | None:
        """The way most compared spans are one line off, if most are."""
        way: Literal["below", "above"] = "below" if self.below >= self.above else "above"
        count = max(self.below, self.above)
        return (way, count) if count and 2 * count > self.compared else None

    def verdict(self, line_base: int, *, at_least: int = 1) -> str | None:
        """What is wrong and the spec fix, when most spans are one line off the same way
        (and at least `at_least` of them); None otherwise."""
        off = self.off()
        if off is None or off[1] < at_least:
            return None
        way, count = off
        return (f"the tool's text matches the tree one line {way} its stated lines on "
                f"{count} of {self.compared} spans with text: {fix(way, line_base)}")

    def summary(self) -> str:
        return (f"{self.stated} at their lines, {self.below} one line below, "
                f"{self.above} one line above, {self.elsewhere} elsewhere")


def fix(way: Literal["below", "above"], line_base: int) -> str:
    """The spec change that puts the lines where the text is."""
    if way == "below" and line_base == 1:
        return 'it counts lines from 0: set "line_base": 0'
    if way == "above" and line_base == 0:
        return 'it counts lines from 1: set "line_base": 1 (or remove the field)'
    if way == "below":
        return ("no line_base value fixes it: even counted from 0 its lines are one short; "
                "check the adapter's line arithmetic and parse.start/end")
    return ("no line_base value fixes it: its lines are one too high; check the adapter's "
            "line arithmetic (a 1 added twice) and parse.start/end")


@dataclass
class Watch:
    """A cell's first answers that have text at their spans, tallied as they come."""

    tree: TreeText
    answers: int = WATCHED_ANSWERS
    shifts: Shifts = field(default_factory=Shifts)
    seen: int = 0  # answers that had a span with text

    def add(self, hits: list[Hit]) -> None:
        if not self.done and self.shifts.add_hits(hits[:SPANS_PER_ANSWER], self.tree):
            self.seen += 1

    @property
    def done(self) -> bool:
        return self.seen >= self.answers

    def verdict(self, line_base: int) -> str | None:
        return self.shifts.verdict(line_base, at_least=MIN_OFF)
