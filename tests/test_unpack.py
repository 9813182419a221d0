from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from archives import make_tar

from codesearch_bench.corpus.unpack import extract
from codesearch_bench.errors import CorpusError


def test_extracts_and_strips_top_folder(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "a.tar.gz", {"src/m.py": b"x = 1\n", "README": b"hi\n",
                                               "link": ("symlink", "src/m.py")})
    extract(archive, tmp_path / "out")
    assert (tmp_path / "out" / "src" / "m.py").read_text() == "x = 1\n"
    assert (tmp_path / "out" / "link").is_symlink()


@pytest.mark.parametrize("members, words", [
    ({"../escape": b"x"}, r"'\.\.'"),
    ({"ok.py": b"x", "a/../../escape": b"x"}, r"'\.\.'"),
    ({"evil": ("symlink", "/etc/passwd")}, "absolute"),
    ({"evil": ("symlink", "../../outside")}, "outside"),
    ({"dev": ("fifo", "")}, "device or FIFO"),
    ({"hard": ("hardlink", "/etc/passwd")}, "absolute"),
])
def test_refuses_malicious_members_and_leaves_nothing(
    tmp_path: Path, members: dict, words: str
) -> None:
    archive = make_tar(tmp_path / "evil.tar.gz", {"fine.py": b"ok", **members})
    with pytest.raises(CorpusError, match=words):
        extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["evil.tar.gz"]


def test_absolute_member_refused(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "abs.tar.gz", {"/tmp/abs-escape": b"x"}, top="")
    with pytest.raises(CorpusError, match="absolute"):
        extract(archive, tmp_path / "out")


def test_write_through_symlinked_folder_refused(tmp_path: Path) -> None:
    archive = make_tar(tmp_path / "s.tar.gz", {"d": ("symlink", "."), "d/x": b"x"})
    # "d" links inside the archive, but writing "d/x" through it is still refused.
    with pytest.raises(CorpusError, match="symlink"):
        extract(archive, tmp_path / "out")


def test_zip_with_escape_refused(tmp_path: Path) -> None:
    path = tmp_path / "e.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/ok.py", "x")
        zf.writestr("../escape", "x")
    with pytest.raises(CorpusError, match=r"'\.\.'"):
        extract(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_zip_extracts(tmp_path: Path) -> None:
    path = tmp_path / "ok.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg-1/a/b.py", "y = 2\n")
    extract(path, tmp_path / "out")
    assert (tmp_path / "out" / "a" / "b.py").read_text() == "y = 2\n"


def test_not_an_archive(tmp_path: Path) -> None:
    path = tmp_path / "x.tar.gz"
    path.write_bytes(b"not an archive")
    with pytest.raises(CorpusError, match="not a readable archive"):
        extract(path, tmp_path / "out")
