"""Git pins share one object store per repository; --max-tasks keeps what the disk holds.

Real git on small local repositories reached through file:// URLs.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import tarfile
from collections import namedtuple
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from archives import git, make_git_repo

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import Corpus, load_corpora
from codesearch_bench.corpus.setup import invalidate, setup
from codesearch_bench.corpus.sources import gitstore
from codesearch_bench.datasets import fitting
from codesearch_bench.datasets.base import ImportedCorpus, Suite
from codesearch_bench.errors import CorpusError, UsageError

BIG = os.urandom(96 << 10)  # incompressible: its bytes show in what a fetch brings


def _corpora(tmp_path: Path, url: str, pins: dict[str, str]) -> dict[str, Corpus]:
    toml = tmp_path / "corpora.toml"
    toml.write_text("".join(f'[corpus.{name}]\nsource = "git"\nurl = "{url}"\n'
                            f'commit = "{sha}"\n\n' for name, sha in pins.items()))
    return load_corpora(toml)


def _archive(repo: Path, sha: str) -> dict[str, bytes]:
    """The regular files `git archive` writes for the commit."""
    raw = subprocess.run(["git", "archive", "--format=tar", sha], cwd=repo, check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        return {m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar.getmembers() if m.isreg()}


def _files(folder: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted(folder.rglob("*")):
        assert not p.is_symlink(), p
        if p.is_file():
            out[p.relative_to(folder).as_posix()] = p.read_bytes()
    return out


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, list[str]]:
    shas = make_git_repo(tmp_path / "up", [
        {"big.bin": BIG, "src/a.py": "def one():\n    return 1\n"},
        {"src/b.py": "def two():\n    return 2\n"},
        {"src/a.py": "def one():\n    return 'one'\n"},
    ])
    return tmp_path / "up", shas


def test_two_commits_share_one_store_and_the_second_fetches_only_what_is_new(
        tmp_path: Path, upstream: tuple[Path, list[str]]) -> None:
    repo, shas = upstream
    corpora = _corpora(tmp_path, f"file://{repo}", {"a": shas[0], "b": shas[1]})
    root = tmp_path / "corpora"
    first, second = setup(corpora["a"], root), setup(corpora["b"], root)
    stores = list((root / gitstore.STORE_DIR).glob("*.git"))
    assert len(stores) == 1 and stores[0] == gitstore.store_path(root.resolve(), f"file://{repo}")
    assert git(stores[0], "rev-list", "--count", "--all") == "2"
    for result, sha in ((first, shas[0]), (second, shas[1])):
        checkout = result.tree.parent / "checkout"
        assert not (checkout / ".git").exists()
        assert _files(checkout) == _archive(repo, sha)  # exactly the commit, nothing else
    a, b = first.manifest.fetch, second.manifest.fetch
    assert a is not None and b is not None and a["store"] == b["store"]
    assert a["bytes_fetched"] > len(BIG)  # the first fetch brought the big file
    assert 0 < b["bytes_fetched"] < len(BIG) // 4  # the second only the new objects
    assert b["bytes_stored"] == sum(len(v) for v in _archive(repo, shas[1]).values())
    assert b["store_bytes"] == gitstore.dir_bytes(stores[0])
    assert "fetched" in second.how and "stored" in second.how
    # A third corpus at a commit the store holds fetches nothing.
    again = _corpora(tmp_path, f"file://{repo}", {"c": shas[1]})["c"]
    third = setup(again, root)
    assert third.manifest.fetch is not None and third.manifest.fetch["bytes_fetched"] == 0
    assert "already in the shared store" in third.how


def test_two_setups_at_once_take_turns_in_the_store(
        tmp_path: Path, upstream: tuple[Path, list[str]]) -> None:
    repo, shas = upstream
    corpora = _corpora(tmp_path, f"file://{repo}", {f"c{i}": sha for i, sha in enumerate(shas)})
    root = tmp_path / "corpora"
    with ThreadPoolExecutor(3) as pool:  # each holds its own lock file descriptor
        results = list(pool.map(lambda c: setup(c, root), corpora.values()))
    assert len(list((root / gitstore.STORE_DIR).glob("*.git"))) == 1
    for result, sha in zip(results, shas, strict=True):
        assert _files(result.tree.parent / "checkout") == _archive(repo, sha)


def test_the_checkout_is_the_commit_every_file_no_link(tmp_path: Path) -> None:
    make_git_repo(tmp_path / "up", [{
        "run.sh": "#!/bin/sh\n", "docs/keep.md": "kept\n", "VERSION": "$Format:%H$\n",
        ".gitattributes": "docs export-ignore\nVERSION export-subst\n",
        "out": "->/etc/passwd", "inside": "->run.sh", "lib/x.py": "x = 1\n"}])
    os.chmod(tmp_path / "up" / "run.sh", 0o755)
    git(tmp_path / "up", "add", "-A")
    git(tmp_path / "up", "commit", "-q", "-m", "exec")
    sha = git(tmp_path / "up", "rev-parse", "HEAD")
    (corpus,) = _corpora(tmp_path, f"file://{tmp_path / 'up'}", {"g": sha}).values()
    result = setup(corpus, tmp_path / "corpora")
    checkout = result.tree.parent / "checkout"
    blobs = {line.split("\t")[1]: line.split()[2] for line in git(
        tmp_path / "up", "ls-tree", "-r", sha).splitlines() if not line.startswith("120000")}
    want = {p: subprocess.run(["git", "cat-file", "blob", o], cwd=tmp_path / "up", check=True,
                              capture_output=True).stdout for p, o in blobs.items()}
    # export-ignore and export-subst are off: the files as the commit holds them.
    assert _files(checkout) == want
    assert not (checkout / "out").exists() and not (checkout / "inside").exists()
    assert "2 symlinks left out" in result.how
    assert os.stat(checkout / "run.sh").st_mode & stat.S_IXUSR
    assert not os.stat(checkout / "lib/x.py").st_mode & stat.S_IXUSR
    assert sorted(p.relative_to(result.tree).as_posix() for p in result.tree.rglob("*")
                  if p.is_file()) == sorted(want)


def test_a_commit_not_in_the_repository_names_the_corpus_and_the_fix(
        tmp_path: Path, upstream: tuple[Path, list[str]]) -> None:
    repo, _ = upstream
    (corpus,) = _corpora(tmp_path, f"file://{repo}", {"g": "1" * 40}).values()
    with pytest.raises(CorpusError) as exc:
        setup(corpus, tmp_path / "corpora")
    assert "corpus 'g'" in str(exc.value) and "1" * 40 in str(exc.value)
    assert "check `commit` in corpora.toml" in str(exc.value)
    assert not (tmp_path / "corpora" / "g" / "checkout").exists()
    (gone,) = _corpora(tmp_path, f"file://{tmp_path / 'nowhere'}", {"h": "1" * 40}).values()
    with pytest.raises(CorpusError) as exc:
        setup(gone, tmp_path / "corpora")
    assert "corpus 'h'" in str(exc.value) and "check `url` in corpora.toml" in str(exc.value)


@pytest.mark.parametrize("damage", ["not a repository", "objects"])
def test_a_broken_store_is_rebuilt(tmp_path: Path, upstream: tuple[Path, list[str]],
                                   damage: str) -> None:
    repo, shas = upstream
    corpora = _corpora(tmp_path, f"file://{repo}", {"a": shas[0], "b": shas[2]})
    root = tmp_path / "corpora"
    setup(corpora["a"], root)
    store = gitstore.store_path(root.resolve(), f"file://{repo}")
    if damage == "not a repository":
        (store / "HEAD").write_text("garbage\n")
        target = corpora["b"]
    else:  # every object file overwritten: the commit reads back broken
        for path in (store / "objects").rglob("*"):
            if path.is_file():
                path.chmod(0o644)
                path.write_bytes(b"\0garbage" * 8)
        invalidate(root, corpora["a"])
        target = corpora["a"]
    result = setup(target, root)
    assert "the shared store was broken" in result.how and "rebuilt" in result.how
    sha = shas[2] if target.name == "b" else shas[0]
    assert _files(result.tree.parent / "checkout") == _archive(repo, sha)
    assert git(store, "rev-parse", f"refs/pins/{sha}") == sha


def test_setup_prints_one_line_per_store(tmp_path: Path, upstream: tuple[Path, list[str]],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    repo, shas = upstream
    _corpora(tmp_path, f"file://{repo}", {"a": shas[0], "b": shas[1]})
    assert main(["setup", "--corpus", "all", "--corpora-file", str(tmp_path / "corpora.toml"),
                 "--corpora-root", str(tmp_path / "corpora"), "--work",
                 str(tmp_path / "w")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2 pinned commits, shared by 2 corpora (a, b)" in out
    assert f"file://{repo}" in out and "git store" in out


# -- bench import --max-tasks -------------------------------------------------------------
PATCH = """diff --git a/src/app.py b/src/app.py
--- a/src/app.py
+++ b/src/app.py
@@ -1 +1 @@
-x
+y
"""
Usage = namedtuple("Usage", "total used free")


def _rows(tmp_path: Path) -> Path:
    rows = tmp_path / "rows.jsonl"
    tasks = [("acme/app", "1"), ("acme/lib", "2"), ("acme/app", "3"), ("acme/app", "4")]
    rows.write_text("".join(json.dumps({
        "instance_id": f"{repo.replace('/', '__')}-{n}", "repo": repo,
        "base_commit": n * 40, "problem_statement": f"task {n}", "patch": PATCH}) + "\n"
        for repo, n in tasks))
    return rows


def _disk(monkeypatch: pytest.MonkeyPatch, free: int) -> None:
    monkeypatch.setattr(shutil, "disk_usage", lambda _: Usage(10 << 30, 0, free))


def test_max_tasks_keeps_the_first_n_grouped_by_repository(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _disk(monkeypatch, 1 << 40)
    out = tmp_path / "suite"
    assert main(["import", "swebench", "--from", str(_rows(tmp_path)), "--out", str(out),
                 "--max-tasks", "3", "--corpora-root", str(tmp_path / "c")]) == 0
    corpora = load_corpora(out / "corpora.toml")
    # The first three tasks, those of acme/app next to each other.
    assert list(corpora) == ["swe-acme__app-1", "swe-acme__app-3", "swe-acme__lib-2"]
    provenance = corpora["swe-acme__app-1"].spec.provenance
    assert provenance is not None and provenance["tasks_kept"] == 3
    assert provenance["dropped"]["task over --max-tasks 3"] == 1


def test_max_tasks_auto_drops_what_the_disk_cannot_hold(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # 1 GiB margin; room for 450 MiB of 100 MiB trees: acme/app's first task (tree and
    # store: 200), its next two (110 each), then acme/lib's (200) does not fit.
    _disk(monkeypatch, (1 << 30) + (450 << 20))
    out = tmp_path / "suite"
    assert main(["import", "swebench", "--from", str(_rows(tmp_path)), "--out", str(out),
                 "--max-tasks", "auto", "--task-bytes", "100M",
                 "--corpora-root", str(tmp_path / "c")]) == 0
    corpora = load_corpora(out / "corpora.toml")
    assert list(corpora) == ["swe-acme__app-1", "swe-acme__app-3", "swe-acme__app-4"]
    provenance = corpora["swe-acme__app-1"].spec.provenance
    assert provenance is not None and provenance["dropped"][fitting.DISK_REASON] == 1
    text = " ".join(capsys.readouterr().out.split())
    assert f"dropped 1: {fitting.DISK_REASON}" in text and "1 left out" in text
    _disk(monkeypatch, 1 << 30)
    with pytest.raises(UsageError, match="no task fits"):
        fitting.fit(Suite("x", [ImportedCorpus("t", {}, [], git=("u", "1" * 40))], {}),
                   max_tasks=None, root=tmp_path / "c")


def test_the_estimate_comes_from_a_tree_already_set_up(
        tmp_path: Path, upstream: tuple[Path, list[str]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    repo, shas = upstream
    url = f"file://{repo}"
    root = tmp_path / "corpora"
    setup(_corpora(tmp_path, url, {"a": shas[0]})["a"], root)
    tree = gitstore.known(root)[url].trees[shas[0]]
    assert tree == len(BIG) + len("def one():\n    return 1\n")
    # Room for a few such trees, far less than one default-sized one.
    _disk(monkeypatch, (1 << 30) + 5 * tree)
    tasks = [ImportedCorpus(f"t{i}", {}, [], git=(url, sha)) for i, sha in enumerate(shas)]
    suite, room = fitting.fit(Suite("x", tasks, {}), max_tasks=None, root=root)
    # The first commit is in the store (one tree); the others one tree and a tenth each.
    assert [c.name for c in suite.corpora] == ["t0", "t1", "t2"]
    assert room.dropped == 0 and room.needed == tree + 2 * (tree + tree // 10)
