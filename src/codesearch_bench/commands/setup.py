"""`bench setup`: fetch each pinned corpus, verify it, build its candidate tree.

One corpus failing does not stop the others; the exit code is the largest of
the failures' classes' codes.
"""

from __future__ import annotations

import argparse

from ..corpus.config import load_corpora, select
from ..corpus.setup import setup_all
from ..render import progress
from ..render.setup import render_setup
from ..render.ui import UI
from ..workdir import Where


def run(args: argparse.Namespace, ui: UI) -> int:
    where = Where.of(args)
    corpora = select(load_corpora(where.corpora_file), args.corpus)
    with progress.download_progress(ui.err) as bar:
        outcomes = setup_all(corpora, where.corpora_root, bar)
    render_setup(ui.out, outcomes)
    return max((o.error.exit_code for o in outcomes if o.error is not None), default=0)
