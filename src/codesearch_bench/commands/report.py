"""`bench report`: render saved result files; merge shards. Never re-runs an engine."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from ..errors import UsageError
from ..render import EXPORTERS, ExportOptions, breakout
from ..render.ui import UI
from ..results.merge import Combined, combine
from ..results.schema import QueryOutcome, ResultFile, Row
from ..scoring.analysis import headline_groups, statistics
from ..scoring.baseline import DEFAULT_METRICS, compare_to_baseline, gate, missing, verdict
from ..scoring.baseline_markdown import to_markdown
from ..scoring.breakout import by, restrict
from ..scoring.values import query_value


def load(files: list[Path], *, strict: bool, ui: UI | None = None) -> Combined:
    """One file as it is, or several combined (their comparisons recomputed from all rows)."""
    if not files:
        raise UsageError("give one or more result files (written by `bench compare --json`)")
    loaded = [(path, _checked(path, ui)) for path in files]
    if len(loaded) == 1 and not strict:
        return Combined(loaded[0][1])
    combined = combine(loaded, strict=strict)
    combined.result = combined.result.model_copy(
        update=statistics(combined.result.rows, order=list(combined.result.engines)).as_update())
    return combined


def _checked(path: Path, ui: UI | None) -> ResultFile:
    """Load refuses a row whose means its per-query values contradict; a row without
    per-query values cannot be checked, and the reader is told rather than failed."""
    result = ResultFile.load(path)
    _check_comparisons(path, result)
    if ui is not None:
        for line in result.unchecked:
            ui.warn("unchecked", line)
    return result


def _check_comparisons(path: Path, result: ResultFile) -> None:
    """Each paired comparison's n and difference against the rows' per-query values, the
    pairs `scoring/analysis` makes (a query either engine has NaN for is left out): a
    report of one file shows its comparisons as written, so a tampered one must not pass.
    The tests' p values are not re-run (minutes on a large file); a comparison of a
    subset of queries (`group`) or of rows without per-query values is not checked."""
    groups = headline_groups(result.rows, list(result.engines))
    values: dict[tuple[int, str], list[float]] = {}  # (row, metric) -> aligned values

    def aligned(row: Row, first: Row, metric: str) -> list[float]:
        key = (id(row), metric)
        if key not in values:
            by_id = {o.id: o for o in row.queries}
            values[key] = [_value(metric, by_id.get(o.id)) for o in first.queries]
        return values[key]

    for i, c in enumerate(result.comparisons):
        rows = {r.engine: r for r in groups.get((c.corpus, c.per_file), [])}
        a, b = rows.get(c.engine_a), rows.get(c.engine_b)
        if c.group is not None or a is None or b is None or not (a.queries and b.queries):
            continue
        first = next(iter(rows.values()))
        pairs = [(x, y) for x, y in zip(aligned(a, first, c.metric), aligned(b, first, c.metric),
                                        strict=True)
                 if not (math.isnan(x) or math.isnan(y))]
        delta = math.fsum(x - y for x, y in pairs) / len(pairs) if pairs else None
        if len(pairs) != c.n or (delta is None) != (c.delta is None) or (
                delta is not None and c.delta is not None
                and not math.isclose(delta, c.delta, rel_tol=1e-9, abs_tol=1e-9)):
            raise UsageError(
                f"{path}: comparisons[{i}] ({c.metric}, {c.engine_a} vs {c.engine_b} on "
                f"{c.corpus}, per_file={c.per_file}) says n {c.n}, delta {c.delta}; the rows' "
                f"per-query values give n {len(pairs)}, delta {delta}",
                hint="the file was edited or damaged after bench wrote it: use the file "
                "`bench compare --json` wrote, or run the comparison again")


def _value(metric: str, outcome: QueryOutcome | None) -> float:
    return math.nan if outcome is None else query_value(metric, outcome)


def run(args: argparse.Namespace, ui: UI) -> int:
    files = list(args.files)
    if args.merge:
        if args.output is None:
            raise UsageError("--merge needs -o/--output FILE for the merged result")
        combined = load(files, strict=True, ui=ui)
        combined.result.dump(args.output)
        for line in combined.duplicates:
            ui.warn("duplicate", line)
        for cell in combined.missing:
            ui.warn("missing cell", f"{cell} (no row and no recorded failure)")
        ui.out.print(f"merged {len(files)} files into {args.output}: "
                     f"{len(combined.result.rows)} rows, {len(combined.result.failures)} "
                     "failed combinations", markup=False)
        return 1 if combined.missing else 0
    if args.baseline is None and (args.fail_on or args.max_drop is not None
                                  or args.allow_missing):
        raise UsageError("--fail-on, --max-drop and --allow-missing gate against a baseline: "
                         "add --baseline OLD.json")
    combined = load(files, strict=False, ui=ui)
    result = restrict(combined.result, args.split)
    if args.baseline is not None:
        return _gate(args, result, files, ui)
    if args.by is not None:
        means = by(result, args.by)
        if args.format == "json":
            ui.out.file.write(breakout.as_json(means))
        else:
            breakout.show(ui.out, means)
        return 0
    for line in combined.duplicates:
        ui.warn("duplicate row ignored", line)
    EXPORTERS[args.format](result, ExportOptions(out=args.out, wide=args.wide,
                                                 all_queries=args.all_queries), ui)
    return 0


def _gate(args: argparse.Namespace, new: ResultFile, files: list[Path], ui: UI) -> int:
    report = compare_to_baseline(new, _checked(args.baseline, ui),
                                 metrics=list(DEFAULT_METRICS),
                                 new_label=", ".join(map(str, files)),
                                 old_label=str(args.baseline))
    fail = args.fail_on == "regression"
    gated = fail or args.max_drop is not None
    # soft_wrap: piped into a PR comment, rich must not wrap the Markdown table's lines.
    allow = bool(args.allow_missing)
    reasons = verdict(report, fail, args.max_drop) + ([] if allow else missing(report))
    ui.out.print(to_markdown(report, reasons if gated else None),
                 markup=False, highlight=False, emoji=False, soft_wrap=True)
    gate(report, fail_on_regression=fail, max_drop=args.max_drop, allow_missing=allow)
    return 0
