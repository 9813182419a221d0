from __future__ import annotations

import hashlib
import http.server
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest
from archives import git, make_git_repo, make_tar

from codesearch_bench.corpus.config import load_corpora, select
from codesearch_bench.corpus.setup import setup
from codesearch_bench.corpus.tree import glob_to_regex
from codesearch_bench.errors import CorpusError


def write_toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "corpora.toml"
    path.write_text(text)
    return path


# -- corpora.toml --------------------------------------------------------------
def test_unknown_key_names_file_corpus_key_and_suggestion(tmp_path: Path) -> None:
    path = write_toml(tmp_path, """
[corpus.rich]
source = "pypi"
package = "rich"
version = "1"
sha265 = "00"
""")
    with pytest.raises(CorpusError) as exc:
        load_corpora(path)
    msg = str(exc.value)
    assert str(path) in msg and "`rich`" in msg and "sha265" in msg
    assert "did you mean `sha256`" in msg


def test_bad_source_and_bad_pin(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="key `source`: must be one of"):
        load_corpora(write_toml(tmp_path, '[corpus.x]\nsource = "svn"\n'))
    with pytest.raises(CorpusError, match="40-hex"):
        load_corpora(write_toml(
            tmp_path, '[corpus.x]\nsource = "git"\nurl = "u"\ncommit = "main"\n'))
    with pytest.raises(CorpusError, match="not valid TOML"):
        load_corpora(write_toml(tmp_path, "[corpus.x\n"))
    with pytest.raises(CorpusError, match="relative path"):
        load_corpora(write_toml(
            tmp_path, '[corpus.x]\nsource = "path"\npath = "."\nsubtrees = ["../up"]\n'))


def test_select_default_all_and_typo(tmp_path: Path) -> None:
    path = write_toml(tmp_path, """
[corpus.a]
source = "path"
path = "a"
default = true
[corpus.b]
source = "path"
path = "b"
""")
    table = load_corpora(path)
    assert [c.name for c in select(table, None)] == ["a"]
    assert [c.name for c in select(table, "all")] == ["a", "b"]
    with pytest.raises(CorpusError, match="did you mean 'b'"):
        select(table, "bb")


@pytest.mark.parametrize("pattern, path, expected", [
    ("**/*.py", "a.py", True),
    ("**/*.py", "x/y/a.py", True),
    ("*.py", "x/a.py", False),
    ("**/tests/**", "pkg/tests/t.py", True),
    ("**/tests/**", "pkg/testsx/t.py", False),
    ("src/?.c", "src/a.c", True),
])
def test_globs(pattern: str, path: str, expected: bool) -> None:
    assert bool(glob_to_regex(pattern).match(path)) is expected


# -- path source and the candidate tree ------------------------------------------
def test_path_directory_tree_manifest_and_quick_rerun(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    for name in ("lib/a.py", "lib/b.c", "lib/tests/test_a.py", "docs/x.md", "lib/.git/HEAD"):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text("x\n")
    os.symlink("/etc/passwd", src / "lib" / "passwd")
    path = write_toml(tmp_path, """
[corpus.p]
source = "path"
path = "proj"
subtrees = ["lib"]
exclude = ["**/tests/**"]
""")
    (corpus,) = load_corpora(path).values()
    root = tmp_path / "corpora"
    result = setup(corpus, root)
    files = sorted(p.relative_to(result.tree).as_posix() for p in result.tree.rglob("*")
                   if p.is_file())
    assert files == ["lib/a.py", "lib/b.c"]
    assert result.manifest.files == 2 and result.manifest.tier == "small"
    assert result.manifest.languages == {"c": 1, "python": 1}
    # the user's own files are copied, never hard-linked: an engine writing to its tree
    # must not change them
    assert (result.tree / "lib/a.py").stat().st_ino != (src / "lib/a.py").stat().st_ino
    start = time.perf_counter()
    again = setup(corpus, root)
    assert again.cached and time.perf_counter() - start < 0.1


def test_changing_excludes_rebuilds_tree(tmp_path: Path) -> None:
    src = tmp_path / "proj"
    src.mkdir()
    (src / "a.py").write_text("a\n")
    (src / "b.py").write_text("b\n")
    root = tmp_path / "corpora"
    (c1,) = load_corpora(write_toml(
        tmp_path, '[corpus.p]\nsource = "path"\npath = "proj"\n')).values()
    assert setup(c1, root).manifest.files == 2
    (c2,) = load_corpora(write_toml(
        tmp_path, '[corpus.p]\nsource = "path"\npath = "proj"\nexclude = ["b.py"]\n')).values()
    result = setup(c2, root)
    assert not result.cached and result.manifest.files == 1


def test_path_archive_with_sha256(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "p.tar.gz", {"m.py": b"def f():\n    pass\n"})
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    path = write_toml(tmp_path, f'[corpus.p]\nsource = "path"\npath = "p.tar.gz"\n'
                                f'sha256 = "{sha}"\n')
    (corpus,) = load_corpora(path).values()
    result = setup(corpus, tmp_path / "corpora")
    assert (result.tree / "m.py").is_file()


def test_path_archive_sha_mismatch_leaves_nothing(tmp_path: Path) -> None:
    make_tar(tmp_path / "p.tar.gz", {"m.py": b"x"})
    path = write_toml(tmp_path, f'[corpus.p]\nsource = "path"\npath = "p.tar.gz"\n'
                                f'sha256 = "{"0" * 64}"\n')
    (corpus,) = load_corpora(path).values()
    with pytest.raises(CorpusError, match="sha256 mismatch"):
        setup(corpus, tmp_path / "corpora")
    base = tmp_path / "corpora" / "p"
    assert not (base / "checkout").exists() and not (base / "tree").exists()


def test_malicious_archive_refused(tmp_path: Path) -> None:
    make_tar(tmp_path / "evil.tar.gz", {"ok.py": b"x", "../escape": b"x"})
    path = write_toml(tmp_path, '[corpus.e]\nsource = "path"\npath = "evil.tar.gz"\n')
    (corpus,) = load_corpora(path).values()
    with pytest.raises(CorpusError, match="refusing to unpack"):
        setup(corpus, tmp_path / "corpora")
    assert not (tmp_path / "corpora" / "e" / "checkout").exists()
    assert not (tmp_path / "corpora" / "escape").exists()


# -- git ---------------------------------------------------------------------------
def test_git_fetches_only_the_pinned_commit(tmp_path: Path) -> None:
    shas = make_git_repo(tmp_path / "upstream", [
        {"src/a.py": "one\n"}, {"src/a.py": "two\n"}, {"src/a.py": "three\n"},
    ])
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(tmp_path / "upstream"), str(bare))
    pinned = shas[1]  # not the tip
    path = write_toml(tmp_path, f'[corpus.g]\nsource = "git"\nurl = "file://{bare}"\n'
                                f'commit = "{pinned}"\nsubtrees = ["src"]\n')
    (corpus,) = load_corpora(path).values()
    result = setup(corpus, tmp_path / "corpora")
    assert (result.tree / "src/a.py").read_text() == "two\n"
    # The checkout is the commit's files alone; its objects are in the repository's store.
    assert not (tmp_path / "corpora" / "g" / "checkout" / ".git").exists()
    (store,) = (tmp_path / "corpora" / ".git-store").glob("*.git")
    assert git(store, "rev-parse", f"refs/pins/{pinned}") == pinned
    assert git(store, "rev-list", "--count", "--all") == "1"
    assert "shallow" in result.how
    assert result.manifest.fetch is not None and result.manifest.fetch["commit"] == pinned


def test_git_insteadof_redirects_to_a_local_mirror(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    shas = make_git_repo(tmp_path / "mirror", [{"a.c": "int x;\n"}])
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        f'[url "file://{tmp_path / "mirror"}"]\n\tinsteadOf = https://example.invalid/org/repo\n')
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    path = write_toml(tmp_path, f'[corpus.g]\nsource = "git"\n'
                                f'url = "https://example.invalid/org/repo"\ncommit = "{shas[0]}"\n')
    (corpus,) = load_corpora(path).values()
    result = setup(corpus, tmp_path / "corpora")
    assert (result.tree / "a.c").is_file()


def test_git_unknown_commit_fails_cleanly(tmp_path: Path) -> None:
    make_git_repo(tmp_path / "up", [{"a": "x"}])
    path = write_toml(tmp_path, f'[corpus.g]\nsource = "git"\nurl = "file://{tmp_path / "up"}"\n'
                                f'commit = "{"1" * 40}"\n')
    (corpus,) = load_corpora(path).values()
    with pytest.raises(CorpusError, match="git"):
        setup(corpus, tmp_path / "corpora")
    assert not (tmp_path / "corpora" / "g" / "checkout").exists()


# -- pypi through a loopback index ------------------------------------------------------
class _Index(http.server.BaseHTTPRequestHandler):
    files: ClassVar[dict[str, bytes]] = {}
    pages: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.pages.get(self.path) or self.files.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    archive = make_tar(tmp_path / "demo-1.0.tar.gz", {"demo/core.py": b"def run():\n    pass\n",
                                                      "setup.py": b""}, top="demo-1.0")
    data = archive.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    _Index.files = {"/files/demo-1.0.tar.gz": data}
    _Index.pages = {"/simple/demo/": json.dumps({"files": [
        {"filename": "demo-1.0-py3-none-any.whl", "url": "/files/nope.whl", "hashes": {}},
        {"filename": "demo-1.0.tar.gz", "url": "../../files/demo-1.0.tar.gz",
         "hashes": {"sha256": sha}}]}).encode()}
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("PIP_INDEX_URL", f"http://127.0.0.1:{server.server_port}/simple")
    yield sha, str(tmp_path)
    server.shutdown()


def test_pypi_sdist_fetched_verified_unpacked(tmp_path: Path, index: tuple[str, str]) -> None:
    sha, _ = index
    path = write_toml(tmp_path, f'[corpus.d]\nsource = "pypi"\npackage = "demo"\n'
                                f'version = "1.0"\nsha256 = "{sha}"\nsubtrees = ["demo"]\n')
    (corpus,) = load_corpora(path).values()
    seen: list[int] = []
    result = setup(corpus, tmp_path / "corpora",
                           progress=lambda label, done, total: seen.append(done))
    assert (result.tree / "demo/core.py").is_file()
    assert seen and seen[-1] > 0
    assert "sha256 verified" in result.how


def test_pypi_wrong_sha_stops_before_unpacking(tmp_path: Path, index: tuple[str, str]) -> None:
    path = write_toml(tmp_path, f'[corpus.d]\nsource = "pypi"\npackage = "demo"\n'
                                f'version = "1.0"\nsha256 = "{"a" * 64}"\n')
    (corpus,) = load_corpora(path).values()
    with pytest.raises(CorpusError, match="sha256 mismatch"):
        setup(corpus, tmp_path / "corpora")
    base = tmp_path / "corpora" / "d"
    assert not (base / "checkout").exists()
    assert not (base / "tree").exists()
    assert not list((base / "download").glob("*")) if (base / "download").exists() else True


def test_npm_corpus_with_a_relative_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake `npm pack` on PATH; the corpora root is relative, as the default ./.bench is."""
    import base64
    import sys

    archive = make_tar(tmp_path / "pkg.tgz", {"index.js": b"module.exports = 1\n"},
                       top="package")
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(archive.read_bytes()).digest()).decode()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    npm = bindir / "npm"
    npm.write_text(
        f"#!{sys.executable}\n"
        "import json, os, shutil, sys\n"
        "dest = sys.argv[sys.argv.index('--pack-destination') + 1]\n"
        f"shutil.copy({str(archive)!r}, os.path.join(dest, 'demo-1.0.0.tgz'))\n"
        "print(json.dumps([{'filename': 'demo-1.0.0.tgz'}]))\n"
    )
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.chdir(tmp_path)
    path = write_toml(tmp_path, f'[corpus.n]\nsource = "npm"\npackage = "demo"\n'
                                f'version = "1.0.0"\nintegrity = "{integrity}"\n')
    (corpus,) = load_corpora(path).values()
    result = setup(corpus, Path(".bench/corpora"))
    assert (result.tree / "index.js").is_file()
    assert "integrity verified" in result.how


def test_setup_all_counts_corpora_and_bytes_for_the_progress_line(tmp_path: Path) -> None:
    from minicorpus import make_corpus

    from codesearch_bench.corpus.setup import setup_all

    make_corpus(tmp_path, "one")
    toml = make_corpus(tmp_path, "two")
    corpora = list(load_corpora(toml).values())
    seen: list[tuple[int, int, int]] = []
    outcomes = setup_all(corpora, tmp_path / "corpora", None,
                         lambda done, total, stored: seen.append((done, total, stored)))
    assert [o.error for o in outcomes] == [None, None]
    sizes = [o.result.manifest.bytes for o in outcomes if o.result is not None]
    assert seen == [(0, 2, 0), (1, 2, sizes[0]), (2, 2, sizes[0] + sizes[1])]


def test_the_full_suite_leaves_out_optional_corpora() -> None:
    shipped = load_corpora(Path(__file__).resolve().parent.parent / "corpora.toml")
    full = {c.name for c in select(shipped, "full")}
    optional = {n for n, c in shipped.items() if c.spec.optional}
    assert optional == {"ripgrep-git", "redis-git", "leveldb-git", "cobra-git"}
    assert full == set(shipped) - optional and len(full) == 15
    assert {c.name for c in select(shipped, "ripgrep-git")} == {"ripgrep-git"}  # still by name
    # Every corpus of the full suite comes from a package registry, never a forge.
    assert all(shipped[n].spec.source != "git" for n in full)
