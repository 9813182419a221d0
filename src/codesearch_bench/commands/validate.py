"""`bench validate`: every gold path and symbol span resolves, and the set is honest."""

from __future__ import annotations

import argparse

from ..corpus.config import load_corpora, select
from ..errors import QueryError
from ..gold.check import check_corpus
from ..render.setup import render_validate
from ..render.ui import UI
from ..workdir import Where
from .suites import corpus_of, selection, suited


def run(args: argparse.Namespace, ui: UI) -> int:
    where = suited(Where.of(args), args)
    checks = [check_corpus(c, where.corpora_root, selection=selection(args))
              for c in select(load_corpora(where.corpora_file), args.corpus or corpus_of(args))]
    render_validate(ui.out, checks)
    return 0 if all(c.ok for c in checks) else QueryError.exit_code
