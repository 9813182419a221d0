"""The parse spec: how an engine's stdout becomes hits (json, jsonl, or a regex per line).

Field names are dotted paths into each result record; a regex takes its fields
from named groups. Validated up front with the rest of the spec (spec.py).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

REGEX_GROUPS = ("path", "start", "end", "text", "score")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ParseSpec(Strict):
    """How to turn the engine's stdout into hits. Field names are dotted paths."""

    format: Literal["json", "jsonl", "regex"]
    results: str | None = Field(
        default=None,
        description="dotted path to the list of hits (json); absent: the document is the list",
    )
    path: str | None = Field(default="path", description="field holding the file path "
                             "(null for an engine whose answer is text: answer text or blob)")
    start: str | None = Field(default=None, description="field holding the first line")
    end: str | None = Field(default=None, description="field holding the last line")
    lines: str | None = Field(
        default=None, description="field holding a line range: '12-30', '12', or [12, 30]"
    )
    text: str | None = Field(default=None, description="field holding the text shown")
    score: str | None = Field(default=None, description="field holding the engine's score")
    pattern: str | None = Field(
        default=None,
        description="regex format: applied per line, named groups path, start, end, text, score",
    )
    error: str | None = Field(
        default=None,
        description="field that, when present and non-empty, makes the query a failure with "
        "that message (json/jsonl), e.g. an MCP bridge's {\"error\": \"...\"}",
    )

    @model_validator(mode="after")
    def _format_rules(self) -> ParseSpec:
        if self.format == "regex":
            if not self.pattern:
                raise ValueError("format 'regex' needs `pattern` with a (?P<path>...) group")
            try:
                compiled = re.compile(self.pattern)
            except re.error as exc:
                raise ValueError(f"`pattern` is not a valid regex: {exc}") from None
            if "path" not in compiled.groupindex:
                raise ValueError("`pattern` needs a named group (?P<path>...)")
            extra = set(compiled.groupindex) - set(REGEX_GROUPS)
            if extra:
                raise ValueError(
                    f"`pattern` has unknown named groups {sorted(extra)}; "
                    f"use only {', '.join(REGEX_GROUPS)}"
                )
            mapped = [f for f in ("results", "start", "end", "lines", "text", "score", "error")
                      if getattr(self, f) is not None]
            if mapped or self.path != "path":
                names = mapped + (["path"] if self.path != "path" else [])
                raise ValueError(
                    f"format 'regex' takes fields from the pattern's named groups; "
                    f"remove {', '.join(names)}"
                )
        elif self.pattern is not None:
            raise ValueError(f"`pattern` is only for format 'regex', not {self.format!r}")
        if self.lines is not None and (self.start is not None or self.end is not None):
            raise ValueError("give either `lines` or `start`/`end`, not both")
        return self

    def has_spans(self) -> bool:
        if self.format == "regex":
            assert self.pattern is not None
            return "start" in re.compile(self.pattern).groupindex
        return self.start is not None or self.lines is not None

    def has_text(self) -> bool:
        if self.format == "regex":
            assert self.pattern is not None
            return "text" in re.compile(self.pattern).groupindex
        return self.text is not None
