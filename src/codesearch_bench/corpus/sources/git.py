"""`source = "git"`: a work tree at exactly one commit.

Only the pinned commit is fetched (`--depth 1 origin <sha>`), falling back to
a full fetch when the server refuses; HEAD must equal the pin. Private
mirrors redirect with git's own `url.<base>.insteadOf`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import field_validator

from ...errors import CorpusError
from ..entry import Entry
from .base import Fetched, Request, Source

_HEX40 = re.compile(r"^[0-9a-f]{40}$")


class GitCorpus(Entry):
    source: Literal["git"]
    url: str
    commit: str

    @field_validator("commit")
    @classmethod
    def _commit(cls, value: str) -> str:
        if not _HEX40.match(value):
            raise ValueError("a git pin is the full 40-hex commit id (lower case)")
        return value

    def pin(self) -> str:
        return f"git {self.url}@{self.commit}"


def fetch(request: Request) -> Fetched:
    spec: GitCorpus = request.entry
    how = git_checkout(spec.url, spec.commit, request.dirs.checkout, what=request.what)
    return Fetched(request.dirs.checkout, how)


def _git(args: list[str], cwd: Path, what: str,
         check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise CorpusError(f"{what}: git {' '.join(args)} failed: {proc.stderr.strip()[-500:]}")
    return proc


def git_checkout(url: str, commit: str, dest: Path, *, what: str) -> str:
    """A work tree at exactly `commit` in dest; returns how it was fetched."""
    if shutil.which("git") is None:
        raise CorpusError(f"{what}: git is not on PATH")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        _git(["init", "-q"], tmp, what)
        _git(["remote", "add", "origin", url], tmp, what)
        shallow = _git(["fetch", "-q", "--depth", "1", "origin", commit], tmp, what, check=False)
        how = "shallow fetch of the pinned commit"
        if shallow.returncode != 0:
            _git(["fetch", "-q", "origin"], tmp, what)
            how = "full fetch (the server refused a fetch by commit)"
        _git(["-c", "advice.detachedHead=false", "checkout", "-q", "--detach", commit], tmp, what)
        head = _git(["rev-parse", "HEAD"], tmp, what).stdout.strip()
        if head != commit.lower():
            raise CorpusError(f"{what}: HEAD is {head}, not the pinned {commit}")
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp, dest)
        return how
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


SOURCE = Source("git", GitCorpus, fetch)
