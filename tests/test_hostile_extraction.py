"""Hostile archives: nothing lands outside the corpora root, nothing is silently changed.

Almost every case runs `bench setup` on a `source = "path"` archive pinned by
sha256 (pypi and npm corpora unpack through the same extractor) and asserts
the exact outcome: exit 3, a message naming the member (or the cap and how to
raise it), the corpus folder left empty, and every file outside the corpora
root -- a user's file among them -- exactly as it was, with nothing added.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import stat
import tarfile
from pathlib import Path

import pytest
from archives import (
    Member,
    ZipMember,
    escape_chain,
    file,
    folder,
    hardlink,
    special,
    symlink,
    tar_of,
    zeros,
    zip_of,
)

from codesearch_bench.cli import main
from codesearch_bench.corpus.unpack import extract
from codesearch_bench.errors import CorpusError

pytestmark = pytest.mark.hostile

Snapshot = dict[str, tuple[str, str, int, int]]


def snapshot(top: Path, skip: Path) -> Snapshot:
    """Every path under top but skip: its kind, content (or link target), link count, mtime."""
    out: Snapshot = {}
    for folder_, dirs, files in os.walk(top):
        dirs[:] = [d for d in dirs if Path(folder_, d) != skip]
        for name in [*dirs, *files]:
            path = Path(folder_, name)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                kind, body = "link", os.readlink(path)
            elif stat.S_ISDIR(st.st_mode):
                kind, body = "dir", ""
            else:
                kind, body = "file", hashlib.sha256(path.read_bytes()).hexdigest()
            out[path.relative_to(top).as_posix()] = (kind, body, st.st_nlink, st.st_mtime_ns)
    return out


class Arena:
    """tmp_path as a user's disk: a corpora root, and a user's file outside it."""

    def __init__(self, tmp: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.tmp, self.capsys = tmp, capsys
        self.root = tmp / "corpora"
        self.outside = tmp / "outside"
        self.outside.mkdir()
        self.victim = self.outside / "victim.txt"
        self.victim.write_text("the user's own file\n")
        self.planted = self.outside / "planted.txt"  # must never come to exist

    def setup(self, archive: Path, *, pin: bool = True) -> tuple[int, str]:
        sha = hashlib.sha256(archive.read_bytes()).hexdigest()
        toml = self.tmp / "corpora.toml"
        toml.write_text(f'[corpus.evil]\nsource = "path"\npath = "{archive.name}"\n'
                        + (f'sha256 = "{sha}"\n' if pin else ""))
        before = snapshot(self.tmp, self.root)
        code = main(["setup", "--corpora-file", str(toml), "--corpora-root", str(self.root),
                     "--corpus", "evil"])
        captured = self.capsys.readouterr()
        assert snapshot(self.tmp, self.root) == before, "something outside the root changed"
        assert not self.planted.exists()
        assert self.victim.read_text() == "the user's own file\n"
        assert self.victim.stat().st_nlink == 1
        return code, " ".join((captured.out + captured.err).split())

    def refused(self, archive: Path, *words: str, pin: bool = True) -> str:
        code, text = self.setup(archive, pin=pin)
        assert code == 3, text
        for word in words:
            assert word in text, f"{word!r} not in: {text}"
        assert "Traceback" not in text
        base = self.root / "evil"
        assert sorted(p.name for p in base.iterdir()) == [], "a half-unpacked corpus was left"
        return text

    def tar(self, *members: Member, compression: str = "gz") -> Path:
        return tar_of(self.tmp / "evil.tar.gz", [file("p/ok.py"), *members],
                      compression=compression)

    def zip(self, *members: ZipMember) -> Path:
        return zip_of(self.tmp / "evil.zip", [ZipMember("pkg/ok.py"), *members])


@pytest.fixture
def arena(tmp_path: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> Arena:
    monkeypatch.setenv("COLUMNS", "1000")  # rich folds long lines at the terminal's width
    for var in ("BENCH_UNPACK_MAX_BYTES", "BENCH_UNPACK_MAX_MEMBERS", "BENCH_UNPACK_MAX_RATIO"):
        monkeypatch.delenv(var, raising=False)
    return Arena(tmp_path, capsys)


# -- links that climb out physically while staying inside lexically -----------------
def test_issue_chain_then_regular_member_writes_nothing_outside(arena: Arena) -> None:
    chain, top_link = escape_chain("p")
    planted = str(arena.planted).lstrip("/")
    archive = arena.tar(*chain, symlink("p/f", f"x/l20/{planted}"), file("p/f", b"PWNED\n"))
    assert top_link == "p/x/l20"
    arena.refused(archive, "'p/x/l1'", "outside")


def test_issue_chain_hard_link_pulls_nothing_in(arena: Arena) -> None:
    chain, _ = escape_chain("p")
    victim = str(arena.victim).lstrip("/")
    arena.refused(arena.tar(*chain, hardlink("p/h", f"p/x/l20/{victim}")), "'p/x/l1'",
                  "outside")


def test_hard_link_through_an_inside_symlinked_folder(arena: Arena) -> None:
    archive = arena.tar(file("p/sub/a.py"), symlink("p/d", "sub"), hardlink("p/h", "p/d/a.py"))
    arena.refused(archive, "hard link 'p/h'", "through the symlink")


def test_files_inside_a_symlinked_folder(arena: Arena) -> None:
    archive = arena.tar(folder("p/sub"), symlink("p/d", "sub"), file("p/d/x.py"))
    arena.refused(archive, "'p/d/x.py'", "through the symlink")


def test_overwrite_an_earlier_member_through_a_symlinked_parent(arena: Arena) -> None:
    archive = arena.tar(file("p/a/real.py", b"real\n"), symlink("p/b", "a"),
                        file("p/b/real.py", b"replaced\n"))
    arena.refused(archive, "'p/b/real.py'", "through the symlink")


def test_regular_member_over_an_earlier_symlink(arena: Arena) -> None:
    # Before: open() followed p/f and rewrote ok.py in the tree; setup said "ready".
    archive = arena.tar(symlink("p/f", "ok.py"), file("p/f", b"PWNED\n"))
    arena.refused(archive, "'p/f'", "symlink")


def test_a_later_link_turns_an_earlier_one_outward(arena: Arena) -> None:
    # p/a -> c/../x is inside while c is missing; once c -> . exists, c/.. is the parent.
    archive = arena.tar(symlink("p/a", "c/../x"), symlink("p/c", "."))
    arena.refused(archive, "'p/a'", "outside")


def test_symlink_loop(arena: Arena) -> None:
    arena.refused(arena.tar(symlink("p/a", "b"), symlink("p/b", "a")), "'p/", "loop")


@pytest.mark.parametrize("target, words", [
    ("ABSOLUTE", "absolute"),
    ("../../outside/planted.txt", "outside"),
])
def test_symlink_targets_outside(arena: Arena, target: str, words: str) -> None:
    target = str(arena.planted) if target == "ABSOLUTE" else target
    arena.refused(arena.tar(symlink("p/s", target), file("p/s", b"PWNED\n")), "'p/s'", words)


# -- names ----------------------------------------------------------------------
def test_absolute_member_name(arena: Arena) -> None:
    archive = tar_of(arena.tmp / "evil.tar.gz", [file("p/ok.py"), file(str(arena.planted))])
    arena.refused(archive, str(arena.planted), "absolute")


def test_dotdot_member_name(arena: Arena) -> None:
    arena.refused(arena.tar(file("p/../../outside/planted.txt")), "planted.txt", "'..'")


def test_duplicate_regular_member(arena: Arena) -> None:
    # Before: the second silently replaced the first.
    arena.refused(arena.tar(file("p/a.py", b"one\n"), file("p/a.py", b"two\n")),
                  "'p/a.py'", "twice")


def test_folder_then_file_of_the_same_name(arena: Arena) -> None:
    arena.refused(arena.tar(folder("p/a"), file("p/a")), "'p/a'", "folder")


def test_file_then_member_below_it(arena: Arena) -> None:
    arena.refused(arena.tar(file("p/a"), file("p/a/b.py")), "'p/a/b.py'", "not a folder")


def test_name_component_too_long(arena: Arena) -> None:
    long = "n" * 300
    arena.refused(arena.tar(file(f"p/{long}.py")), "'p/nnnnnnnn", "255 bytes")


def test_name_too_long_overall(arena: Arena) -> None:
    deep = "/".join(["d" * 100] * 12)
    arena.refused(arena.tar(file(f"p/{deep}/x.py")), "'p/dddddddd", "cap of 1024 bytes")


# -- member kinds -----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["fifo", "chr", "blk"])
def test_device_and_fifo_members(arena: Arena, kind: str) -> None:
    arena.refused(arena.tar(special("p/dev", kind)), "'p/dev'", "device or FIFO")


def test_unknown_member_type(arena: Arena) -> None:
    arena.refused(arena.tar(Member("p/vol", tartype=b"V")), "'p/vol'", "tar type")


def test_hard_link_to_a_symlink(arena: Arena) -> None:
    archive = arena.tar(symlink("p/s", "ok.py"), hardlink("p/h", "p/s"))
    arena.refused(archive, "hard link 'p/h'", "symlink")


def test_hard_link_to_a_later_member(arena: Arena) -> None:
    archive = arena.tar(hardlink("p/h", "p/later.py"), file("p/later.py"))
    arena.refused(archive, "hard link 'p/h'", "no earlier member")


def test_hard_link_to_a_folder(arena: Arena) -> None:
    archive = arena.tar(folder("p/sub"), hardlink("p/h", "p/sub"))
    arena.refused(archive, "hard link 'p/h'", "not a regular file")


def test_setuid_bits_are_dropped(arena: Arena) -> None:
    archive = arena.tar(file("p/run.sh", b"#!/bin/sh\n", mode=0o6755))
    code, text = arena.setup(archive)
    assert code == 0, text
    mode = (arena.root / "evil" / "checkout" / "run.sh").stat().st_mode
    assert stat.S_IMODE(mode) == 0o755


# -- caps ---------------------------------------------------------------------------
def test_decompression_bomb_over_the_ratio_cap(arena: Arena) -> None:
    # 32 MiB of zeros in a 32 KiB gzip: refused from its header, before it is inflated.
    archive = arena.tar(zeros("p/bomb.bin", 32 << 20))
    assert archive.stat().st_size < 200_000
    arena.refused(archive, "'p/bomb.bin'", "ratio cap of 200", "BENCH_UNPACK_MAX_RATIO=")


def test_too_many_members(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_UNPACK_MAX_MEMBERS", "5")
    archive = arena.tar(*[file(f"p/m{i}.py") for i in range(8)])
    arena.refused(archive, "'p/m4.py'", "member cap of 5", "BENCH_UNPACK_MAX_MEMBERS=")


def test_member_larger_than_the_byte_cap(arena: Arena, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_UNPACK_MAX_BYTES", "1000")
    arena.refused(arena.tar(file("p/big.py", b"#" * 2000)), "'p/big.py'", "cap of 1000 bytes",
                  "BENCH_UNPACK_MAX_BYTES=")


def test_members_together_over_the_byte_cap(arena: Arena,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCH_UNPACK_MAX_BYTES", "1000")
    archive = arena.tar(*[file(f"p/m{i}.py", bytes([65 + i]) * 400) for i in range(3)])
    arena.refused(archive, "'p/m2.py'", "1206 bytes", "cap of 1000 bytes")


@pytest.mark.parametrize("value", ["lots", "-5", "0"])
def test_a_cap_set_to_nonsense(arena: Arena, monkeypatch: pytest.MonkeyPatch,
                               value: str) -> None:
    monkeypatch.setenv("BENCH_UNPACK_MAX_BYTES", value)
    arena.refused(arena.tar(), f"BENCH_UNPACK_MAX_BYTES={value!r}", "positive whole number")


def test_huge_pax_header(arena: Arena) -> None:
    archive = arena.tar(Member("p/a.py", b"x\n", pax={"comment": "c" * (4 << 20)}))
    arena.refused(archive, "header", "1048576 bytes")


def test_truncated_archive(arena: Arena) -> None:
    archive = arena.tar(*[file(f"p/m{i}.py", os.urandom(3000)) for i in range(4)])
    archive.write_bytes(archive.read_bytes()[:6000])
    arena.refused(archive, "corrupt or truncated")


def test_caps_as_parameters(tmp_path: Path) -> None:
    archive = tar_of(tmp_path / "a.tar.gz", [file(f"p/m{i}.py", b"x" * 1000) for i in range(4)])
    with pytest.raises(CorpusError, match="member cap of 3"):
        extract(archive, tmp_path / "o1", max_members=3)
    with pytest.raises(CorpusError, match="cap of 2500 bytes"):
        extract(archive, tmp_path / "o2", max_bytes=2500)
    with pytest.raises(CorpusError, match="ratio cap of 2x"):
        extract(archive, tmp_path / "o3", max_ratio=2, ratio_floor=0)
    extract(archive, tmp_path / "o4", max_members=4, max_bytes=4000)
    assert sorted(p.name for p in (tmp_path / "o4").iterdir()) == [f"m{i}.py" for i in range(4)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz", "o4"]


def test_npm_package_folder_is_stripped_and_bz2_xz_read(tmp_path: Path) -> None:
    for comp in ("gz", "bz2", "xz"):
        archive = tar_of(tmp_path / f"n.tar.{comp}",
                         [file("package/index.js", b"module.exports = 1\n"),
                          symlink("package/alias.js", "index.js")], compression=comp)
        extract(archive, tmp_path / comp)
        assert (tmp_path / comp / "index.js").read_bytes() == b"module.exports = 1\n"
        assert os.readlink(tmp_path / comp / "alias.js") == "index.js"


# -- zip ------------------------------------------------------------------------------
def test_zip_backslash_dotdot(arena: Arena) -> None:
    arena.refused(arena.zip(ZipMember("pkg\\..\\..\\outside\\planted.txt")), "planted.txt",
                  "'..'")


@pytest.mark.parametrize("name", ["ABSOLUTE", "C:/outside/planted.txt"])
def test_zip_absolute_names(arena: Arena, name: str) -> None:
    name = str(arena.planted) if name == "ABSOLUTE" else name
    arena.refused(arena.zip(ZipMember(name)), "planted.txt", "absolute")


def test_zip_duplicate_names(arena: Arena) -> None:
    archive = arena.zip(ZipMember("pkg/a.py", b"one\n"), ZipMember("pkg/a.py", b"two\n"))
    arena.refused(archive, "'pkg/a.py'", "twice")


def test_zip_folder_then_file_of_the_same_name(arena: Arena) -> None:
    arena.refused(arena.zip(ZipMember("pkg/a/", b""), ZipMember("pkg/a")), "'pkg/a'", "folder")


def test_zip_overlong_name(arena: Arena) -> None:
    arena.refused(arena.zip(ZipMember("pkg/" + "z" * 300)), "'pkg/zzzzzzzz", "255 bytes")


def test_zip_symlink_entry(arena: Arena) -> None:
    archive = arena.zip(ZipMember("pkg/s", str(arena.victim).encode(),
                                  mode=stat.S_IFLNK | 0o777))
    arena.refused(archive, "'pkg/s'", "symlink")


def test_zip_fifo_entry(arena: Arena) -> None:
    arena.refused(arena.zip(ZipMember("pkg/f", b"", mode=stat.S_IFIFO | 0o644)), "'pkg/f'",
                  "device or FIFO")


def test_zip_bomb(arena: Arena) -> None:
    archive = arena.zip(ZipMember("pkg/bomb.bin", zeros=32 << 20))
    assert archive.stat().st_size < 200_000
    arena.refused(archive, "'pkg/bomb.bin'", "ratio cap of 200", "BENCH_UNPACK_MAX_RATIO=")


def test_zip_encrypted_entry(arena: Arena) -> None:
    arena.refused(arena.zip(ZipMember("pkg/secret.py", flag_bits=0x1)), "'pkg/secret.py'",
                  "encrypted")


def test_zip_corrupt_entry(arena: Arena) -> None:
    archive = arena.zip(ZipMember("pkg/data.py", gzip.compress(os.urandom(4000))))
    raw = bytearray(archive.read_bytes())
    raw[2000] ^= 0xFF  # inside the second entry's data
    archive.write_bytes(bytes(raw))
    arena.refused(archive, "corrupt or truncated", "'pkg/data.py'")


def test_plain_tar_named_gz_symlink_then_file(arena: Arena) -> None:
    archive = tar_of(arena.tmp / "evil.tar", [file("p/ok.py"), symlink("p/f", "ok.py"),
                                             file("p/f", b"PWNED\n")], compression="")
    archive = archive.rename(arena.tmp / "evil.tar.gz")  # the name lies; content decides
    assert tarfile.is_tarfile(archive)
    arena.refused(archive, "'p/f'", "symlink")


def test_corrupt_header_mid_archive(arena: Arena) -> None:
    # tarfile ends an archive at the first bad header without a word: two members lost.
    archive = tar_of(arena.tmp / "evil.tar", [file("p/ok.py"), file("p/a.py"),
                                             file("p/b.py")], compression="")
    raw = bytearray(archive.read_bytes())
    raw[1024:1124] = b"\x7f" * 100  # the second member's header, checksum now wrong
    archive.write_bytes(bytes(raw))
    arena.refused(archive, "corrupt", "after member 'p/ok.py'", "not a tar header")


def test_top_folder_that_is_a_file(arena: Arena) -> None:
    archive = tar_of(arena.tmp / "evil.tar.gz", [file("p", b"not a folder\n"),
                                                 file("p/x.py")])
    arena.refused(archive, "member 'p'", "not a folder")
