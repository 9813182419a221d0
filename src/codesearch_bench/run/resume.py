"""What a resumed run takes over: the cells an earlier run of the same result file finished.

The earlier run's result file and its journal (the journal is newer where both
hold a cell) are read back; a cell is kept when it finished with rows under the
same spec, corpus, query set, split and cutoffs, and the rows of engines and
corpora not named this time are carried along. A cell that only failed is run
again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..engine.spec import LoadedSpec
from ..errors import UsageError
from ..protocol import PROTOCOL_VERSION
from ..results import journal
from ..results.schema import CorpusOut, EngineOut, Failure, ResultFile, Row
from .plan import Plan

Cell = tuple[str, str]  # (engine, corpus)


@dataclass
class Previous:
    """What an earlier run of the same result file measured: its JSON and its journal."""

    cutoffs: list[int]
    rows: dict[Cell, list[Row]] = field(default_factory=dict)
    failures: dict[Cell, Failure] = field(default_factory=dict)
    engines: dict[str, EngineOut] = field(default_factory=dict)
    corpora: dict[str, CorpusOut] = field(default_factory=dict)
    torn: int = 0


def load_previous(path: Path) -> Previous:
    """The result file and the cells its journal holds (the journal is newer where both)."""
    log = journal.path_for(path)
    if not path.exists() and not log.exists():
        raise UsageError(f"--resume {path}: neither that result file nor its journal {log} "
                         "exists", hint="--resume takes the --json file of the interrupted run")
    header, cells, torn = journal.read(log)
    previous: Previous | None = None
    old: ResultFile | None = None
    if path.exists():
        old = ResultFile.load(path)
        if header is not None and header.created >= old.created:
            old = None  # written by an earlier run; the journal is this run's own
    if old is not None:
        if old.protocol_version != PROTOCOL_VERSION:
            raise UsageError(f"--resume {path}: measured under protocol {old.protocol_version}, "
                             f"this bench is protocol {PROTOCOL_VERSION}; start a new run")
        previous = Previous(cutoffs=old.cutoffs, engines=dict(old.engines),
                            corpora=dict(old.corpora))
        for row in old.rows:
            previous.rows.setdefault((row.engine, row.corpus), []).append(row)
        for failure in old.failures:
            if failure.corpus != "*" and failure.engine != "*":
                previous.failures[(failure.engine, failure.corpus)] = failure
    if header is not None and header.protocol_version != PROTOCOL_VERSION:
        raise UsageError(f"--resume {path}: its journal was written under protocol "
                         f"{header.protocol_version}; start a new run")
    if previous is None:
        previous = Previous(cutoffs=header.cutoffs if header else [])
    previous.torn = torn
    for record in cells:
        key = (record.engine, record.corpus)
        previous.rows[key] = record.rows
        previous.failures.pop(key, None)
        if record.failure is not None:
            previous.failures[key] = record.failure
        previous.engines[record.engine] = record.engine_info
        previous.corpora[record.corpus] = record.corpus_info
    return previous


def _same_cell(previous: Previous, key: Cell, loaded: LoadedSpec, plan: Plan) -> bool:
    old_engine, old_corpus = previous.engines.get(key[0]), previous.corpora.get(key[1])
    return (old_engine is not None and old_corpus is not None
            and old_engine.spec_sha256 == loaded.sha256
            and old_corpus.identity == plan.identity
            and old_corpus.query_set_sha256 == plan.query_set.sha256
            and old_corpus.queries == len(plan.queries))


@dataclass
class Kept:
    """What a resumed run takes over from the previous one."""

    done: set[Cell] = field(default_factory=set)
    rows: list[Row] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    engines: dict[str, EngineOut] = field(default_factory=dict)
    corpora: dict[str, CorpusOut] = field(default_factory=dict)


def kept_cells(previous: Previous | None, plans: list[Plan], specs: list[LoadedSpec],
               cutoffs: tuple[int, ...], split: str) -> Kept:
    """Cells finished with the same spec, corpus, queries and cutoffs; and the rest carried."""
    kept = Kept()
    if previous is None:
        return kept
    splits = {r.split for rows in previous.rows.values() for r in rows}
    if splits and splits != {split}:
        raise UsageError(f"--resume: that run measured split {', '.join(sorted(splits))}, this "
                         f"one {split}; pass the same --split or start a new run")
    if previous.cutoffs and previous.cutoffs != list(cutoffs):
        raise UsageError(f"--resume: that run used cutoffs {previous.cutoffs}, this one "
                         f"{list(cutoffs)}; start a new run or pass the same --cutoffs")
    by_corpus = {p.unit: p for p in plans}
    by_engine = {s.name: s for s in specs}
    for key in sorted(set(previous.rows) | set(previous.failures)):
        engine, corpus = key
        plan, loaded = by_corpus.get(corpus), by_engine.get(engine)
        if plan is not None and loaded is not None:
            # A cell of this run: kept only when it finished with rows under the same inputs;
            # a cell that only failed (no rows) is run again.
            if previous.rows.get(key) and _same_cell(previous, key, loaded, plan):
                kept.done.add(key)
            else:
                continue
        elif plan is not None:
            old = previous.corpora.get(corpus)
            if old is None or old.identity != plan.identity or \
                    old.query_set_sha256 != plan.query_set.sha256:
                continue  # the corpus changed since: an old row would not be comparable
        elif corpus in previous.corpora:
            kept.corpora.setdefault(corpus, previous.corpora[corpus])
        if loaded is None and engine in previous.engines:
            kept.engines.setdefault(engine, previous.engines[engine])
        kept.rows.extend(previous.rows.get(key, []))
        if key in previous.failures:
            kept.failures.append(previous.failures[key])
    return kept
