"""The corpus trees a comparison's cells run on: checked before the first cell, rebuilt
after an engine changed one.

Every cell's tree is checked after it against the fingerprint kept here (run/cell.py
`measure`); a tree that cannot be rebuilt is `broken`, and the cells still to run
on it are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..corpus import setup
from ..corpus.fingerprint import Fingerprint, verify
from ..corpus.layout import CorpusDir
from ..corpus.tree import recorded_fingerprint
from ..errors import BenchError
from ..results.schema import Failure
from .plan import Plan, rebuild


class Trees:
    """Each corpus track's tree as set up (its fingerprint), and those that could not be
    rebuilt after a change."""

    def __init__(self, corpora_root: Path, stage: Callable[[str], None]) -> None:
        self.corpora_root = corpora_root
        self.stage = stage
        self.fingerprints: dict[str, Fingerprint] = {}  # by corpus unit
        self.broken: set[str] = set()  # units whose tree could not be rebuilt after a change

    def expected(self, plan: Plan) -> Fingerprint:
        """The plan's tree as a cell must leave it."""
        return self.fingerprints[plan.unit]

    def check(self, plan: Plan, failures: list[Failure]) -> None:
        """The tree checked against its setup fingerprint before any engine runs on it.

        A difference found now -- a work dir copied without its mtimes, a file edited
        by hand -- is no engine's doing: the tree is rebuilt, never blamed on whichever
        engine happens to run first (every cell is checked against this fingerprint).
        """
        recorded = recorded_fingerprint(self._dirs(plan))
        drift = verify(plan.tree, recorded, limit=1)
        if not drift:
            self.fingerprints[plan.unit] = recorded
            return
        self.rebuild(plan, failures,
                     f"its tree differs from its setup before any engine ran ({drift[0]})")

    def rebuild(self, plan: Plan, failures: list[Failure],
                why: str = "an engine changed its tree") -> None:
        """Set the tree up afresh so the next engine gets the pin; a failure marks it broken.

        The tree may share inodes with bench's checkout, so both are rebuilt from the source.
        """
        self.stage(f"rebuilding {plan.unit}: {why}")
        try:
            rebuild(plan, self.corpora_root)
        except BenchError as exc:
            failures.append(Failure(engine="*", corpus=plan.unit, stage="setup",
                                    message=f"rebuilding the tree ({why}): {exc}"))
            self.broken.add(plan.unit)
            return
        self.fingerprints[plan.unit] = recorded_fingerprint(self._dirs(plan))

    def _dirs(self, plan: Plan) -> CorpusDir:
        return plan.dirs or setup.dirs(self.corpora_root.resolve(), plan.corpus)
