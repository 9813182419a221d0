"""Importers: a public benchmark's own files -> a suite (corpora TOML + query sets + provenance).

One module per dataset, each exposing `IMPORTER`; adding a dataset is adding a
module and naming it here. `bench import NAME --from PATH` runs one.
"""

from __future__ import annotations

from . import beir, lca, repoqa, swebench, sweqa
from .base import ImportedCorpus, Importer, Suite

IMPORTERS: dict[str, Importer] = {i.name: i for i in (beir.IMPORTER, lca.IMPORTER,
                                                   repoqa.IMPORTER, swebench.IMPORTER,
                                                   sweqa.IMPORTER)}

__all__ = ["IMPORTERS", "ImportedCorpus", "Importer", "Suite"]
