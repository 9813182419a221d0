#!/usr/bin/env python3
"""Does the harness's memory stay bounded as the query set grows?

    python benchmarks/memory.py [--queries 1000,4000,16000] [--files 1000]

For each query-set size Q, a fresh `bench compare` process (run/comparison.execute,
as the CLI calls it, with --json) runs E persistent null engines (`--engines`,
default 3: E cells, each a query loop of its own) that answer twenty hits a
query over a generated tree (benchmarks/scaling.py's trees and query sets), and
reports its own peak RSS (VmHWM). Each size runs twice side by
side: with the default bound on outcomes held in full (results/held.py; past
it, rows are held slim and the file is written from the journal), and with
every outcome held in full, as before that bound existed. Prints the peaks and
the growth per thousand queries between the two largest sizes. A warm-up run
per size fills the gold cache first. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "src"))

import scaling  # noqa: E402

from codesearch_bench import cli  # noqa: E402

CHILD = r"""
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from codesearch_bench.run.comparison import execute  # noqa: E402
from codesearch_bench.run.options import CompareOptions  # noqa: E402
toml, root, work, out, corpus, specs, hold = sys.argv[1:8]
result = execute(CompareOptions(
    engines=[Path(s) for s in specs.split(",")], corpora_file=Path(toml),
    corpora_root=Path(root), work=Path(work), json_out=Path(out), corpus=corpus,
    hold_outcomes=int(hold)))
assert not result.failures, result.failures
print([l.split()[1] for l in open("/proc/self/status") if l.startswith("VmHWM")][0])
"""

EVERYTHING = 10**9  # hold every outcome in full: the behaviour before the bound


def peak_mib(args: list[str]) -> float:
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    return int(out.stdout.strip().splitlines()[-1]) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=scaling.sizes_arg, default=[1000, 4000, 16000])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--engines", type=int, default=3)
    args = parser.parse_args()
    from codesearch_bench.results.held import LIMIT

    base = Path(tempfile.mkdtemp(prefix="memory-"))
    lay = scaling.Layout(base, funcs=4)
    tree = lay.tree(args.files)
    paths = [scaling.rel_path(i) for i in range(20)]
    engine = scaling.NullEngine(base, tree, paths)
    specs = []
    for e in range(args.engines):  # the same engine under E names: E cells
        spec = base / f"null{e}.json"
        spec.write_text(engine.spec.read_text().replace('"name": "null"', f'"name": "null{e}"'))
        specs.append(str(spec))
    root = base / "corpora"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus; {args.files} files, "
          f"{args.engines} null engines (20 hits a query); bound: {LIMIT:,} outcomes held in "
          "full")
    peaks: dict[str, list[float]] = {"bounded": [], "everything": []}
    for q in args.queries:
        corpus = lay.corpus(args.files, q)
        cli.main(scaling.corpus_args("setup", corpus.name, lay.toml, root))
        common = [str(lay.toml), str(root)]
        for tag, hold in (("warm-up", LIMIT), ("bounded", LIMIT), ("everything", EVERYTHING)):
            work = base / f"work-{q}-{tag}"
            mib = peak_mib([*common, str(work), str(work / "out.json"), corpus.name,
                            ",".join(specs), str(hold)])
            if tag != "warm-up":
                peaks[tag].append(mib)
        print(f"{q:>7,} queries: peak RSS {peaks['bounded'][-1]:6.0f} MiB with the bound, "
              f"{peaks['everything'][-1]:6.0f} MiB holding every outcome")
    if len(args.queries) > 1:
        dq = (args.queries[-1] - args.queries[-2]) / 1000
        for tag, values in peaks.items():
            print(f"growth per 1,000 queries ({tag}): {(values[-1] - values[-2]) / dq:.1f} MiB")
    print(json.dumps({"queries": args.queries, **peaks}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
