"""The fields every corpora.toml entry has, whatever its source.

Each source kind (sources/) extends this with its own pin fields. Globs in
`include`/`exclude` match paths relative to the unpacked checkout, not to a
subtree; `queries` is relative to the corpora file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="the source kind: a key of sources.SOURCES")
    description: str | None = None
    license: str | None = Field(default=None, description="who may redistribute what")
    homepage: str | None = None
    default: bool = Field(default=False, description="part of the default comparison")
    optional: bool | None = Field(
        default=None, description="left out of --suite full (a variant that needs forge "
        "access, say); still run when named with --corpus")
    subtrees: list[str] = Field(default=["."], min_length=1)
    include: list[str] = Field(default=["**"])
    exclude: list[str] = Field(default=[])
    languages: list[str] = Field(default=[])
    queries: str | None = Field(default=None, description="query set, relative to corpora.toml")
    h_as_cpp: bool = Field(default=False, description="parse .h files as C++")
    max_line_length: int = Field(default=5000, ge=0, description="leave out files with a line "
                                 "longer than this (minified, bundled, data); 0: no limit")
    provenance: dict[str, Any] | None = Field(
        default=None, description="where an imported suite came from (`bench import`): "
        "dataset, files and their sha256, rows kept and dropped, license")
    exclude_generated: bool = Field(default=True, description="leave out files whose head "
                                    "carries a generator's marker (Code generated ... DO NOT "
                                    "EDIT, @generated)")
    needles_per_file: int | None = Field(
        default=None, ge=1, description="the needle track's per-file cap for this corpus, in "
        "place of the generator's default (a tree whose documentation lives in a few very "
        "large files); shapes the track, not the tree")

    @field_validator("subtrees")
    @classmethod
    def _relative(cls, value: list[str]) -> list[str]:
        for sub in value:
            parts = Path(sub).parts
            if Path(sub).is_absolute() or ".." in parts:
                raise ValueError(f"subtree {sub!r} must be a relative path inside the checkout")
        return value

    def pin(self) -> str:
        raise NotImplementedError  # each source kind says what pins it
