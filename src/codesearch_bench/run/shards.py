"""Which share of the cells this process runs: `--shard I/N`, or `auto` from the scheduler.

`--shard auto` reads the index and count an existing scheduler gives each
task, so the same command line serves every task of an array:

| scheduler | index | count |
|---|---|---|
| Slurm array job | `SLURM_ARRAY_TASK_ID` (from `SLURM_ARRAY_TASK_MIN`) | `SLURM_ARRAY_TASK_COUNT` |
| Kubernetes Indexed Job | `JOB_COMPLETION_INDEX` (0-based) | `BENCH_SHARD_COUNT` (= completions) |
| a CI matrix, anything else | `BENCH_SHARD_INDEX` (1-based) | `BENCH_SHARD_COUNT` |

Shards are 1-based I of N; cell j belongs to shard (j mod N) + 1 (plan.cells).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import UsageError


def _int(env: Mapping[str, str], key: str) -> int:
    try:
        return int(env[key])
    except ValueError:
        raise UsageError(f"--shard auto: {key}={env[key]!r} is not a whole number") from None


def from_scheduler(env: Mapping[str, str] | None = None) -> tuple[int, int, str]:
    """(index, count, which scheduler said so)."""
    env = os.environ if env is None else env
    if "SLURM_ARRAY_TASK_ID" in env:
        if "SLURM_ARRAY_TASK_COUNT" not in env:
            raise UsageError("--shard auto: SLURM_ARRAY_TASK_ID is set but not "
                             "SLURM_ARRAY_TASK_COUNT", hint="submit an array job (sbatch "
                             "--array=0-3) or pass --shard I/N")
        first = _int(env, "SLURM_ARRAY_TASK_MIN") if "SLURM_ARRAY_TASK_MIN" in env else 0
        return (_int(env, "SLURM_ARRAY_TASK_ID") - first + 1,
                _int(env, "SLURM_ARRAY_TASK_COUNT"), "slurm")
    if "JOB_COMPLETION_INDEX" in env:
        if "BENCH_SHARD_COUNT" not in env:
            raise UsageError("--shard auto: JOB_COMPLETION_INDEX is set but not "
                             "BENCH_SHARD_COUNT", hint="set BENCH_SHARD_COUNT to the Job's "
                             "completions in its pod template (docs/scale-out/)")
        return (_int(env, "JOB_COMPLETION_INDEX") + 1, _int(env, "BENCH_SHARD_COUNT"),
                "kubernetes")
    if "BENCH_SHARD_INDEX" in env and "BENCH_SHARD_COUNT" in env:
        return _int(env, "BENCH_SHARD_INDEX"), _int(env, "BENCH_SHARD_COUNT"), "environment"
    raise UsageError("--shard auto: no scheduler said which shard this is (no "
                     "SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or BENCH_SHARD_INDEX)",
                     hint="run it as an array task, or pass --shard I/N")


def parse(text: str | None, env: Mapping[str, str] | None = None) -> tuple[int, int] | None:
    if not text:
        return None
    if text == "auto":
        index, count, _ = from_scheduler(env)
    else:
        try:
            index, count = (int(x) for x in text.split("/"))
        except ValueError:
            raise UsageError(f"--shard {text!r}: write I/N, e.g. 2/4, or auto") from None
    if not 1 <= index <= count:
        raise UsageError(f"--shard: shard {index} of {count}; it needs 1 <= I <= N")
    return index, count
