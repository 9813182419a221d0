"""The drill-down's data: every query of every row, its slots, gains and the text shown.

The result file keeps slots as paths and line spans with per-slot gains; it keeps
no text, no query wording and no gold spans. What it lacks is read at report
time from where the run left it, and only when that is still the run's:

- the text at each span from the candidate tree (`corpora[name].tree`), through
  `TreeText`, when the tree's setup marker still names the recorded corpus identity;
- the query wording and gold items from the query set, when its hash is still the
  recorded `query_set_sha256`;
- gold spans resolved in that tree, unless the outcome carries them itself.

Whatever cannot be read is said, per corpus, instead of guessed; the gains alone
still say which slot found gold.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...corpus.layout import CorpusDir
from ...corpus.tree import TreeText
from ...errors import BenchError
from ...gold.grammars import GoldError
from ...gold.queries import GoldRef, Query, load_queries
from ...gold.resolve import resolve
from ...model import Span
from ...protocol import (
    CHUNK_HIT,
    CHUNK_MRR,
    CHUNK_RECALL,
    FILE_HIT,
    FILE_MRR,
    FILE_RECALL,
    HEADLINE_CUTOFF,
)
from ...results.schema import QueryOutcome, ResultFile, Row
from ..formats import rows_of

SHOWN_LINES = 40  # per span: enough to recognise a definition, not a whole file
TEXT_BUDGET = 8_000_000  # characters of tree text per page, so a big run stays openable
SCORES = (FILE_HIT, CHUNK_HIT, FILE_RECALL, CHUNK_RECALL, FILE_MRR, CHUNK_MRR)


@dataclass
class _Texts:
    tree: TreeText | None
    budget: int = TEXT_BUDGET
    table: dict[str, dict[str, Any]] = field(default_factory=dict)
    cut: bool = False

    def key(self, path: str, start: int | None, end: int | None) -> str | None:
        """The span's key in the page's text table, reading it the first time."""
        if self.tree is None or start is None or end is None:
            return None
        key = f"{path}:{start}-{end}"
        if key in self.table:
            return key
        lines = self.tree.at(path, start, end)
        if lines is None:
            self.table[key] = {"missing": True}
            return key
        shown = [line[:400] for line in lines[:SHOWN_LINES]]
        size = sum(len(line) for line in shown)
        if size > self.budget:
            self.cut = True
            return None
        self.budget -= size
        self.table[key] = {"start": max(start, 1), "lines": shown,
                           "more": max(0, len(lines) - len(shown))}
        return key


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


def _overlap(path: str, start: int | None, end: int | None, gold: list[Span]) -> bool:
    return any(g.path == path and None not in (start, end, g.start, g.end)
               and start <= g.end and g.start <= end  # type: ignore[operator]
               for g in gold)


def _outcome(o: QueryOutcome, gold: list[Span], texts: _Texts) -> dict[str, Any]:
    slots = []
    for i, slot in enumerate(o.slots):
        chunks = [{"s": s, "e": e, "key": texts.key(slot.path, s, e),
                   "gold": _overlap(slot.path, s, e, gold)} for s, e in slot.chunks]
        slots.append({"path": slot.path, "chunks": chunks,
                      "fg": o.file_gains[i] if i < len(o.file_gains) else 0,
                      "cg": (o.chunk_gains[i] if o.chunk_gains is not None
                             and i < len(o.chunk_gains) else None)})
    return {"latency": o.latency_s, "error": o.error, "raw": o.raw_hits, "n_slots": o.n_slots,
            "first_file": o.first_file_slot, "first_chunk": o.first_chunk_slot,
            "entered": o.chunk_entered, "outside": o.outside,
            "tokens": (o.tokens or {}).get("tokens@10"),
            "scores": {m: o.scores[m] for m in SCORES if m in o.scores}, "slots": slots}


def _gold_entry(span: Span | str, texts: _Texts) -> dict[str, Any]:
    if isinstance(span, str):
        return {"label": span, "unresolved": True}
    return {"label": span.label, "path": span.path, "start": span.start, "end": span.end,
            "key": texts.key(span.path, span.start, span.end)}


def corpus_data(result: ResultFile, corpus: str) -> dict[str, Any]:
    """Everything the drill-down shows for one corpus, for the page's JSON block."""
    tree, tree_note = tree_of(result, corpus)
    known, query_note = queries_of(result, corpus)
    texts = _Texts(TreeText(tree) if tree is not None else None)
    info = result.corpora.get(corpus)
    langs = info.languages if info else {}
    h_as_cpp = "cpp" in langs and "c" not in langs  # how setup counted the .h files
    rows = rows_of(result, corpus, headline_only=False)
    order: list[str] = []
    for r in rows:
        order += [o.id for o in r.queries if o.id not in order]
    cache: dict[GoldRef, Span | str] = {}
    gold: dict[str, list[Span | str]] = {}
    recorded = False
    for qid in order:
        carried = next((g for r in rows for o in r.queries if o.id == qid
                        for g in [_recorded_gold(o)] if g is not None), None)
        if carried is not None:
            recorded = True
            gold[qid] = list(carried)
        elif qid in known:
            gold[qid] = _gold_spans(known[qid], tree, h_as_cpp, cache)
        else:
            gold[qid] = []
    runs: dict[str, Any] = {}
    for r in rows:
        runs[run_key(r)] = {
            "engine": r.engine, "per_file": r.per_file, "headline": r.headline,
            "spans": r.spans, "outcomes": {
                o.id: _outcome(o, [g for g in gold.get(o.id, []) if isinstance(g, Span)],
                               texts) for o in r.queries}}
    queries = []
    for qid in order:
        q = known.get(qid)
        queries.append({"id": qid, "text": q.query if q else None,
                        "split": q.split if q else None, "tags": list(q.tags) if q else [],
                        "gold": [_gold_entry(g, texts) for g in gold[qid]]})
    notes = [n for n in (tree_note, query_note) if n]
    if texts.cut:
        notes.append("the page's text budget ran out: some spans show no text")
    if not recorded and known and tree is not None:
        notes.append("gold spans were resolved from the tree at report time (the result "
                     "file does not record them); the gains are the run's own")
    return {"engines": list(dict.fromkeys(r.engine for r in rows)),
            "passes": sorted({r.per_file for r in rows}), "runs": runs, "queries": queries,
            "text": texts.table, "notes": notes}


def run_key(row: Row) -> str:
    return f"{row.engine}|{row.per_file}"


def drill_data(result: ResultFile, corpora: list[str]) -> dict[str, Any]:
    return {"corpora": {c: corpus_data(result, c) for c in corpora},
            "metrics": [FILE_HIT, CHUNK_HIT], "cutoff": HEADLINE_CUTOFF}
