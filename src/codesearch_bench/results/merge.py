"""Combine result files: shards of one comparison, or runs to read side by side.

Rows are only put next to each other when they were measured the same way:
one protocol version, the same cutoffs, and for each corpus the same pin and
the same query set. An engine name must mean one spec. Anything else is
refused with the files and the field that differ, because a table that mixes
them would present a difference in inputs as a difference in tools. The
merged file's paired comparisons are left to the caller to recompute
(scoring.rows.comparisons), since they depend on every row at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .schema import CorpusOut, EngineOut, Failure, ResultFile, Row


@dataclass
class Combined:
    result: ResultFile
    duplicates: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _same(files: list[tuple[Path, ResultFile]], what: str,
          get: Callable[[ResultFile], object]) -> None:
    values: dict[object, list[str]] = {}
    for path, result in files:
        value = get(result)
        values.setdefault(value, []).append(str(path))
    if len(values) > 1:
        detail = "; ".join(f"{v!s}: {', '.join(p)}" for v, p in values.items())
        raise UsageError(f"cannot combine results with different {what} ({detail})",
                         hint="re-run the older files with the same bench and corpora")


HOSTS_FLAG = "hosts≠"


def _flag_hosts(rows: list[Row]) -> list[Row]:
    """Rows of one corpus measured on different machines: their latency and RSS differ by
    machine as much as by tool, so every row of that corpus says so."""
    hosts: dict[str, set[str]] = {}
    for row in rows:
        if row.host is not None:
            hosts.setdefault(row.corpus, set()).add(row.host)
    mixed = {corpus for corpus, seen in hosts.items() if len(seen) > 1}
    return [r.model_copy(update={"flags": [*r.flags, HOSTS_FLAG]})
            if r.corpus in mixed and HOSTS_FLAG not in r.flags else r for r in rows]


def combine(files: list[tuple[Path, ResultFile]], *, strict: bool) -> Combined:
    """Merge rows, corpora and engines; strict mode (shards) also checks completeness."""
    if not files:
        raise UsageError("no result files given")
    _same(files, "protocol versions", lambda r: r.protocol_version)
    _same(files, "cutoffs", lambda r: tuple(r.cutoffs))
    corpora: dict[str, tuple[Path, CorpusOut]] = {}
    engines: dict[str, tuple[Path, EngineOut]] = {}
    for path, result in files:
        for name, info in result.corpora.items():
            seen = corpora.setdefault(name, (path, info))
            if (seen[1].pin, seen[1].identity) != (info.pin, info.identity):
                raise UsageError(f"corpus {name!r} has different pins: {seen[0]} has "
                                 f"{seen[1].pin}, {path} has {info.pin}")
            if seen[1].query_set_sha256 != info.query_set_sha256 or \
                    seen[1].queries != info.queries:
                raise UsageError(f"corpus {name!r} was measured on different query sets "
                                 f"({seen[0]}: {seen[1].query_set_sha256[:12]}, "
                                 f"{seen[1].queries} queries; {path}: "
                                 f"{info.query_set_sha256[:12]}, {info.queries} queries)",
                                 hint="rows from different query sets are not comparable")
        for name, engine in result.engines.items():
            known = engines.setdefault(name, (path, engine))
            if known[1].spec_sha256 != engine.spec_sha256:
                raise UsageError(f"engine {name!r} means different specs: {known[0]} has spec "
                                 f"{known[1].spec_sha256[:12]}, {path} has "
                                 f"{engine.spec_sha256[:12]}",
                                 hint="give the changed spec another name to compare both")
    rows: list[Row] = []
    owner: dict[tuple[str, str, int], Path] = {}
    duplicates: list[str] = []
    for path, result in files:
        for row in result.rows:
            key = (row.engine, row.corpus, row.per_file)
            if key in owner:
                duplicates.append(f"{row.engine} × {row.corpus} per_file={row.per_file} is in "
                                  f"both {owner[key]} and {path}")
                continue
            owner[key] = path
            rows.append(row)
    rows = _flag_hosts(rows)
    if duplicates and strict:
        raise UsageError("duplicated cells:\n  " + "\n  ".join(duplicates),
                         hint="each (engine, corpus) cell must come from one shard")
    done = {(engine, corpus): path for (engine, corpus, _), path in owner.items()}
    failures: list[Failure] = []
    for path, result in files:
        for f in result.failures:
            # A failure stands unless another file measured that cell after all.
            measured_by = done.get((f.engine, f.corpus))
            if (measured_by is None or measured_by == path) and f not in failures:
                failures.append(f)
    failed = {(f.engine, f.corpus) for f in failures}
    gaps = list({(g.engine, g.corpus): g for _, r in files for g in r.gaps}.values())
    uncovered = {(g.engine, g.corpus) for g in gaps}
    missing = [f"{e} × {c}" for c in corpora for e in engines
               if (e, c) not in done and (e, c) not in failed and (e, c) not in uncovered
               and not any(f.engine in (e, "*") and f.corpus in (c, "*") for f in failures)]
    first = files[0][1]
    environment = dict(first.environment)
    environment["merged_from"] = [
        {"file": str(p), "created": r.created, "shard": r.shard,
         "cpu": r.environment.get("cpu"), "bench_version": r.bench_version}
        for p, r in files
    ]
    merged = ResultFile(
        protocol_version=first.protocol_version,
        bench_version=first.bench_version,
        created=max(r.created for _, r in files),
        interrupted=any(r.interrupted for _, r in files),
        shard=None,
        jobs=max(r.jobs for _, r in files),
        environment=environment,
        cutoffs=first.cutoffs,
        corpora={name: info for name, (_, info) in corpora.items()},
        engines={name: info for name, (_, info) in engines.items()},
        rows=rows,
        comparisons=[],
        failures=failures,
        gaps=gaps,
    )
    return Combined(merged, duplicates, missing)
