from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "semble-engine"


def load_script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("semble_engine", str(SCRIPT))
    spec = importlib.util.spec_from_loader("semble_engine", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["semble_engine"] = module  # dataclasses look their module up there
    loader.exec_module(module)
    return module


se = load_script()

Result = tuple[str, int, int, str, float]


def results(*paths: str) -> list[Result]:
    return [(p, i * 10 + 1, i * 10 + 5, f"{p}#{i}", 1.0 - i / 100) for i, p in enumerate(paths)]


class FakeSemble:
    """Returns the first top_k of a fixed ranking and records what was asked."""

    def __init__(self, ranking: list[Result]) -> None:
        self.ranking, self.asked = ranking, []

    def __call__(self, query: str, top_k: int) -> list[Result]:
        self.asked.append(top_k)
        return self.ranking[:top_k]


# --- model choice -----------------------------------------------------------
def test_model_from_the_environment_wins() -> None:
    model, label = se.resolve_model({"SEMBLE_MODEL_NAME": "/models/potion"}, lambda: "/bundled")
    assert model == "/models/potion" and "SEMBLE_MODEL_NAME" in label


def test_bundled_model_when_the_environment_names_none() -> None:
    model, label = se.resolve_model({}, lambda: "/site/static_model/model")
    assert model == "/site/static_model/model" and "tokenlearn-static-model" in label


def test_semble_default_when_nothing_is_local() -> None:
    model, label = se.resolve_model({"SEMBLE_MODEL_NAME": ""}, lambda: None)
    assert model == se.DEFAULT_MODEL and "hub" in label


# --- per-file cap and depth -------------------------------------------------
def test_cap_keeps_engine_order_and_per_file_limit() -> None:
    ranked = results("a.py", "a.py", "b.py", "a.py", "c.py")
    one = se.cap_per_file(ranked, n=10, per_file=1)
    assert [h["path"] for h in one] == ["a.py", "b.py", "c.py"]
    two = se.cap_per_file(ranked, n=10, per_file=2)
    assert [(h["path"], h["start"]) for h in two] == [
        ("a.py", 1), ("a.py", 11), ("b.py", 21), ("c.py", 41)]
    assert len(se.cap_per_file(ranked, n=2, per_file=3)) == 2
    assert two[0]["text"] == "a.py#0" and two[0]["end"] == 5


def test_capped_search_doubles_top_k_until_n_files_survive() -> None:
    fake = FakeSemble(results(*["a.py"] * 7, "b.py", "c.py", "d.py"))
    hits = se.capped_search(fake, total=10, query="q", n=3, per_file=1)
    assert [h["path"] for h in hits] == ["a.py", "b.py", "c.py"]
    assert fake.asked == [3, 6, 10]


def test_capped_search_stops_when_the_index_runs_out() -> None:
    fake = FakeSemble(results("a.py", "a.py", "b.py"))
    hits = se.capped_search(fake, total=3, query="q", n=5, per_file=1)
    assert [h["path"] for h in hits] == ["a.py", "b.py"]
    assert fake.asked == [3]
    short = FakeSemble(results("a.py", "a.py"))  # semble returned fewer than asked
    assert len(se.capped_search(short, total=50, query="q", n=5, per_file=1)) == 1
    assert short.asked == [5]


def test_capped_search_ignores_blank_queries_and_empty_indexes() -> None:
    fake = FakeSemble(results("a.py"))
    assert se.capped_search(fake, total=1, query="  ", n=5, per_file=1) == []
    assert se.capped_search(fake, total=0, query="q", n=5, per_file=1) == []
    assert fake.asked == []


# --- serve ------------------------------------------------------------------
def test_serve_answers_each_line_and_reports_errors(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    opened: list[str] = []

    def opener(state: str) -> tuple[FakeSemble, int]:
        if state.endswith("missing"):
            raise se.IndexMissing("no semble index")
        opened.append(state)
        return FakeSemble(results("a.py", "b.py", "a.py", "c.py")), 4

    requests = [
        {"query": "q", "n": 2, "per_file": 1},
        {"query": "q", "n": 5, "per_file": 2, "state": "s1"},
        {"query": "q", "n": 1, "per_file": 1, "state": "missing"},
    ]
    monkeypatch.setattr(sys, "stdin", io.StringIO(
        "\n".join(json.dumps(r) for r in requests) + "\n[1, 2]\n\n"))
    out = io.StringIO()
    assert se.serve("s1", out, opener) == 0
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(replies) == 4
    assert [h["path"] for h in replies[0]["hits"]] == ["a.py", "b.py"]
    assert [h["path"] for h in replies[1]["hits"]] == ["a.py", "b.py", "a.py", "c.py"]
    assert "error" in replies[2] and "hits" not in replies[2]
    assert "error" in replies[3] and "hits" not in replies[3]
    assert opened == ["s1"]  # the index is loaded once


def test_state_holds_semble_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEMBLE_CACHE_LOCATION", raising=False)
    se.use_state(str(tmp_path))
    assert os.environ["SEMBLE_CACHE_LOCATION"] == str(tmp_path / "cache")
    assert (tmp_path / "cache").is_dir()


def test_reexecutes_under_semble_python(tmp_path: Path) -> None:
    fake = tmp_path / "fakepython"
    fake.write_text('#!/bin/sh\necho "reexec:$SEMBLE_ENGINE_REEXECUTED:$*"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "SEMBLE_PYTHON": str(fake)}
    env.pop("SEMBLE_ENGINE_REEXECUTED", None)
    out = subprocess.run([sys.executable, str(SCRIPT), "serve", "--state", "S"],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == f"reexec:1:{SCRIPT} serve --state S"


# --- the real semble --------------------------------------------------------
def _semble_python() -> str | None:
    """A Python with semble and a local model: SEMBLE_MODEL_NAME or the bundled one."""
    python = os.environ.get("SEMBLE_PYTHON") or sys.executable
    check = ("import os, semble, importlib.util; assert os.environ.get('SEMBLE_MODEL_NAME') "
             "or importlib.util.find_spec('static_model')")
    probe = subprocess.run([python, "-c", check], capture_output=True)
    return python if probe.returncode == 0 else None


@pytest.mark.real_engine
def test_real_semble_index_and_serve(small_tree: Path, tmp_path: Path) -> None:
    python = _semble_python()
    if python is None:
        pytest.skip("semble with a local model2vec model is not available (pip install semble "
                    "tokenlearn-static-model, or set SEMBLE_PYTHON / SEMBLE_MODEL_NAME)")
    env = {**os.environ, "SEMBLE_PYTHON": python, "HF_HUB_OFFLINE": "1"}
    state = tmp_path / "state"
    out = subprocess.run([sys.executable, str(SCRIPT), "index", str(small_tree), str(state)],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    assert summary["files"] == 2  # semble indexes code only: README.md is left out
    request = {"query": "terminal cell width of a string", "n": 5, "per_file": 1,
               "state": str(state)}
    served = subprocess.run([sys.executable, str(SCRIPT), "serve"],
                            input=json.dumps(request) + "\n", capture_output=True,
                            text=True, env=env, timeout=300)
    assert served.returncode == 0, served.stderr
    hits = json.loads(served.stdout.strip())["hits"]
    assert {h["path"] for h in hits} == {"pkg/cells.py", "pkg/config.py"}
    for h in hits:
        lines = (small_tree / h["path"]).read_text().splitlines()
        assert 1 <= h["start"] <= h["end"] <= len(lines)
    assert (state / "cache" / "savings.jsonl").exists()
