"""Where every number came from: the run, its environment, each corpus's pin and query set,
each engine's spec hash and version, and the commands bench rendered for each row.

Fields the result file gains after this page was written (a `summary`, say) are
shown as they are rather than dropped, so a newer file never loses provenance here.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from ...results.schema import ResultFile
from ..formats import mib
from .markup import Markup, esc, join, tag

_SHOWN_TOP = {"schema_version", "protocol_version", "bench_version", "created", "interrupted",
              "shard", "environment", "cutoffs", "corpora", "engines", "rows", "comparisons",
              "failures", "tiers", "summary"}  # the last two have sections of their own


def _flat(value: object, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        out: list[tuple[str, str]] = []
        for k, v in value.items():
            out += _flat(v, f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(value, list):
        return [(prefix, ", ".join(str(v) for v in value))]
    return [(prefix, "" if value is None else str(value))]


def _pairs(pairs: list[tuple[str, object]]) -> Markup:
    return tag("table", tag("tbody", *[tag("tr", tag("th", k), tag("td", v, class_="mono"))
                                       for k, v in pairs]), class_="kv")


def _grid(head: list[str], rows: list[list[object]]) -> Markup:
    return tag("div", tag("table", tag("thead", tag("tr", *[tag("th", h) for h in head])),
                          tag("tbody", *[tag("tr", *[tag("td", c) for c in r]) for r in rows]),
                          class_="grid"), class_="scroll")


def _command(argv: list[str] | None) -> Markup:
    return tag("code", shlex.join(argv)) if argv else esc("—")


def _memory(env: dict[str, object]) -> str:
    value = env.get("memory_bytes")
    return mib(value, " MiB") if isinstance(value, int) else ""


def provenance(result: ResultFile) -> Markup:
    env = result.environment
    run = _pairs([("bench", result.bench_version), ("protocol", result.protocol_version),
                  ("result schema", result.written_version), ("created", result.created),
                  ("cutoffs", ", ".join(str(k) for k in result.cutoffs)),
                  ("shard", result.shard or "—"),
                  ("interrupted", "yes: only finished cells are here" if result.interrupted
                   else "no")])
    flat = [(k, v) for k, v in _flat(env) if k != "memory_bytes"]
    if _memory(env):
        flat.insert(0, ("memory", _memory(env)))
    environment = _pairs([(k, v) for k, v in flat])
    corpora = _grid(["corpus", "pin", "identity", "tree", "files", "tier", "languages",
                     "queries", "query set", "query set sha256"],
                    [[c.name, tag("span", c.pin, class_="mono"),
                      tag("span", c.identity, class_="mono hash"),
                      tag("span", c.tree, class_="mono"), c.files, c.tier,
                      ", ".join(f"{k} {v}" for k, v in c.languages.items()), c.queries,
                      tag("span", c.query_set, class_="mono"),
                      tag("span", c.query_set_sha256, class_="mono hash")]
                     for c in result.corpora.values()])
    engines = _grid(["engine", "version", "mode", "spec file", "spec sha256", "requires"],
                    [[e.name, e.version or "—", e.mode, tag("span", e.spec_file, class_="mono"),
                      tag("span", e.spec_sha256, class_="mono hash"), e.requires or "—"]
                     for e in result.engines.values()])
    commands = _grid(["engine", "corpus", "per_file", "index command", "search command "
                      "(the first rendered)"],
                     [[r.engine, r.corpus, r.per_file,
                       "cached (not run)" if r.index.cached and r.index.command is None
                       else _command(r.index.command), _command(r.search.command)]
                      for r in result.rows if r.headline])
    parts = [tag("h3", "Run"), run, tag("h3", "Environment"), environment,
             tag("h3", "Corpora: pins and query sets"), corpora,
             tag("h3", "Engines: spec hashes and versions"), engines,
             tag("h3", "Rendered commands"), commands]
    extra = {k: v for k, v in _dump(result).items() if k not in _SHOWN_TOP}
    for key, value in extra.items():
        parts += [tag("h3", key), tag("pre", json.dumps(value, indent=1, default=str))]
    return tag("section", tag("h2", "Provenance"), join(parts), id="provenance",
               class_="provenance")


def _dump(result: ResultFile) -> dict[str, Any]:
    return result.model_dump(mode="json", exclude=_SHOWN_TOP)
