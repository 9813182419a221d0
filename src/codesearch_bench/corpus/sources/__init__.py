"""The registry of corpus source kinds: `source = "<kind>"` in corpora.toml -> a module.

Every kind brings its pinned content onto disk verified before it is used
(see each module's docstring for how); downloads are cached under the
corpus folder and re-verified before use.
"""

from __future__ import annotations

from . import debian, git, npm, path, pypi
from .base import Fetched, Request, Source
from .fetching import Progress, no_progress

SOURCES: dict[str, Source] = {s.kind: s for s in (git.SOURCE, pypi.SOURCE, npm.SOURCE,
                                                  debian.SOURCE, path.SOURCE)}

__all__ = ["SOURCES", "Fetched", "Progress", "Request", "Source", "no_progress"]
