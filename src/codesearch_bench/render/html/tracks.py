"""The generated tracks' section: per track the needles generated, dropped by each rule
and kept, then how far each ranks the engines as the questions track does (Kendall's
tau-b). The cells are render/tracks's, the same the terminal and Markdown show.
"""

from __future__ import annotations

from ...results.schema import ResultFile
from ..tracks import (
    TAU_NOTE,
    VALIDITY_NOTE,
    agreement_table,
    needle_validity,
    number,
    rule_counts,
)
from .markup import Markup, esc, join, tag
from .tables import td, th

SECTION = "needle-tracks"


def tracks_section(result: ResultFile) -> Markup:
    """The section, or nothing when the result has no generated track."""
    found = needle_validity(result)
    title, head, rows = agreement_table(result)
    if not found and not rows:
        return esc("")
    parts = [tag("h2", "Needle tracks")]
    if found:
        named = any(v.named is not None for v in found)
        columns = [th("track", "text"), th("generated"), th("dropped"),
                   th("by rule", "text", "in the order the generation record gives"),
                   th("named", title="kept aside: they hold the gold's name words")
                   if named else None, th("kept")]
        body = []
        for v in found:
            rules = tag("ul", *[tag("li", item) for item in rule_counts(v)], class_="rules") \
                if v.dropped else esc("none")
            problems = [tag("li", p) for p in v.problems]
            cells = [td(tag("b", v.unit), None, "name", key=v.unit),
                     td(number(v.generated), v.generated, "num"),
                     td(number(v.dropped_total), v.dropped_total, "num"),
                     td(join([rules, tag("ul", *problems, class_="problems")
                              if problems else esc("")])),
                     td(number(v.named), v.named, "num") if named else None,
                     td(number(v.kept), v.kept, "num")]
            body.append(tag("tr", *[c for c in cells if c is not None]))
        parts += [tag("h3", "Validity: needles generated, dropped by each rule, kept"),
                  tag("div", tag("table", tag("thead", tag("tr", *[c for c in columns
                                                                  if c is not None])),
                                 tag("tbody", *body), class_="sortable validity"),
                      class_="scroll"),
                  tag("p", VALIDITY_NOTE, class_="note")]
    if rows:
        body = [tag("tr", td(tag("b", row[0]), None, "name", key=row[0]),
                    *[td(cell, None, "num") for cell in row[1:]]) for row in rows]
        parts += [tag("h3", f"{title[:1].upper()}{title[1:]}"),
                  tag("div", tag("table", tag("thead", tag("tr", th(head[0], "text"),
                                                          *[th(h, "text") for h in head[1:]])),
                                 tag("tbody", *body), class_="agreement"), class_="scroll"),
                  tag("p", TAU_NOTE, class_="note")]
    return tag("section", join(parts), id=SECTION, class_="tracks")
