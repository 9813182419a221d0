"""Which parse paths matched nothing, and what the output had instead.

A wrong path in a spec's parse section scores as a plain zero -- `"results":
"hit"` for a tool that prints `hits` reads as "no results", `"start": "line"`
for a field that does not exist as spans of one line at `end`. Over one answer
(probe) or every answer of a cell (compare), a configured path that matched in
no document or no record is named here, with the keys the output did have and
the nearest of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from rapidfuzz import process as fuzz_process

from .parse import ParseResult
from .parsespec import ParseSpec

_FIELDS = ("path", "start", "end", "lines", "text", "score")


@dataclass
class Tally:
    """What the parse paths found over many answers."""

    answers: int = 0  # answers that had output to read
    results_missing: int = 0
    document_keys: set[str] = field(default_factory=set)
    records: int = 0
    record_keys: set[str] = field(default_factory=set)
    present: dict[str, int] = field(default_factory=dict)

    def add(self, parsed: ParseResult | None) -> None:
        if parsed is None or (not parsed.records and not parsed.results_missing):
            return
        self.answers += 1
        self.results_missing += parsed.results_missing
        self.document_keys |= parsed.document_keys
        self.records += parsed.records
        self.record_keys |= parsed.record_keys
        for name, count in parsed.present.items():
            self.present[name] = self.present.get(name, 0) + count


def tally(results: Iterable[ParseResult | None]) -> Tally:
    out = Tally()
    for parsed in results:
        out.add(parsed)
    return out


def problems(spec: ParseSpec, seen: Tally) -> list[str]:
    """One line per parse path that matched nothing over every answer seen."""
    if spec.format == "regex" or not seen.answers:
        return []  # a regex names no paths; no output at all is `!! empty`'s business
    out = []
    if spec.results is not None and seen.results_missing and not seen.records:
        out.append(f"parse.results `{spec.results}` matched nothing in "
                   f"{seen.results_missing} answer(s)"
                   + _instead(spec.results.split(".")[0], seen.document_keys))
    if seen.records:
        for name in _FIELDS:
            path = getattr(spec, name)
            if path is None:
                continue
            if not seen.present.get(name):
                out.append(f"parse.{name} `{path}` is in none of {seen.records} result(s)"
                           + _instead(path.split(".")[0], seen.record_keys))
    return out


def _instead(wanted: str, keys: set[str]) -> str:
    if not keys:
        return ""
    shown = ", ".join(sorted(keys)[:12]) + (" …" if len(keys) > 12 else "")
    match = fuzz_process.extractOne(wanted, sorted(keys), score_cutoff=50)
    tip = f"; did you mean `{match[0]}`?" if match else ""
    return f"; the output has: {shown}{tip}"
