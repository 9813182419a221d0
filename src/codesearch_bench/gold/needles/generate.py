"""Needles: every documented definition of a tree as a candidate, filtered and sampled.

The query is the doc's summary (summary.py); the gold is the definition's span,
resolved on the doc-blanked variant. Filters, in order, each counted: no
usable summary, boilerplate, a summary that gives the gold's name away (the
query-set lint's own rule), a text shared by several definitions, a gold that
does not resolve to exactly that span on the variant. Then at most `per_file`
per file and, in all, `per_corpus` on a small tree or `per_corpus_larger` on a
medium or large one (where the statistics need the power: a minimum detectable
MRR difference of 0.05 takes about a thousand paired queries), drawn
round-robin over directories in a seeded order, so a big folder cannot fill
the set. Ids and the dev/test split
follow the sorted (path, line) order: alternate dev, test, ... from dev.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..grammars import Definition, GoldError
from ..queries import GoldRef, Query, leaks
from ..resolve import resolve
from . import summary as sm


@dataclass(frozen=True)
class Params:
    seed: int = 0
    per_corpus: int = 400
    per_corpus_larger: int = 1500
    per_file: int = 20
    min_words: int = sm.MIN_WORDS
    min_chars: int = sm.MIN_CHARS
    max_chars: int = sm.MAX_CHARS

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def for_corpus(self, per_file: int | None) -> Params:
        """These parameters with a corpus's own per-file cap (corpora.toml), if it sets one."""
        return self if per_file is None else replace(self, per_file=per_file)

    def cap(self, tier: str) -> int:
        """The most needles a corpus of this size tier keeps."""
        return self.per_corpus if tier == "small" else self.per_corpus_larger


@dataclass(frozen=True)
class Candidate:
    path: str
    definition: Definition
    query: str
    style: str

    @property
    def directory(self) -> str:
        return str(Path(self.path).parent)


@dataclass
class Chosen:
    queries: list[Query]
    candidates: int = 0
    dropped: Counter[str] = field(default_factory=Counter)


def candidate(path: str, definition: Definition, raw: str, style: str,
              dropped: Counter[str]) -> Candidate | None:
    """One documented definition as a needle, or None with the reason counted."""
    text = sm.summarize(raw, style, definition.name)
    if sm.too_short(text):
        dropped["summary too short"] += 1
        return None
    if sm.boilerplate(text):
        dropped["boilerplate summary"] += 1
        return None
    if leaks(text, definition.qualname) is not None:
        dropped["summary names the definition"] += 1
        return None
    return Candidate(path, definition, text, style)


def choose(corpus: str, found: list[Candidate], tree: Path, params: Params, *,
           dropped: Counter[str], h_as_cpp: bool = False, tier: str = "small") -> Chosen:
    out = Chosen([], candidates=len(found) + sum(dropped.values()), dropped=dropped)
    texts = Counter(" ".join(c.query.lower().split()) for c in found)
    unique: list[Candidate] = []
    for c in found:
        if texts[" ".join(c.query.lower().split())] > 1:
            dropped["same summary as another definition"] += 1
        elif not _resolves(c, tree, h_as_cpp):
            dropped["gold does not resolve on the variant"] += 1
        else:
            unique.append(c)
    rng = random.Random(f"{params.seed}/{corpus}")
    by_file: dict[str, list[Candidate]] = defaultdict(list)
    for c in unique:
        by_file[c.path].append(c)
    by_dir: dict[str, list[Candidate]] = defaultdict(list)
    for path in sorted(by_file):
        picks = by_file[path]
        rng.shuffle(picks)
        dropped["over the per-file cap"] += max(0, len(picks) - params.per_file)
        by_dir[str(Path(path).parent)].extend(picks[:params.per_file])
    folders = sorted(by_dir)
    rng.shuffle(folders)
    for folder in folders:
        rng.shuffle(by_dir[folder])
    cap = params.cap(tier)
    kept: list[Candidate] = []
    while len(kept) < cap and any(by_dir[f] for f in folders):
        for folder in folders:
            if by_dir[folder] and len(kept) < cap:
                kept.append(by_dir[folder].pop())
    dropped["over the corpus cap"] += sum(len(v) for v in by_dir.values())
    kept.sort(key=lambda c: (c.path, c.definition.start, c.definition.qualname))
    for i, c in enumerate(kept):
        d = c.definition
        out.queries.append(Query(
            id=f"{corpus}-n{i + 1:04d}", query=c.query,
            gold=[GoldRef(path=c.path, symbol=d.qualname, kind=d.kind, line=d.start)],
            tags=["needle", d.kind, c.style], split="dev" if i % 2 == 0 else "test"))
    return out


def _resolves(c: Candidate, tree: Path, h_as_cpp: bool) -> bool:
    d = c.definition
    try:
        span = resolve(tree, c.path, d.qualname, kind=d.kind, line=d.start, h_as_cpp=h_as_cpp)
    except GoldError:
        return False
    return (span.start, span.end) == (d.start, d.end)
