"""`bench report --format trec --out DIR`: TREC qrels and runs, so trec_eval can re-score.

The run and qrels follow protocol/PROTOCOL.md, "Relevant items and trec_eval":
a relevant item is a distinct gold file (file granularity) or a distinct gold
span (chunk granularity); each slot gives the run one rank per item it finds
first (chunk granularity), else one rank with a docno no qrel holds. Scores
fall with the rank, so trec_eval's own ordering is the engine's. Query ids are
`<corpus>/<query id>`, so one qrels file serves every corpus.

A TREC line is whitespace-separated fields, one record a line, and trec_eval readers
split on any whitespace (some on Unicode's too). So every id and docno is written with
each byte outside printable ASCII -- spaces, tabs, newlines, control characters,
non-ASCII -- and `%` itself percent-encoded (UTF-8, as in a URL): the same encoding in
qrels and runs, so they still pair, and no id or path can add a line or split a field.
A row whose outcomes were kept without their slots cannot be exported (its run would be
empty and trec_eval would score it 0): the export refuses it by name.

    DIR/qrels.file.txt   DIR/qrels.chunk.txt
    DIR/run.<engine>.<corpus>.pf<N>.file.txt   (and .chunk.txt when chunk-graded)
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from ..errors import UsageError
from ..results.schema import GoldOut, QueryOutcome, ResultFile, Row, SlotOut

#: printable ASCII but `%`: what a TREC field carries as it is
_PLAIN = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "%")


def field(text: str) -> str:
    """`text` as one TREC field: percent-encoded outside printable ASCII, `%` included."""
    return quote(text, safe=_PLAIN, errors="surrogatepass")


def _chunk_doc(g: GoldOut) -> str:
    return f"{g.path}:{g.start}-{g.end}"


def relevant(outcome: QueryOutcome, chunk: bool) -> list[str]:
    """The query's relevant docnos, each once, in gold order."""
    if chunk:
        return list(dict.fromkeys(_chunk_doc(g) for g in outcome.gold if g.start is not None))
    return list(dict.fromkeys(g.path for g in outcome.gold))


def _meets(chunk: tuple[int | None, int | None], g: GoldOut) -> bool:
    start, end = chunk
    if start is None or end is None or g.start is None or g.end is None:
        return False
    return start <= g.end and g.start <= end


def ranks(outcome: QueryOutcome, chunk: bool) -> list[str]:
    """The run's docnos in rank order: per slot, the items it finds first, else a miss."""
    out: list[str] = []
    credited: set[str] = set()
    for number, slot in enumerate(outcome.slots, start=1):
        if not chunk:
            out.append(slot.path)
            continue
        found = [_chunk_doc(g) for g in _gold_spans(outcome)
                 if g.path == slot.path and _chunk_doc(g) not in credited
                 and any(_meets(c, g) for c in slot.chunks)]
        found = list(dict.fromkeys(found))
        credited.update(found)
        out.extend(found or [_miss(slot, number)])
    return out


def _gold_spans(outcome: QueryOutcome) -> list[GoldOut]:
    return [g for g in outcome.gold if g.start is not None]


def _miss(slot: SlotOut, number: int) -> str:
    return f"{slot.path}#{number}"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name)


def write_trec(result: ResultFile, out_dir: Path) -> list[Path]:
    """Write the qrels and one run per row and granularity; returns the files written."""
    if not any(o.gold for r in result.rows for o in r.queries):
        raise UsageError("this result records no gold items per query, so no qrels can be "
                         "written", hint="results written before gold was recorded: run "
                         "bench compare again")
    bare = [r for r in result.rows if _without_slots(r)]
    if bare:
        shown = "; ".join(_described(r) for r in bare[:5]) + (
            f" and {len(bare) - 5} more" if len(bare) > 5 else "")
        raise UsageError(
            f"{len(bare)} row(s) answered queries but the file keeps none of their slots, so "
            f"their runs would be empty and trec_eval would score them 0: {shown}",
            hint="export the result file `bench compare --json` wrote in full (a slim "
            "copy keeps scores, not slots)")
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    qrels: dict[bool, dict[str, list[str]]] = {False: {}, True: {}}
    for row in result.rows:
        for outcome in row.queries:
            qid = _qid(row, outcome)
            for chunk in (False, True):
                docs = relevant(outcome, chunk)
                if docs:
                    qrels[chunk].setdefault(qid, docs)
    for chunk, table in qrels.items():
        path = out_dir / f"qrels.{'chunk' if chunk else 'file'}.txt"
        path.write_text("".join(f"{qid} 0 {field(doc)} 1\n" for qid, docs in table.items()
                                for doc in docs))
        written.append(path)
    for row in result.rows:
        for chunk in (False, True):
            if chunk and not row.spans:
                continue
            path = out_dir / (f"run.{_safe(row.engine)}.{_safe(row.corpus)}.pf{row.per_file}."
                              f"{'chunk' if chunk else 'file'}.txt")
            path.write_text(_run(row, chunk))
            written.append(path)
    return written


def _run(row: Row, chunk: bool) -> str:
    lines = []
    for outcome in row.queries:
        if outcome.error is not None:
            continue  # absent from the run: trec_eval -c scores it 0, as the harness does
        docs = ranks(outcome, chunk)
        for rank, doc in enumerate(docs, start=1):
            lines.append(f"{_qid(row, outcome)} Q0 {field(doc)} {rank} "
                         f"{len(docs) - rank + 1} {_safe(row.engine)}\n")
    return "".join(lines)


def _qid(row: Row, outcome: QueryOutcome) -> str:
    return field(f"{row.corpus}/{outcome.id}")


def _without_slots(row: Row) -> bool:
    """Some answered query found results the file does not list (a slim copy)."""
    return any(o.error is None and o.n_slots and not o.slots for o in row.queries)


def _described(row: Row) -> str:
    split = "" if row.split == "all" else f", split={row.split}"
    return f"{row.engine} × {row.corpus} (per_file={row.per_file}{split})"
