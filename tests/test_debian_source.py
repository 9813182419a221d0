"""`source = "debian"`: a source package's upstream tarball through apt, pinned by sha256.

Hermetic except the one `network` test: fake `apt-config` and `apt-get` (Python scripts
run by the interpreter running the tests) are put first on PATH. The fake apt-config
names a sources.list and a sources.list.d written under tmp_path; the fake apt-get
appends its argv to a log and, for `source`, drops what FAKE_APT_MODE asks for into its
working directory. Mirror names are example.invalid: nothing here is a real host.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from archives import make_tar

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import Corpus, load_corpora, select
from codesearch_bench.corpus.setup import invalidate, setup
from codesearch_bench.corpus.sources import aptsources
from codesearch_bench.errors import CorpusError

REPO = Path(__file__).resolve().parent.parent

SOURCES_LIST = """\
# the machine's main list
deb [signed-by=/usr/share/keyrings/main.gpg] http://main.example.invalid/debian bookworm main
deb http://security.example.invalid/debian-security bookworm-security main  # updates
deb-src http://src.example.invalid/debian bookworm contrib
#deb http://commented.example.invalid/debian bookworm main
deb-foo http://odd.example.invalid/debian bookworm main
"""

EXTRA_LIST = "deb http://extra.example.invalid/debian bookworm non-free\n"

DEB822 = """\
# deb822 sources
Types: deb
URIs: http://deb822.example.invalid/debian
Suites: bookworm bookworm-updates
# a comment inside the paragraph
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://disabled.example.invalid/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb deb-src
URIs: http://both.example.invalid/debian
Suites: bookworm
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mQINBFake
 -----END PGP PUBLIC KEY BLOCK-----

Types: deb-src
URIs: http://srconly.example.invalid/debian
Suites: bookworm
Components: main

Types: rpm
URIs: http://other.example.invalid/
"""

FAKE_APT_CONFIG = """\
import os, sys
print(f"LIST='{os.environ['FAKE_APT_LIST']}'")
print(f"PARTS='{os.environ['FAKE_APT_PARTS']}/'")
"""

FAKE_APT_GET = """\
import json, os, shutil, sys
with open(os.environ["FAKE_APT_LOG"], "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd()}) + "\\n")
mode = os.environ.get("FAKE_APT_MODE", "ok")
words = [a for a in sys.argv[1:] if not a.startswith("-") and "=" not in a]
if mode == "fail-update" and words[:1] == ["update"]:
    sys.stderr.write("E: The repository is not reachable\\n")
    sys.exit(100)
if words[:1] == ["source"]:
    if mode == "fail-source":
        sys.stderr.write("E: Unable to find a source package for demo\\n")
        sys.exit(100)
    open("demo_1.0-1.dsc", "w").write("Format: 3.0 (quilt)\\nSource: demo\\n")
    open("demo_1.0-1.debian.tar.xz", "wb").write(b"not the upstream tarball")
    if mode != "native":
        shutil.copy(os.environ["FAKE_APT_TARBALL"], "demo_1.0.orig.tar.gz")
    if mode == "two":
        shutil.copy(os.environ["FAKE_APT_TARBALL"], "demo_1.0+extra.orig.tar.xz")
"""


@dataclass
class FakeApt:
    root: Path  # where corpora are set up
    log: Path
    tarball: Path
    sha256: str
    etc: Path  # the fake machine's apt configuration
    monkeypatch: pytest.MonkeyPatch

    def calls(self) -> list[tuple[list[str], Path]]:
        """(argv without the program, working directory) of each apt-get run."""
        if not self.log.exists():
            return []
        runs = [json.loads(line) for line in self.log.read_text().splitlines()]
        return [(run["argv"], Path(run["cwd"])) for run in runs]

    def mode(self, mode: str) -> None:
        self.monkeypatch.setenv("FAKE_APT_MODE", mode)

    def corpus(self, tmp_path: Path, *, sha256: str | None = None) -> Corpus:
        toml = tmp_path / "corpora.toml"
        toml.write_text(
            '[corpus.d]\nsource = "debian"\npackage = "demo"\nversion = "1.0-1"\n'
            f'sha256 = "{sha256 or self.sha256}"\nsubtrees = ["src"]\n'
            'include = ["**/*.c"]\n')
        (corpus,) = load_corpora(toml).values()
        return corpus

    @property
    def download(self) -> Path:
        return (self.root / "d" / "download").resolve()


def _script(path: Path, body: str) -> None:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(0o755)


@pytest.fixture
def apt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeApt:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _script(bindir / "apt-config", FAKE_APT_CONFIG)
    _script(bindir / "apt-get", FAKE_APT_GET)
    etc = tmp_path / "etc-apt"
    (etc / "sources.list.d").mkdir(parents=True)
    (etc / "sources.list").write_text(SOURCES_LIST)
    (etc / "sources.list.d" / "extra.list").write_text(EXTRA_LIST)
    (etc / "sources.list.d" / "debian.sources").write_text(DEB822)
    (etc / "sources.list.d" / "notes.txt").write_text("deb http://ignored.example.invalid/ x y\n")
    tarball = make_tar(tmp_path / "upstream.tar.gz",
                       {"src/lib.c": b"int lib(void) { return 1; }\n",
                        "src/util/str.c": b"int str(void) { return 2; }\n",
                        "README": b"demo\n"}, top="demo-1.0")
    log = tmp_path / "apt-calls.jsonl"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_APT_LIST", str(etc / "sources.list"))
    monkeypatch.setenv("FAKE_APT_PARTS", str(etc / "sources.list.d"))
    monkeypatch.setenv("FAKE_APT_LOG", str(log))
    monkeypatch.setenv("FAKE_APT_TARBALL", str(tarball))
    monkeypatch.setenv("FAKE_APT_MODE", "ok")
    sha = hashlib.sha256(tarball.read_bytes()).hexdigest()
    return FakeApt(tmp_path / "corpora", log, tarball, sha, etc, monkeypatch)


def _files(tree: Path) -> list[str]:
    return sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file())


def test_setup_through_apt_builds_the_tree(tmp_path: Path, apt: FakeApt) -> None:
    result = setup(apt.corpus(tmp_path), apt.root)
    assert _files(result.tree) == ["src/lib.c", "src/util/str.c"]
    assert result.manifest.files == 2
    assert "through apt's configured mirror" in result.how and "sha256 verified" in result.how
    # only the upstream tarball is kept; the .dsc and Debian's own tarball are dropped
    assert sorted(p.name for p in apt.download.iterdir()) == ["apt", "demo_1.0.orig.tar.gz"]
    assert result.corpus.pin == f"debian demo=1.0-1 sha256:{apt.sha256}"


def test_apt_get_is_given_only_private_paths(tmp_path: Path, apt: FakeApt) -> None:
    setup(apt.corpus(tmp_path), apt.root)
    calls = apt.calls()
    actions = [next(a for a in argv if not a.startswith("-") and "=" not in a)
               for argv, _ in calls]
    assert actions == ["update", "source"]
    state = apt.download / "apt"
    for argv, cwd in calls:
        options = dict(argv[i + 1].split("=", 1) for i, a in enumerate(argv) if a == "-o")
        assert {"Dir::Etc::sourcelist", "Dir::Etc::sourceparts", "Dir::State",
                "Dir::State::Lists", "Dir::Cache"} <= set(options)
        for key, value in options.items():
            if key.startswith("Dir"):
                assert Path(value).is_relative_to(state), (key, value)
        assert options["Debug::NoLocking"] == "1"
        # the machine's own configuration is never named, let alone written
        assert not any("/etc/apt" in a or str(apt.etc) in a for a in argv)
        assert cwd.is_relative_to(apt.download)
    source = calls[1][0]
    at = source.index("source")
    assert source[at:] == ["source", "--download-only", "--only-source", "demo=1.0-1"]
    assert (apt.etc / "sources.list").read_text() == SOURCES_LIST


def test_one_line_entries_become_deb_src(tmp_path: Path, apt: FakeApt) -> None:
    setup(apt.corpus(tmp_path), apt.root)
    derived = (apt.download / "apt" / "sources.list").read_text().splitlines()
    assert derived == [
        "deb-src [signed-by=/usr/share/keyrings/main.gpg] http://main.example.invalid/debian "
        "bookworm main",
        "deb-src http://security.example.invalid/debian-security bookworm-security main",
        "deb-src http://src.example.invalid/debian bookworm contrib",
        "deb-src http://extra.example.invalid/debian bookworm non-free",
    ]


def test_deb822_paragraphs_become_deb_src(tmp_path: Path, apt: FakeApt) -> None:
    setup(apt.corpus(tmp_path), apt.root)
    derived = (apt.download / "apt" / "sources.list.d" / "bench-src.sources").read_text()
    paragraphs = derived.rstrip("\n").split("\n\n")
    assert paragraphs == [
        "Types: deb-src\nURIs: http://deb822.example.invalid/debian\n"
        "Suites: bookworm bookworm-updates\nComponents: main\n"
        "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg",
        "Types: deb-src\nURIs: http://both.example.invalid/debian\nSuites: bookworm\n"
        "Components: main\nSigned-By:\n -----BEGIN PGP PUBLIC KEY BLOCK-----\n .\n"
        " mQINBFake\n -----END PGP PUBLIC KEY BLOCK-----",
        "Types: deb-src\nURIs: http://srconly.example.invalid/debian\nSuites: bookworm\n"
        "Components: main",
    ]
    assert "disabled.example.invalid" not in derived and "#" not in derived


@pytest.mark.parametrize("text, expected", [
    ("deb http://a.example.invalid/d s main\n", ["deb-src http://a.example.invalid/d s main"]),
    ("  deb   http://a.example.invalid/d s main # note\n",
     ["deb-src http://a.example.invalid/d s main"]),
    ("# deb http://a.example.invalid/d s main\n\n", []),
    ("deb-src http://a.example.invalid/d s main\n", ["deb-src http://a.example.invalid/d s main"]),
    ("deb [arch=amd64 signed-by=/k.gpg] http://a.example.invalid/d s main\n",
     ["deb-src [arch=amd64 signed-by=/k.gpg] http://a.example.invalid/d s main"]),
])
def test_one_line_conversion(text: str, expected: list[str]) -> None:
    assert aptsources.one_line_entries(text) == expected


def test_deb822_enabled_is_case_insensitive_and_types_kept_in_place() -> None:
    text = ("Types: deb\nURIs: http://x.example.invalid/\nSuites: s\nComponents: c\n"
            "Enabled: No\n\nURIs: http://y.example.invalid/\nTypes: deb\nSuites: s\n"
            "Components: c\nEnabled: yes\n")
    assert aptsources.deb822_entries(text) == [
        "URIs: http://y.example.invalid/\nTypes: deb-src\nSuites: s\nComponents: c\n"
        "Enabled: yes"]


def test_sha256_mismatch_names_both_digests_and_unpacks_nothing(tmp_path: Path,
                                                                apt: FakeApt) -> None:
    wrong = "0" * 64
    with pytest.raises(CorpusError) as exc:
        setup(apt.corpus(tmp_path, sha256=wrong), apt.root)
    msg = str(exc.value)
    assert "corpus 'd'" in msg and "sha256 mismatch" in msg
    assert wrong in msg and apt.sha256 in msg
    base = apt.root / "d"
    assert not (base / "checkout").exists() and not (base / "tree").exists()
    assert not list(apt.download.glob("*.orig.tar.*"))
    assert not (apt.download / "source").exists()


def test_a_second_setup_reuses_the_verified_tarball(tmp_path: Path, apt: FakeApt) -> None:
    corpus = apt.corpus(tmp_path)
    setup(corpus, apt.root)
    before = len(apt.calls())
    again = setup(corpus, apt.root)
    assert again.cached and len(apt.calls()) == before
    # the checkout and tree are thrown away; the tarball in download/ is enough
    invalidate(apt.root, corpus)
    shutil.rmtree(apt.root / "d" / "checkout")
    shutil.rmtree(apt.root / "d" / "tree")
    rebuilt = setup(corpus, apt.root)
    assert not rebuilt.cached and "cached upstream tarball" in rebuilt.how
    assert _files(rebuilt.tree) == ["src/lib.c", "src/util/str.c"]
    assert len(apt.calls()) == before, "apt-get was called although the tarball was cached"


def test_a_cached_tarball_with_another_digest_is_not_used(tmp_path: Path, apt: FakeApt) -> None:
    apt.download.mkdir(parents=True)
    (apt.download / "demo_1.0.orig.tar.gz").write_bytes(b"tampered")
    result = setup(apt.corpus(tmp_path), apt.root)
    assert "through apt's configured mirror" in result.how
    assert len(apt.calls()) == 2


def test_a_native_package_has_no_upstream_tarball(tmp_path: Path, apt: FakeApt) -> None:
    apt.mode("native")
    with pytest.raises(CorpusError, match=r"demo=1\.0-1 has no upstream tarball") as exc:
        setup(apt.corpus(tmp_path), apt.root)
    assert "path source" in exc.value.hint
    assert not (apt.root / "d" / "checkout").exists()


def test_several_upstream_tarballs_are_refused(tmp_path: Path, apt: FakeApt) -> None:
    apt.mode("two")
    with pytest.raises(CorpusError, match="several upstream tarballs") as exc:
        setup(apt.corpus(tmp_path), apt.root)
    assert "demo_1.0.orig.tar.gz" in str(exc.value)
    assert "demo_1.0+extra.orig.tar.xz" in str(exc.value)
    assert not (apt.root / "d" / "checkout").exists()


def test_a_failing_apt_get_source_gives_the_showsrc_hint(tmp_path: Path, apt: FakeApt) -> None:
    apt.mode("fail-source")
    with pytest.raises(CorpusError) as exc:
        setup(apt.corpus(tmp_path), apt.root)
    err = exc.value
    assert "corpus 'd'" in err.message and "exit 100" in err.message
    assert "Unable to find a source package for demo" in err.message
    assert "apt-cache showsrc" in err.hint
    assert not (apt.root / "d" / "checkout").exists()


def test_a_failing_apt_get_update_gives_the_mirror_hint(tmp_path: Path, apt: FakeApt) -> None:
    apt.mode("fail-update")
    with pytest.raises(CorpusError) as exc:
        setup(apt.corpus(tmp_path), apt.root)
    assert "apt-get update failed (exit 100)" in exc.value.message
    assert "not reachable" in exc.value.message
    assert "mirror is reachable" in exc.value.hint
    assert [argv[-1] for argv, _ in apt.calls()] == ["update"]


def test_no_deb_entries_is_a_clear_error(tmp_path: Path, apt: FakeApt) -> None:
    (apt.etc / "sources.list").write_text("# nothing configured\n")
    for path in (apt.etc / "sources.list.d").iterdir():
        path.unlink()
    with pytest.raises(CorpusError, match="no `deb` entries"):
        setup(apt.corpus(tmp_path), apt.root)
    assert apt.calls() == []


def test_without_apt_get_on_path(tmp_path: Path, apt: FakeApt,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    with pytest.raises(CorpusError, match="apt-get is not on PATH") as exc:
        setup(apt.corpus(tmp_path), apt.root)
    assert "pypi, npm or git" in exc.value.hint


# -- the model -----------------------------------------------------------------------
def _entry(tmp_path: Path, version: str, sha256: str) -> Path:
    toml = tmp_path / "corpora.toml"
    toml.write_text(f'[corpus.d]\nsource = "debian"\npackage = "demo"\n'
                    f'version = "{version}"\nsha256 = "{sha256}"\n')
    return toml


@pytest.mark.parametrize("sha256", ["a" * 63, "A" * 64, "g" * 64, "sha256:" + "a" * 64])
def test_a_bad_sha256_is_rejected(tmp_path: Path, sha256: str) -> None:
    with pytest.raises(CorpusError, match=r"key `sha256`: .*64 lower-case hex digits"):
        load_corpora(_entry(tmp_path, "1.0-1", sha256))


@pytest.mark.parametrize("version", ["1.0 -1", "1.0;rm", "", "1.0/1"])
def test_a_bad_version_is_rejected(tmp_path: Path, version: str) -> None:
    with pytest.raises(CorpusError, match=r"key `version`: .*Debian version such as"):
        load_corpora(_entry(tmp_path, version, "a" * 64))


@pytest.mark.parametrize("version", ["1.23-4", "5:7.0.15-1~deb12u7", "2.0+dfsg-1", "13.0.0-4"])
def test_debian_versions_are_accepted(tmp_path: Path, version: str) -> None:
    (corpus,) = load_corpora(_entry(tmp_path, version, "a" * 64)).values()
    assert corpus.pin == f"debian demo={version} sha256:{'a' * 64}"


# -- the real thing ------------------------------------------------------------------
UNREACHABLE = ("apt-get update failed", "did not finish", "Unable to find a source package",
               "Failed to fetch", "Temporary failure resolving", "Could not resolve",
               "no `deb` entries", "Unable to connect")


@pytest.mark.network
def test_leveldb_from_debian_sets_up_and_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if shutil.which("apt-get") is None or shutil.which("apt-config") is None:
        pytest.skip("apt-get is not installed: debian corpora need Debian or Ubuntu")
    table = load_corpora(REPO / "corpora.toml")
    (leveldb,) = select(table, "leveldb")
    assert leveldb.spec.source == "debian"
    root = tmp_path / "corpora"
    try:  # about 250 KB of upstream tarball, plus apt's source indexes
        result = setup(leveldb, root)
    except CorpusError as exc:
        if any(marker in str(exc) for marker in UNREACHABLE):
            pytest.skip(f"apt's mirror cannot be reached for sources: {exc}")
        raise
    assert result.manifest.files == 98
    code = main(["validate", "--corpus", "leveldb", "--corpora-file", str(REPO / "corpora.toml"),
                 "--corpora-root", str(root), "--work", str(tmp_path / "work")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "30/30" in out
