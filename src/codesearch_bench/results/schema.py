"""The result file: versioned, self-describing JSON written by `bench compare`.

Everything a report needs is here, so `bench report` never re-runs an engine:
the environment, each corpus pin and query-set hash, each engine's spec hash,
rendered commands and version, every row's aggregates with confidence
intervals, the paired comparisons, every query's outcome, and the failed
combinations. `protocol/result.schema.json` is generated from these models.

Field reference (all times in seconds, all memory in bytes):

- `rows[].metrics[name]`: mean over the row's queries with a 95% bootstrap
  CI (`lo`, `hi`; 1000 resamples, seed 0). Names: `file.recall@k`,
  `file.hit@k`, `file.mrr`, `file.ndcg@10`, `file.map@k`, `file.p@1`,
  `zero_miss`, the same with `chunk.` when chunk metrics are entered, and
  `tokens@k` (mean tokens shown in the top k slots).
- `rows[].flags`: `!!`-level problems with the adapter (`no_spans`,
  `depth`, `coverage` with `rows[].coverage` behind it), `*` (priced from
  the corpus), `chunk_not_entered`,
  `errors=N`, `outside=N`.
- `rows[].queries[]`: per query: latency, error, raw hit count, results
  outside the tree, the top slots (path and chunk spans), gains, first gold
  file/chunk slot, tokens at each cutoff and tokens before the first gold
  chunk.
- `comparisons[]`: engine pairs per corpus and per_file on the paired
  metrics, over the same per-query values the rows average (failures counted),
  with p, Holm-adjusted p, the paired difference's interval and the minimum
  detectable difference; `tiers[]` and `summary` are read from them.
  protocol/PROTOCOL.md ("Statistics") says how to recompute each from the JSON.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ..errors import Stage, UsageError
from . import upgrade, write
from .inputs import CorpusOut, EngineOut, Gap
from .statistics import ComparisonOut, Summary, TierGroup, Twin
from .upgrade import SCHEMA_VERSION

# Re-exported: the version is named in upgrade.py; the inputs' models live in inputs.py.
__all__ = ["SCHEMA_VERSION", "CorpusOut", "EngineOut", "Gap"]


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Estimate(_M):
    mean: float | None
    lo: float | None
    hi: float | None
    n: int


# A query's slots and gold are plain dataclasses, pydantic only when a file is read or
# written: an outcome holds twenty-odd of them, thousands are made a second.
@dataclass(slots=True, frozen=True)
class SlotOut:
    __pydantic_config__ = ConfigDict(extra="forbid")
    path: str
    chunks: list[tuple[int | None, int | None]]


@dataclass(slots=True, frozen=True)
class GoldOut:
    __pydantic_config__ = ConfigDict(extra="forbid")
    path: str
    start: int | None = None
    end: int | None = None
    symbol: str | None = None
    grade: Annotated[int | None, Field(description="graded relevance from an imported "
                     "dataset's qrels (file nDCG@10 gains it); None: ungraded")] = None


class QueryOutcome(_M):
    id: str
    latency_s: float | None = None
    error: str | None = None
    raw_hits: int = 0
    outside: int = 0
    slots: list[SlotOut] = Field(default_factory=list, description="top slots (up to 20)")
    n_slots: int = 0
    file_gains: list[int] = Field(default_factory=list)
    chunk_gains: list[int] | None = None
    first_file_slot: int | None = None
    first_chunk_slot: int | None = None
    tokens: dict[str, int] | None = Field(default=None, description="tokens@k shown")
    tokens_to_first_gold: int | None = None
    chunk_entered: bool = Field(
        default=False, description="chunk metrics apply: the engine has spans and gold a span")
    answer: str = Field(default="ranked", description="how the answer was graded: ranked "
                        "(paths and spans), text or blob (by content, the content.* metrics)")
    content_entered: bool = Field(
        default=False, description="content metrics apply: a text answer and gold with a span")
    scores: dict[str, float] = Field(default_factory=dict)
    replaced_bytes: int = Field(default=0, description="undecodable output bytes replaced")
    line_zero: bool = Field(
        default=False, description="a result at line 0 although the spec says line_base 1")
    leftovers: int = Field(default=0, description="processes left running, killed and reaped")
    depth_limited: bool = Field(
        default=False, description="raw results reached n but filled fewer slots than k")
    no_spans: bool = False
    split: str | None = Field(default=None, description="the query's split in its set "
                              "(dev, test, or none)")
    tags: list[str] = Field(default_factory=list, description="the query's tags in its set")
    gold: list[GoldOut] = Field(default_factory=list, description="the query's resolved gold "
                                "items (file-level ones without lines): the qrels")
    unsolicited: int = Field(
        default=0, description="lines a persistent engine sent that answered no request "
        "(or another one), discarded while this query was served")
    dropped_records: int = Field(
        default=0, description="records of the answer that could not be read (a line that "
        "is no number, a non-finite score, a path with a control character), dropped and "
        "counted whether or not others survived")


class IndexOut(_M):
    cached: bool
    wall_s: float | None = None
    peak_rss_bytes: int | None = None
    rss_method: str | None = None
    state_bytes: int | None = None
    files: int | None = None
    chunks: int | None = None
    command: list[str] | None = None
    leftovers: int = 0


class SearchOut(_M):
    mode: Literal["oneshot", "persistent"]
    p50_s: float | None = None
    p95_s: float | None = None
    peak_rss_bytes: int | None = Field(default=None, description="persistent engines only")
    restarts: int = 0
    command: list[str] | None = Field(default=None, description="first rendered search command")
    unsolicited: int = Field(
        default=0, description="persistent engines: lines that answered no request, or "
        "another one, over the whole session (flag !! unsolicited=N)")


TokenColumn = Literal["text", "corpus", "none"]


class CoverageGap(_M):
    """A file extension the engine never returned on a row although gold lies in it."""
    extension: str = Field(description="with its dot: `.tsx`")
    queries: int = Field(description="the row's queries with a gold file of this extension")
    share: float = Field(description="those queries as a share of the row's queries")


class Row(_M):
    engine: str
    corpus: str
    per_file: int
    headline: bool
    tree: str
    k: list[int]
    n: int
    spans: bool
    token_column: TokenColumn
    index: IndexOut
    search: SearchOut
    metrics: dict[str, Estimate]
    flags: list[str]
    errors: int
    queries: list[QueryOutcome]
    split: str = Field(default="all", description="the queries this row averages: all, or "
                       "only those of the dev or the test split")
    track: str = Field(default="questions", description="the query track: hand-written "
                       "questions, or needles generated from the code's doc comments")
    parse_problems: list[str] = Field(
        default_factory=list,
        description="parse paths that matched nothing in any answer, with the keys the "
        "output had instead (flag !! parse)")
    tree_changes: list[str] = Field(
        default_factory=list,
        description="what the engine changed in its candidate tree (flag !! tree_modified); "
        "the tree was rebuilt before the next engine ran")
    host: str | None = Field(
        default=None, description="fingerprint of the machine the row was measured on "
        "(environment.host): latency and RSS compare only between rows of one host")
    content_threshold: int | None = Field(
        default=None, description="a content-graded row (flag content_graded): the "
        "partial_ratio an item needed to count as containing a gold span")
    coverage: list[CoverageGap] = Field(default_factory=list, description="extensions "
        "holding gold for 5% of the row's queries (or 3) of which the engine returned no file "
        "on any query, in any slot (flag !! coverage): files the tool never indexes")
    answers_of: int | None = Field(
        default=None, description="the per_file pass whose answers this row re-grades at its "
        "own per_file: the engine's rendered command, env and stdin do not depend on per_file, "
        "so it was asked once (latencies are that pass's); None: asked for this row")


class Failure(_M):
    engine: str
    corpus: str
    stage: Stage
    message: str
    stderr_tail: str | None = None


class ResultFile(_M):
    schema_version: int = SCHEMA_VERSION
    protocol_version: str
    bench_version: str
    created: str
    interrupted: bool = Field(
        default=False, description="Ctrl-C stopped the run: only finished cells are here")
    shard: str | None = Field(default=None, description="I/N when this file is one shard")
    jobs: int = Field(
        default=1, ge=1, description="cells run at once (compare --jobs N; 1: one at a time). "
        "Rows measured while another cell ran are flagged concurrent=N: their latency, index "
        "time and memory are not comparable with rows measured alone; quality is unaffected")
    environment: dict[str, object]
    cutoffs: list[int]
    corpora: dict[str, CorpusOut]
    engines: dict[str, EngineOut]
    rows: list[Row]
    comparisons: list[ComparisonOut]
    failures: list[Failure]
    tiers: list[TierGroup] = Field(
        default_factory=list, description="per corpus, per_file (and group) and paired "
        "metric: the engines in significance tiers")
    summary: Summary | None = Field(
        default=None, description="across corpora: macro means with stratified bootstrap "
        "intervals, and win/tie/loss counts per engine pair (two or more corpora): the "
        "questions track's, or the only track's")
    gaps: list[Gap] = Field(
        default_factory=list, description="(engine, corpus) pairs with no row because the "
        "engine does not cover that corpus (its spec's `covers`): a gap, not a zero")
    summaries: list[Summary] = Field(
        default_factory=list, description="one summary per track with two or more corpora; "
        "tracks are never pooled")
    twins: list[Twin] = Field(
        default_factory=list, description="engines whose per-query scores equal another's on "
        "every paired metric of a corpus: one engine for quality, left out of its paired "
        "tests and tiers (their Holm family) and named here")

    #: the version the file was written in, when older than SCHEMA_VERSION (the model
    #: itself is always upgraded to the current shape)
    _written_version: int | None = PrivateAttr(default=None)
    _unchecked: list[str] = PrivateAttr(default_factory=list)

    @property
    def written_version(self) -> int:
        """The schema version of the file as it was written (provenance shows it)."""
        return self._written_version if self._written_version is not None else \
            self.schema_version

    @classmethod
    def load(cls, path: Path) -> ResultFile:
        """Read a result file (gzipped when it ends in .gz), upgraded to the current schema
        version (results/upgrade.py); anything else is a UsageError naming the file."""
        try:
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            written: int | None = None
            if upgrade.current(data):
                loaded = cls.model_validate_json(data)
            else:
                raw = upgrade.parsed(data)
                if raw is None:
                    cls.model_validate_json(data)  # raises, saying what is wrong in its words
                    raise ValueError("not a JSON object")
                written = upgrade.version_of(raw)
                loaded = cls.model_validate(upgrade.upgrade(raw))
        except FileNotFoundError:
            raise UsageError(f"{path}: no such result file") from None
        except upgrade.TooNew as exc:
            # Checked before validation: a newer file may hold fields, or meanings, this
            # bench does not know, and guessing at them would show wrong numbers.
            raise UsageError(f"{path}: result schema version {exc.version}; this bench "
                             f"reads versions up to {SCHEMA_VERSION}",
                             hint="render it with the bench that wrote it (or upgrade this "
                             "one), or run the comparison again") from None
        except (ValueError, OSError, EOFError) as exc:
            first = str(exc).splitlines()[:3]
            raise UsageError(f"{path}: not a codesearch-bench result file ({' '.join(first)})",
                             hint="result files are written by `bench compare --json`") from None
        if written is not None and written != loaded.schema_version:
            loaded._written_version = written
        # Every file is checked, a current one too: bench's own layout says nothing of
        # whether its numbers were edited since.
        loaded._unchecked = _check_rows(path, loaded.rows)
        return loaded

    @property
    def unchecked(self) -> list[str]:
        """Rows whose means could not be checked on load: they hold no per-query values."""
        return list(self._unchecked)

    def dump(self, path: Path) -> None:
        """Write atomically: a reader never sees half a file; gzipped when it ends in .gz."""
        write.dump(self, path, ((r, r.queries) for r in self.rows))

    def dumps(self) -> str:
        return self.model_dump_json(indent=1) + "\n"


def _recorded(metric: str, outcomes: list[QueryOutcome], n: int) -> list[float] | None:
    """The per-query values a row's `metric` averaged, as this file records them; None when
    they do not add up to `n`. The rule is scoring/values.py's: an answered query counts
    with its (non-NaN) score, a failed one as a complete miss where the metric applies.
    Every miss is the same number, so which failed queries applied need not be known --
    only that no more than the failed ones did."""
    if metric.startswith("tokens@"):
        return [float(o.tokens[metric]) for o in outcomes if o.tokens and metric in o.tokens]
    if metric == "tokens_to_first_gold":
        return [float(o.tokens_to_first_gold) for o in outcomes
                if o.tokens_to_first_gold is not None]
    scored = [o.scores[metric] for o in outcomes if o.error is None and metric in o.scores
              and not math.isnan(o.scores[metric])]
    misses = n - len(scored)
    if not 0 <= misses <= sum(o.error is not None for o in outcomes):
        return None
    return scored + [1.0 if metric == "zero_miss" else 0.0] * misses


def _check_rows(path: Path, rows: list[Row]) -> list[str]:
    """Each row's aggregates against its own per-query values: a file from elsewhere is
    untrusted, and a mean edited by hand (or by a bug) must not reach a table or a gate.
    Returns the rows that hold no per-query values, which cannot be checked."""
    unchecked = []
    for i, row in enumerate(rows):
        where = f"{path}: rows[{i}] ({row.engine} × {row.corpus}, per_file={row.per_file})"
        if not row.queries:
            unchecked.append(f"{where}: no per-query values, its means are not checked")
            continue
        errors = sum(o.error is not None for o in row.queries)
        if row.errors != errors:
            raise UsageError(f"{where}: errors is {row.errors}, but {errors} of its queries "
                             "record an error", hint=_TAMPERED)
        for metric, est in row.metrics.items():
            sample = _recorded(metric, row.queries, est.n)
            mean = math.fsum(sample) / len(sample) if sample else None
            bad = sample is None or len(sample) != est.n or (mean is None) != (est.mean is None)
            if not bad and mean is not None and est.mean is not None:
                bad = not math.isclose(mean, est.mean, rel_tol=1e-9, abs_tol=1e-9) or not (
                    est.lo is not None and est.hi is not None
                    and est.lo - 1e-9 <= est.mean <= est.hi + 1e-9)
            if bad:
                shown = "none" if sample is None else f"{len(sample)} values, mean {mean}"
                raise UsageError(
                    f"{where}: metrics[{metric!r}] says mean {est.mean}, interval "
                    f"[{est.lo}, {est.hi}], n {est.n}; its per-query values give {shown}",
                    hint=_TAMPERED)
    return unchecked


_TAMPERED = ("the file was edited or damaged after bench wrote it: use the file `bench "
             "compare --json` wrote, or run the comparison again")


def result_json_schema() -> dict[str, object]:
    schema = ResultFile.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "codesearch-bench result file"
    return schema
