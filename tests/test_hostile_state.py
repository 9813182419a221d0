"""Hostile engines against their state dir and the candidate tree.

Clearing a state dir never follows a link (at it, in it, or in the folders
bench made above it): the link goes, its target stays. bench never writes
through a link an engine left. A `path` corpus's tree is a copy, so an engine
writing the tree cannot write the user's files; the tree's fingerprint (taken
at setup, kept in the manifest) says afterwards what an engine changed.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

import pytest
from minicorpus import SOURCES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.corpus import fingerprint
from codesearch_bench.corpus.config import load_corpora
from codesearch_bench.corpus.layout import CorpusDir
from codesearch_bench.corpus.setup import setup
from codesearch_bench.corpus.tree import Manifest, build_tree, recorded_fingerprint
from codesearch_bench.engine import state
from codesearch_bench.engine.driver import Context
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.errors import EngineFailed
from codesearch_bench.results.schema import ResultFile
from codesearch_bench.run.cell import ensure_index

pytestmark = pytest.mark.hostile

TAMPER = Path(__file__).resolve().parent / "fakes" / "tamper.py"
PARSE = {"format": "json", "results": "hits", "start": "start", "end": "end", "text": "text"}

Snapshot = dict[str, tuple[str, bytes, int, int]]


def snapshot(top: Path) -> Snapshot:
    """Every path under top: kind, content or link target, inode, mtime."""
    out: Snapshot = {}
    for folder, dirs, files in os.walk(top):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                kind, body = "link", os.readlink(path).encode()
            elif stat.S_ISDIR(st.st_mode):
                kind, body = "dir", b""
            else:
                kind, body = "file", path.read_bytes()
            out[path.relative_to(top).as_posix()] = (kind, body, st.st_ino, st.st_mtime_ns)
    return out


@pytest.fixture
def sentinel(tmp_path: Path) -> Path:
    """A user's folder that no engine's state may reach."""
    top = tmp_path / "sentinel"
    (top / "deep").mkdir(parents=True)
    (top / "precious.txt").write_text("keep me\n")
    (top / "deep" / "also.txt").write_text("and me\n")
    (top / "corp").mkdir()
    (top / "corp" / "index.db").write_text("another tool's index\n")
    return top


def state_path(tmp_path: Path) -> Path:
    return state.state_dir(tmp_path / "work", "state", "eng", "corp")


# -- clear() ------------------------------------------------------------------------
def test_clear_removes_a_symlinked_state_dir_not_its_target(tmp_path: Path,
                                                            sentinel: Path) -> None:
    st = state_path(tmp_path)
    st.parent.mkdir(parents=True)
    st.symlink_to(sentinel)
    before = snapshot(sentinel)
    state.clear(st)
    assert not os.path.lexists(st)
    assert snapshot(sentinel) == before


def test_clear_never_follows_links_inside_state(tmp_path: Path, sentinel: Path) -> None:
    st = state_path(tmp_path)
    (st / "sub").mkdir(parents=True)
    (st / "sub" / "index.db").write_text("mine\n")
    (st / "to-dir").symlink_to(sentinel)
    (st / "sub" / "to-file").symlink_to(sentinel / "precious.txt")
    (st / "dangling").symlink_to(tmp_path / "nowhere")
    before = snapshot(sentinel)
    state.clear(st)
    assert not os.path.lexists(st) and st.parent.is_dir()
    assert snapshot(sentinel) == before


def test_clear_state_that_is_a_symlink_to_a_file(tmp_path: Path, sentinel: Path) -> None:
    st = state_path(tmp_path)
    st.parent.mkdir(parents=True)
    st.symlink_to(sentinel / "precious.txt")
    state.clear(st)
    assert not os.path.lexists(st)
    assert (sentinel / "precious.txt").read_text() == "keep me\n"


def test_clear_state_whose_parent_was_replaced_by_a_symlink(tmp_path: Path,
                                                            sentinel: Path) -> None:
    # <work>/state/eng -> sentinel: clearing <work>/state/eng/corp must not empty sentinel/corp.
    st = state_path(tmp_path)
    st.parent.parent.mkdir(parents=True)
    st.parent.symlink_to(sentinel)
    before = snapshot(sentinel)
    state.clear(st)
    assert snapshot(sentinel) == before
    assert not os.path.lexists(st.parent), "the link bench's own folder became is removed"


def test_clear_state_replaced_by_a_file(tmp_path: Path) -> None:
    st = state_path(tmp_path)
    st.parent.mkdir(parents=True)
    st.write_text("not a folder\n")
    state.clear(st)
    assert not os.path.lexists(st)


def test_clear_read_only_and_deep_state(tmp_path: Path) -> None:
    st = state_path(tmp_path)
    deep = st.joinpath(*["d"] * 200)
    deep.mkdir(parents=True)
    (deep / "f").write_text("x")
    (st / "locked").mkdir()
    (st / "locked" / "f").write_text("x")
    (st / "locked").chmod(0o500)
    (st / "sealed").mkdir()
    (st / "sealed").chmod(0)
    state.clear(st)
    assert not os.path.lexists(st)


def test_clear_refuses_a_path_resolved_through_the_engines_link(tmp_path: Path,
                                                                sentinel: Path) -> None:
    # What Path.resolve() makes of <work>/state/eng/corp once corp -> sentinel.
    before = snapshot(sentinel)
    with pytest.raises(EngineFailed, match="refusing to clear"):
        state.clear(sentinel)
    with pytest.raises(EngineFailed, match="refusing to mark"):
        state.mark_finished(sentinel, "s", "p")
    assert snapshot(sentinel) == before


def test_prepare_never_makes_the_state_inside_a_planted_link(tmp_path: Path,
                                                             sentinel: Path) -> None:
    st = state_path(tmp_path)
    st.parent.parent.mkdir(parents=True)
    st.parent.symlink_to(sentinel)  # <work>/state/eng -> sentinel, which has a corp/
    before = snapshot(sentinel)
    state.prepare(st)
    assert st.is_dir() and not st.parent.is_symlink() and not st.is_symlink()
    assert snapshot(sentinel) == before


def test_a_symlinked_state_is_never_a_finished_index(tmp_path: Path, sentinel: Path) -> None:
    # A forged marker behind a link must not pass for a built index, nor be measured.
    (sentinel / state.MARKER).write_text(json.dumps({"spec_sha256": "s", "corpus_pin": "p"}))
    st = state_path(tmp_path)
    st.parent.mkdir(parents=True)
    st.symlink_to(sentinel)
    assert not state.index_finished(st, "s", "p")
    assert state.dir_bytes(st) == 0


def test_mark_finished_refuses_a_symlinked_state(tmp_path: Path, sentinel: Path) -> None:
    st = state_path(tmp_path)
    st.parent.mkdir(parents=True)
    st.symlink_to(sentinel)
    before = snapshot(sentinel)
    with pytest.raises(EngineFailed, match="replaced its state dir"):
        state.mark_finished(st, "s", "p")
    assert snapshot(sentinel) == before


# -- engines doing it, end to end -------------------------------------------------------
def tamper_spec(tmp: Path, index: str, search: str = "none") -> Path:
    argv = [sys.executable, str(TAMPER)]
    data = {"name": "tamper", "spans": True, "tokens": True, "parse": PARSE,
            "index": {"command": [*argv, "index", index, "{{state}}", "{{root}}"],
                      "timeout": "20s"},
            "search": {"command": [*argv, "search", search, "{{state}}", "{{root}}",
                                   "{{query}}"], "timeout": "20s"}}
    path = tmp / "tamper.json"
    path.write_text(json.dumps(data))
    return path


def compare(tmp: Path, spec: Path, *extra: str) -> tuple[int, ResultFile]:
    toml = tmp / "corpora.toml"
    if not toml.exists():
        make_corpus(tmp)
    out = tmp / "out.json"
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp / "work"),
                 "--json", str(out), "--engine", str(spec), *extra])
    return code, ResultFile.model_validate_json(out.read_text())


def test_ensure_index_with_the_state_replaced_by_a_symlink(tmp_path: Path,
                                                          sentinel: Path) -> None:
    before = snapshot(sentinel)
    loaded = load_spec(tamper_spec(tmp_path, f"state-to-symlink:{sentinel}"))
    tree = small_tree(tmp_path / "tree")
    ctx = Context(root=tree, state=state.state_dir(tmp_path / "work", "state", "tamper", "t"),
                  corpus="t")
    for reindex in (False, True, False):
        with pytest.raises(EngineFailed, match="replaced its state dir") as exc:
            ensure_index(loaded, ctx, "pin", reindex=reindex)
        assert str(sentinel) in str(exc.value)
        assert snapshot(sentinel) == before, f"sentinel changed (reindex={reindex})"
        assert ctx.state.is_symlink()  # the engine's doing; the next run removes it again


def test_compare_with_the_state_replaced_by_a_symlink(tmp_path: Path, sentinel: Path) -> None:
    before = snapshot(sentinel)
    spec = tamper_spec(tmp_path, f"state-to-symlink:{sentinel}")
    for extra in ((), ("--reindex",), ()):
        code, result = compare(tmp_path, spec, *extra)
        assert code == 1
        (failure,) = result.failures
        assert failure.stage == "index"
        assert snapshot(sentinel) == before, f"sentinel changed after a run with {extra}"


def test_compare_removes_the_link_and_reindexes(tmp_path: Path, sentinel: Path) -> None:
    spec = tamper_spec(tmp_path, f"state-to-symlink:{sentinel}")
    for extra in ((), ("--reindex",)):
        _, result = compare(tmp_path, spec, *extra)
        (failure,) = result.failures
        assert "replaced its state dir" in failure.message, failure.message


def test_engine_replacing_its_state_with_a_file(tmp_path: Path) -> None:
    spec = tamper_spec(tmp_path, "state-to-file:_")
    for extra in ((), ("--reindex",)):
        code, result = compare(tmp_path, spec, *extra)
        assert code == 1
        (failure,) = result.failures
        assert failure.stage == "index" and "replaced its state dir" in failure.message


def test_engine_making_the_marker_a_symlink(tmp_path: Path, sentinel: Path) -> None:
    victim = sentinel / "precious.txt"
    code, result = compare(tmp_path, tamper_spec(tmp_path, f"marker-link:{victim}"))
    assert code == 0 and not result.failures
    assert victim.read_text() == "keep me\n"
    marker = state.state_dir(tmp_path / "work", "state", "tamper", "mini") / state.MARKER
    assert marker.is_file() and not marker.is_symlink()
    assert json.loads(marker.read_text())["corpus_pin"]


def test_engine_leaving_a_link_in_state_then_reindex(tmp_path: Path, sentinel: Path) -> None:
    before = snapshot(sentinel)
    spec = tamper_spec(tmp_path, f"link-in-state:{sentinel}")
    for extra in ((), ("--reindex",)):
        code, _ = compare(tmp_path, spec, *extra)
        assert code == 0
    assert snapshot(sentinel) == before


def test_path_corpus_engine_writing_the_tree_leaves_the_users_file(tmp_path: Path) -> None:
    make_corpus(tmp_path)
    user = tmp_path / "mini-proj" / "pkg" / "config.py"
    before = user.stat()
    code, result = compare(tmp_path, tamper_spec(tmp_path, "tree-append:pkg/config.py"))
    assert code == 0
    (row,) = [r for r in result.rows if r.engine == "tamper" and r.headline]
    (change,) = row.tree_changes
    assert change.startswith("modified: pkg/config.py (size ") and "content" in change
    tree_file = Path(result.corpora["mini"].tree) / "pkg" / "config.py"
    # rebuilt from the user's files for the next engine, and the user's file untouched
    assert tree_file.read_text() == SOURCES["pkg/config.py"]
    assert user.read_text() == SOURCES["pkg/config.py"]
    after = user.stat()
    assert (after.st_ino, after.st_nlink, after.st_mtime_ns) == (
        before.st_ino, before.st_nlink, before.st_mtime_ns)
    assert tree_file.stat().st_ino != after.st_ino


def test_verify_sees_what_an_engine_did_during_index_and_search(tmp_path: Path) -> None:
    spec = tamper_spec(tmp_path, "tree-chmod:pkg/cells.py", search="tree-delete:pkg/retry.py")
    code, result = compare(tmp_path, spec)
    assert code == 0
    (row,) = [r for r in result.rows if r.engine == "tamper" and r.headline]
    assert row.tree_changes == [
        "modified: pkg/cells.py (mode 644 -> 755)", "removed: pkg/retry.py"]
    assert "!! tree_modified=2" in row.flags
    tree = Path(result.corpora["mini"].tree)  # rebuilt: the next engine sees the pin's files
    assert fingerprint.verify(tree, recorded_fingerprint(CorpusDir(tree.parent))) == []


def test_compare_flags_a_row_whose_engine_modified_the_tree(tmp_path: Path) -> None:
    code, result = compare(tmp_path, tamper_spec(tmp_path, "tree-add:pkg/planted.py"))
    assert code == 0
    (row,) = [r for r in result.rows if r.engine == "tamper" and r.headline]
    assert any("tree_modified" in flag for flag in row.flags), row.flags


def test_a_tree_changed_before_any_engine_ran_is_rebuilt_not_blamed(tmp_path: Path) -> None:
    spec = tamper_spec(tmp_path, "none")
    code, first = compare(tmp_path, spec)
    assert code == 0
    tree = Path(first.corpora["mini"].tree)
    # What `cp -r` of a work dir does: the same bytes, new mtimes.
    os.utime(tree / "pkg" / "cells.py", ns=(1, 1))
    (tree / "pkg" / "planted.py").write_text("x = 1\n")
    code, result = compare(tmp_path, spec)
    assert code == 0 and not result.failures
    (row,) = [r for r in result.rows if r.engine == "tamper" and r.headline]
    assert row.tree_changes == [] and not any("tree_modified" in f for f in row.flags)
    assert not (tree / "pkg" / "planted.py").exists()
    assert fingerprint.verify(tree, recorded_fingerprint(CorpusDir(tree.parent))) == []


# -- the fingerprint ------------------------------------------------------------------
def small_tree(top: Path, files: int = 3) -> Path:
    for i in range(files):
        path = top / f"pkg{i % 7}" / f"m{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"def f{i}():\n    return {i}\n" * 20)
    return top


def test_verify_same_size_rewrite_with_mtime_restored(tmp_path: Path) -> None:
    tree = small_tree(tmp_path / "tree")
    target = tree / "pkg1" / "m1.py"
    st = target.stat()
    taken = fingerprint.take(tree)
    assert fingerprint.verify(tree, taken) == []
    target.write_text(target.read_text().replace("return 1", "return 7"))
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert fingerprint.verify(tree, taken) == ["modified: pkg1/m1.py (content)"]


def test_verify_added_removed_and_replaced_by_links(tmp_path: Path, sentinel: Path) -> None:
    tree = small_tree(tmp_path / "tree")
    taken = fingerprint.take(tree)
    (tree / "pkg0" / "m0.py").unlink()
    (tree / "pkg0" / "m0.py").symlink_to(sentinel / "precious.txt")
    (tree / "pkg2" / "m2.py").unlink()
    (tree / "new.py").write_text("x\n")
    (tree / "escape").symlink_to(sentinel)
    assert fingerprint.verify(tree, taken) == [
        "added: escape (symlink)", "added: new.py (file)",
        "modified: pkg0/m0.py (file -> symlink)", "removed: pkg2/m2.py"]


def test_verify_tree_itself_replaced(tmp_path: Path, sentinel: Path) -> None:
    tree = small_tree(tmp_path / "tree")
    taken = fingerprint.take(tree)
    moved = tree.rename(tmp_path / "moved")
    tree.symlink_to(sentinel)
    assert fingerprint.verify(tree, taken) == [f"the tree {tree} is no longer a folder"]
    tree.unlink()
    moved.rename(tree)
    assert fingerprint.verify(tree, taken) == []


def test_verify_list_is_capped(tmp_path: Path) -> None:
    tree = small_tree(tmp_path / "tree", files=30)
    taken = fingerprint.take(tree)
    for path in sorted(tree.rglob("*.py")):
        path.write_text("changed\n")
    changes = fingerprint.verify(tree, taken, limit=5)
    assert len(changes) == 6 and changes[-1] == "… and 25 more changes"


def test_fingerprint_of_2000_files_costs_well_under_a_second(tmp_path: Path) -> None:
    tree = small_tree(tmp_path / "tree", files=2000)
    start = time.perf_counter()
    taken = fingerprint.take(tree)
    changes = fingerprint.verify(tree, taken)
    elapsed = time.perf_counter() - start
    assert changes == [] and len(taken.entries) == 2007
    assert elapsed < 1.0, f"take + verify of 2,000 files took {elapsed:.2f}s"


def test_old_manifest_loads_and_gets_its_fingerprint_at_first_use(tmp_path: Path) -> None:
    make_corpus(tmp_path)
    (corpus,) = load_corpora(tmp_path / "corpora.toml").values()
    done = setup(corpus, tmp_path / "corpora")
    dirs = CorpusDir(done.tree.parent)
    assert done.manifest.fingerprint is not None
    old = {k: v for k, v in json.loads(dirs.manifest.read_text()).items() if k != "fingerprint"}
    dirs.manifest.write_text(json.dumps(old))
    loaded = Manifest.read(dirs.manifest)
    assert loaded.fingerprint is None and loaded.files == 3
    taken = recorded_fingerprint(dirs)
    assert taken == done.manifest.fingerprint
    assert Manifest.read(dirs.manifest).fingerprint == taken


def test_hard_linked_tree_tampering_is_caught(tmp_path: Path) -> None:
    # Downloaded checkouts are bench's own and may be linked: then verify() is the guard.
    make_corpus(tmp_path)
    (corpus,) = load_corpora(tmp_path / "corpora.toml").values()
    dirs = CorpusDir(tmp_path / "corpora" / "mini")
    dirs.base.mkdir(parents=True)
    checkout = tmp_path / "mini-proj"
    manifest = build_tree("mini", corpus.pin, corpus.spec, checkout, dirs, link=True)
    assert manifest.fingerprint is not None
    assert (dirs.tree / "pkg" / "config.py").stat().st_ino == (
        checkout / "pkg" / "config.py").stat().st_ino
    with open(dirs.tree / "pkg" / "config.py", "a") as fh:
        fh.write("# tampered\n")
    size = len(SOURCES["pkg/config.py"])
    assert fingerprint.verify(dirs.tree, manifest.fingerprint) == [
        f"modified: pkg/config.py (size {size} -> {size + 11}, content, mtime)"]


def test_setup_rebuilds_over_a_tree_an_engine_replaced(tmp_path: Path, sentinel: Path) -> None:
    make_corpus(tmp_path)
    (corpus,) = load_corpora(tmp_path / "corpora.toml").values()
    done = setup(corpus, tmp_path / "corpora")
    for path in done.tree.rglob("*"):
        if path.is_dir():
            path.chmod(0o500)
    done.tree.chmod(0o500)
    before = snapshot(sentinel)
    dirs = CorpusDir(done.tree.parent)
    manifest = build_tree("mini", corpus.pin, corpus.spec, tmp_path / "mini-proj", dirs)
    assert manifest.files == 3 and fingerprint.verify(dirs.tree, manifest.fingerprint) == []
    dirs.tree.rename(tmp_path / "old-tree")
    dirs.tree.symlink_to(sentinel)
    manifest = build_tree("mini", corpus.pin, corpus.spec, tmp_path / "mini-proj", dirs)
    assert dirs.tree.is_dir() and not dirs.tree.is_symlink()
    assert snapshot(sentinel) == before
    assert manifest.files == 3
