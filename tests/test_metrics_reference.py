"""Cross-check metrics.py against trec_eval (via ir-measures and pytrec_eval).

Randomized runs: each query has 1-3 distinct gold documents and a ranking of
0-40 distinct documents with 0/1 relevance, so one slot is one document and
``gains[j]`` is 1 when the document at slot j+1 is gold. Engine scores are
coarse and full of ties; our metrics follow the engine's ORDER, so the
reference is fed strictly decreasing scores derived from rank. Queries with
no results are absent from the run.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from codesearch_bench.scoring import metrics

ir_measures = pytest.importorskip("ir_measures")
pytrec_eval = pytest.importorskip("pytrec_eval")

from ir_measures import AP, RR, R, Success, nDCG  # noqa: E402
from ir_measures import P as Prec  # noqa: E402

TOL = 1e-9
CUTOFFS = (5, 10, 20)
DOCS = [f"d{i:02d}" for i in range(60)]

# Reference measure -> our metric name.
MEASURES = {
    **{R @ k: f"recall@{k}" for k in CUTOFFS},
    **{Success @ k: f"hit@{k}" for k in CUTOFFS},
    **{AP @ k: f"map@{k}" for k in CUTOFFS},
    RR(cutoff=20): "mrr",
    nDCG @ 10: "ndcg@10",
    Prec @ 1: "p@1",
}

# The same measures named the way trec_eval itself names them.
TREC_NAMES = {
    **{f"recall_{k}": f"recall@{k}" for k in CUTOFFS},
    **{f"success_{k}": f"hit@{k}" for k in CUTOFFS},
    **{f"map_cut_{k}": f"map@{k}" for k in CUTOFFS},
    "recip_rank": "mrr",
    "ndcg_cut_10": "ndcg@10",
    "P_1": "p@1",
}
TREC_MEASURES = {"recall.5,10,20", "success.5,10,20", "map_cut.5,10,20"} | {
    "recip_rank",
    "ndcg_cut.10",
    "P.1",
}


@dataclass(frozen=True)
class Query:
    qid: str
    gold: frozenset[str]
    hits: tuple[tuple[str, float], ...]  # (doc, engine score), in the engine's order


def make_queries(seed: int, count: int = 300) -> list[Query]:
    rng = random.Random(seed)
    queries = []
    for i in range(count):
        gold = rng.sample(DOCS, rng.randint(1, 3))
        depth = 0 if rng.random() < 0.1 else rng.randint(0, 40)
        ranking = rng.sample(DOCS, depth)
        for doc in gold:  # pull some gold near the top so early cutoffs see hits
            if doc not in ranking and ranking and rng.random() < 0.5:
                ranking.insert(rng.randint(0, min(len(ranking), 8)), doc)
        ranking = ranking[:40]
        # Coarse, non-increasing engine scores: plenty of ties.
        scores = sorted((float(rng.randint(1, 5)) for _ in ranking), reverse=True)
        queries.append(
            Query(f"q{i:03d}", frozenset(gold), tuple(zip(ranking, scores, strict=True)))
        )
    return queries


def gains_of(hits: Sequence[tuple[str, float]], gold: frozenset[str]) -> list[int]:
    """One document per slot; engine scores play no part, only the order does."""
    return [1 if doc in gold else 0 for doc, _score in hits]


def ours(query: Query) -> dict[str, float]:
    return metrics.query_scores(gains_of(query.hits, query.gold), len(query.gold))


def qrels_of(queries: Sequence[Query]) -> list[object]:
    return [ir_measures.Qrel(q.qid, doc, 1) for q in queries for doc in sorted(q.gold)]


def run_of(queries: Sequence[Query], *, rank_scores: bool = True) -> list[object]:
    """The run the reference sees; queries without results are simply absent."""
    run = []
    for q in queries:
        for rank, (doc, score) in enumerate(q.hits):
            run.append(
                ir_measures.ScoredDoc(
                    q.qid, doc, float(len(q.hits) - rank) if rank_scores else score
                )
            )
    return run


def per_query(
    measures: dict[object, str], queries: Sequence[Query], run: list[object]
) -> dict[tuple[str, str], float]:
    table: dict[tuple[str, str], float] = {}
    for metric in ir_measures.iter_calc(list(measures), qrels_of(queries), run):
        table[(metric.query_id, measures[metric.measure])] = metric.value
    return table


@pytest.fixture(scope="module")
def queries() -> list[Query]:
    qs = make_queries(seed=20240611)
    assert sum(1 for q in qs if not q.hits) >= 20, "the sample must contain missing queries"
    assert any(len(q.hits) > 20 and q.hits[20][0] in q.gold for q in qs)
    return qs


@pytest.fixture(scope="module")
def reference(queries: list[Query]) -> dict[tuple[str, str], float]:
    return per_query(MEASURES, queries, run_of(queries))


def test_per_query_matches_reference(
    queries: list[Query], reference: dict[tuple[str, str], float]
) -> None:
    # ir-measures reports every (query, measure), filling missing queries with 0.
    assert len(reference) == len(queries) * len(MEASURES)
    for q in queries:
        mine = ours(q)
        for name in MEASURES.values():
            assert mine[name] == pytest.approx(reference[(q.qid, name)], abs=TOL), (q.qid, name)


def test_missing_queries_score_zero_on_both_sides(
    queries: list[Query], reference: dict[tuple[str, str], float]
) -> None:
    for q in (q for q in queries if not q.hits):
        mine = ours(q)
        for name in MEASURES.values():
            assert mine[name] == 0.0
            assert reference[(q.qid, name)] == 0.0


def test_mean_over_all_queries_matches_reference(queries: list[Query]) -> None:
    scored = [ours(q) for q in queries]
    aggregate = ir_measures.calc_aggregate(list(MEASURES), qrels_of(queries), run_of(queries))
    for measure, name in MEASURES.items():
        assert metrics.mean(s[name] for s in scored) == pytest.approx(aggregate[measure], abs=TOL)


def test_trec_eval_mean_needs_explicit_zeros_for_missing_queries(queries: list[Query]) -> None:
    """trec_eval only averages the queries in the run; ours averages all of them."""
    qrels = {q.qid: dict.fromkeys(q.gold, 1) for q in queries}
    # recip_rank has no cutoff in trec_eval: give it the top 20 only.
    run = {
        q.qid: {doc: float(len(q.hits) - rank) for rank, (doc, _) in enumerate(q.hits[:20])}
        for q in queries
        if q.hits
    }
    deep = {
        q.qid: {doc: float(len(q.hits) - rank) for rank, (doc, _) in enumerate(q.hits)}
        for q in queries
        if q.hits
    }
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)
    rest = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES - {"recip_rank"}).evaluate(deep)
    per_query_ref = {qid: {**rest[qid], "recip_rank": rr[qid]["recip_rank"]} for qid in rest}
    assert set(per_query_ref) == {q.qid for q in queries if q.hits}

    scored = [ours(q) for q in queries]
    for trec_name, name in TREC_NAMES.items():
        present = [v[trec_name] for v in per_query_ref.values()]
        filled = present + [0.0] * (len(queries) - len(present))
        mine = metrics.mean(s[name] for s in scored)
        assert mine == pytest.approx(metrics.mean(filled), abs=TOL), name
        if mine > 0:  # averaged over the run alone, trec_eval reads higher
            assert metrics.mean(present) > mine + TOL, name


def test_engine_score_ties_do_not_change_our_result(
    queries: list[Query], reference: dict[tuple[str, str], float]
) -> None:
    tied = [q for q in queries if len({s for _, s in q.hits}) < len(q.hits)]
    assert len(tied) > 100
    for q in tied:
        flat = Query(q.qid, q.gold, tuple((doc, 1.0) for doc, _ in q.hits))
        strict = Query(q.qid, q.gold, tuple((doc, -float(i)) for i, (doc, _) in enumerate(q.hits)))
        assert ours(q) == ours(flat) == ours(strict)

    # Fed the engine's tied scores, trec_eval re-sorts ties by document id and
    # disagrees with the engine's order on some queries; rank-derived scores
    # (what the other tests feed it) do not.
    raw = per_query(MEASURES, queries, run_of(queries, rank_scores=False))
    differs = [key for key, value in raw.items() if abs(value - reference[key]) > TOL]
    assert differs


def test_tie_example() -> None:
    """The engine ranks a before b with equal scores; b is gold."""
    q = Query("q", frozenset({"b"}), (("a", 1.0), ("b", 1.0)))
    assert ours(q)["p@1"] == 0.0
    assert ours(q)["mrr"] == 0.5
    measures = [Prec @ 1, RR]
    # trec_eval breaks score ties by descending document id, so it puts b first.
    raw = ir_measures.calc_aggregate(measures, qrels_of([q]), run_of([q], rank_scores=False))
    assert raw == {Prec @ 1: 1.0, RR: 1.0}
    # Scores derived from rank keep the engine's order.
    ranked = ir_measures.calc_aggregate(measures, qrels_of([q]), run_of([q]))
    assert ranked == {Prec @ 1: 0.0, RR: 0.5}
