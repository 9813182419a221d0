#!/usr/bin/env python3
"""How does the harness's own cost grow with the tree and the query set?

    python benchmarks/scaling.py [--quick] [--files 100,1000,10000,100000]
        [--queries 10,100,1000,10000] [--rounds 3] [--json OUT] [--png OUT]

Generates deterministic Python trees of N files (a few small documented
functions each, ~100 files per folder, two levels deep) and query sets of Q
queries whose gold is a (path, function) spread over the tree by a seeded
draw, then times, on a corpus with `source = "path"`:

* over N (Q fixed, `--fixed-queries`, default 100):
  - setup: `bench setup` in-process (`cli.main`): copying into the managed
    tree, manifest, fingerprint, setup marker;
  - tree build: `corpus.tree.build_tree` alone (copy + manifest + fingerprint),
    and fingerprint: `corpus.fingerprint.take` of the built tree alone;
  - gold cold: `gold.sets.resolve_set` with an empty cache dir and the
    in-process parse cache cleared (tree-sitter on every gold file; the OS page
    cache is warm), and gold warm: the same call reading its cache;
  - validate first: `bench validate` in-process right after setup (no gold
    cache, needle track not yet built: it is built here), validate warm: the
    same again (everything cached), and validate warm (subprocess):
    `python -m codesearch_bench validate`, which includes interpreter and
    import start-up;
* over Q (N fixed, `--fixed-files`, default 1,000):
  - gold cold and warm, as above;
  - harness: `run_cell` with a persistent null engine that answers
    instantly (as benchmarks/overhead.py's `_null_cell`, but on the generated
    tree, with the resolved gold), against a bare JSON-lines client to the
    same engine; harness added = the difference.

Each stage's exponent b of cost = a * size^b is fitted by least squares on
log-log (numpy), over all sizes and over the last step alone (the two largest
sizes, nearer the asymptote). Goal: no stage above b = 1 (linear); a fitted b
above 1.15 is called superlinear in the printout. Rounds go over every size in turn so drift
on a noisy machine hits all sizes; medians are reported; a warm-up pass at the
smallest sizes is not timed. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from growth import SUPERLINEAR, plot, summarize, table  # noqa: E402
from synthetic import make_queries, make_tree, rel_path  # noqa: E402

from codesearch_bench import cli  # noqa: E402
from codesearch_bench.corpus import fingerprint as fp  # noqa: E402
from codesearch_bench.corpus.config import Corpus, load_corpora  # noqa: E402
from codesearch_bench.corpus.layout import CorpusDir  # noqa: E402
from codesearch_bench.corpus.setup import dirs as corpus_dirs  # noqa: E402
from codesearch_bench.corpus.tree import build_tree  # noqa: E402
from codesearch_bench.engine import state  # noqa: E402
from codesearch_bench.engine.spec import load_spec  # noqa: E402
from codesearch_bench.gold import grammars, queries  # noqa: E402
from codesearch_bench.gold.sets import resolve_set  # noqa: E402
from codesearch_bench.run.cell import Cell, run_cell  # noqa: E402

NULL_ENGINE = """
import json, sys  # noqa: E402
paths = json.loads(sys.argv[1])
hits = [{"path": p, "start": 1, "end": 3, "text": "x = 1"} for p in paths]
line = json.dumps({"hits": hits}) + "\\n"
for _ in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""


# -- measuring ------------------------------------------------------------------------
def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def bench_cli(argv: list[str]) -> None:
    """`bench ...` in-process, its console output swallowed; a non-zero exit is an error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    if code != 0:
        raise RuntimeError(f"bench {' '.join(argv)} exited {code}:\n{out.getvalue()}\n"
                           f"{err.getvalue()}")


def bench_subprocess(argv: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    subprocess.run([sys.executable, "-m", "codesearch_bench", *argv], env=env,
                   capture_output=True, check=True)


def corpus_args(cmd: str, name: str, toml: Path, root: Path) -> list[str]:
    return [cmd, "--corpus", name, "--corpora-file", str(toml), "--corpora-root", str(root)]


def gold_cold(corpus: Corpus, tree: Path, qs: queries.QuerySet, cache: Path) -> float:
    shutil.rmtree(cache, ignore_errors=True)
    grammars.file_definitions.cache_clear()

    def go() -> None:
        report = resolve_set(corpus, tree, qs, cache)
        if report.failures or report.cached:
            raise RuntimeError(f"gold cold: {report.failures[:3]} cached={report.cached}")
    return timed(go)


def gold_warm(corpus: Corpus, tree: Path, qs: queries.QuerySet, cache: Path) -> float:
    def go() -> None:
        if not resolve_set(corpus, tree, qs, cache).cached:
            raise RuntimeError("gold warm: the cache was not used")
    return timed(go)


class Layout:
    """The scratch dir: sources, query sets, corpora.toml and the set-up corpora."""

    def __init__(self, base: Path, funcs: int) -> None:
        self.base, self.funcs = base, funcs
        self.toml = base / "corpora.toml"
        self.entries: dict[str, str] = {}

    def tree(self, n: int) -> Path:
        src = self.base / f"tree-{n}"
        if not src.is_dir():
            tmp = self.base / f".tree-{n}.tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            make_tree(tmp, n, self.funcs)
            tmp.rename(src)
        return src

    def corpus(self, n: int, q: int) -> Corpus:
        name = f"scale-n{n}-q{q}"
        qfile = self.base / f"queries-n{n}-q{q}.jsonl"
        if not qfile.is_file():
            make_queries(qfile, n, self.funcs, q)
        if name not in self.entries:
            self.tree(n)
            self.entries[name] = (f'[corpus.{name}]\nsource = "path"\npath = "tree-{n}"\n'
                                  f'queries = "{qfile.name}"\nlanguages = ["python"]\n')
            self.toml.write_text("\n".join(self.entries.values()))
        return load_corpora(self.toml)[name]


# -- over N -------------------------------------------------------------------------------
N_STAGES = ["setup", "tree build", "fingerprint", "gold cold", "gold warm", "validate first",
            "validate warm", "validate warm (subprocess)"]


def one_n(lay: Layout, n: int, q: int, subprocess_validate: bool) -> dict[str, float]:
    corpus = lay.corpus(n, q)
    source = lay.tree(n)
    assert corpus.queries_path is not None
    qs = queries.load_queries(corpus.queries_path)
    out: dict[str, float] = {}
    root = Path(tempfile.mkdtemp(prefix="corpora-", dir=lay.base))
    try:
        out["setup"] = timed(lambda: bench_cli(corpus_args("setup", corpus.name, lay.toml, root)))
        tree = corpus_dirs(root, corpus).tree
        scratch = CorpusDir(Path(tempfile.mkdtemp(prefix="build-", dir=lay.base)))
        try:
            out["tree build"] = timed(lambda: build_tree(corpus.name, corpus.pin, corpus.spec,
                                                         source, scratch))
        finally:
            shutil.rmtree(scratch.base, ignore_errors=True)
        out["fingerprint"] = timed(lambda: fp.take(tree))
        cache = lay.base / f"gold-cache-n{n}"
        out["gold cold"] = gold_cold(corpus, tree, qs, cache)
        out["gold warm"] = gold_warm(corpus, tree, qs, cache)
        validate = corpus_args("validate", corpus.name, lay.toml, root)
        out["validate first"] = timed(lambda: bench_cli(validate))
        out["validate warm"] = timed(lambda: bench_cli(validate))
        if subprocess_validate:
            out["validate warm (subprocess)"] = timed(lambda: bench_subprocess(validate))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return out


# -- over Q -------------------------------------------------------------------------------
Q_STAGES = ["gold cold", "gold warm", "harness (run_cell)", "bare client", "harness added"]


class NullEngine:
    def __init__(self, base: Path, tree: Path, hit_paths: list[str]) -> None:
        self.base, self.tree, self.paths = base, tree, hit_paths
        self.script = base / "null.py"
        self.script.write_text(NULL_ENGINE)
        self.spec = base / "null.json"
        self.spec.write_text(json.dumps({
            "name": "null", "mode": "persistent", "spans": True, "tokens": True,
            "search": {"command": [sys.executable, str(self.script), json.dumps(hit_paths)]},
            "parse": {"format": "json", "results": "hits", "start": "start", "end": "end",
                      "text": "text"},
        }))

    def cell(self, qs: queries.QuerySet, gold: dict[str, Any], n_files: int) -> Cell:
        return Cell(loaded=load_spec(self.spec), corpus="scale", corpus_pin="x",
                           tree=self.tree, state=state.state_dir(self.base, "state", "null",
                                                                 "scale"),
                           lang="", queries=qs.queries, gold=gold, cutoffs=(5, 10, 20),
                           tree_files=n_files)

    def bare(self, qs: queries.QuerySet) -> float:
        """Seconds for a minimal JSON-lines client to ask every query, no harness."""
        proc = subprocess.Popen([sys.executable, str(self.script), json.dumps(self.paths)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        start = time.perf_counter()
        for q in qs.queries:
            proc.stdin.write((json.dumps({"query": q.query, "k": 20}) + "\n").encode())
            proc.stdin.flush()
            json.loads(proc.stdout.readline())
        elapsed = time.perf_counter() - start
        proc.stdin.close()
        proc.wait()
        return elapsed


def harness(engine: NullEngine, cell: Cell) -> float:
    def go() -> None:
        result = run_cell(cell)
        if result.failure is not None or any(o.error for o in result.passes[0].outcomes):
            raise RuntimeError(f"null engine run failed: {result.failure}")
    return timed(go)


def one_q(lay: Layout, n: int, q: int, tree: Path, engine: NullEngine) -> dict[str, float]:
    corpus = lay.corpus(n, q)
    assert corpus.queries_path is not None
    qs = queries.load_queries(corpus.queries_path)
    cache = lay.base / f"gold-cache-q{q}"
    out = {"gold cold": gold_cold(corpus, tree, qs, cache),
           "gold warm": gold_warm(corpus, tree, qs, cache)}
    gold = resolve_set(corpus, tree, qs, cache).spans
    cell = engine.cell(qs, gold, n)
    out["harness (run_cell)"] = harness(engine, cell)
    out["bare client"] = engine.bare(qs)
    out["harness added"] = out["harness (run_cell)"] - out["bare client"]
    return out


def _git_state() -> dict[str, object]:
    """The commit measured, and whether src/ had uncommitted edits (they were measured too)."""
    def git(*argv: str) -> str:
        return subprocess.run(["git", "-C", str(REPO), *argv], capture_output=True,
                              text=True).stdout.strip()
    return {"commit": git("rev-parse", "HEAD"),
            "src_dirty": bool(git("status", "--porcelain", "--", "src"))}


def sizes_arg(text: str) -> list[int]:
    return sorted({int(float(p)) for p in text.split(",") if p.strip()})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=sizes_arg, default=None,
                        help="tree sizes N (default 100,1000,10000,100000)")
    parser.add_argument("--queries", type=sizes_arg, default=None,
                        help="query-set sizes Q (default 10,100,1000,10000)")
    parser.add_argument("--quick", action="store_true",
                        help="N up to 10^4 and Q up to 10^3 (when --files/--queries not given)")
    parser.add_argument("--fixed-queries", type=int, default=100, help="Q of the sweep over N")
    parser.add_argument("--fixed-files", type=int, default=1000, help="N of the sweep over Q")
    parser.add_argument("--funcs", type=int, default=4, help="functions per file (default 4)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-subprocess", action="store_true",
                        help="skip the validate-in-a-subprocess stage")
    parser.add_argument("--workdir", type=Path, default=None,
                        help="scratch dir (default: a new temp dir, removed at the end)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch dir")
    parser.add_argument("--json", type=Path, default=None, help="write the results here")
    parser.add_argument("--png", type=Path, default=None, help="draw the curves here")
    args = parser.parse_args()
    files = args.files or ([100, 1000, 10000] if args.quick else [100, 1000, 10000, 100000])
    qsizes = args.queries or ([10, 100, 1000] if args.quick else [10, 100, 1000, 10000])
    base = args.workdir or Path(tempfile.mkdtemp(prefix="scaling-"))
    base.mkdir(parents=True, exist_ok=True)
    lay = Layout(base.resolve(), args.funcs)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, rounds={args.rounds}, "
          f"N={files} (Q={args.fixed_queries}), Q={qsizes} (N={args.fixed_files}), "
          f"scratch {lay.base}", flush=True)
    started, measured = time.perf_counter(), _git_state()
    try:
        for n in files:
            t = timed(lambda n=n: lay.tree(n))
            print(f"  generated {n:,} files in {t:.1f}s", flush=True)
        one_n(lay, files[0], args.fixed_queries, not args.no_subprocess)  # warm-up
        over_n: list[dict[int, dict[str, float]]] = []
        for r in range(args.rounds):
            over_n.append({})
            for n in files:
                over_n[-1][n] = one_n(lay, n, args.fixed_queries, not args.no_subprocess)
                print(f"  round {r + 1} N={n:,}: " + ", ".join(
                    f"{k} {v:.3f}s" for k, v in over_n[-1][n].items()), flush=True)

        nq = args.fixed_files
        corpus = lay.corpus(nq, qsizes[0])
        qtree = Path(tempfile.mkdtemp(prefix="qtree-", dir=lay.base))
        bench_cli(corpus_args("setup", corpus.name, lay.toml, qtree))
        tree = corpus_dirs(qtree, corpus).tree
        engine = NullEngine(lay.base, tree, [rel_path(i) for i in range(min(20, nq))])
        one_q(lay, nq, qsizes[0], tree, engine)  # warm-up
        over_q: list[dict[int, dict[str, float]]] = []
        for r in range(args.rounds):
            over_q.append({})
            for q in qsizes:
                over_q[-1][q] = one_q(lay, nq, q, tree, engine)
                print(f"  round {r + 1} Q={q:,}: " + ", ".join(
                    f"{k} {v:.3f}s" for k, v in over_q[-1][q].items()), flush=True)
    finally:
        if not args.keep and args.workdir is None:
            shutil.rmtree(base, ignore_errors=True)

    stages_n = summarize(files, over_n, N_STAGES)
    stages_q = summarize(qsizes, over_q, Q_STAGES)
    per_query = {q: {k: statistics.median(r[q][k] for r in over_q) / q * 1000
                     for k in ("harness (run_cell)", "bare client", "harness added")}
                 for q in qsizes}
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0],
                    "platform": platform.platform()},
        "git": measured, "rounds": args.rounds, "funcs_per_file": args.funcs,
        "wall_s": round(time.perf_counter() - started, 1),
        "over_files": {"queries": args.fixed_queries, "sizes": files, "stages": stages_n},
        "over_queries": {"files": nq, "sizes": qsizes, "stages": stages_q,
                         "ms_per_query": {str(q): v for q, v in per_query.items()}},
    }
    print()
    print(table(f"over N (files), Q = {args.fixed_queries}; median seconds", "N", files,
                stages_n))
    print()
    print(table(f"over Q (queries), N = {nq:,}; median seconds", "Q", qsizes, stages_q))
    print()
    print("per query through the harness (ms): " + "; ".join(
        f"Q={q:,}: {v['harness (run_cell)']:.3f} (bare {v['bare client']:.3f}, "
        f"added {v['harness added']:.3f})" for q, v in per_query.items()))
    slow = [f"{stage} (over {sweep}, b = {row['exponent']:.2f})"
            for sweep, stages in (("N", stages_n), ("Q", stages_q))
            for stage, row in stages.items() if row["superlinear"]]
    print(f"superlinear (b > {SUPERLINEAR}): {', '.join(slow) if slow else 'none'}")
    print(f"total {result['wall_s']:.0f}s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if args.png:
        args.png.parent.mkdir(parents=True, exist_ok=True)
        plot(args.png, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
