"""Content relevance: grading an answer that is text, with no path or lines to grade.

Some systems (Context7, Neuledge Context, pydocs-mcp's composite answer) return
documentation text rather than places in the tree. Such an item is relevant to
a gold span when it contains the span's text: rapidfuzz's `partial_ratio` of
the two whitespace-normalized texts (the shorter aligned inside the longer)
reaches the spec's threshold (85 by default). A ranked list of text items is
then scored like any ranking, as the `content.*` family; a single blob enters
only the rank-1 family (`content.hit@1`, `content.p@1`): it has no rank 2. A
query whose gold has no span (file-level gold) has no text to look for, so
content metrics are not entered for it. protocol/PROTOCOL.md states the rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz import fuzz

from ..corpus.tree import TreeText
from ..model import Span
from . import metrics

DEFAULT_THRESHOLD = 85
BLOB_METRICS = ("content.hit@1", "content.p@1")
MAX_ITEMS = 20  # items graded per answer, as slots are


def normalized(text: str) -> str:
    return " ".join(text.split())


def gold_texts(gold: Sequence[Span], tree: TreeText) -> list[str]:
    """The distinct gold spans' text, normalized; file-level items have none."""
    seen: dict[tuple[str, int, int], str] = {}
    for g in gold:
        if g.start is None or g.end is None or (g.path, g.start, g.end) in seen:
            continue
        lines = tree.at(g.path, g.start, g.end)
        if lines:
            seen[(g.path, g.start, g.end)] = normalized("\n".join(lines))
    return [t for t in seen.values() if t]


def relevant(item: str, gold: str, threshold: int) -> bool:
    """Whether the item contains the gold text, up to the threshold's tolerance."""
    if not item or not gold:
        return False
    if len(item) < len(gold):
        # partial_ratio aligns the shorter text inside the longer, whichever it is: a
        # fragment of the gold (its first line, a name) would score 100. A shorter item
        # contains the gold only when it is nearly all of it.
        return fuzz.ratio(gold, item) >= threshold
    return fuzz.partial_ratio(gold, item) >= threshold


def gains(items: Sequence[str], golds: Sequence[str], threshold: int) -> list[int]:
    """Per item, how many gold spans it finds first (each credited once, as in grade.py)."""
    out = [0] * len(items)
    texts = [normalized(i) for i in items]
    for gold in golds:
        for rank, text in enumerate(texts):
            if relevant(text, gold, threshold):
                out[rank] += 1
                break
    return out


def scores(item_gains: Sequence[int], n_gold: int, cutoffs: Sequence[int], *,
           blob: bool) -> dict[str, float]:
    if blob:
        one = metrics.query_scores(list(item_gains[:1]), n_gold, cutoffs=(1,),
                                   depth=metrics.MRR_DEPTH)
        return {m: one[m.removeprefix("content.")] for m in BLOB_METRICS}
    found = metrics.query_scores(list(item_gains), n_gold, cutoffs=cutoffs,
                                 depth=metrics.MRR_DEPTH)
    found.pop("zero_miss")
    return {f"content.{name}": value for name, value in found.items()}


def applies(metric: str, answer: str, entered: bool) -> bool:
    """Which metrics a content-graded query has (failed ones score them as misses)."""
    if not entered or not metric.startswith("content."):
        return False
    return answer != "blob" or metric in BLOB_METRICS
