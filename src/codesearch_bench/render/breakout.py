"""`bench report --by KEY`: each engine's means per group, as a table, Markdown or JSON."""

from __future__ import annotations

import json
from dataclasses import asdict

from rich.console import Console

from ..scoring.breakout import METRICS, GroupMean


def _cells(means: list[GroupMean]) -> tuple[list[str], list[list[str]]]:
    key = means[0].key if means else "group"
    table: dict[tuple[str, str], dict[str, GroupMean]] = {}
    for m in means:
        table.setdefault((m.group, m.engine), {})[m.metric] = m
    head = [key, "engine", "queries", *METRICS]
    rows = []
    for (group, engine), found in table.items():
        n = max((m.estimate.n for m in found.values()), default=0)
        cells = [group, engine, str(n)]
        for metric in METRICS:
            est = found[metric].estimate if metric in found else None
            cells.append("" if est is None or est.mean is None else
                         f"{est.mean:.2f} [{est.lo:.2f},{est.hi:.2f}]")
        rows.append(cells)
    return head, rows


def markdown(means: list[GroupMean]) -> str:
    head, rows = _cells(means)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    return ("Per group: the mean over every headline query in the group (across corpora), with "
            "its 95% bootstrap interval; a failed query is a miss.\n\n" + "\n".join(lines) + "\n")


def as_json(means: list[GroupMean]) -> str:
    return json.dumps([asdict(m) | {"estimate": m.estimate.model_dump()} for m in means],
                      indent=1) + "\n"


def show(console: Console, means: list[GroupMean]) -> None:
    # Plain text: a breakout is read in a terminal and pasted into notes alike.
    console.print(markdown(means), markup=False, highlight=False, soft_wrap=True)
