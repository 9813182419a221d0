"""Build small (and deliberately malicious) archives and local git repos for tests."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path


def make_tar(path: Path, members: dict[str, bytes | tuple[str, str]], *, top: str = "pkg-1.0",
             ) -> Path:
    """members: name -> bytes (a file) or ("symlink"|"hardlink"|"fifo", target)."""
    with tarfile.open(path, "w:gz") as tar:
        for name, content in members.items():
            full = f"{top}/{name}" if top else name
            info = tarfile.TarInfo(full)
            if isinstance(content, tuple):
                kind, target = content
                info.type = {"symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                             "fifo": tarfile.FIFOTYPE}[kind]
                info.linkname = target
                tar.addfile(info)
            else:
                info.size = len(content)
                tar.addfile(info, io.BytesIO(content))
    return path


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def make_git_repo(path: Path, commits: list[dict[str, str]]) -> list[str]:
    """A repository with one commit per dict of files; returns the commit ids."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.invalid")
    git(path, "config", "user.name", "t")
    shas = []
    for i, files in enumerate(commits):
        for name, text in files.items():
            f = path / name
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(text)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"commit {i}")
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas
