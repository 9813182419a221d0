"""What a result was measured on: the corpora (each track a unit), the engines, the gaps.

Models of the result file (schema.py holds the file and its rows); each field's
description is the documentation `protocol/result.schema.json` carries.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Gap(_M):
    engine: str
    corpus: str
    reason: str = Field(description="why there is no row: the engine does not cover it")


class CorpusOut(_M):
    name: str
    pin: str
    identity: str
    tree: str
    files: int
    tier: str
    languages: dict[str, int]
    queries: int
    query_set: str
    query_set_sha256: str
    splits: dict[str, int] = Field(default_factory=dict, description="the queries run, by "
                                   "split (dev, test, none)")
    track: str = Field(default="questions", description="questions (hand-written) or needles "
                       "(generated from doc comments, searched in a doc-blanked tree)")
    corpus: str | None = Field(default=None, description="the corpus this track is of (name "
                               "is `corpus:track` for a track other than questions)")
    provenance: dict[str, Any] | None = Field(
        default=None, description="an imported suite's provenance from corpora.toml: dataset, "
        "revision, source files' sha256, rows kept and dropped with reasons, license")
    track_info: dict[str, Any] | None = Field(
        default=None, description="how a generated track was made: generator version and "
        "parameters, the transform, candidates kept and dropped by reason")
    content: str | None = Field(
        default=None, description="a `path` corpus: the content identity of its folder as "
        "setup copied it (file paths, sizes and content hashes); None for a pinned source")


class EngineOut(_M):
    name: str
    spec_file: str
    spec_sha256: str
    version: str | None
    mode: str
    requires: str | None
