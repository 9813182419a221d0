"""What parsing one engine answer found: its hits, and everything that went wrong.

The parsers (parse.py) and the record readers (records.py) both fill it in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...model import Hit
from .jsonread import brief
from .roles import Shape

MAX_ERRORS = 5
MAX_MESSAGE = 200  # one error; the driver joins up to MAX_ERRORS of them into the query's
REPLACEMENT = "\ufffd"
SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class ParseResult:
    hits: list[Hit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    bad_records: int = 0
    # Undecodable bytes, and lone surrogates (JSON escapes, UTF-16), each made U+FFFD.
    replaced_bytes: int = 0
    fatal: bool = False  # the document as a whole could not be read
    engine_error: str | None = None  # what the engine reported in its `error` field
    timed_out: bool = False  # the regex ran past the parse deadline
    # What the parse paths found, for telling a wrong path from an empty answer
    # (output/unmatched.py): documents whose results path was absent and their keys,
    # object records seen and their keys, and how many records had each field; with what
    # each key's value looked like, for the did-you-mean (output/roles.py).
    results_missing: int = 0
    document_keys: set[str] = field(default_factory=set)
    document_shapes: dict[str, Shape] = field(default_factory=dict)
    records: int = 0
    record_keys: set[str] = field(default_factory=set)
    record_shapes: dict[str, Shape] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)

    def note(self, message: str) -> None:
        self.bad_records += 1
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(one_line(message, MAX_MESSAGE))

    def clean(self, text: str) -> str:
        """`text` with each lone surrogate replaced by U+FFFD, counted."""
        if text.isascii():
            return text
        fixed, count = SURROGATE.subn(REPLACEMENT, text)
        self.replaced_bytes += count
        return fixed


def one_line(text: str, limit: int) -> str:
    # A spec's own field names go into messages too: no surrogate may reach the result file.
    line = SURROGATE.sub(REPLACEMENT, " ".join(text.split()))
    return line if len(line) <= limit else line[:limit - 1] + "\u2026"


def describe(exc: BaseException) -> str:
    detail = brief(exc)
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
