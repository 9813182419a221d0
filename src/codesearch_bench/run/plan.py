"""Before any engine runs: corpora set up, query sets loaded, gold resolved, cells ordered.

A `Plan` is one corpus ready to be searched. The cell order is fixed by the
arguments alone -- engines rotated per corpus so no engine always runs first
-- so shard I of N picks the same cells on every machine.
"""

from __future__ import annotations

import fnmatch
import functools
import hashlib
import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..corpus import setup
from ..corpus.config import Corpus
from ..corpus.layout import CorpusDir
from ..corpus.tree import Manifest
from ..engine.spec import LoadedSpec
from ..errors import CorpusError, QueryError
from ..gold.needles import track as needles
from ..gold.queries import Query, QuerySet
from ..gold.questions import questions_of
from ..gold.sets import resolve_set
from ..model import Span

QUESTIONS = "questions"
#: What `--query-set all` runs: the tracks verdicts rest on.
HEADLINE_TRACKS = (QUESTIONS, needles.TRACK)
TRACKS = (*HEADLINE_TRACKS, needles.NAMED)


class EmptyTrack(QueryError):
    """A generated track with no query: nothing in the corpus survived its rules."""


@dataclass
class Plan:
    """One corpus and one track of it, ready: the tree engines get, its queries and gold."""

    corpus: Corpus
    manifest: Manifest
    tree: Path
    query_set: QuerySet
    queries: list[Query]
    gold: dict[str, list[Span]]
    track: str = QUESTIONS
    dirs: CorpusDir | None = None  # where the tree and its manifest live (fingerprints)
    track_info: dict[str, Any] | None = None  # how a generated track was made
    #: a `path` corpus's folder as setup copied it (content hashes, no mtimes): an edit to
    #: the folder is a new tree, so a new index and no cell kept from before it
    content: str | None = None

    @property
    def unit(self) -> str:
        """The name rows and cells carry: the corpus, or `corpus:track` for another track."""
        return self.corpus.name if self.track == QUESTIONS else f"{self.corpus.name}:{self.track}"

    @property
    def identity(self) -> str:
        """What the tree and queries were made from: a change means a new index."""
        base = self.corpus.identity
        if self.content is not None:
            base = hashlib.sha256(f"{base}:content:{self.content}".encode()).hexdigest()
        if self.track == QUESTIONS or self.track_info is None:
            return base
        blob = f"{base}:{self.track_info.get('key', '')}"
        return hashlib.sha256(blob.encode()).hexdigest()


SPLITS = ("all", "dev", "test")
_SPLIT_FIX = ('give each query of the set "split": "dev" or "test" (`bench validate` counts '
              "those without), or run without --split")


def unsplit(qs: QuerySet) -> int:
    """Queries with no split: only `--split all` runs them."""
    return sum(q.split is None for q in qs.queries)


def pick(qs: QuerySet, split: str = "all", ids: list[str] | None = None,
         limit: int | None = None) -> list[Query]:
    """The queries to run: a split's (dev or test), or the named ones, then the first N."""
    chosen = qs.queries
    if split not in SPLITS:
        raise QueryError(f"no split {split!r}; the splits are {', '.join(SPLITS)}")
    if split != "all":
        chosen = [q for q in chosen if q.split == split]
        if not chosen:
            present: list[str] = sorted({q.split for q in qs.queries if q.split}) or ["none"]
            raise QueryError(f"{qs.path}: no query is in the {split} split; splits present: "
                             f"{', '.join(present)}", hint=_SPLIT_FIX if unsplit(qs) else "")
    if ids:
        known = {q.id for q in chosen}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise QueryError(f"{qs.path}: no query {', '.join(map(repr, unknown))}"
                             + (f" in the {split} split" if split != "all" else ""),
                             hint=f"ids look like {chosen[0].id!r}" if chosen else "")
        chosen = [q for q in chosen if q.id in set(ids)]
    return chosen[:limit] if limit else chosen


def prepare(corpus: Corpus, corpora_root: Path, *, limit: int | None = None,
            split: str = "all", ids: list[str] | None = None, track: str = QUESTIONS,
            stage: Callable[[str], None] = lambda msg: None,
            selection: Sequence[str] = ()) -> Plan:
    """Set the corpus up if needed, load its queries, resolve their gold; raises BenchError.

    The needle track is generated from the set-up tree on first use (and kept). `selection`:
    the flags that chose the corpora (--suite DIR ...), repeated in a hint's command.
    """
    if track not in TRACKS:
        raise QueryError(f"no track {track!r}; the tracks are {', '.join(TRACKS)}")
    if changes := setup.source_changes(corpora_root, corpus):
        stage(f"rebuilding corpus {corpus.name}: {setup.changed_since_setup(changes)}")
    elif not setup.is_set_up(corpora_root, corpus):
        stage(f"setting up corpus {corpus.name}")
    set_up = setup.setup(corpus, corpora_root)
    content = setup.content_identity(corpora_root, corpus)
    base = setup.dirs(corpora_root.resolve(), corpus)
    if track in (needles.TRACK, needles.NAMED):
        return replace(_needle_plan(corpus, base, limit, split, ids, stage, track),
                       content=content)
    questions = questions_of(corpus)
    qs = questions.query_set
    if qs is None:
        raise CorpusError(f"corpus {corpus.name!r} has no hand-written questions "
                          f"({questions.none_because})",
                          hint="run it on its needle track (--query-set needles, or all), or "
                          "give it a `queries` file in corpora.toml")
    resolved = resolve_set(corpus, set_up.tree, qs, base.gold)
    if resolved.failures:
        raise QueryError(f"corpus {corpus.name!r}: {len(resolved.failures)} gold item(s) "
                         f"do not resolve (first: {resolved.failures[0]})",
                         hint="run `" + shlex.join(["bench", "validate", "--corpus",
                                                    corpus.name, *selection]) + "`")
    chosen = pick(qs, split, ids, limit)
    if split != "all" and (left_out := unsplit(qs)):
        stage(f"{corpus.name}: {left_out} of {len(qs.queries)} queries have no split and are "
              f"left out by --split {split}")
    return Plan(corpus, set_up.manifest, set_up.tree, qs, chosen, resolved.spans, dirs=base,
                content=content)


def _needle_plan(corpus: Corpus, base: CorpusDir, limit: int | None, split: str,
                 ids: list[str] | None, stage: Callable[[str], None], track: str) -> Plan:
    if not needles.is_built(corpus, base):
        stage(f"generating the needle track of {corpus.name}")
    needle_track = needles.prepare(corpus, base)
    query_set = needle_track.query_set if track == needles.TRACK else needle_track.named
    if query_set is None or not query_set.queries:
        candidates = needle_track.record.get("candidates", 0)
        which = ("no documented definition survived the needle filters" if track ==
                 needles.TRACK else "no valid needle holds words of its gold's name")
        raise EmptyTrack(f"corpus {corpus.name!r}: {which} ({candidates} candidates)",
                         hint=f"this corpus has no {track} track; run its questions only")
    dirs = needle_track.dirs
    resolved = resolve_set(corpus, dirs.tree, query_set, dirs.gold)
    if resolved.failures:
        raise QueryError(f"corpus {corpus.name!r}, {track} track: {len(resolved.failures)} "
                         f"gold item(s) do not resolve (first: {resolved.failures[0]})",
                         hint=f"delete {dirs.base} to generate it again")
    return Plan(corpus, needle_track.manifest, dirs.tree, query_set,
                pick(query_set, split, ids, limit), resolved.spans,
                track=track, dirs=dirs, track_info=needle_track.record)


def rebuild(plan: Plan, corpora_root: Path) -> None:
    """An engine changed this plan's tree: set the corpus (and its track) up again."""
    root = corpora_root.resolve()
    if plan.track == QUESTIONS:
        setup.invalidate(root, plan.corpus)
        setup.setup(plan.corpus, root)
    else:
        needles.invalidate(setup.dirs(root, plan.corpus))
        needles.prepare(plan.corpus, setup.dirs(root, plan.corpus))


def passes(loaded: LoadedSpec, headline_only: bool) -> int:
    """The per_file passes a cell of this engine makes over its queries."""
    return 1 if headline_only else len(set(loaded.spec.per_file))


def units(plan: Plan, loaded: LoadedSpec, headline_only: bool) -> int:
    """A cell's share of the work, and its outcomes: each query once per per_file pass."""
    return len(plan.queries) * passes(loaded, headline_only)


@dataclass(frozen=True)
class Workload:
    """The searches a run has ahead -- one query answered by one engine in one pass -- and
    what they are made of, so progress can say what it counts in the units people quote."""

    cells: int
    searches: int
    tracks: int  # the corpus tracks the cells run on
    queries: int  # each query of each corpus track once, however many engines answer it
    engines: int
    passes: tuple[int, int]  # the fewest and the most passes a cell makes


def workload(todo: list[tuple[Plan, LoadedSpec]], headline_only: bool) -> Workload:
    """What the cells in `todo` add up to."""
    tracks = {plan.unit: len(plan.queries) for plan, _ in todo}
    made = [passes(loaded, headline_only) for _, loaded in todo]
    return Workload(cells=len(todo),
                    searches=sum(units(plan, loaded, headline_only) for plan, loaded in todo),
                    tracks=len(tracks), queries=sum(tracks.values()),
                    engines=len({loaded.name for _, loaded in todo}),
                    passes=(min(made), max(made)) if made else (0, 0))


def interleave(specs: list[LoadedSpec], corpus_index: int) -> list[LoadedSpec]:
    """Rotate the engine order by corpus so no engine always runs first."""
    if not specs:
        return specs
    shift = corpus_index % len(specs)
    return specs[shift:] + specs[:shift]


def uncovered(loaded: LoadedSpec, plan: Plan) -> str | None:
    """Why the engine cannot answer for this corpus at all, or None when it can."""
    spec = loaded.spec
    if spec.covers is not None and plan.corpus.name not in spec.covers:
        return "not in the engine's `covers`"
    if spec.reads is not None and not _holds(plan.tree, tuple(spec.reads)):
        return f"the tree holds no file the engine reads (`reads`: {', '.join(spec.reads)})"
    return None


def covered(loaded: LoadedSpec, plan: Plan) -> bool:
    return uncovered(loaded, plan) is None


@functools.cache
def _holds(tree: Path, globs: tuple[str, ...]) -> bool:
    for _, _, names in os.walk(tree):
        if any(fnmatch.fnmatchcase(n, g) for n in names for g in globs):
            return True
    return False


def gaps(plans: list[Plan], specs: list[LoadedSpec]) -> list[tuple[str, str, str]]:
    """(engine, corpus, reason) for each corpus an engine does not cover: gaps, not zeros."""
    reasons = ((loaded.name, plan.unit, uncovered(loaded, plan))
               for plan in plans for loaded in specs)
    return [(e, c, why) for e, c, why in reasons if why is not None]


def cells(plans: list[Plan], specs: list[LoadedSpec],
          shard: tuple[int, int] | None) -> list[tuple[Plan, LoadedSpec]]:
    """Every (corpus track, engine) cell in run order, or this shard's share of them.

    Cell j belongs to shard (j mod N) + 1.
    """
    in_order = [(plan, loaded) for i, plan in enumerate(plans)
                for loaded in interleave(specs, i) if covered(loaded, plan)]
    if shard is None:
        return in_order
    index, count = shard
    return [cell for j, cell in enumerate(in_order) if j % count == index - 1]
