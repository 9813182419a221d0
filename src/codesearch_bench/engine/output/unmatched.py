"""Which parse paths matched nothing, and what the output had instead.

A wrong path in a spec's parse section scores as a plain zero -- `"results":
"hit"` for a tool that prints `hits` reads as "no results", `"start": "line"`
for a field that does not exist as spans of one line at `end`. Over one answer
(probe) or every answer of a cell (compare), a configured path that matched in
no document or no record is named here, with the keys the output did have and
the one it most likely meant (roles.py: by what the key holds, then by its
spelling).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .parse import ParseResult
from .parsespec import ParseSpec
from .roles import Role, Shape, best, merge

_FIELDS: tuple[Role, ...] = ("path", "start", "end", "lines", "text", "score")


@dataclass
class Tally:
    """What the parse paths found over many answers."""

    answers: int = 0  # answers that had output to read
    results_missing: int = 0
    document_keys: set[str] = field(default_factory=set)
    document_shapes: dict[str, Shape] = field(default_factory=dict)
    records: int = 0
    record_keys: set[str] = field(default_factory=set)
    record_shapes: dict[str, Shape] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)

    def add(self, parsed: ParseResult | None) -> None:
        if parsed is None or (not parsed.records and not parsed.results_missing):
            return
        self.answers += 1
        self.results_missing += parsed.results_missing
        self.document_keys |= parsed.document_keys
        merge(self.document_shapes, parsed.document_shapes)
        self.records += parsed.records
        self.record_keys |= parsed.record_keys
        merge(self.record_shapes, parsed.record_shapes)
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
                   + _instead("results", spec.results, seen.document_keys,
                              seen.document_shapes))
    if seen.records:
        # A key another field reads already is less likely the one a wrong path meant.
        claimed = {path.split(".")[0] for name in _FIELDS
                   if (path := getattr(spec, name)) is not None and seen.present.get(name)}
        for name in _FIELDS:
            path = getattr(spec, name)
            if path is None:
                continue
            if not seen.present.get(name):
                out.append(f"parse.{name} `{path}` is in none of {seen.records} result(s)"
                           + _instead(name, path, seen.record_keys, seen.record_shapes,
                                      claimed))
    return out


def _instead(role: Role, wanted: str, keys: set[str], shapes: dict[str, Shape],
             claimed: set[str] | None = None) -> str:
    if not keys:
        return ""
    shown = ", ".join(sorted(keys)[:12]) + (" …" if len(keys) > 12 else "")
    match = best(role, wanted, keys, shapes, claimed or set())
    tip = f"; did you mean `{match}`?" if match else ""
    return f"; the output has: {shown}{tip}"
