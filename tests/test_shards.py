"""`--shard auto` from the scheduler's own variables; merged rows from two hosts are flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesearch_bench.errors import UsageError
from codesearch_bench.results.merge import HOSTS_FLAG, combine
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run.shards import from_scheduler, parse

GOLDEN = Path(__file__).parent / "golden" / "result-two-corpora.json"


@pytest.mark.parametrize(("env", "want"), [
    ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4"}, (1, 4, "slurm")),
    ({"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5",
      "SLURM_ARRAY_TASK_COUNT": "3"}, (3, 3, "slurm")),
    ({"JOB_COMPLETION_INDEX": "2", "BENCH_SHARD_COUNT": "4"}, (3, 4, "kubernetes")),
    ({"BENCH_SHARD_INDEX": "2", "BENCH_SHARD_COUNT": "2"}, (2, 2, "environment")),
])
def test_each_scheduler_names_the_shard(env: dict[str, str], want: tuple[int, int, str]
                                        ) -> None:
    assert from_scheduler(env) == want
    assert parse("auto", env) == want[:2]


@pytest.mark.parametrize(("env", "words"), [
    ({}, "no scheduler"),
    ({"SLURM_ARRAY_TASK_ID": "1"}, "SLURM_ARRAY_TASK_COUNT"),
    ({"JOB_COMPLETION_INDEX": "0"}, "BENCH_SHARD_COUNT"),
    ({"BENCH_SHARD_INDEX": "x", "BENCH_SHARD_COUNT": "2"}, "not a whole number"),
    ({"BENCH_SHARD_INDEX": "3", "BENCH_SHARD_COUNT": "2"}, "1 <= I <= N"),
])
def test_what_is_missing_is_said(env: dict[str, str], words: str) -> None:
    with pytest.raises(UsageError, match=words):
        parse("auto", env)


def test_explicit_shards() -> None:
    assert parse("2/4") == (2, 4) and parse(None) is None
    with pytest.raises(UsageError, match="I/N"):
        parse("two")


def test_rows_of_one_corpus_from_two_hosts_are_flagged() -> None:
    result = ResultFile.load(GOLDEN)
    engines = list(result.engines)
    corpus = result.rows[0].corpus
    a = result.model_copy(update={"rows": [r.model_copy(update={"host": "aaaa"})
                                           for r in result.rows if r.engine == engines[0]]})
    b = result.model_copy(update={"rows": [r.model_copy(update={"host": "bbbb"})
                                           for r in result.rows if r.engine != engines[0]]})
    merged = combine([(Path("a.json"), a), (Path("b.json"), b)], strict=True).result
    assert all(HOSTS_FLAG in r.flags for r in merged.rows if r.corpus == corpus)
    same = combine([(Path("a.json"), a), (Path("c.json"), b.model_copy(update={
        "rows": [r.model_copy(update={"host": "aaaa"}) for r in b.rows]}))], strict=True)
    assert not any(HOSTS_FLAG in r.flags for r in same.result.rows)
