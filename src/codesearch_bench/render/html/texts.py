"""The tree's text at the drill-down's spans: read only from the run's own tree, kept a
file at a time, within a budget per page.

Spans overlap a great deal (every engine's chunk of a file, the gold inside it), so the
text is kept per file as the lines any span shows, each line once, in runs of consecutive
lines; the page's script cuts a span's lines out of its file's runs. The budget counts
the characters kept, so a big run's page stays small enough to open: once it is spent,
the rest of the spans show no text and the page says why.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...corpus.layout import CorpusDir
from ...corpus.tree import TreeText
from ...results.schema import ResultFile

SHOWN_LINES = 40  # per span: enough to recognise a definition, not a whole file
LINE_CHARS = 400  # per line: a minified line is not worth its weight
# Characters of tree text per page. Code gzips about three to one, so this adds at most
# ~0.8 MB of base64 to a page.
TEXT_BUDGET = 2_000_000


@dataclass
class Budget:
    """Characters of text a page may still take, shared by the corpora on it: each
    corpus may take an even share of what is left, so the last corpus on a page shows
    text too, and what one leaves unused goes to the ones after it."""

    left: int = TEXT_BUDGET
    corpora: int = 1  # corpora still to come, this one included

    def share(self) -> Budget:
        return Budget(self.left // max(self.corpora, 1))

    def spent(self, share: Budget, allowed: int) -> None:
        self.left -= allowed - share.left
        self.corpora -= 1


@dataclass
class Texts:
    """The lines one corpus's spans show, read from its tree (None: no text shown)."""

    tree: TreeText | None
    budget: Budget
    files: dict[str, dict[int, str] | None] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    cut: bool = False

    def want(self, path: str, start: int | None, end: int | None) -> None:
        """Keep the lines the span start..end shows (its first SHOWN_LINES), if they fit."""
        if self.tree is None or start is None or end is None:
            return
        if path not in self.files and self.budget.left <= 0:
            self.cut = True  # not even read: a spent budget must not cost memory
            return
        lines = self.tree.lines(path)
        if lines is None:
            self.files[path] = None
            return
        kept = self.files.get(path)
        if kept is None:
            kept = self.files[path] = {}
        self.sizes[path] = len(lines)
        first = max(start, 1)
        last = min(end, len(lines), first + SHOWN_LINES - 1)
        new = {n: lines[n - 1][:LINE_CHARS] for n in range(first, last + 1) if n not in kept}
        size = sum(len(text) + 1 for text in new.values())
        if size > self.budget.left:
            self.cut = True
            return
        self.budget.left -= size
        kept.update(new)

    def table(self) -> dict[str, Any]:
        """path -> null (not in the tree) or its line count and runs [first line, lines]."""
        out: dict[str, Any] = {}
        for path, kept in self.files.items():
            if kept is None:
                out[path] = None
                continue
            runs: list[list[Any]] = []
            for n in sorted(kept):
                if runs and runs[-1][0] + len(runs[-1][1]) == n:
                    runs[-1][1].append(kept[n])
                else:
                    runs.append([n, [kept[n]]])
            out[path] = {"n": self.sizes[path], "runs": runs}
        return out


def tree_of(result: ResultFile, corpus: str) -> tuple[Path | None, str | None]:
    """The candidate tree if it is still the run's, else why its text is not shown.

    The result file may be someone else's: its `tree` can name any folder on this
    machine. Only a folder whose setup marker records this corpus's identity (and pin)
    is read -- a missing or unreadable marker is not the run's tree.
    """
    info = result.corpora.get(corpus)
    if info is None:
        return None, "this corpus has no entry in the result's corpora"
    tree = Path(info.tree)
    if not tree.is_dir():
        return None, (f"the candidate tree {info.tree} is not on this machine any more: the "
                      "text at each span is not shown (the spans and gains are)")
    # A track's pin is its manifest's (the corpus pin and the transform), not the marker's.
    pin = info.pin if info.track == "questions" else None
    marked = _marked_identity(tree, info.track)
    if marked is not None and marked != (info.identity, pin):
        return None, (f"the tree at {info.tree} was rebuilt from another corpora.toml entry "
                      "since this run: its text would not be what the engines saw")
    if marked is None:
        return None, (f"the folder at {info.tree} has no setup marker naming this run's "
                      "corpus identity and pin (rebuilt since, or not a corpus tree): its "
                      "text would not be what the engines saw, so none is shown")
    return tree, None


def _json_object(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _marked_identity(tree: Path, track: str) -> tuple[object, object] | None:
    """(identity, pin) as the setup marker beside `tree` records them; None without one.

    A track's tree (`<corpus>/tracks/<track>/tree`) is identified as run/plan.Plan does:
    the sha256 of the corpus marker's identity and the track record's key (that identity
    covers the corpus pin)."""
    if track == "questions":
        marker = _json_object(CorpusDir(tree.parent).setup_marker)
        return (marker["identity"], marker.get("pin")) if "identity" in marker else None
    base = CorpusDir(tree.parent.parent.parent)
    marker = _json_object(base.setup_marker)
    key = _json_object(base.track(tree.parent.name).record).get("key")
    if "identity" not in marker or not isinstance(key, str) or tree.parent.parent.name != \
            "tracks":
        return None
    blob = f"{marker['identity']}:{key}".encode()
    return hashlib.sha256(blob).hexdigest(), None
