"""`results.outcome.outcome` is QueryOutcome's own constructor without validation, never a
different model; `slim` drops exactly the per-slot detail."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from codesearch_bench.results.outcome import outcome, slim
from codesearch_bench.results.schema import GoldOut, QueryOutcome, SlotOut

CASES: list[dict[str, Any]] = [
    {"id": "q1", "latency_s": 0.01, "error": None, "raw_hits": 3,
     "gold": [GoldOut(path="a.py")], "chunk_entered": True,
     "scores": {"file.mrr": 0.5}, "file_gains": [0, 1]},
    {"id": "q2", "error": "engine error: boom"},
    {"id": "q3", "slots": [SlotOut("a/b.py", [(3, 9), (None, None)])], "n_slots": 1,
     "chunk_gains": [0], "tokens": {"tokens@1": 4}, "tokens_to_first_gold": 2,
     "answer": "text", "content_entered": True, "tags": ["x"], "split": "dev",
     "gold": [GoldOut("a.py", 1, 4, "f", 2)], "unsolicited": 1, "leftovers": 2},
]


def test_every_field_is_a_parameter() -> None:
    assert list(inspect.signature(outcome).parameters) == list(QueryOutcome.model_fields)


@pytest.mark.parametrize("values", CASES, ids=lambda v: v["id"])
def test_outcome_equals_the_validated_model(values: dict[str, Any]) -> None:
    made, checked = outcome(**values), QueryOutcome(**values)
    assert made == checked
    assert made.model_dump_json() == checked.model_dump_json()
    assert QueryOutcome.model_validate_json(made.model_dump_json()) == checked


def test_each_outcome_gets_its_own_defaults() -> None:
    one, two = outcome(id="a"), outcome(id="b")
    one.tags.append("x")
    one.scores["file.mrr"] = 1.0
    one.slots.append(SlotOut("a.py", []))
    assert two.tags == [] and two.scores == {} and two.slots == []


def test_outcomes_share_one_fields_set_safely() -> None:
    one, two = outcome(id="a"), outcome(id="b")
    assert one.__pydantic_fields_set__ is two.__pydantic_fields_set__
    one.error = "boom"
    copied = two.model_copy(update={"id": "c"})
    assert copied.__pydantic_fields_set__ is not two.__pydantic_fields_set__
    assert one.model_fields_set == two.model_fields_set == set(QueryOutcome.model_fields)
    assert (one.error, two.error, copied.id) == ("boom", None, "c")


@pytest.mark.parametrize("values", CASES, ids=lambda v: v["id"])
def test_slim_drops_only_the_per_slot_detail(values: dict[str, Any]) -> None:
    full = QueryOutcome(**values)
    detail = {"slots": [], "gold": [], "file_gains": [],
              "chunk_gains": None if full.chunk_gains is None else []}
    assert slim(full) == full.model_copy(update=detail)
