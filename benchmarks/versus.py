#!/usr/bin/env python3
"""The persistent per-query path of two checkouts of bench, side by side.

    git worktree add /tmp/before <commit>
    python benchmarks/versus.py /tmp/before .    [--rounds 5] [--queries 3000]

Each round runs both checkouts once, in alternating order, each in a fresh
interpreter that imports bench from its own `src/`: one warm-up cell, then
three timed cells of a persistent null engine (benchmarks/overhead.py's,
twenty hits a query) -- the same harness path `bench compare` takes, minus
the engine. Prints ms per query (best of the three per round), each round and
the medians, and the ratio. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r"""
import json, sys, tempfile, time
from pathlib import Path
root = Path(sys.argv[1]).resolve()
sys.path.insert(0, str(root / "benchmarks"))
import overhead  # puts root/src first on sys.path  # noqa: E402
from codesearch_bench.run import cell as cell_module  # noqa: E402
from codesearch_bench.run.cell import run_cell  # noqa: E402
assert Path(cell_module.__file__).is_relative_to(root), cell_module.__file__
cell = overhead._null_cell(Path(tempfile.mkdtemp(prefix="versus-")), int(sys.argv[2]))
run_cell(cell)
times = []
for _ in range(3):
    start = time.perf_counter()
    run_cell(cell)
    times.append(time.perf_counter() - start)
print(json.dumps(min(times) / int(sys.argv[2]) * 1000))
"""


def one(checkout: Path, queries: int) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, str(checkout), str(queries)],
                         capture_output=True, text=True, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--queries", type=int, default=3000)
    args = parser.parse_args()
    before: list[float] = []
    after: list[float] = []
    for i in range(args.rounds):
        order = [(args.before, before), (args.after, after)]
        for checkout, into in order if i % 2 == 0 else order[::-1]:
            into.append(one(checkout, args.queries))
        print(f"round {i + 1}: before {before[-1]:.3f} ms/query, after {after[-1]:.3f}")
    b, a = statistics.median(before), statistics.median(after)
    print(f"median: before {b:.3f} ms/query ({1000 / b:,.0f}/s), after {a:.3f} "
          f"({1000 / a:,.0f}/s): after/before {a / b:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
