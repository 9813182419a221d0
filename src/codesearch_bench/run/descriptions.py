"""What a result file says about each engine and each corpus it measured.

Written once per run for the result file and with every journaled cell, so a
resumed run can tell whether a finished cell was measured under the same spec,
pin and query set (run/resume.py).
"""

from __future__ import annotations

from collections import Counter

from ..engine.driver import engine_version
from ..engine.spec import LoadedSpec
from ..results.schema import CorpusOut, EngineOut
from .plan import Plan


def engine_out(loaded: LoadedSpec) -> EngineOut:
    """The engine as measured: its spec file and hash, its version, its mode."""
    return EngineOut(name=loaded.name, spec_file=str(loaded.file), spec_sha256=loaded.sha256,
                     version=engine_version(loaded), mode=loaded.spec.mode,
                     requires=loaded.spec.requires)


def corpus_out(plan: Plan) -> CorpusOut:
    """The corpus track as measured: its pin, its tree, its query set and splits."""
    return CorpusOut(name=plan.unit, pin=plan.manifest.pin, identity=plan.identity,
                     track=plan.track, corpus=plan.corpus.name, track_info=plan.track_info,
                     content=plan.content,
                     provenance=plan.corpus.spec.provenance,
                     tree=str(plan.tree), files=plan.manifest.files, tier=plan.manifest.tier,
                     languages=plan.manifest.languages, queries=len(plan.queries),
                     query_set=str(plan.query_set.path),
                     query_set_sha256=plan.query_set.sha256,
                     splits=dict(Counter(q.split or "none" for q in plan.queries)))
