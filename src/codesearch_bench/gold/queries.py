"""Query sets: `protocol/queries/<corpus>.jsonl`, one query a line.

    {"id": "rich-007", "query": "where is the display width of a string computed",
     "gold": [{"path": "rich/cells.py", "symbol": "cell_len"}],
     "tags": ["behavior", "easy"], "split": "test"}

A gold item names a file and usually a symbol (dotted nesting), with an
optional `kind` or `line` to tell same-named definitions apart. Loading
reports every malformed line with its number; `lint` finds what makes a set
dishonest: duplicate ids and queries that leak the gold symbol's name.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import QueryError


class GoldRef(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(min_length=1)
    symbol: str | None = None
    kind: str | None = None
    line: int | None = Field(default=None, ge=1)
    grade: int | None = Field(default=None, ge=0, description="an imported dataset's graded "
                              "relevance (BEIR qrels score); kept, scored as relevant")
    start: int | None = Field(default=None, ge=1, description="a span given by lines, for "
                              "gold no definition names (an imported needle); with end")
    end: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _lines(self) -> GoldRef:
        if (self.start is None) != (self.end is None):
            raise ValueError("give both start and end, or neither")
        if self.start is not None and self.end is not None:
            if self.symbol is not None:
                raise ValueError("a gold item names a symbol or a line span, not both")
            if self.end < self.start:
                raise ValueError("end is before start")
        return self

    @field_validator("path")
    @classmethod
    def _relative(cls, value: str) -> str:
        if value.startswith("/") or ".." in value.split("/") or "\\" in value:
            raise ValueError("a gold path is relative to the candidate tree, with '/'")
        return value.removeprefix("./")

    @property
    def label(self) -> str:
        return f"{self.path}:{self.symbol}" if self.symbol else self.path


class Query(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    gold: list[GoldRef] = Field(min_length=1)
    tags: list[str] = Field(default=[])
    split: Literal["dev", "test"] | None = None
    name_overlap: float | None = Field(
        default=None, ge=0, le=1, description="a needle: the share of its gold's own name "
        "words (split, stemmed, the corpus's common prefixes removed) the query holds; its "
        "tag says name:none, name:partial or name:full")

    @property
    def file_level(self) -> bool:
        """No gold symbol: chunk metrics are not entered for this query."""
        return all(g.symbol is None and g.start is None for g in self.gold)


@dataclass(frozen=True)
class QuerySet:
    path: Path
    queries: list[Query]
    sha256: str

    def by_id(self, query_id: str) -> Query:
        for q in self.queries:
            if q.id == query_id:
                return q
        raise QueryError(f"{self.path}: no query with id {query_id!r}",
                         hint=f"ids look like {self.queries[0].id!r}" if self.queries else "")


def load_queries(path: Path) -> QuerySet:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise QueryError(f"{path}: no such query set") from None
    problems: list[str] = []
    queries: list[Query] = []
    for lineno, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{lineno}: not JSON: {exc.msg}")
            continue
        try:
            queries.append(Query.model_validate(data))
        except ValidationError as exc:
            for err in exc.errors():
                field = ".".join(str(p) for p in err["loc"]) or "(line)"
                msg = err["msg"].removeprefix("Value error, ")
                problems.append(f"{path}:{lineno}: field `{field}`: {msg}")
    if problems:
        more = f"\n… and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise QueryError("\n".join(problems[:20]) + more)
    return QuerySet(path, queries, hashlib.sha256(raw).hexdigest())


def _words(identifier: str) -> list[str]:
    parts = re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+", identifier)
    return [p.lower() for p in parts]


def lint(qs: QuerySet, *, names: bool = True) -> list[str]:
    """Problems that make a query set dishonest or ambiguous; empty when clean.

    `names`: check that no query gives its gold's name away (off for a set that
    holds the name on purpose, the needles-named breakout)."""
    problems: list[str] = []
    seen: dict[str, int] = {}
    texts: dict[str, str] = {}
    for q in qs.queries:
        if q.id in seen:
            problems.append(f"{q.id}: duplicate id")
        seen[q.id] = 1
        norm = " ".join(q.query.lower().split())
        if norm in texts:
            problems.append(f"{q.id}: same query text as {texts[norm]}")
        texts.setdefault(norm, q.id)
        for gold in q.gold if names else ():
            if gold.symbol and (leak := leaks(q.query, gold.symbol)) is not None:
                problems.append(f"{q.id}: {leak}")
    return problems


def leaks(query: str, symbol: str) -> str | None:
    """How the query gives the symbol's name away, or None when it does not."""
    name = symbol.split(".")[-1]
    text = query.lower()
    if len(name) >= 3 and re.search(rf"(?<![a-z0-9_]){re.escape(name.lower())}"
                                    r"(?![a-z0-9_])", text):
        return f"query text contains the gold symbol name {name!r}"
    words = _words(name)
    if len(words) >= 2 and " ".join(words) in " ".join(re.findall(r"[a-z0-9]+", text)):
        return f"query text spells out the gold symbol name {name!r} as {' '.join(words)!r}"
    return None
