"""`results.construct.built` is model_construct without its cost, never a different model."""

from __future__ import annotations

from typing import Any

import pytest

from codesearch_bench.results.construct import built
from codesearch_bench.results.schema import GoldOut, IndexOut, QueryOutcome, SlotOut

CASES: list[tuple[type[Any], dict[str, Any]]] = [
    (SlotOut, {"path": "a/b.py", "chunks": [(3, 9), (None, None)]}),
    (GoldOut, {"path": "a.py", "start": 1, "end": 4, "symbol": "f", "grade": None}),
    (GoldOut, {"path": "a.py"}),
    (QueryOutcome, {"id": "q1", "latency_s": 0.01, "error": None, "raw_hits": 3,
                    "gold": [GoldOut(path="a.py")], "chunk_entered": True,
                    "scores": {"file.mrr": 0.5}, "file_gains": [0, 1]}),
    (QueryOutcome, {"id": "q2", "error": "engine error: boom"}),
    (IndexOut, {"cached": True}),
]


@pytest.mark.parametrize(("cls", "values"), CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_built_equals_model_construct_and_validation(cls: type[Any],
                                                     values: dict[str, Any]) -> None:
    fast, slow, checked = built(cls, dict(values)), cls.model_construct(**values), cls(**values)
    assert fast == slow == checked
    assert fast.model_fields_set == slow.model_fields_set == set(values)
    assert fast.model_dump_json() == slow.model_dump_json() == checked.model_dump_json()
    assert fast.model_dump(exclude_unset=True) == slow.model_dump(exclude_unset=True)


def test_each_built_model_gets_its_own_defaults() -> None:
    one, two = built(QueryOutcome, {"id": "a"}), built(QueryOutcome, {"id": "b"})
    one.tags.append("x")
    one.scores["file.mrr"] = 1.0
    assert two.tags == [] and two.scores == {}
    assert QueryOutcome(id="c").tags == []


def test_models_built_with_every_field_share_one_fields_set_safely() -> None:
    # Shared to save memory (a query builds ~20 slots); assignment and model_copy
    # must still leave every other model's fields set as it was.
    one = built(SlotOut, {"path": "a.py", "chunks": [(1, 2)]})
    two = built(SlotOut, {"path": "b.py", "chunks": []})
    assert one.__pydantic_fields_set__ is two.__pydantic_fields_set__
    one.path = "c.py"
    copied = two.model_copy(update={"path": "d.py"})
    assert copied.__pydantic_fields_set__ is not two.__pydantic_fields_set__
    assert one.model_fields_set == two.model_fields_set == {"path", "chunks"}
    assert (one.path, two.path, copied.path) == ("c.py", "b.py", "d.py")
    # A model given only some fields has its own set: assigning the rest marks only it.
    part, other = built(GoldOut, {"path": "a.py"}), built(GoldOut, {"path": "b.py"})
    part.start = 3
    assert part.model_fields_set == {"path", "start"} and other.model_fields_set == {"path"}
