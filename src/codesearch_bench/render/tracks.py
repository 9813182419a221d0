"""The generated tracks in every view: how each was made (needles generated, dropped by
each rule, kept) and how far it ranks the engines as the questions track does.

The counts are read from each track's generation record (`CorpusOut.track_info`)
as the result file holds it; the agreement is `scoring/agreement`'s, computed
from the rows. The terminal, the Markdown report and the HTML page all build
their cells here, so the three say the same.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from ..protocol import CHUNK_RECALL, FILE_MRR
from ..results.schema import ResultFile
from ..scoring.agreement import (
    MIN_ENGINES,
    QUESTIONS,
    Agreement,
    MetricAgreement,
    base_corpus,
    pooled,
    track_agreement,
)

#: the agreement table's metric columns: what the headline tables call them
AGREEMENT_METRICS = ((FILE_MRR, "τ file MRR"), (CHUNK_RECALL, "τ chunk@10"))

TAU_NOTE = ("τ: Kendall's tau-b between the engines' order on the questions track and on "
            "the generated track (headline rows; ties count as ties): +1 the same order, "
            "0 unrelated, −1 reversed. A low or negative τ means the tracks rank the "
            f"engines differently; with fewer than {MIN_ENGINES} engines in common it is "
            "not given.")

VALIDITY_NOTE = ("Generated: the candidate needles (documented definitions) found; each "
                 "rule drops some, and the rest are kept and asked.")


@dataclass(frozen=True)
class Validity:
    """One generated track's record: what was generated, dropped by rule and kept."""

    unit: str  # the track's name in rows (`corpus:needles`)
    corpus: str
    generated: int | None
    dropped: tuple[tuple[str, int | None], ...]  # by rule, in the record's order
    named: int | None  # kept aside for holding the gold's name words; None: not recorded
    kept: int | None
    problems: tuple[str, ...]  # what of the record could not be read, by field

    @property
    def dropped_total(self) -> int | None:
        counts = [n for _, n in self.dropped]
        return None if any(n is None for n in counts) else sum(n for n in counts if n)


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _read(record: dict[str, object], key: str, problems: list[str]) -> int | None:
    """record[key] as a count; what is wrong with it added to problems (`named` is
    optional: only newer generators record it)."""
    value = _count(record.get(key))
    if value is None and key in record:
        problems.append(f"track_info.{key} is {_shown(record[key])}, not a count")
    elif value is None and key != "named":
        problems.append(f"track_info.{key} is missing")
    return value


def needle_validity(result: ResultFile) -> list[Validity]:
    """Every track other than questions, in the result's order, with its counts; a count
    the record lacks or holds as something else is None, and named in `problems`."""
    out = []
    for name, info in result.corpora.items():
        if info.track == QUESTIONS:
            continue
        record = info.track_info
        problems: list[str] = []
        if record is None:
            out.append(Validity(name, base_corpus(info), None, (), None, None,
                                ("no generation record (track_info)",)))
            continue
        generated, kept, named = (_read(record, key, problems)
                                  for key in ("candidates", "kept", "named"))
        raw = record.get("dropped")
        dropped: list[tuple[str, int | None]] = []
        if isinstance(raw, dict):
            for reason, n in raw.items():
                dropped.append((str(reason), _count(n)))
                if _count(n) is None:
                    problems.append(f"track_info.dropped[{reason!r}] is {_shown(n)}, "
                                    "not a count")
        elif raw is not None:
            problems.append(f"track_info.dropped is {_shown(raw)}, not a count per reason")
        else:
            problems.append("track_info.dropped is missing")
        out.append(Validity(name, base_corpus(info), generated, tuple(dropped), named, kept,
                            tuple(problems)))
    return out


def number(value: int | None) -> str:
    return "?" if value is None else str(value)


def rule_counts(v: Validity) -> list[str]:
    """`reason: count` for each rule, in the record's order."""
    return [f"{reason}: {number(n)}" for reason, n in v.dropped]


def totals(v: Validity) -> str:
    """`679 generated, 400 dropped, 279 kept` (and `N named` when recorded)."""
    parts = [f"{number(v.generated)} generated", f"{number(v.dropped_total)} dropped"]
    if v.named is not None:
        parts.append(f"{v.named} named")
    return ", ".join([*parts, f"{number(v.kept)} kept"])


def validity_lines(result: ResultFile, width: int = 80) -> list[str]:
    """The terminal's validity block: per track its totals, then its rules wrapped to
    width (a rule and its count never split across lines unless longer than a line)."""
    found = needle_validity(result)
    if not found:
        return []
    lines = ["needle validity: generated, dropped by each rule, kept"]
    for v in found:
        lines.append(f"{v.unit}: {totals(v)}")
        # A rule's words are held together by no-break spaces while wrapping.
        items = [item.replace(" ", "\u00a0") for item in rule_counts(v)]
        for line in textwrap.wrap("; ".join(items), width=width, initial_indent="  ",
                                  subsequent_indent="  ", break_on_hyphens=False):
            lines.append(line.replace("\u00a0", " "))
        lines += [f"  !! {p}" for p in v.problems]
    return lines


def tau_cell(m: MetricAgreement) -> str:
    """`+0.67 (4 engines)` (pooled: `+0.70 (15 corpora)`), or why there is no number:
    `n/a (2 engines)`."""
    n = len(m.engines)
    engines = f"{n} engine{'' if n == 1 else 's'}"
    if n < MIN_ENGINES:
        return f"n/a ({engines})"
    tau = m.tau
    if tau is None:
        return f"n/a (all tied, {engines})"
    return f"{tau:+.2f} ({m.corpora} corpora)" if m.corpora > 1 else f"{tau:+.2f} ({engines})"


def _title(found: list[Agreement]) -> str:
    tracks = "/".join(dict.fromkeys(a.track for a in found))
    return f"questions vs {tracks}: Kendall's tau-b of the engines' order"


def agreement_table(result: ResultFile) -> tuple[str, list[str], list[list[str]]]:
    """The agreement table as (title, head, rows): a row per corpus (its track named when
    there are several), then a pooled row per track over two or more corpora."""
    found = track_agreement(result)
    head = ["corpus", *[label for _, label in AGREEMENT_METRICS]]
    if not found:
        return "", head, []
    several = len({a.track for a in found}) > 1
    rows = [[f"{a.corpus} ({a.track})" if several else a.corpus,
             *[tau_cell(a.of(metric)) for metric, _ in AGREEMENT_METRICS]] for a in found]
    for track in dict.fromkeys(a.track for a in found):
        mine = [a for a in found if a.track == track]
        pools = [pooled(mine, metric) for metric, _ in AGREEMENT_METRICS]
        if any(p is not None for p in pools):
            rows.append([f"pooled ({track})" if several else "pooled",
                         *["" if p is None else tau_cell(p) for p in pools]])
    return _title(found), head, rows


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def tracks_markdown(result: ResultFile) -> list[str]:
    """The Markdown section: the validity table, then the agreement table, with notes."""
    found = needle_validity(result)
    title, head, rows = agreement_table(result)
    if not found and not rows:
        return []
    out = ["### Needle tracks\n"]
    if found:
        named = any(v.named is not None for v in found)
        columns = ["track", "generated", "dropped", "by rule", *(["named"] if named else []),
                   "kept"]
        out += ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for v in found:
            cells = [v.unit, number(v.generated), number(v.dropped_total),
                     "; ".join(rule_counts(v)) or "none",
                     *([number(v.named)] if named else []), number(v.kept)]
            out.append("| " + " | ".join(_md(c) for c in cells) + " |")
        out += ["", f"- {VALIDITY_NOTE}"]
        out += [f"- `{v.unit}`: {_md(p)}" for v in found for p in v.problems]
        out.append("")
    if rows:
        out += [f"{title[:1].upper()}{title[1:]}:\n", "| " + " | ".join(head) + " |",
                "|" + "---|" * len(head)]
        out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
        out += ["", f"- {TAU_NOTE}", ""]
    return out
