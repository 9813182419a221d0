"""The repository keeps itself honest: schema in sync, lint clean, specs valid."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType

import pytest

from codesearch_bench.engine.spec import load_spec

REPO = Path(__file__).resolve().parent.parent


def _load_tool(name: str) -> ModuleType:
    loader = SourceFileLoader(name.replace("-", "_"), str(REPO / "tools" / name))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def test_schemas_in_sync() -> None:
    writer = _load_tool("write-schemas")
    for path, schema in writer.schemas().items():
        assert path.read_text() == writer.render(schema), (
            f"{path} is stale: run `python tools/write-schemas`"
        )


def test_shipped_specs_load() -> None:
    specs = sorted((REPO / "engines").rglob("*.json"))
    specs = [p for p in specs if not p.name.endswith(".local.json") and
             json.loads(p.read_text()).get("name")]
    assert specs
    for path in specs:
        load_spec(path)


def test_ruff_clean() -> None:
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    if not Path(ruff).exists():
        pytest.fail("ruff is part of the test extra: pip install -e '.[test]'")
    files = [p for folder in ("scripts", "tools") for p in sorted((REPO / folder).rglob("*"))
             if p.is_file()]
    scripts = [str(p) for p in files if p.suffix == ".py" or
               p.read_text(errors="replace").startswith("#!/usr/bin/env python")]
    targets = ["src", "tests", *scripts]
    if (REPO / "benchmarks").is_dir():
        targets.append("benchmarks")
    proc = subprocess.run([ruff, "check", *targets], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_src_type_checks_strict() -> None:
    """py.typed ships, so the types must hold: mypy --strict (pyproject's [tool.mypy])."""
    proc = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True,
                          text=True)
    if "No module named mypy" in proc.stderr:
        pytest.fail("mypy is part of the test extra: pip install -e '.[test]'")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_test_command_is_what_ci_runs() -> None:
    readme = (REPO / "README.md").read_text()
    block = readme.split("<!-- test-command -->")[1].split("<!-- /test-command -->")[0]
    commands = [ln for ln in block.splitlines() if ln.strip() and not ln.startswith("```")]
    assert commands, "README.md lost its test command"
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    ran = [ln for ln in ci if ln and not ln.startswith("#")]
    assert ran[-len(commands):] == commands, "`.ci/run` must end with the README's test command"


def test_protocol_version_agrees() -> None:
    from codesearch_bench.protocol import PROTOCOL_VERSION

    text = (REPO / "protocol" / "PROTOCOL.md").read_text()
    assert f"Protocol version: **{PROTOCOL_VERSION}**" in text
