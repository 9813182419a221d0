"""Ranking metrics equal trec_eval at both granularities, for every gold shape.

The harness side is what compare runs: `collapse` -> `grade` -> `evaluate.scores`.
The reference side is built here from the slots and the gold alone, as
protocol/PROTOCOL.md ("Relevant items and trec_eval") describes it: qrels of
distinct gold files or distinct gold spans, a run with one docno per rank (a
slot that finds several spans is that many ranks), cut after slot k, scored by
pytrec_eval; failed and empty queries are absent from the run and count 0
(trec_eval -c). Cases: generated multi-gold rankings (several gold items per
file, several gold chunks in one slot, per_file 1-3, failed and empty ones),
gold shapes taken from the shipped query sets, and the outcomes stored in the
golden result files.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest
from minicorpus import QUERIES, SOURCES

from codesearch_bench.gold.resolve import resolve
from codesearch_bench.model import Hit, Slot, Span
from codesearch_bench.scoring.evaluate import scores
from codesearch_bench.scoring.grade import grade
from codesearch_bench.scoring.normalize import collapse

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-9
CUTOFFS = (5, 10, 20)
REPO = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = [f"pkg/m{i}.py" for i in range(30)]


@dataclass(frozen=True)
class Case:
    qid: str
    gold: list[Span]
    slots: list[Slot] | None  # None: the query failed


# --- the reference: trec_eval on the documented run ------------------------------


def _lines_meet(chunk: tuple[int | None, int | None], span: Span) -> bool:
    start, end = chunk
    if start is None or end is None or span.start is None or span.end is None:
        return False
    return start <= span.end and span.start <= end


def qrels_and_ranks(case: Case, chunk: bool) -> tuple[list[str], list[list[str]]]:
    """Relevant docnos, and per slot the docnos of its ranks (the protocol's run)."""
    if chunk:
        relevant = list(dict.fromkeys(f"{g.path}:{g.start}-{g.end}" for g in case.gold
                                      if g.start is not None))
    else:
        relevant = list(dict.fromkeys(g.path for g in case.gold))
    per_slot: list[list[str]] = []
    for slot in case.slots or []:
        if not chunk:
            per_slot.append([slot.path])
            continue
        found = [doc for doc in relevant if doc.rsplit(":", 1)[0] == slot.path and any(
            _lines_meet((h.start, h.end), _span_of(doc)) for h in slot.chunks)]
        per_slot.append(found or [f"{slot.path}#{slot.rank}"])
    return relevant, per_slot


def _span_of(doc: str) -> Span:
    path, lines = doc.rsplit(":", 1)
    start, end = lines.split("-")
    return Span(path, int(start), int(end))


def _run(per_slot: list[list[str]], slots: int) -> dict[str, float]:
    docs = [d for ranks in per_slot[:slots] for d in ranks]
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


def reference(cases: list[Case], chunk: bool) -> dict[str, dict[str, float]]:
    """qid -> our metric name -> trec_eval's value (0 for queries absent from the run)."""
    qrels: dict[str, dict[str, int]] = {}
    ranks: dict[str, list[list[str]]] = {}
    for case in cases:
        relevant, per_slot = qrels_and_ranks(case, chunk)
        if relevant:
            qrels[case.qid] = dict.fromkeys(relevant, 1)
            ranks[case.qid] = per_slot
    out: dict[str, dict[str, float]] = {q: defaultdict(float) for q in qrels}  # type: ignore[misc]

    def evaluate(measures: set[str], slots: int, qids: list[str]) -> dict[str, dict[str, float]]:
        run = {q: _run(ranks[q], slots) for q in qids if _run(ranks[q], slots)}
        sub = {q: qrels[q] for q in qids}
        return dict(pytrec_eval.RelevanceEvaluator(sub, measures).evaluate(run))

    for k in CUTOFFS:
        got = evaluate({"map", "recall.1000", "success.1000"}, k, list(qrels))
        for q, m in got.items():
            out[q][f"recall@{k}"] = m["recall_1000"]
            out[q][f"hit@{k}"] = m["success_1000"]
            out[q][f"map@{k}"] = m["map"]
    for q, m in evaluate({"recip_rank", "P.1"}, 20, list(qrels)).items():
        out[q]["mrr"] = m["recip_rank"]
        out[q]["p@1"] = m["P_1"]
    by_depth: dict[int, list[str]] = defaultdict(list)
    for q, per_slot in ranks.items():
        depth = sum(len(r) for r in per_slot[:10]) + max(0, 10 - len(per_slot))
        by_depth[depth].append(q)
    for depth, qids in by_depth.items():
        for q, m in evaluate({f"ndcg_cut.{depth}"}, 10, qids).items():
            out[q]["ndcg@10"] = m[f"ndcg_cut_{depth}"]
    return out


def harness(case: Case) -> dict[str, float] | None:
    """What the harness scores; None for a failed query (a miss: every metric 0)."""
    if case.slots is None:
        return None
    return scores(grade(case.slots, case.gold, spans=True), CUTOFFS)


NAMES = [*(f"{m}@{k}" for m in ("recall", "hit", "map") for k in CUTOFFS), "mrr", "ndcg@10",
         "p@1"]


def assert_equal_to_reference(cases: list[Case]) -> int:
    compared = 0
    for chunk, prefix in ((False, "file."), (True, "chunk.")):
        ref = reference(cases, chunk)
        for case in cases:
            if case.qid not in ref:
                continue  # no chunk qrels: chunk metrics are not entered
            mine = harness(case)
            if mine is not None:
                assert (prefix + "mrr" in mine) == (case.qid in ref)
            for name in NAMES:
                ours = 0.0 if mine is None else mine[prefix + name]
                assert ours == pytest.approx(ref[case.qid][name], abs=TOL), (
                    case.qid, prefix + name, case)
                compared += 1
    return compared


# --- generated cases ---------------------------------------------------------------


def _gold(rng: random.Random, shape: list[tuple[int, bool]]) -> list[Span]:
    """One span per (file index, has symbol); spans in one file may overlap or repeat."""
    gold = []
    for file_index, symbol in shape:
        path = FILES[file_index]
        if not symbol:
            gold.append(Span(path))
            continue
        start = rng.randint(1, 150)
        gold.append(Span(path, start, start + rng.randint(0, 25), symbol=f"s{len(gold)}"))
    if len(gold) > 1 and rng.random() < 0.1:
        gold.append(gold[0])  # two gold symbols resolving to one span
    return gold


def _hits(rng: random.Random, gold: list[Span]) -> list[Hit]:
    hits = []
    for rank in range(rng.randint(1, 45)):
        target = rng.choice(gold) if rng.random() < 0.35 else None
        path = target.path if target else rng.choice(FILES)
        if target is not None and target.start is not None and rng.random() < 0.7:
            start = target.start + rng.randint(-5, 5)
        else:
            start = rng.randint(1, 170)
        # Some chunks are large enough to cover two gold spans of their file.
        length = rng.choice((0, 3, 10, 40, 120))
        hits.append(Hit(path, max(1, start), max(1, start) + length, rank=rank))
    return hits


def make_case(rng: random.Random, qid: str, shape: list[tuple[int, bool]]) -> Case:
    gold = _gold(rng, shape)
    roll = rng.random()
    if roll < 0.06:
        return Case(qid, gold, None)
    if roll < 0.12:
        return Case(qid, gold, [])
    slots = collapse(_hits(rng, gold), per_file=rng.randint(1, 3))
    return Case(qid, gold, slots)


def generated(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    for i in range(count):
        n = rng.randint(1, 4)
        # Few files, so gold items often share one.
        shape = [(rng.randint(0, 2), rng.random() > 0.1) for _ in range(n)]
        cases.append(make_case(rng, f"g{i:03d}", shape))
    return cases


def test_generated_multi_gold_cases_equal_trec_eval() -> None:
    cases = generated(seed=3, count=500)
    graded = [(c, grade(c.slots, c.gold, spans=True)) for c in cases if c.slots]
    # The sample holds what the issue is about, not only the easy shapes.
    assert sum(1 for c, g in graded if g.n_gold < len(c.gold) and g.file_gains[0] == 0) > 20
    graded_only = [g for _, g in graded]
    assert sum(max(g.chunk_gains or (0,)) >= 2 for g in graded_only) > 20, "two spans, one slot"
    assert any(g.n_gold == 1 and g.n_gold_chunks >= 2 for g in graded_only)
    assert any(g.file_gains[1:2] == (1,) and g.n_gold_chunks >= 2 for g in graded_only)
    assert any(c.slots is None for c in cases) and any(c.slots == [] for c in cases)
    assert any(len(c.slots or []) > 20 for c in cases)
    assert assert_equal_to_reference(cases) > 5000


def test_the_issue_example_equals_trec_eval() -> None:
    """Two gold symbols in one file, that file at slot 2: AP@10 0.5, nDCG@10 0.631."""
    gold = [Span("a.py", 1, 5, "f"), Span("a.py", 20, 30, "g")]
    slots = [Slot("b.py", 1, (Hit("b.py", 1, 9),)),
             Slot("a.py", 2, (Hit("a.py", 1, 40),))]  # one chunk covering both spans
    case = Case("issue", gold, slots)
    mine = harness(case)
    assert mine is not None
    assert mine["file.map@10"] == 0.5
    assert mine["file.ndcg@10"] == pytest.approx(0.6309, abs=1e-4)
    assert mine["chunk.map@10"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    assert assert_equal_to_reference([case]) == 2 * len(NAMES)


def test_shipped_gold_shapes_equal_trec_eval() -> None:
    """Every shipped query with several gold items, under random rankings."""
    rng = random.Random(11)
    cases = []
    for path in sorted((REPO / "protocol" / "queries").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            query = json.loads(line)
            if len(query["gold"]) < 2:
                continue
            files = list(dict.fromkeys(g["path"] for g in query["gold"]))
            shape = [(files.index(g["path"]), "symbol" in g) for g in query["gold"]]
            for round_ in range(4):
                cases.append(make_case(rng, f"{query['id']}/{round_}", shape))
    assert len({c.qid.split("/")[0] for c in cases}) >= 30
    assert any(len({g.path for g in c.gold}) < len(c.gold) for c in cases)
    assert assert_equal_to_reference(cases) > 1000


# --- the outcomes stored in the golden results --------------------------------------


def _mini_gold(tmp_path: Path) -> dict[str, list[Span]]:
    for rel, text in SOURCES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    gold: dict[str, list[Span]] = {}
    for q in QUERIES:
        items = []
        for g in q["gold"]:
            symbol = g.get("symbol")
            items.append(resolve(tmp_path, g["path"], symbol) if symbol else Span(g["path"]))
        gold[str(q["id"])] = items
    return gold


def _stored_cases(data: dict[str, object], gold: dict[str, list[Span]]
                  ) -> list[tuple[Case, dict[str, float]]]:
    out = []
    for i, row in enumerate(data["rows"]):  # type: ignore[attr-defined]
        for q in row["queries"]:
            slots = None if q["error"] else [
                Slot(s["path"], rank, tuple(Hit(s["path"], a, b) for a, b in s["chunks"]))
                for rank, s in enumerate(q["slots"], start=1)]
            out.append((Case(f"{i}/{q['id']}", gold[q["id"]], slots), q["scores"]))
    return out


@pytest.mark.parametrize("name", ["result-two-corpora.json", "quality-mini.json"])
def test_stored_outcomes_equal_trec_eval(tmp_path: Path, name: str) -> None:
    data = json.loads((GOLDEN / name).read_text())
    stored = _stored_cases(data, _mini_gold(tmp_path))
    assert len(stored) >= 48
    for case, saved in stored:
        mine = harness(case)
        if mine is not None and saved:
            assert mine == pytest.approx(saved, abs=1e-12), case.qid
    assert assert_equal_to_reference([case for case, _ in stored]) > 500


# --- graded qrels (an imported BEIR set): file nDCG@10 gains the grade ------------


def test_graded_file_ndcg_equals_trec_eval_with_graded_qrels() -> None:
    """trec_eval's ndcg_cut.10 with graded qrels (gain = grade), as BEIR reports it."""
    rng = random.Random(7)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    mine: dict[str, float] = {}
    for i in range(300):
        qid = f"g{i}"
        relevant = rng.sample(FILES, rng.randint(1, 8))
        gold = [Span(p, grade=rng.choice([1, 1, 2, 3])) for p in relevant]
        if rng.random() < 0.2:  # one file named twice: its highest grade counts
            gold.append(Span(relevant[0], grade=1))
        ranking = rng.sample(FILES, rng.randint(0, 25))
        slots = [Slot(p, r, (Hit(p),)) for r, p in enumerate(ranking, start=1)]
        got = scores(grade(slots, gold, spans=False), CUTOFFS)
        mine[qid] = got["file.ndcg@10"]
        qrels[qid] = {}
        for g in gold:
            assert g.grade is not None
            qrels[qid][g.path] = max(qrels[qid].get(g.path, 0), g.grade)
        if ranking:
            run[qid] = {p: float(100 - r) for r, p in enumerate(ranking[:10])}
    ref = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    for qid, value in mine.items():
        expected = ref[qid]["ndcg_cut_10"] if qid in ref else 0.0
        assert value == pytest.approx(expected, abs=TOL), qid
    # Ungraded gold keeps the binary nDCG, bit for bit.
    plain = [Span(p) for p in FILES[:3]]
    slots = [Slot(p, r, (Hit(p),)) for r, p in enumerate(FILES[2:8], start=1)]
    ones = [Span(p, grade=1) for p in FILES[:3]]
    assert scores(grade(slots, plain, spans=False), CUTOFFS) == \
        scores(grade(slots, ones, spans=False), CUTOFFS)
