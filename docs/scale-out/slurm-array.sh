#!/bin/bash
# A sharded comparison as a Slurm array job: each task runs its share of the
# (engine x corpus) cells, the last step merges them into one result.
#
#   sbatch docs/scale-out/slurm-array.sh            # 4 tasks; then:
#   sbatch --dependency=afterok:<jobid> --wrap \
#     "bench report --merge results/shard-*.json -o results/all.json"
#
#SBATCH --job-name=bench-compare
#SBATCH --array=0-3
#SBATCH --cpus-per-task=2
#SBATCH --output=results/shard-%a.log
set -euo pipefail
mkdir -p results
# --shard auto reads SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT.
# Each task gets its own work dir: two benches never share one.
bench compare --suite full --shard auto \
  --work "results/work-${SLURM_ARRAY_TASK_ID}" \
  --corpora-root "${BENCH_CORPORA:-$HOME/.cache/bench-corpora}" \
  --json "results/shard-${SLURM_ARRAY_TASK_ID}.json"
