"""Corpora: corpora.toml, the sources that fetch pinned content, and the candidate tree."""
