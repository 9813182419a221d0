"""The drill-down's data: every query of every row, its slots, gains and the text shown.

The result file keeps slots as paths and line spans with per-slot gains; it keeps
no text, no query wording and no gold spans. What it lacks is read at report
time from where the run left it, and only when that is still the run's:

- the text at each span from the candidate tree (`corpora[name].tree`), through
  `texts.Texts`, when the tree's setup marker still names the recorded corpus identity;
- the query wording and gold items from the query set, when its hash is still the
  recorded `query_set_sha256`;
- gold spans resolved in that tree, unless the outcome carries them itself.

Whatever cannot be read is said, per corpus, instead of guessed; the gains alone
still say which slot found gold.

A corpus's data is one JSON object, written a row at a time (`corpus_json`) so a big
corpus is never held as one structure. It is the page's own format, read by report.js:

- `queries`: `{id, text, split, tags, gold: [{label, path, start, end} | {label,
  unresolved}]}` in the rows' order;
- `runs["engine|per_file"]`: `{engine, per_file, outcomes: {query id: outcome}}`, an
  outcome `{latency, error, raw, first_file, first_chunk, entered, outside, tokens,
  scores, slots}` with each slot `[path index, file gain, chunk gain or null, [[start,
  end - start, 1 if the lines overlap gold else 0], ...]]`;
- `paths`: the slots' paths, each once; `text`: `texts.Texts.table()`; `notes`: what
  could not be read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ...corpus.tree import TreeText
from ...errors import BenchError
from ...gold.grammars import GoldError
from ...gold.queries import GoldRef, Query, load_queries
from ...gold.resolve import resolve
from ...model import Span
from ...protocol import CHUNK_HIT, FILE_HIT, HEADLINE_CUTOFF
from ...results.schema import QueryOutcome, ResultFile, Row
from ..formats import rows_of
from .texts import SHOWN_LINES, Budget, Texts, tree_of

METRICS = (FILE_HIT, CHUNK_HIT)  # what the drill-down sorts queries on, the only scores kept


def queries_of(result: ResultFile, corpus: str) -> tuple[dict[str, Query], str | None]:
    """The query set's queries by id when its file is unchanged since the run."""
    info = result.corpora.get(corpus)
    if info is None:
        return {}, None
    path = Path(info.query_set)
    if not path.is_file():
        return {}, (f"the query set {info.query_set} is not on this machine: queries show "
                    "by id only")
    try:
        qs = load_queries(path)
    except BenchError as exc:
        return {}, f"the query set {info.query_set} cannot be read: {exc}"
    if qs.sha256 != info.query_set_sha256:
        return {}, (f"the query set {info.query_set} changed since this run (its hash differs): "
                    "queries show by id only")
    return {q.id: q for q in qs.queries}, None


def _gold_spans(query: Query, tree: Path | None, h_as_cpp: bool,
                cache: dict[GoldRef, Span | str]) -> list[Span | str]:
    out: list[Span | str] = []
    for ref in query.gold:
        if ref not in cache:
            if ref.symbol is None or tree is None:
                cache[ref] = Span(ref.path, symbol=ref.symbol)
            else:
                try:
                    cache[ref] = resolve(tree, ref.path, ref.symbol, kind=ref.kind,
                                         line=ref.line, h_as_cpp=h_as_cpp)
                except GoldError as exc:
                    cache[ref] = f"{ref.label}: {exc}"
        out.append(cache[ref])
    return out


def _recorded_gold(outcome: QueryOutcome) -> list[Span] | None:
    """Gold spans the outcome carries itself; None for a result written before outcomes
    kept their gold (every query has gold, so none recorded means none kept)."""
    if not outcome.gold:
        return None
    return [Span(g.path, g.start, g.end, g.symbol) for g in outcome.gold if g.path]


def _overlap(start: int | None, end: int | None, gold: list[tuple[int, int]]) -> bool:
    return start is not None and end is not None and any(
        start <= g_end and g_start <= end for g_start, g_end in gold)


def _by_path(gold: list[Span]) -> dict[str, list[tuple[int, int]]]:
    """A query's gold lines by path: most slots are of a file holding none."""
    out: dict[str, list[tuple[int, int]]] = {}
    for g in gold:
        if g.start is not None and g.end is not None:
            out.setdefault(g.path, []).append((g.start, g.end))
    return out


def _dumps(value: object) -> str:
    # ASCII: a path with a lone surrogate (an undecodable name) still encodes.
    return json.dumps(value, separators=(",", ":"), allow_nan=False)


class _Paths:
    """Each slot path once per corpus: a big corpus repeats a few thousand paths a
    hundred thousand times, further apart than gzip's window reaches."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, path: str) -> int:
        return self.index.setdefault(path, len(self.index))


def _outcome(o: QueryOutcome, gold: dict[str, list[tuple[int, int]]],
             paths: _Paths) -> dict[str, Any]:
    slots = []
    for i, slot in enumerate(o.slots):
        lines = gold.get(slot.path, [])
        # The length, not the end: an engine's chunks are mostly one size, which gzips.
        chunks = [[s, None if s is None or e is None else e - s,
                   int(bool(lines) and _overlap(s, e, lines))] for s, e in slot.chunks]
        slots.append([paths(slot.path), o.file_gains[i] if i < len(o.file_gains) else 0,
                      o.chunk_gains[i] if o.chunk_gains is not None
                      and i < len(o.chunk_gains) else None, chunks])
    latency = None if o.latency_s is None else round(o.latency_s, 4)  # shown to 0.1 ms
    return {"latency": latency, "error": o.error, "raw": o.raw_hits,
            "first_file": o.first_file_slot, "first_chunk": o.first_chunk_slot,
            "entered": o.chunk_entered, "outside": o.outside,
            "tokens": (o.tokens or {}).get("tokens@10"),
            "scores": {m: o.scores[m] for m in METRICS if m in o.scores}, "slots": slots}


def _read_slot_text(rows: list[Row], texts: Texts) -> None:
    """The slots' text, rank by rank across every engine and query: when the budget runs
    out, what is left without text is the slots furthest down, not the last engine's."""
    depth = max((len(o.slots) for r in rows for o in r.queries), default=0)
    for rank in range(depth):
        for r in rows:
            for o in r.queries:
                if rank < len(o.slots):
                    slot = o.slots[rank]
                    for s, e in slot.chunks:
                        texts.want(slot.path, s, e)


def _gold_entry(span: Span | str, texts: Texts) -> dict[str, Any]:
    if isinstance(span, str):
        return {"label": span, "unresolved": True}
    texts.want(span.path, span.start, span.end)
    return {"label": span.label, "path": span.path, "start": span.start, "end": span.end}


def corpus_json(result: ResultFile, corpus: str, budget: Budget) -> Iterator[str]:
    """Everything the drill-down shows for one corpus, as pieces of one JSON object.

    The gold's text is read first, so a budget that runs out leaves engines' slots
    without text before it leaves the gold without."""
    tree, tree_note = tree_of(result, corpus)
    known, query_note = queries_of(result, corpus)
    texts = Texts(TreeText(tree) if tree is not None else None, budget)
    info = result.corpora.get(corpus)
    langs = info.languages if info else {}
    h_as_cpp = "cpp" in langs and "c" not in langs  # how setup counted the .h files
    rows = rows_of(result, corpus, headline_only=False)
    carried: dict[str, list[Span] | None] = {}  # the first outcome's that carries any
    for r in rows:
        for o in r.queries:
            if carried.get(o.id) is None:
                carried[o.id] = _recorded_gold(o)
    order = list(carried)
    cache: dict[GoldRef, Span | str] = {}
    gold: dict[str, list[Span | str]] = {}
    recorded = False
    for qid in order:
        spans = carried[qid]
        if spans is not None:
            recorded = True
            gold[qid] = list(spans)
        elif qid in known:
            gold[qid] = _gold_spans(known[qid], tree, h_as_cpp, cache)
        else:
            gold[qid] = []
    queries = []
    for qid in order:
        q = known.get(qid)
        queries.append({"id": qid, "text": q.query if q else None,
                        "split": q.split if q else None, "tags": list(q.tags) if q else [],
                        "gold": [_gold_entry(g, texts) for g in gold[qid]]})
    yield ('{"engines":' + _dumps(list(dict.fromkeys(r.engine for r in rows)))
           + ',"passes":' + _dumps(sorted({r.per_file for r in rows}))
           + ',"queries":' + _dumps(queries) + ',"runs":{')
    del queries
    _read_slot_text(rows, texts)
    paths = _Paths()
    lines = {qid: _by_path([g for g in spans if isinstance(g, Span)])
             for qid, spans in gold.items()}
    for i, r in enumerate(rows):
        run = {"engine": r.engine, "per_file": r.per_file, "outcomes": {
            o.id: _outcome(o, lines.get(o.id, {}), paths) for o in r.queries}}
        yield ("," if i else "") + _dumps(run_key(r)) + ":" + _dumps(run)
    notes = [n for n in (tree_note, query_note) if n]
    if texts.cut:
        notes.append("the page's text budget ran out: some spans show no text")
    if not recorded and known and tree is not None:
        notes.append("gold spans were resolved from the tree at report time (the result "
                     "file does not record them); the gains are the run's own")
    yield ('},"paths":' + _dumps(list(paths.index)) + ',"text":' + _dumps(texts.table())
           + ',"notes":' + _dumps(notes) + "}")


def run_key(row: Row) -> str:
    return f"{row.engine}|{row.per_file}"


def drill_index(corpora: list[tuple[str, str]]) -> dict[str, Any]:
    """The page's small JSON block: which data block holds each corpus, and the settings
    the script reads (the metrics to compare on, the cutoff, the lines a span shows)."""
    return {"corpora": [{"name": name, "block": block} for name, block in corpora],
            "metrics": list(METRICS), "cutoff": HEADLINE_CUTOFF, "shown": SHOWN_LINES}
