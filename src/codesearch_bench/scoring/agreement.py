"""Whether two tracks of one corpus rank the engines alike: Kendall's tau-b.

For every corpus with a questions track and another track (the generated
needles) in one result, each engine's headline row on either track gives one
number per metric; the two tracks agree as far as they put the engines in the
same order. Of the n(n-1)/2 pairs of the n engines both tracks measured, a pair
is concordant when both tracks order it the same way and discordant when they
order it oppositely. With n0 = n(n-1)/2, n1 the pairs tied on the first track
and n2 those tied on the second,

    tau_b = (concordant - discordant) / sqrt((n0 - n1) * (n0 - n2))

(M. G. Kendall, "The treatment of ties in ranking problems", Biometrika 33(3),
1945, pp. 239-251). It is +1 when the tracks order every pair alike, -1 when
they reverse every one, and undefined when either track ties every engine. It
is computed from the rows when a view shows it -- a number derived from the
result file, never stored in it -- and only on three or more engines: two give
one pair, and a tau of +1 or -1 from one pair says nothing.

The pooled figure counts pairs within each corpus only (an engine is never
compared with another corpus's row) and sums them over corpora before the same
quotient; on one corpus it is that corpus's tau_b.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..protocol import CHUNK_RECALL, FILE_MRR
from ..results.schema import CorpusOut, ResultFile, Row

#: the metrics the tracks' orders are compared on: file MRR and chunk recall at 10,
#: the MRR and chunk@10 columns of the headline tables
METRICS = (FILE_MRR, CHUNK_RECALL)

#: fewer engines than this and no tau is given
MIN_ENGINES = 3

QUESTIONS = "questions"


@dataclass(frozen=True)
class Pairs:
    """The pair counts tau_b is made of."""

    concordant: int = 0
    discordant: int = 0
    untied_x: int = 0  # n0 - n1: pairs the first ordering does not tie
    untied_y: int = 0  # n0 - n2

    def __add__(self, other: Pairs) -> Pairs:
        return Pairs(self.concordant + other.concordant, self.discordant + other.discordant,
                     self.untied_x + other.untied_x, self.untied_y + other.untied_y)

    @property
    def tau(self) -> float | None:
        """tau_b, or None when either ordering ties every pair (no order to agree with)."""
        denominator = math.sqrt(self.untied_x * self.untied_y)
        if denominator == 0:
            return None
        return (self.concordant - self.discordant) / denominator


def pairs(x: Sequence[float], y: Sequence[float]) -> Pairs:
    """The concordant, discordant and untied pairs of two paired sequences."""
    if len(x) != len(y):
        raise ValueError(f"paired sequences of different lengths: {len(x)} and {len(y)}")
    concordant = discordant = untied_x = untied_y = 0
    for i in range(len(x)):
        for j in range(i + 1, len(x)):
            dx = (x[i] > x[j]) - (x[i] < x[j])
            dy = (y[i] > y[j]) - (y[i] < y[j])
            untied_x += dx != 0
            untied_y += dy != 0
            concordant += dx * dy > 0
            discordant += dx * dy < 0
    return Pairs(concordant, discordant, untied_x, untied_y)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b of two paired sequences; None when either is constant."""
    return pairs(x, y).tau


@dataclass(frozen=True)
class MetricAgreement:
    """One metric's agreement: the engines both tracks measured on it, and their tau_b."""

    metric: str
    engines: tuple[str, ...]
    pairs: Pairs
    corpora: int = 1  # pooled: the corpora whose pairs are summed

    @property
    def tau(self) -> float | None:
        """tau_b over the engines; None with fewer than MIN_ENGINES or no order to compare."""
        return self.pairs.tau if len(self.engines) >= MIN_ENGINES else None


@dataclass(frozen=True)
class Agreement:
    """One corpus: its questions track against another track of it."""

    corpus: str  # the corpus both tracks are of
    questions: str  # the questions track's name in rows (`corpus`)
    other: str  # the other track's name in rows (`corpus:needles`)
    track: str  # the other track (needles)
    metrics: tuple[MetricAgreement, ...]

    def of(self, metric: str) -> MetricAgreement:
        return next(m for m in self.metrics if m.metric == metric)


def base_corpus(info: CorpusOut) -> str:
    """The corpus a track is of (files from before `corpus` was recorded: the name's head)."""
    if info.corpus:
        return info.corpus
    return info.name if info.track == QUESTIONS else info.name.split(":", 1)[0]


def _means(rows: list[Row], unit: str, metric: str) -> dict[tuple[str, str], float]:
    """(engine, split) -> the mean of metric on unit's headline rows that have one."""
    out: dict[tuple[str, str], float] = {}
    for r in rows:
        est = r.metrics.get(metric)
        if r.corpus == unit and r.headline and est is not None and est.mean is not None:
            out.setdefault((r.engine, r.split), est.mean)
    return out


def _metric(rows: list[Row], questions: str, other: str, metric: str) -> MetricAgreement:
    q, o = _means(rows, questions, metric), _means(rows, other, metric)
    common = [key for key in q if key in o]
    engines = tuple(dict.fromkeys(engine for engine, _ in common))
    return MetricAgreement(metric, engines,
                           pairs([q[k] for k in common], [o[k] for k in common]))


def track_agreement(result: ResultFile) -> list[Agreement]:
    """Per corpus with a questions track, its agreement with each other track of it, in
    the result's corpus order."""
    questions: dict[str, str] = {}
    others: list[tuple[str, CorpusOut]] = []
    for name, info in result.corpora.items():
        if info.track == QUESTIONS:
            questions.setdefault(base_corpus(info), name)
        else:
            others.append((name, info))
    out = []
    for name, info in others:
        base = base_corpus(info)
        if base not in questions:
            continue
        q = questions[base]
        out.append(Agreement(base, q, name, info.track,
                             tuple(_metric(result.rows, q, name, m) for m in METRICS)))
    return out


def pooled(found: list[Agreement], metric: str) -> MetricAgreement | None:
    """One track's pairs on metric summed over its corpora with MIN_ENGINES or more engines
    in common: the pooled agreement; None with fewer than two such corpora (one: its own
    line says it). `found` holds one track's agreements: tracks are never pooled."""
    if len({a.track for a in found}) > 1:
        raise ValueError("pooled agreement of more than one track")
    counted = [a.of(metric) for a in found if len(a.of(metric).engines) >= MIN_ENGINES]
    if len(counted) < 2:
        return None
    total = Pairs()
    for m in counted:
        total = total + m.pairs
    engines = tuple(dict.fromkeys(e for m in counted for e in m.engines))
    return MetricAgreement(metric, engines, total, corpora=len(counted))
