"""Needles: every documented definition of a tree as a candidate, filtered and sampled.

The query is the doc's summary (summary.py); the gold is the definition's span,
resolved on the doc-blanked variant. A needle is kept when it is a question
with one right answer that nothing else in the tree gives away; each rule
drops what fails it, counted under its reason, in this order (RULES):

1. a question, not debris (summary.py): a comment above a constant `#define`
   (in C such a comment heads a block of constants, or the code after them),
   too short once URLs and code are out,
   a first sentence too long to keep whole, a bare reference, boilerplate,
   brackets left open;
2. one right answer: the gold's name defined more than once in the tree
   (overloads, per-platform implementations, same-named methods) -- dropped,
   since a doc does not say which of them it is; a near-duplicate query
   (near.py) -- both dropped;
3. nothing left to find (elsewhere.py): six words of the query in a row in
   any file of the variant tree;
4. a gold that resolves to exactly its span on the variant.

What is left is split by name overlap (names.py): `name:none` needles make
the headline track, the others the `needles-named` breakout. Each then keeps
at most `per_file` per file and, in all, `per_corpus` on a small tree or
`per_corpus_larger` on a medium or large one (a minimum detectable MRR
difference of 0.05 takes about a thousand paired queries), drawn round-robin
over directories in a seeded order, so a big folder cannot fill the set. Ids
and the dev/test split follow the sorted (path, line) order: alternate dev,
test, ... from dev.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from ..grammars import Definition, GoldError
from ..queries import GoldRef, Query, leaks
from ..resolve import resolve
from . import elsewhere, names, near
from . import summary as sm

TOO_SHORT = "summary too short (words of prose)"
OVERLONG = "first sentence over 300 characters"
REFERENCE = "a reference or a fragment, not a description"
BOILERPLATE = "boilerplate summary"
UNBALANCED = "brackets left open (runs into an example)"
MOVED = "file's spans moved when blanked"
GROUP_COMMENT = "a constant macro's comment (documents a group)"
SAME_NAME = "name defined more than once in the tree"
NEAR_DUPLICATE = "near-duplicate of another needle"
ELSEWHERE = "six-word run found elsewhere in the tree"
UNRESOLVED = "gold does not resolve on the variant"
PER_FILE = "over the per-file cap"
PER_CORPUS = "over the corpus cap"
NAMED_PER_FILE = "named breakout: over the per-file cap"
NAMED_PER_CORPUS = "named breakout: over the corpus cap"
RULES = (GROUP_COMMENT, TOO_SHORT, OVERLONG, REFERENCE, BOILERPLATE, UNBALANCED, MOVED, SAME_NAME,
         NEAR_DUPLICATE, ELSEWHERE, UNRESOLVED, PER_FILE, PER_CORPUS, NAMED_PER_FILE,
         NAMED_PER_CORPUS)


@dataclass(frozen=True)
class Params:
    seed: int = 0
    per_corpus: int = 400
    per_corpus_larger: int = 1500
    per_file: int = 20
    min_words: int = sm.MIN_WORDS
    min_content: int = sm.MIN_CONTENT
    min_chars: int = sm.MIN_CHARS
    max_chars: int = sm.MAX_CHARS
    near_duplicate: float = near.THRESHOLD
    run: int = elsewhere.RUN

    def as_dict(self) -> dict[str, float]:
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
    queries: list[Query]  # the headline track: name-blind
    named: list[Query]  # the breakout: queries holding words of the gold's name
    candidates: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    overlap: Counter[str] = field(default_factory=Counter)  # valid needles by name: tag
    found_in: Counter[str] = field(default_factory=Counter)  # ELSEWHERE by kind of file
    prefixes: list[str] = field(default_factory=list)

    def dropped_in_order(self) -> dict[str, int]:
        return {rule: self.dropped[rule] for rule in RULES if self.dropped[rule]}


def candidate(path: str, definition: Definition, raw: str, style: str,
              dropped: Counter[str]) -> Candidate | None:
    """One documented definition as a needle, or None with the reason counted."""
    text = sm.summarize(raw, style, definition.name)
    reason = (TOO_SHORT if sm.too_short(text) else OVERLONG if sm.overlong(text)
              else REFERENCE if sm.reference(text) else BOILERPLATE if sm.boilerplate(text)
              else UNBALANCED if sm.unbalanced(text) else None)
    if reason is not None:
        dropped[reason] += 1
        return None
    return Candidate(path, definition, text, style)


def choose(corpus: str, found: list[Candidate], tree: Path, params: Params, *,
           dropped: Counter[str], defined: Counter[str], files: list[str],
           h_as_cpp: bool = False, tier: str = "small") -> Chosen:
    """The valid needles of `found`, split by name overlap and sampled.

    `defined` counts every definition name of the tree; `files` are the variant
    tree's files (relative), every one of which an engine may read.
    """
    out = Chosen([], [], candidates=len(found) + sum(dropped.values()), dropped=dropped)
    # Near-duplicates among every candidate: a doc shared with a definition the name rule
    # drops still makes two right answers for the one kept.
    twins = near.near_duplicates([c.query for c in found], params.near_duplicate)
    one_name = [c for i, c in enumerate(found) if defined[c.definition.name] <= 1]
    dropped[SAME_NAME] += len(found) - len(one_name)
    distinct = [c for i, c in enumerate(found)
                if defined[c.definition.name] <= 1 and i not in twins]
    dropped[NEAR_DUPLICATE] += len(one_name) - len(distinct)
    seen = elsewhere.find([c.query for c in distinct], tree, files)
    hidden = [c for i, c in enumerate(distinct) if i not in seen.where]
    dropped[ELSEWHERE] += len(seen.where)
    out.found_in = seen.kinds
    valid = [c for c in hidden if _resolves(c, tree, h_as_cpp)]
    dropped[UNRESOLVED] += len(hidden) - len(valid)
    prefixes = names.common_prefixes(defined)
    out.prefixes = sorted(prefixes)
    blind: list[tuple[Candidate, names.Overlap]] = []
    named: list[tuple[Candidate, names.Overlap]] = []
    for c in valid:
        overlap = names.measure(c.query, c.definition.qualname, prefixes)
        if overlap.blind and leaks(c.query, c.definition.qualname) is not None:
            overlap = replace(overlap, own=1.0)  # the query-set lint's rule holds everywhere
        out.overlap[overlap.tag] += 1
        (blind if overlap.blind else named).append((c, overlap))
    cap = params.cap(tier)
    out.queries = _queries(f"{corpus}-n", _sample(blind, params, cap, f"{params.seed}/{corpus}",
                                                  dropped))
    aside: Counter[str] = Counter()
    out.named = _queries(f"{corpus}-m", _sample(named, params, cap,
                                                f"{params.seed}/{corpus}/named", aside))
    # Counted apart: left out of the breakout, not of the headline track.
    dropped[NAMED_PER_FILE] += aside[PER_FILE]
    dropped[NAMED_PER_CORPUS] += aside[PER_CORPUS]
    return out


def _sample(pool: list[tuple[Candidate, names.Overlap]], params: Params, cap: int, seed: str,
            dropped: Counter[str]) -> list[tuple[Candidate, names.Overlap]]:
    rng = random.Random(seed)
    by_file: dict[str, list[tuple[Candidate, names.Overlap]]] = defaultdict(list)
    for pick in pool:
        by_file[pick[0].path].append(pick)
    by_dir: dict[str, list[tuple[Candidate, names.Overlap]]] = defaultdict(list)
    for path in sorted(by_file):
        picks = by_file[path]
        rng.shuffle(picks)
        dropped[PER_FILE] += max(0, len(picks) - params.per_file)
        by_dir[str(Path(path).parent)].extend(picks[:params.per_file])
    folders = sorted(by_dir)
    rng.shuffle(folders)
    for folder in folders:
        rng.shuffle(by_dir[folder])
    kept: list[tuple[Candidate, names.Overlap]] = []
    while len(kept) < cap and any(by_dir[f] for f in folders):
        for folder in folders:
            if by_dir[folder] and len(kept) < cap:
                kept.append(by_dir[folder].pop())
    dropped[PER_CORPUS] += sum(len(v) for v in by_dir.values())
    kept.sort(key=lambda p: (p[0].path, p[0].definition.start, p[0].definition.qualname))
    return kept


def _queries(prefix: str, kept: list[tuple[Candidate, names.Overlap]]) -> list[Query]:
    out: list[Query] = []
    for i, (c, overlap) in enumerate(kept):
        d = c.definition
        out.append(Query(
            id=f"{prefix}{i + 1:04d}", query=c.query,
            gold=[GoldRef(path=c.path, symbol=d.qualname, kind=d.kind, line=d.start)],
            tags=["needle", d.kind, c.style, *overlap.tags], split="dev" if i % 2 == 0 else "test",
            name_overlap=overlap.own))
    return out


def _resolves(c: Candidate, tree: Path, h_as_cpp: bool) -> bool:
    d = c.definition
    try:
        span = resolve(tree, c.path, d.qualname, kind=d.kind, line=d.start, h_as_cpp=h_as_cpp)
    except GoldError:
        return False
    return (span.start, span.end) == (d.start, d.end)
