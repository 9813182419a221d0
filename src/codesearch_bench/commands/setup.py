"""`bench setup`: fetch each pinned corpus, verify it, build its candidate tree.

One corpus failing does not stop the others; the exit code is the largest of
the failures' classes' codes.
"""

from __future__ import annotations

import argparse

from ..corpus.config import load_corpora, select
from ..corpus.setup import setup_all
from ..corpus.sources import gitstore
from ..render import progress
from ..render.setup import render_setup, render_stores
from ..render.ui import UI
from ..workdir import Where
from .suites import corpus_of, suited


def run(args: argparse.Namespace, ui: UI) -> int:
    where = suited(Where.of(args), args)
    corpora = select(load_corpora(where.corpora_file), args.corpus or corpus_of(args))
    with progress.download_progress(ui.err) as bar:
        outcomes = setup_all(corpora, where.corpora_root, bar, bar.corpora)
    render_setup(ui.out, outcomes)
    used = {o.name: str(o.result.manifest.fetch["url"]) for o in outcomes
            if o.result is not None and o.result.manifest.fetch
            and "url" in o.result.manifest.fetch}
    render_stores(ui.out, gitstore.summarize(where.corpora_root.resolve(), used))
    return max((o.error.exit_code for o in outcomes if o.error is not None), default=0)
