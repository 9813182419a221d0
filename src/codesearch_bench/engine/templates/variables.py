"""The template variables: which exist where, and their values -- built here only.

A spec's commands, env entries, working dirs and stdin are templates over
these names; a persistent engine's JSON-lines request carries the per-query
subset. Adding a variable means adding it here (a name set and one line in
`values`), and nowhere else.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

#: The `version` command runs before any corpus exists.
VERSION_VARS = frozenset({"name", "spec_dir", "python"})
#: Variables every index and search command (and env entry) may use.
COMMON_VARS = VERSION_VARS | {"root", "state", "lang", "corpus"}
#: One-shot search commands also get the query and its depth.
SEARCH_VARS = COMMON_VARS | {"query", "k", "n", "per_file"}
#: The fields of a persistent engine's request line, in the order they are sent.
REQUEST_FIELDS = ("query", "k", "n", "per_file", "root", "corpus", "state")


@dataclass(frozen=True)
class Context:
    """Where one engine runs for one corpus."""

    root: Path
    state: Path
    corpus: str
    lang: str = ""


@dataclass(frozen=True)
class Ask:
    """One query and how deep to ask: n = k x the spec's candidates."""

    query: str
    k: int
    n: int
    per_file: int


def python_executable() -> str:
    """The interpreter running bench: what `{{python}}` renders to."""
    return sys.executable


def values(name: str, spec_dir: Path, ctx: Context | None = None,
           ask: Ask | None = None) -> dict[str, object]:
    """Every variable's value for a version (no ctx), index/start (ctx) or search (ctx, ask)."""
    out: dict[str, object] = {"name": name, "spec_dir": str(spec_dir),
                              "python": python_executable()}
    if ctx is not None:
        out.update(root=str(ctx.root), state=str(ctx.state), lang=ctx.lang, corpus=ctx.corpus)
    if ask is not None:
        out.update(query=ask.query, k=ask.k, n=ask.n, per_file=ask.per_file)
    return out


def request(ctx: Context, ask: Ask) -> dict[str, object]:
    """A persistent engine's request line: the same values a one-shot command sees."""
    every = values("", Path(), ctx, ask)
    return {field: every[field] for field in REQUEST_FIELDS}
