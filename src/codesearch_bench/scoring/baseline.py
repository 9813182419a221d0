"""A new result file against a baseline, row by row and query by query: the regression gate.

Rows match by engine, corpus, per_file and split. Within a matched pair only the
queries both files ran are compared, on the values a row averages (a failed
query is a miss), with the tests `bench compare` uses between engines: exact
McNemar for 0/1 metrics, sign-flip randomization for the rest. Holm runs across
every watched metric of every matched row, because the gate fails when any one
of them does and more tests would otherwise mean more false alarms.

Files measured differently (another protocol, a changed query set) are refused
rather than compared: their differences would not be the engines'.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from ..errors import RegressionFound, UsageError
from ..protocol import HEADLINE_METRICS
from ..results.schema import QueryOutcome, ResultFile, Row
from . import stats
from .baseline_report import (
    EPS,
    BaselineReport,
    MetricDelta,
    RowDelta,
    RowKey,
    Unmatched,
    describe,
    format_p,
    key_of,
)

DEFAULT_METRICS = HEADLINE_METRICS
LOWER_IS_BETTER = frozenset({"zero_miss"})
_BINARY = re.compile(r"(^|\.)(hit@\d+|p@1)$|^zero_miss$")
_NAME = re.compile(r"(file|chunk)\.((recall|hit|map)@\d+|mrr|ndcg@10|p@1)|zero_miss")
def _refuse_unlike(new: ResultFile, old: ResultFile, new_label: str, old_label: str) -> None:
    if new.protocol_version != old.protocol_version:
        raise UsageError(
            f"{old_label}: protocol_version {old.protocol_version!r} differs from "
            f"{new_label}'s {new.protocol_version!r}; a protocol change can move numbers "
            "by itself, so the two are not compared",
            hint="measure the baseline again with this bench (`bench compare --json`)")
    changed = [
        f"corpora.{name}.query_set_sha256: {old_label} {old.corpora[name].query_set_sha256[:12]}, "
        f"{new_label} {corpus.query_set_sha256[:12]}"
        for name, corpus in new.corpora.items()
        if name in old.corpora and old.corpora[name].query_set_sha256 != corpus.query_set_sha256]
    if changed:
        raise UsageError(
            "the query sets differ, so no query pairs up honestly: " + "; ".join(changed),
            hint="measure the baseline again on the same query sets")


def _rows_by_key(result: ResultFile, label: str) -> dict[RowKey, Row]:
    out: dict[RowKey, Row] = {}
    seen: dict[RowKey, int] = {}
    for i, row in enumerate(result.rows):
        key = key_of(row)
        if key in seen:
            raise UsageError(f"{label}: rows[{i}] repeats rows[{seen[key]}] ({describe(key)})",
                             hint="combine shards with `bench report --merge`")
        ids: dict[str, int] = {}
        for j, q in enumerate(row.queries):
            if q.id in ids:
                raise UsageError(f"{label}: rows[{i}].queries[{j}].id {q.id!r} repeats "
                                 f"rows[{i}].queries[{ids[q.id]}]")
            ids[q.id] = j
        seen[key] = i
        out[key] = row
    return out


def _check_metrics(metrics: list[str], files: list[tuple[str, ResultFile]]) -> list[str]:
    """Refuses a name no metric has or one without per-query scores; returns notes for
    metrics no row has (chunk metrics when no engine reports spans)."""
    if not metrics:
        raise UsageError("no metric to watch", hint=f"the default: {', '.join(DEFAULT_METRICS)}")
    aggregated = {m for _, f in files for r in f.rows for m in r.metrics}
    scored = {m for _, f in files for r in f.rows for q in r.queries for m in q.scores}
    notes = []
    for metric in metrics:
        if metric not in aggregated and _NAME.fullmatch(metric):
            notes.append(f"watched `{metric}` is in no row of either file")
        elif metric not in aggregated:
            raise UsageError(f"watched metric {metric!r} is not a metric",
                             hint="metrics in these files: " + ", ".join(sorted(scored)))
        elif metric not in scored:
            raise UsageError(f"watched metric {metric!r} has no per-query score to pair",
                             hint="watch a ranking metric: " + ", ".join(sorted(scored)))
    return notes


def _value(metric: str, outcome: QueryOutcome) -> float | None:
    """What the row averaged for this query: a failed query is a complete miss (it must
    not flatter a flaky engine); None where the metric does not apply."""
    if outcome.error is not None:
        if metric.startswith("chunk.") and not outcome.chunk_entered:
            return None
        return 1.0 if metric == "zero_miss" else 0.0
    score = outcome.scores.get(metric)
    return None if score is None else float(score)


def _compare_metric(metric: str, old: Row, new: Row, shared: list[str]) -> MetricDelta:
    def untested(note: str, old_mean: float | None, new_mean: float | None) -> MetricDelta:
        return MetricDelta(metric=metric, n=0, old=old_mean, new=new_mean, delta=None, lo=None,
                           hi=None, test=None, p=None, p_holm=None, drop=0.0,
                           significant=False, note=note)

    if metric not in new.metrics:
        return untested("not measured in the new file", old.metrics[metric].mean, None)
    if metric not in old.metrics:
        return untested("not in the baseline", None, new.metrics[metric].mean)
    old_q = {q.id: q for q in old.queries}
    new_q = {q.id: q for q in new.queries}
    xs: list[float] = []
    ys: list[float] = []
    nan_old = nan_new = 0
    for qid in shared:
        a, b = _value(metric, old_q[qid]), _value(metric, new_q[qid])
        nan_old += a is not None and math.isnan(a)
        nan_new += b is not None and math.isnan(b)
        if a is not None and b is not None and not (math.isnan(a) or math.isnan(b)):
            xs.append(a)
            ys.append(b)
    if not xs:
        return replace(untested("no shared query it applies to", old.metrics[metric].mean,
                                new.metrics[metric].mean), nan_old=nan_old, nan_new=nan_new)
    old_mean, new_mean = math.fsum(xs) / len(xs), math.fsum(ys) / len(ys)
    delta = new_mean - old_mean
    _, lo, hi = stats.paired_delta_ci(ys, xs)
    if _BINARY.search(metric) and all(v in (0.0, 1.0) for v in xs + ys):
        test, p = "mcnemar", stats.mcnemar_exact([v == 1.0 for v in ys], [v == 1.0 for v in xs])
    else:
        test, p = "randomization", stats.paired_randomization(ys, xs)
    worse_by = delta if metric in LOWER_IS_BETTER else -delta
    return MetricDelta(metric=metric, n=len(xs), old=old_mean, new=new_mean, delta=delta,
                       lo=lo, hi=hi, test=test, p=p, p_holm=None, drop=max(0.0, worse_by),
                       significant=False, nan_old=nan_old, nan_new=nan_new)


def _notes(new: ResultFile, old: ResultFile, rows: list[RowDelta], new_label: str,
           old_label: str) -> list[str]:
    notes: list[str] = []
    for label, result in ((new_label, new), (old_label, old)):
        if result.interrupted:
            notes.append(f"{label} was interrupted: only its finished cells are here")
    for name in sorted({r.key[1] for r in rows}):
        a, b = old.corpora.get(name), new.corpora.get(name)
        if a is None or b is None:
            continue
        if a.pin != b.pin:
            notes.append(f"corpus {name}: pin {a.pin} → {b.pin}; the deltas mix the corpus "
                         "change with the engines'")
        elif a.tree != b.tree:
            notes.append(f"corpus {name}: another candidate tree ({a.tree[:12]} → "
                         f"{b.tree[:12]}); the deltas mix that change with the engines'")
    specs = {r.key[0]: (r.old_spec, r.new_spec) for r in rows if r.old_spec != r.new_spec}
    for engine, (was, now) in sorted(specs.items()):
        notes.append(f"engine {engine}: spec changed ({(was or '?')[:12]} → {(now or '?')[:12]})")
    partial: dict[tuple[int, int, int], list[RowKey]] = {}
    for r in rows:
        if r.shared < max(r.old_queries, r.new_queries):
            partial.setdefault((r.shared, r.old_queries, r.new_queries), []).append(r.key)
    for (shared, ran_old, ran_new), keys in partial.items():
        who = describe(keys[0]) if len(keys) == 1 else f"{len(keys)} rows"
        notes.append(f"{who}: {shared} queries in both files ({old_label} ran {ran_old}, "
                     f"{new_label} {ran_new})")
    return notes


def _powerless(rows: list[RowDelta], tests: int, alpha: float) -> list[str]:
    """Say so when the gate cannot see a lone regression at all: with n pairs no exact
    two-sided test goes below 2 / 2^n, and Holm multiplies the smallest p by the tests."""
    ns = sorted({d.n for r in rows for d in r.metrics if d.p is not None})
    blind = [n for n in ns if tests * 2.0 * 0.5 ** n >= alpha]
    if not blind:
        return []
    return [f"with {' or '.join(map(str, blind))} shared queries and {tests} tests, a "
            "regression in one row and metric alone cannot be significant, however large: "
            "run more queries, watch fewer metrics, or gate with --max-drop"]


def compare_to_baseline(new: ResultFile, old: ResultFile, *, metrics: list[str],
                        alpha: float = 0.05, new_label: str = "new",
                        old_label: str = "baseline") -> BaselineReport:
    """Every row of `new` that `old` also has, on each watched metric; refuses unlike files.

    The labels (the files' paths, as given) name the files in messages. Raises
    UsageError when the protocol or a shared corpus's query set differs, when no
    row matches, and for a watched metric no row has.
    """
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha must be between 0 and 1, not {alpha}")
    _refuse_unlike(new, old, new_label, old_label)
    new_rows, old_rows = _rows_by_key(new, new_label), _rows_by_key(old, old_label)
    absent = _check_metrics(metrics, [(new_label, new), (old_label, old)])
    matched = [key for key in new_rows if key in old_rows]
    if not matched:
        raise UsageError(
            f"no row of {new_label} matches one of {old_label} by engine, corpus, per_file "
            f"and split; {new_label} has {_listing(new_rows)}; {old_label} has "
            f"{_listing(old_rows)}", hint="compare runs of the same engines on the same corpora")
    drafts: list[RowDelta] = []
    for key in matched:
        a, b = old_rows[key], new_rows[key]
        in_new = {q.id for q in b.queries}
        shared = [q.id for q in a.queries if q.id in in_new]
        deltas = tuple(_compare_metric(m, a, b, shared) for m in metrics
                       if m in a.metrics or m in b.metrics)
        drafts.append(RowDelta(
            key=key, old_queries=len(a.queries), new_queries=len(b.queries), shared=len(shared),
            old_spec=_spec(old, key[0]), new_spec=_spec(new, key[0]), metrics=deltas))
    pvalues = [d.p for r in drafts for d in r.metrics if d.p is not None]
    adjusted = iter(stats.holm(pvalues))
    rows = []
    for r in drafts:
        done = []
        for d in r.metrics:
            if d.p is not None:
                p_holm = next(adjusted)
                d = replace(d, p_holm=p_holm, significant=p_holm < alpha)
            done.append(d)
        rows.append(replace(r, metrics=tuple(done)))
    failures = {(f.engine, f.corpus): f"{f.stage}: {f.message.splitlines()[0]}"
                for f in new.failures}
    return BaselineReport(
        new_label=new_label, old_label=old_label, protocol_version=new.protocol_version,
        metrics=tuple(metrics), alpha=alpha, tests=len(pvalues), rows=tuple(rows),
        only_new=tuple(Unmatched(k) for k in new_rows if k not in old_rows),
        only_old=tuple(Unmatched(k, failures.get((k[0], k[1]))) for k in old_rows
                       if k not in new_rows),
        notes=tuple(absent + _notes(new, old, rows, new_label, old_label)
                    + _powerless(rows, len(pvalues), alpha)),
        new_interrupted=new.interrupted)


def _spec(result: ResultFile, engine: str) -> str | None:
    spec = result.engines.get(engine)
    return spec.spec_sha256 if spec else None


def _listing(rows: dict[RowKey, Row]) -> str:
    shown = [describe(k) for k in list(rows)[:6]]
    more = f" and {len(rows) - 6} more" if len(rows) > 6 else ""
    return (", ".join(shown) + more) if shown else "no rows"


def verdict(report: BaselineReport, fail_on_regression: bool,
            max_drop: float | None) -> list[str]:
    """The reasons the measured evidence fails the gate, empty when it passes (or when
    nothing is watched); `missing` gives those of the evidence that is not there.

    With either gate on, a watched metric the baseline had and the new file lacks,
    and a baseline row whose cell the new file records as failed, fail too: a
    gate must not pass because the evidence went missing.
    """
    if max_drop is not None and not (math.isfinite(max_drop) and max_drop >= 0.0):
        raise UsageError(f"--max-drop must be a number >= 0, not {max_drop}",
                         hint="it is in the metric's units: 0.05 is five points of hit@10")
    if not fail_on_regression and max_drop is None:
        return []
    reasons: list[str] = []
    for row in report.rows:
        where = describe(row.key)
        for d in row.metrics:
            if d.lost:
                reasons.append(f"{where}: {d.metric} is in {report.old_label} but not in "
                               f"{report.new_label}")
                continue
            if d.delta is None or d.old is None or d.new is None:
                continue
            change = f"{d.metric} {d.old:.3f} → {d.new:.3f} (Δ {d.delta:+.3f}, n={d.n}"
            if fail_on_regression and d.regression:
                reasons.append(f"{where}: {change}, p={format_p(d.p_holm)} after Holm): "
                               "significantly worse")
            if max_drop is not None and d.drop > max_drop + EPS:
                reasons.append(f"{where}: {change}): dropped {d.drop:.3f}, more than "
                               f"--max-drop {max_drop:g}")
    for miss in report.only_old:
        if miss.failure:
            reasons.append(f"{describe(miss.key)}: failed in {report.new_label} ({miss.failure})")
    return reasons


def missing(report: BaselineReport) -> list[str]:
    """What the gate could not see, each a reason it fails unless --allow-missing: a
    baseline row the new file lacks (fewer corpora or engines), an interrupted new file,
    a matched row with no query in both files, NaN scores among the shared queries.
    A gate that passed on them would pass because the evidence went missing."""
    reasons = []
    if report.new_interrupted:
        reasons.append(f"{report.new_label} was interrupted: only its finished cells are "
                       "here, so the rows it lacks were never measured")
    reasons += [f"{describe(m.key)}: in {report.old_label}, missing from {report.new_label}"
                for m in report.only_old if not m.failure]
    for row in report.rows:
        if not row.shared:
            reasons.append(f"{describe(row.key)}: no query in both files, nothing to compare")
            continue
        for d in row.metrics:
            for count, label in ((d.nan_old, report.old_label), (d.nan_new, report.new_label)):
                if count:
                    reasons.append(f"{describe(row.key)}: {d.metric} is NaN for {count} of "
                                   f"the {row.shared} shared queries in {label}")
    return reasons


def gate(report: BaselineReport, *, fail_on_regression: bool, max_drop: float | None,
         allow_missing: bool = False) -> None:
    """Raise RegressionFound with every reason when the gate fails: it fails closed, on
    what is missing (`missing`) as on what is worse, unless `allow_missing`."""
    reasons = verdict(report, fail_on_regression, max_drop)
    if (fail_on_regression or max_drop is not None) and not allow_missing:
        reasons += missing(report)
    if reasons:
        count = f"{len(reasons)} reason" + ("s" if len(reasons) > 1 else "")
        raise RegressionFound(f"the regression gate failed against {report.old_label} "
                              f"({count}):\n" + "\n".join(f"  - {r}" for r in reasons))
