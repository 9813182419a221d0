"""`bench compare --jobs N`: cells at once in worker processes, the same numbers, flagged rows.

Fake engines (scripts run with sys.executable) over three mini corpora: quality
equals a --jobs 1 run's, only concurrent rows carry `concurrent=N`, two cells
on one corpus never overlap, a crashing engine or a killed worker fails only
its cell, and an interrupt leaves no process and keeps every finished cell.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from minicorpus import make_corpus
from test_behaviour_golden import quality

from codesearch_bench.cli import main
from codesearch_bench.commands.compare import parse_jobs
from codesearch_bench.errors import UsageError
from codesearch_bench.results import journal
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
CORPORA = ("alpha", "beta", "gamma")

# `engine.py index|search NAME CORPUS [QUERY]`. Every call appends "CORPUS NAME TIME PID PPID"
# to $JOBS_LOG; an index sleeps $JOBS_INDEX_S so cells last long enough to overlap. NAME
# "other" answers in another order; "crash" crashes on corpus beta; "killer" kills its parent
# (the worker) on corpus beta; "slow" hangs on every query while $JOBS_HANG exists, and
# "stubborn" too, ignoring SIGINT and SIGTERM.
ENGINE = '''
import json, os, signal, sys, time
role, name, corpus = sys.argv[1:4]
log = os.environ.get("JOBS_LOG")
if log:
    with open(log, "a") as fh:
        fh.write(f"{corpus} {name} {time.time()} {os.getpid()} {os.getppid()}\\n")
if role == "index":
    time.sleep(float(os.environ.get("JOBS_INDEX_S", "0")))
    sys.exit(0)
if name == "crash" and corpus == "beta":
    os.kill(os.getpid(), signal.SIGSEGV)
if name == "killer" and corpus == "beta":
    os.kill(os.getppid(), signal.SIGKILL)
hang = os.environ.get("JOBS_HANG")
if name == "stubborn":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if name in ("slow", "stubborn") and hang and os.path.exists(hang):
    time.sleep(3600)
query = sys.argv[4]
hits = [{"path": "pkg/config.py", "start": 4, "end": 7},
        {"path": "pkg/retry.py", "start": 4, "end": 6}]
if "terminal" in query:
    hits.insert(0, {"path": "pkg/cells.py", "start": 1, "end": 3})
if name == "other":
    hits.reverse()
print(json.dumps({"hits": hits}))
'''


class Jobs:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        for name in CORPORA:
            self.toml = make_corpus(tmp, name)
        self.script = tmp / "engine.py"
        self.script.write_text(ENGINE)
        self.log = tmp / "calls.log"

    def spec(self, name: str) -> Path:
        path = self.tmp / f"{name}.json"
        path.write_text(json.dumps({
            "name": name, "spans": True,
            "index": {"command": [sys.executable, str(self.script), "index", name,
                                  "{{corpus}}"]},
            "search": {"command": [sys.executable, str(self.script), "search", name,
                                   "{{corpus}}", "{{query}}"], "timeout": "20s"},
            "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"},
        }))
        return path

    def argv(self, *engines: Path, jobs: int | str, tag: str, extra: tuple[str, ...] = ()
             ) -> list[str]:
        args = ["compare", "--corpora-file", str(self.toml), "--work", str(self.tmp / tag),
                "--json", str(self.out(tag)), "--jobs", str(jobs)]
        for engine in engines:
            args += ["--engine", str(engine)]
        return [*args, *extra]

    def out(self, tag: str) -> Path:
        return self.tmp / f"{tag}.json"

    def calls(self) -> list[tuple[str, str, float, int, int]]:
        if not self.log.exists():
            return []
        out = []
        for line in self.log.read_text().splitlines():
            corpus, name, when, pid, ppid = line.split()
            out.append((corpus, name, float(when), int(pid), int(ppid)))
        return out

    def spans(self) -> dict[tuple[str, str], tuple[float, float]]:
        """(corpus, engine) -> the first and last call of that cell."""
        spans: dict[tuple[str, str], tuple[float, float]] = {}
        for corpus, name, when, _, _ in self.calls():
            lo, hi = spans.get((corpus, name), (when, when))
            spans[(corpus, name)] = (min(lo, when), max(hi, when))
        return spans


@pytest.fixture
def jobs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Jobs:
    j = Jobs(tmp_path)
    monkeypatch.setenv("JOBS_LOG", str(j.log))
    monkeypatch.setenv("JOBS_INDEX_S", "0.3")
    return j


def _without_concurrency(data: dict[str, Any]) -> dict[str, Any]:
    for row in data["rows"]:
        row["flags"] = [f for f in row["flags"] if not f.startswith("concurrent=")]
    return data


def test_jobs_3_gives_the_numbers_of_jobs_1_in_the_same_order(jobs: Jobs) -> None:
    engines = (jobs.spec("good"), jobs.spec("other"), REPO / "engines" / "grep.json")
    assert main(jobs.argv(*engines, jobs=1, tag="one")) == 0
    jobs.log.unlink()
    assert main(jobs.argv(*engines, jobs=3, tag="three")) == 0
    one = json.loads(jobs.out("one").read_text())
    three = json.loads(jobs.out("three").read_text())
    assert one["jobs"] == 1 and three["jobs"] == 3
    assert [(r["engine"], r["corpus"], r["per_file"]) for r in three["rows"]] == \
        [(r["engine"], r["corpus"], r["per_file"]) for r in one["rows"]]
    assert quality(one) == _without_concurrency(quality(three))
    assert not any(f.startswith("concurrent=") for r in one["rows"] for f in r["flags"])
    flagged = [r for r in three["rows"] if any(f.startswith("concurrent=") for f in r["flags"])]
    assert flagged, "three corpora at --jobs 3: the first cells ran side by side"
    assert {f for r in flagged for f in r["flags"]} <= {"concurrent=2", "concurrent=3"}
    # The cells did overlap (on different corpora), which is what the flag says.
    spans = jobs.spans()
    assert any(a[0] < b[1] and b[0] < a[1] for ka, a in spans.items()
               for kb, b in spans.items() if ka[0] != kb[0])
    ResultFile.load(jobs.out("three"))  # valid against the model


def test_two_cells_on_one_corpus_never_overlap(jobs: Jobs) -> None:
    engines = [jobs.spec(n) for n in ("good", "other", "third")]
    assert main(jobs.argv(*engines, jobs=3, tag="run", extra=("--corpus", "alpha,beta"))) == 0
    spans = jobs.spans()
    assert len(spans) == 6
    for corpus in ("alpha", "beta"):
        cells = sorted(v for k, v in spans.items() if k[0] == corpus)
        for (_, end), (start, _) in itertools.pairwise(cells):
            assert end < start, f"two cells on {corpus} overlapped"
    result = ResultFile.load(jobs.out("run"))
    beside = {f for r in result.rows for f in r.flags if f.startswith("concurrent=")}
    assert beside <= {"concurrent=2"}, "at most one cell per corpus: two corpora, two at once"


def test_a_crashing_engine_and_a_killed_worker_fail_only_their_cells(jobs: Jobs) -> None:
    engines = (jobs.spec("good"), jobs.spec("crash"), jobs.spec("killer"))
    assert main(jobs.argv(*engines, jobs=3, tag="run")) == 1
    result = ResultFile.load(jobs.out("run"))
    cells = {(r.engine, r.corpus) for r in result.rows}
    assert {("good", c) for c in CORPORA} <= cells
    assert {("crash", "alpha"), ("crash", "gamma"), ("killer", "alpha"),
            ("killer", "gamma")} <= cells
    failed = {(f.engine, f.corpus): f for f in result.failures}
    assert set(failed) == {("crash", "beta"), ("killer", "beta")}
    assert "all 4 queries failed" in failed[("crash", "beta")].message
    assert "worker process" in failed[("killer", "beta")].message
    assert "killed by signal 9" in failed[("killer", "beta")].message
    assert ("killer", "beta") not in cells
    time.sleep(0.2)
    for _, _, _, pid, _ in jobs.calls():
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"
    # In the plan's order (beta's cells: crash, killer, good), like the rows.
    assert [(f.engine, f.corpus) for f in result.failures] == [("crash", "beta"),
                                                                ("killer", "beta")]


def _bench(argv: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "codesearch_bench", *argv],
                            env={**os.environ, **env}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for(predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(0.05)


def _alive(pids: set[int]) -> list[int]:
    alive = []
    for pid in pids:
        with contextlib.suppress(psutil.Error):
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
    return alive


@pytest.mark.hostile
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_an_interrupt_stops_every_cell_and_resume_keeps_the_finished(
        jobs: Jobs, sig: signal.Signals) -> None:
    hang = jobs.tmp / "hang-now"
    hang.touch()
    good, slow = jobs.spec("good"), jobs.spec("slow")
    argv = jobs.argv(good, slow, jobs=2, tag="run", extra=("--corpus", "alpha,beta"))
    bench = _bench(argv, {"JOBS_HANG": str(hang)})
    log = journal.path_for(jobs.out("run"))
    seen: set[int] = set()
    try:
        # Plan: alpha (good, slow), beta (slow, good). alpha's good finishes, then both slow
        # cells hang at once, one per corpus.
        _wait_for(lambda: log.exists() and len(journal.read(log)[1]) >= 1)
        _wait_for(lambda: {(c, n) for c, n, *_ in jobs.calls() if n == "slow"}
                  >= {("alpha", "slow"), ("beta", "slow")})
        time.sleep(0.3)  # the hung queries are running
        seen = {pid for *_, pid, ppid in jobs.calls() for pid in (pid, ppid)}
        os.killpg(bench.pid, sig)
        _, err = bench.communicate(timeout=60)
    finally:
        if bench.poll() is None:
            bench.kill()
        seen |= {pid for *_, pid, ppid in jobs.calls() for pid in (pid, ppid)}
        # Engines and workers: none may outlive bench (SIGKILL: their death signals).
        with contextlib.suppress(AssertionError):
            _wait_for(lambda: not _alive(seen - {os.getpid()}), timeout=10)
        left = _alive(seen - {os.getpid()})
        for pid in left:
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).kill()
    assert not left, f"processes outlived bench: {left}"
    if sig == signal.SIGKILL:
        assert bench.returncode == -9
    else:
        assert bench.returncode == 130, err
        assert ResultFile.load(jobs.out("run")).interrupted
    cells = journal.read(log)[1]
    assert [(c.engine, c.corpus) for c in cells] == [("good", "alpha")]
    hang.unlink()
    jobs.log.unlink()
    assert main([*argv, "--resume", str(jobs.out("run"))]) == 0
    result = ResultFile.load(jobs.out("run"))
    assert {(r.engine, r.corpus) for r in result.rows} == \
        {(e, c) for e in ("good", "slow") for c in ("alpha", "beta")}
    kept = next(r for r in result.rows if (r.engine, r.corpus) == ("good", "alpha"))
    assert kept.queries == cells[0].rows[0].queries, "the finished cell was kept, not rerun"
    assert ("alpha", "good") not in {(c, n) for c, n, *_ in jobs.calls()}


@pytest.mark.hostile
def test_a_second_signal_kills_stubborn_engines_at_once(jobs: Jobs) -> None:
    hang = jobs.tmp / "hang-now"
    hang.touch()
    argv = jobs.argv(jobs.spec("stubborn"), jobs=2, tag="run", extra=("--corpus", "alpha,beta"))
    bench = _bench(argv, {"JOBS_HANG": str(hang)})
    seen: set[int] = set()
    try:
        _wait_for(lambda: {c for c, *_ in jobs.calls()} >= {"alpha", "beta"}
                  and len(jobs.calls()) >= 4)  # both indexes and both first queries
        time.sleep(0.3)
        os.killpg(bench.pid, signal.SIGINT)
        time.sleep(0.5)
        began = time.monotonic()
        os.killpg(bench.pid, signal.SIGINT)  # now: without it, INT and TERM wait 3 s each
        _, err = bench.communicate(timeout=60)
        took = time.monotonic() - began
    finally:
        if bench.poll() is None:
            bench.kill()
        seen = {pid for *_, pid, ppid in jobs.calls() for pid in (pid, ppid)} - {os.getpid()}
        left = _alive(seen)
        for pid in left:
            with contextlib.suppress(psutil.Error):
                psutil.Process(pid).kill()
    assert bench.returncode == 130, err
    assert took < 4, f"the second signal took {took:.1f}s to stop the engines"
    assert not left, f"processes outlived bench: {left}"


def test_jobs_auto_runs_one_cell_per_cpu(jobs: Jobs, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    engines = (jobs.spec("good"), jobs.spec("other"))
    assert main(jobs.argv(*engines, jobs="auto", tag="auto")) == 0
    data = json.loads(jobs.out("auto").read_text())
    assert data["jobs"] == 2  # what `auto` resolved to, recorded
    flags = {f for r in data["rows"] for f in r["flags"] if f.startswith("concurrent=")}
    assert flags <= {"concurrent=2"} and flags, "two CPUs: cells ran two at a time"
    ResultFile.load(jobs.out("auto"))


def test_jobs_values() -> None:
    assert parse_jobs("1") == 1 and parse_jobs("4") == 4 and parse_jobs("auto") >= 1
    for bad in ("0", "-2", "x", ""):
        with pytest.raises(UsageError):
            parse_jobs(bad)
