"""protocol.py names the metrics PROTOCOL.md states: the paired metrics with their tests."""

from __future__ import annotations

import re
from pathlib import Path

from codesearch_bench import protocol

PROTOCOL_MD = Path(__file__).resolve().parent.parent / "protocol" / "PROTOCOL.md"


def test_the_paired_metrics_are_the_ones_protocol_md_states() -> None:
    text = " ".join(PROTOCOL_MD.read_text().split())
    by_kind: dict[str, list[str]] = {}
    for metric, kind in protocol.PAIRED_METRICS.items():
        by_kind.setdefault(kind, []).append(f"`{metric}`")
    stated = " and ".join(f"{' and '.join(names)} ({kind})" for kind, names in by_kind.items())
    assert f"were given) on {stated}, over the n queries" in text


def test_every_tier_and_headline_metric_is_paired_and_read_at_the_headline_cutoff() -> None:
    named = [*protocol.TIER_METRICS.values(), protocol.TIER_METRIC,
             *protocol.HEADLINE_METRICS, *protocol.SUMMARY_METRICS]
    assert set(named) <= set(protocol.PAIRED_METRICS)
    for metric in [*protocol.TIER_METRICS.values(), protocol.FILE_RECALL, protocol.CHUNK_RECALL]:
        assert re.fullmatch(rf"(file|chunk)\.\w+@{protocol.HEADLINE_CUTOFF}", metric), metric
