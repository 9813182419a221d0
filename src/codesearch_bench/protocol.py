"""The protocol version, bumped whenever a change could move a number, and the names
of the metrics the protocol reads engines by.

protocol/PROTOCOL.md states the same version and the same paired metrics (a test
keeps them equal). Results measured under different protocol versions are never
put side by side. This module imports nothing: every stage may name these.
"""

from __future__ import annotations

PROTOCOL_VERSION = "5"

#: the cutoff every headline number is read at (hit, recall, tokens shown)
HEADLINE_CUTOFF = 10

FILE_HIT = "file.hit@10"
CHUNK_HIT = "chunk.hit@10"
FILE_RECALL = "file.recall@10"
CHUNK_RECALL = "chunk.recall@10"
FILE_MRR = "file.mrr"
CHUNK_MRR = "chunk.mrr"

#: the metrics engines are compared (paired), tiered and summarized on, with their test:
#: binary ones by exact McNemar, continuous ones by the paired sign flip
PAIRED_METRICS = {FILE_HIT: "binary", CHUNK_HIT: "binary", FILE_MRR: "continuous",
                  CHUNK_MRR: "continuous"}

#: per track of the headline tables, the metric its significance tiers are decided on
#: (both binary: an exact test)
TIER_METRICS = {"file": FILE_HIT, "chunk": CHUNK_HIT}

#: the tiers a one-table view (terminal, Markdown) shows: the file track's
TIER_METRIC = TIER_METRICS["file"]

#: what a breakout by group and the regression gate report unless told otherwise
HEADLINE_METRICS = (FILE_HIT, CHUNK_HIT, FILE_MRR)

#: what the suite summary's tables show of the macro means and pair records
SUMMARY_METRICS = (FILE_HIT, FILE_MRR)
