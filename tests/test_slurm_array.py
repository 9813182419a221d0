"""A sharded compare as a real Slurm array job, merged, equals the unsharded run.

Needs a running Slurm (`eval "$(tools/ci-slurm)"` starts a one-node one from
the OS packages; .ci/run does when it can); skips with the reason otherwise.
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slurm


def _slurm_up() -> str | None:
    if shutil.which("sbatch") is None or shutil.which("sinfo") is None:
        return "Slurm is not installed (apt-get install slurm-wlm)"
    try:
        state = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True,
                               timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sinfo failed: {exc}"
    if state.returncode != 0 or ("idle" not in state.stdout and "mix" not in state.stdout):
        return f"no idle Slurm node ({(state.stderr or state.stdout).strip()[:200]}); start " \
               "one with tools/ci-slurm"
    return None


def _quality(result: ResultFile) -> list[tuple[str, str, int, dict[str, float | None]]]:
    return sorted((r.engine, r.corpus, r.per_file, {k: e.mean for k, e in r.metrics.items()
                                                      if not k.startswith("tokens")})
                  for r in result.rows)


def test_a_slurm_array_runs_the_shards_and_the_merge_equals_one_run(tmp_path: Path) -> None:
    why = _slurm_up()
    if why is not None:
        pytest.skip(why)
    toml = make_corpus(tmp_path)
    engines = ["--engine", str(REPO / "engines" / "grep.json"),
               "--engine", str(REPO / "engines" / "bm25.json")]
    whole = tmp_path / "whole.json"
    assert main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w0"),
                 *engines, "--json", str(whole)]) == 0
    task = shlex.join([sys.executable, "-m", "codesearch_bench", "compare", "--corpora-file",
                       str(toml), *engines, "--shard", "auto"])
    script = tmp_path / "array.sh"
    script.write_text(
        "#!/bin/bash\nset -euo pipefail\n"
        f"{task} --work {tmp_path}/w-$SLURM_ARRAY_TASK_ID "
        f"--json {tmp_path}/shard-$SLURM_ARRAY_TASK_ID.json\n")
    done = subprocess.run(["sbatch", "--wait", "--array=0-1", "--chdir", str(REPO),
                           "--output", str(tmp_path / "shard-%a.log"), str(script)],
                          capture_output=True, text=True, timeout=600)
    logs = "\n".join(p.read_text() for p in sorted(tmp_path.glob("shard-*.log")))
    assert done.returncode == 0, done.stderr + logs
    shards = sorted(tmp_path.glob("shard-*.json"))
    assert len(shards) == 2
    assert {json.loads(p.read_text())["shard"] for p in shards} == {"1/2", "2/2"}
    merged = tmp_path / "merged.json"
    assert main(["report", "--merge", *map(str, shards), "-o", str(merged)]) == 0
    assert _quality(ResultFile.load(merged)) == _quality(ResultFile.load(whole))
