#!/usr/bin/env python3
"""How much does the harness itself cost, and are its measurements right?

    python benchmarks/overhead.py [--corpora-root DIR] [--rounds 3] [--profile]

Prints four figures, each measured side by side in this one run:

1. one-shot overhead: `bench compare` with the grep engine over the rich
   corpus, against the same rendered commands run in a plain subprocess loop
   (ratio of wall times; goal <= 1.02);
2. persistent throughput: queries per second through the harness with a null
   engine that answers instantly (goal >= 5,000), and the latency the harness
   adds per query over a bare JSON-lines client talking to the same engine
   (goal <= 0.2 ms);
3. the harness's own peak RSS while driving engines (goal < 100 MiB);
4. accuracy: the peak RSS of a 200 MiB hog and the latency of a 50 ms sleeper
   as the harness reports them, against `/usr/bin/time -v` and a plain timer;
5. what tying a one-shot command to bench costs per spawn: `/bin/true` run
   through bench's command.run as it is (watched by the guardian), through
   the setpriv launcher it used before (still the fallback), and by a plain
   subprocess.run.

Rounds alternate A/B so drift on a noisy machine hits both sides; medians
are reported. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from codesearch_bench import workdir  # noqa: E402
from codesearch_bench.corpus.config import load_corpora  # noqa: E402
from codesearch_bench.corpus.setup import setup as setup_corpus  # noqa: E402
from codesearch_bench.engine import driver, state  # noqa: E402
from codesearch_bench.engine.spec import load_spec  # noqa: E402
from codesearch_bench.gold import queries  # noqa: E402
from codesearch_bench.model import Span  # noqa: E402
from codesearch_bench.processes import command  # noqa: E402
from codesearch_bench.run.cell import Cell, per_file_passes, run_cell  # noqa: E402
from codesearch_bench.run.comparison import execute  # noqa: E402
from codesearch_bench.run.options import CompareOptions  # noqa: E402

NULL_ENGINE = """
import json, sys  # noqa: E402
hits = [{"path": f"f{i}.py", "start": 1, "end": 3, "text": "x = 1"} for i in range(20)]
line = json.dumps({"hits": hits}) + "\\n"
for _ in sys.stdin:
    sys.stdout.write(line)
    sys.stdout.flush()
"""


def median(values: list[float]) -> float:
    return statistics.median(values)


# -- 1. one-shot overhead ------------------------------------------------------
def oneshot(corpora_root: Path, rounds: int) -> dict[str, float]:
    table = load_corpora(REPO / "corpora.toml")
    corpus = table["rich"]
    setup = setup_corpus(corpus, corpora_root)
    assert corpus.queries_path is not None
    qs = queries.load_queries(corpus.queries_path)
    loaded = load_spec(REPO / "engines" / "grep.json")
    work = Path(tempfile.mkdtemp(prefix="overhead-"))
    ctx = driver.Context(root=setup.tree, state=work / "plain", corpus="rich")
    ctx.state.mkdir(parents=True)
    commands = [driver.render_search(loaded, ctx, q.query, 20, pf)
                for pf in per_file_passes(loaded.spec.per_file) for q in qs.queries]
    opts = CompareOptions(engines=[loaded.file], corpora_file=REPO / "corpora.toml",
                          corpora_root=corpora_root, work=work, corpus="rich")
    execute(opts)  # warm: gold cache, page cache, imports
    harness, plain = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        execute(opts)
        harness.append(time.perf_counter() - start)
        start = time.perf_counter()
        for cmd in commands:
            subprocess.run(cmd.argv, cwd=cmd.cwd, env={**os.environ, **cmd.env},
                           capture_output=True, check=True)
        plain.append(time.perf_counter() - start)
    return {"commands": len(commands), "harness_s": median(harness), "plain_s": median(plain),
            "ratio": median(harness) / median(plain)}


# -- 2. persistent throughput ----------------------------------------------------
def _null_cell(tmp: Path, n_queries: int) -> Cell:
    (tmp / "null.py").write_text(NULL_ENGINE)
    spec = tmp / "null.json"
    spec.write_text(json.dumps({
        "name": "null", "mode": "persistent", "spans": True, "tokens": True,
        "search": {"command": [sys.executable, str(tmp / "null.py")]},
        "parse": {"format": "json", "results": "hits", "start": "start", "end": "end",
                  "text": "text"},
    }))
    tree = tmp / "tree"
    tree.mkdir()
    for i in range(20):
        (tree / f"f{i}.py").write_text("x = 1\n" * 5)
    qs = [queries.Query(id=f"q{i}", query=f"query number {i}",
                        gold=[queries.GoldRef(path=f"f{i % 25}.py", symbol=None)])
          for i in range(n_queries)]
    gold = {q.id: [Span(q.gold[0].path, 1, 3)] for q in qs}
    return Cell(loaded=load_spec(spec), corpus="null", corpus_pin="x", tree=tree,
                       state=state.state_dir(tmp, "state", "null", "null"), lang="", queries=qs,
                       gold=gold, cutoffs=(5, 10, 20),
                       tree_files=20)


def _bare_client(tmp: Path, n_queries: int) -> float:
    """Seconds per query for a minimal JSON-lines client, no harness."""
    proc = subprocess.Popen([sys.executable, str(tmp / "null.py")], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    start = time.perf_counter()
    for i in range(n_queries):
        proc.stdin.write((json.dumps({"query": f"query number {i}", "k": 20}) + "\n").encode())
        proc.stdin.flush()
        json.loads(proc.stdout.readline())
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait()
    return elapsed / n_queries


def persistent(rounds: int, n_queries: int, profile: bool) -> dict[str, object]:
    tmp = Path(tempfile.mkdtemp(prefix="overhead-null-"))
    cell = _null_cell(tmp, n_queries)
    run_cell(cell)  # warm
    through, bare = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        result = run_cell(cell)
        elapsed = time.perf_counter() - start
        assert result.failure is None and not any(o.error for o in result.passes[0].outcomes)
        through.append(elapsed / n_queries)
        bare.append(_bare_client(tmp, n_queries))
    out: dict[str, object] = {
        "queries": n_queries, "qps": 1 / median(through),
        "harness_ms_per_query": median(through) * 1000,
        "bare_ms_per_query": median(bare) * 1000,
        "added_ms_per_query": (median(through) - median(bare)) * 1000,
    }
    if profile:
        prof = cProfile.Profile()
        prof.enable()
        run_cell(cell)
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
        out["profile"] = buf.getvalue()
    return out


# -- 3. the harness's own RSS ------------------------------------------------------
def harness_rss(corpora_root: Path) -> float:
    """Peak RSS (MiB) of a fresh `bench compare` process (the CLI, as a user runs it)
    running grep on rich."""
    argv = ["compare", "--engine", str(REPO / "engines/grep.json"), "--corpus", "rich",
            "--corpora-file", str(REPO / "corpora.toml"), "--corpora-root", str(corpora_root),
            "--work", tempfile.mkdtemp(prefix="overhead-rss-")]
    code = ("import sys; from codesearch_bench.cli import main; "
            f"code = main({argv!r}); assert code == 0, code; "
            # VmHWM, not ru_maxrss: Linux carries a parent's peak into a child's
            # ru_maxrss, and this benchmark's own process is the parent here.
            "print([l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')][0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    return int(out.stdout.strip().splitlines()[-1]) / 1024


# -- 4. accuracy -----------------------------------------------------------------------
def accuracy(rounds: int) -> dict[str, float | None]:
    hog = [sys.executable, "-c",
           "b = bytearray(200 * 1024 * 1024)\nfor i in range(0, len(b), 4096): b[i] = 1\n"
           "import time; time.sleep(0.3)"]
    sleeper = [sys.executable, "-c", "import time; time.sleep(0.05)"]
    ours = [command.run(hog, timeout=60).peak_rss_bytes or 0 for _ in range(rounds)]
    kernel: list[int] = []
    if Path("/usr/bin/time").exists():
        for _ in range(rounds):
            err = subprocess.run(["/usr/bin/time", "-v", *hog], capture_output=True,
                                 text=True).stderr
            match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
            if match:
                kernel.append(int(match.group(1)) * 1024)
    ours_lat, plain_lat = [], []
    for _ in range(rounds * 3):
        ours_lat.append(command.run(sleeper, timeout=60).wall_s)
        start = time.perf_counter()
        subprocess.run(sleeper, check=True)
        plain_lat.append(time.perf_counter() - start)
    return {
        "hog_rss_mib_harness": median(ours) / 2**20,
        "hog_rss_mib_time_v": median(kernel) / 2**20 if kernel else None,
        "sleeper_ms_harness": median(ours_lat) * 1000,
        "sleeper_ms_plain": median(plain_lat) * 1000,
    }


# -- 5. the death signal's cost per spawn ---------------------------------------------------
def spawn_cost(rounds: int, n: int = 200) -> dict[str, float]:
    """Median ms per /bin/true: bench's path, the setpriv fallback, a plain subprocess.run."""
    from codesearch_bench.processes import guardian, lifeline

    true = shutil.which("true") or "/bin/true"

    def timed(run: Callable[[], object]) -> float:
        start = time.perf_counter()
        run()
        return time.perf_counter() - start

    def through_bench(watched: bool) -> list[float]:
        guardian._unavailable = not watched  # the switch spawn.py's fallback reads
        try:
            return [timed(lambda: command.run([true], timeout=10)) for _ in range(n)]
        finally:
            guardian._unavailable = False

    ours, setpriv, plain = [], [], []
    through_bench(True)  # warm: the guardian started, the code paths hot
    for _ in range(rounds):
        ours += through_bench(True)
        if lifeline.death_launcher():
            setpriv += through_bench(False)
        plain += [timed(lambda: subprocess.run([true], capture_output=True))
                  for _ in range(n)]
    return {"guardian_ms": median(ours) * 1000,
            "setpriv_ms": median(setpriv) * 1000 if setpriv else float("nan"),
            "plain_ms": median(plain) * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpora-root", type=Path, default=None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--queries", type=int, default=3000)
    parser.add_argument("--profile", action="store_true", help="profile the persistent loop")
    args = parser.parse_args()
    root = args.corpora_root or workdir.default_corpora_root()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, rounds={args.rounds}")

    one = oneshot(root, args.rounds)
    print(f"1. one-shot: {one['commands']} grep searches on rich: harness "
          f"{one['harness_s']:.2f}s vs plain loop {one['plain_s']:.2f}s -> "
          f"ratio {one['ratio']:.3f} (goal <= 1.02)")
    per = persistent(args.rounds, args.queries, args.profile)
    print(f"2. persistent: {per['queries']} queries to a null engine: {per['qps']:.0f} "
          f"queries/s through the harness (goal >= 5000); {per['harness_ms_per_query']:.3f} ms "
          f"per query vs {per['bare_ms_per_query']:.3f} ms for a bare client -> harness adds "
          f"{per['added_ms_per_query']:.3f} ms (goal <= 0.2)")
    rss = harness_rss(root)
    print(f"3. harness peak RSS driving grep over rich: {rss:.0f} MiB (goal < 100 MiB)")
    acc = accuracy(args.rounds)
    kernel = acc["hog_rss_mib_time_v"]
    kernel_text = f"{kernel:.1f} MiB" if kernel is not None else "n/a (no /usr/bin/time)"
    print(f"4. accuracy: 200 MiB hog peak RSS {acc['hog_rss_mib_harness']:.1f} MiB (harness) vs "
          f"{kernel_text} (/usr/bin/time -v); 50 ms sleeper "
          f"{acc['sleeper_ms_harness']:.1f} ms (harness) vs {acc['sleeper_ms_plain']:.1f} ms "
          "(plain timer around subprocess.run)")
    cost = spawn_cost(args.rounds)
    print(f"5. one spawn of true: {cost['guardian_ms']:.2f} ms through bench (guardian) vs "
          f"{cost['setpriv_ms']:.2f} ms with the setpriv launcher vs {cost['plain_ms']:.2f} ms "
          "plain subprocess.run")
    if args.profile:
        print(per["profile"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
