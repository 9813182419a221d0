"""Pydantic models from values the harness made itself, without model_construct's cost.

A fast engine's query builds twenty-odd result models (its slots, its gold, the
outcome), thousands of times a second; `model_construct` walks every field and,
since pydantic 2.10, inspects each default factory's signature on every call.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


_GIVEN, _DEFAULT, _FACTORY = 0, 1, 2


@functools.cache
def _fields(cls: type[BaseModel]) -> tuple[tuple[str, int, Any], ...]:
    """Each field in declaration order, with how to fill it when not given."""
    out: list[tuple[str, int, Any]] = []
    for name, info in cls.model_fields.items():
        if info.default_factory is not None:
            out.append((name, _FACTORY, info.default_factory))
        elif info.is_required():
            out.append((name, _GIVEN, None))
        else:
            out.append((name, _DEFAULT, info.default))
    return tuple(out)


def built(cls: type[M], values: dict[str, Any]) -> M:
    """`cls.model_construct(**values)` for values the harness made itself, at a fraction
    of its cost: a query builds twenty-odd models, thousands of times a second on a
    fast engine. Same fields in the same order (the JSON keeps it), defaults and
    fields-set (tests/test_built_models.py). `values` is handed over: with every
    field in it, it becomes the model's own dict, not copied."""
    names = _names(cls)
    model = _new(cls)
    if tuple(values) == names:
        # Every field given, in declaration order: nothing to fill in, and the fields
        # set is every field -- one set for all such models of the class (see _every).
        _set(model, "__dict__", values)
        _set(model, "__pydantic_fields_set__", _every(cls))
    else:
        _set(model, "__dict__", _filled(cls, values))
        _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


@functools.cache
def _names(cls: type[BaseModel]) -> tuple[str, ...]:
    return tuple(cls.model_fields)


@functools.cache
def _every(cls: type[BaseModel]) -> set[str]:
    """The fields set of a model built with every field: shared, since nothing can
    change it -- pydantic only adds a field's name on assignment (already in it), and
    model_copy copies the set before it updates. A query's twenty slots each had
    their own ~250-byte set: a quarter of an outcome's memory."""
    return set(cls.model_fields)


def _filled(cls: type[BaseModel], values: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, how, default in _fields(cls):
        if name in values:
            data[name] = values[name]
        elif how == _DEFAULT:
            data[name] = default
        elif how == _FACTORY:
            data[name] = default()
    return data


_new = object.__new__
_set = object.__setattr__
