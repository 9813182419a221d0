"""The fault suite: engines and inputs that misbehave on purpose.

Every case checks that the run completes, the faulty engine's row is a gap or
a flag with a clear message, the good engine's row is intact, the JSON is
written, and no process is left running.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from archives import make_tar
from minicorpus import make_corpus

from codesearch_bench.cli import main
from codesearch_bench.results.schema import ResultFile, Row

FAULTY = Path(__file__).resolve().parent / "fakes" / "faulty.py"
PARSE = {"format": "json", "results": "hits", "start": "start", "end": "end", "text": "text"}


def spec(tmp: Path, name: str, mode: str, *, persistent: bool = False, **extra: object) -> Path:
    if persistent:
        search = {"command": [sys.executable, str(FAULTY), "--persistent", mode], "timeout": "2s"}
    else:
        search = {"command": [sys.executable, str(FAULTY), mode, "{{query}}"], "timeout": "2s"}
    data: dict[str, object] = {"name": name, "spans": True, "tokens": True, "search": search,
                               "parse": PARSE, "mode": "persistent" if persistent else "oneshot"}
    data.update(extra)
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def descendants() -> set[int]:
    """Every process under the test's, but the guardian bench starts once and keeps (the
    first run in a test process starts it: it is not a process the run left behind)."""
    from codesearch_bench.processes import guardian

    out = set()
    for p in psutil.Process().children(recursive=True):
        try:
            if p.pid != guardian.pid():
                out.add(p.pid)
        except psutil.NoSuchProcess:
            continue
    return out


class Bench:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.toml = make_corpus(tmp)
        self.out = tmp / "out.json"
        self.good = spec(tmp, "good", "ok")

    def run(self, *engines: Path, extra: tuple[str, ...] = ()) -> tuple[int, ResultFile]:
        before = descendants()
        args = ["compare", "--corpora-file", str(self.toml), "--work", str(self.tmp / "work"),
                "--json", str(self.out), "--engine", str(self.good)]
        for e in engines:
            args += ["--engine", str(e)]
        code = main([*args, *extra])
        time.sleep(0.05)
        left = descendants() - before
        assert not left, f"processes left running: {left}"
        assert self.out.is_file(), "the JSON must be written whatever happened"
        return code, ResultFile.model_validate_json(self.out.read_text())

    def good_row(self, result: ResultFile) -> Row:
        row = next(r for r in result.rows if r.engine == "good" and r.headline)
        assert row.errors == 0 and not row.flags
        # Its answer (pkg/config.py) is right for two of the four queries.
        assert row.metrics["file.recall@5"].mean == 0.5 and len(row.queries) == 4
        return row

    def row(self, result: ResultFile, name: str) -> Row:
        return next(r for r in result.rows if r.engine == name and r.headline)


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    return Bench(tmp_path)


def test_index_hangs(bench: Bench) -> None:
    bad = spec(bench.tmp, "bad", "ok",
               index={"command": [sys.executable, str(FAULTY), "index-hang"], "timeout": "1s"})
    code, result = bench.run(bad)
    assert code == 1
    bench.good_row(result)
    assert not [r for r in result.rows if r.engine == "bad"]
    (failure,) = result.failures
    assert failure.stage == "index" and "timed out" in failure.message


def test_search_hangs_oneshot(bench: Bench) -> None:
    code, result = bench.run(spec(bench.tmp, "bad", "hang"))
    assert code == 1  # an engine that answered nothing is a failed combination
    assert "all 4 queries failed" in result.failures[0].message
    bench.good_row(result)
    row = bench.row(result, "bad")
    assert "errors=4" in row.flags
    errors = [q.error or "" for q in row.queries]
    assert all("timed out" in e for e in errors[:3])
    assert "3 queries in a row" in errors[3]  # the rest fail fast instead of hanging


def test_search_hangs_persistent(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "hang", persistent=True))
    bench.good_row(result)
    row = bench.row(result, "bad")
    assert "errors=4" in row.flags
    assert "no response within" in (row.queries[0].error or "")
    assert "engine is down" in (row.queries[-1].error or "")


def test_crash_on_one_query_oneshot(bench: Bench) -> None:
    code, result = bench.run(spec(bench.tmp, "bad", "crash-on-terminal"))
    assert code == 0
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "errors=1" in row.flags
    failed = [q for q in row.queries if q.error]
    assert len(failed) == 1 and "status 139" in (failed[0].error or "")
    assert "segfault pretending" in (failed[0].error or "")


def test_crash_on_one_query_persistent(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "crash-on-terminal", persistent=True))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "errors=1" in row.flags and row.search.restarts == 1
    assert sum(q.error is None for q in row.queries) == 3


def test_exit_zero_with_garbage(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "garbage"))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "errors=4" in row.flags
    assert "unparseable output" in (row.queries[0].error or "")


def test_prints_100_mb(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "huge"))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "errors=4" in row.flags
    assert "cut off" in (row.queries[0].error or "")


def test_non_utf8_output(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "nonutf8"))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "undecodable=8" in row.flags  # two bytes per query, four queries
    assert row.metrics["file.recall@5"].mean == bench.good_row(result).metrics[
        "file.recall@5"].mean


def test_zero_based_lines_claiming_one(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "zero"))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "!! line_base=4" in row.flags


def test_paths_outside_the_tree_are_dropped_and_never_read(bench: Bench,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           ) -> None:
    secret = bench.tmp / "secret.txt"
    secret.write_text("secret token " * 5000 + "\n")
    monkeypatch.setenv("FAULTY_OUTSIDE", str(secret))
    bad = spec(bench.tmp, "bad", "outside", tokens=False, text_from_corpus=True)
    _, result = bench.run(bad)
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "outside=8" in row.flags and "*" in row.flags
    # Only pkg/config.py lines 4-7 were priced: a few dozen tokens, not the secret file.
    assert all(q.tokens and q.tokens["tokens@20"] < 100 for q in row.queries)
    assert all(q.slots[0].path == "pkg/config.py" for q in row.queries)


def test_leaves_a_grandchild_running(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "grandchild"))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "leftovers=4" in row.flags  # one per query, each killed and reaped


def test_persistent_dies_mid_run(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "die-after-2", persistent=True))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "errors=1" in row.flags and row.search.restarts == 1
    assert "engine exited" in (row.queries[2].error or "")


def test_persistent_never_answers(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "never-answer", persistent=True))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "errors=4" in row.flags


def test_persistent_partial_line(bench: Bench) -> None:
    _, result = bench.run(spec(bench.tmp, "bad", "partial", persistent=True))
    row = bench.row(result, "bad")
    bench.good_row(result)
    assert "partial response" in (row.queries[0].error or "")


@pytest.mark.parametrize("change, words, code", [
    ({"spnas": True}, "did you mean `spans`", 2),
    ({"search": {"command": ["x", "{{qeury}}"]}}, "unknown template variable qeury", 2),
    ({"search": {"command": ["x", "{{ ''.__class__ }}"]}}, "sandbox", 2),
])
def test_broken_specs_are_gaps(bench: Bench, change: dict, words: str, code: int) -> None:
    bad = spec(bench.tmp, "bad", "ok")
    data = json.loads(bad.read_text())
    data.update(change)
    bad.write_text(json.dumps(data))
    got, result = bench.run(bad, extra=("--keep-going",))
    assert got == code
    bench.good_row(result)
    (failure,) = result.failures
    assert failure.stage == "spec" and words in failure.message and str(bad) in failure.message


def test_missing_binary(bench: Bench) -> None:
    bad = spec(bench.tmp, "bad", "ok", requires="pip install nothing-here")
    data = json.loads(bad.read_text())
    data["search"]["command"] = ["definitely-not-a-binary-xyz", "{{query}}"]
    bad.write_text(json.dumps(data))
    code, result = bench.run(bad, extra=("--keep-going",))
    assert code == 4  # as when it stops the run (below): the program is missing
    bench.good_row(result)
    (failure,) = result.failures
    assert failure.stage == "program" and failure.corpus == "*"
    assert "definitely-not-a-binary-xyz" in failure.message
    assert "pip install nothing-here" in failure.message


def test_a_missing_binary_stops_the_run_before_any_engine(
        bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    bad = spec(bench.tmp, "bad", "ok", requires="pip install nothing-here")
    data = json.loads(bad.read_text())
    data["search"]["command"] = ["definitely-not-a-binary-xyz", "{{query}}"]
    bad.write_text(json.dumps(data))
    code = main(["compare", "--corpora-file", str(bench.toml), "--work", str(bench.tmp / "w"),
                 "--json", str(bench.out), "--engine", str(bench.good), "--engine", str(bad)])
    assert code == 4  # EngineUnavailable: the program is not there
    err = capsys.readouterr().err
    assert "definitely-not-a-binary-xyz" in err and "before any engine ran" in err
    assert not bench.out.exists()


def test_a_broken_spec_stops_the_run_before_any_engine(
        bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    """Found in the first second, not after every other engine has run."""
    bad = spec(bench.tmp, "bad", "ok", spnas=True)
    code = main(["compare", "--corpora-file", str(bench.toml), "--work", str(bench.tmp / "w"),
                 "--json", str(bench.out), "--engine", str(bench.good), "--engine", str(bad)])
    assert code == 2
    err = capsys.readouterr().err
    assert "found before any engine ran" in err and "did you mean `spans`" in err
    assert "--keep-going" in err and not bench.out.exists()


def test_malformed_corpora_toml(bench: Bench, capsys: pytest.CaptureFixture[str]) -> None:
    """Nothing to run on: the run stops before any engine starts, with the file named."""
    bench.toml.write_text("[corpus.mini\nsource = ")
    code = main(["compare", "--corpora-file", str(bench.toml), "--work", str(bench.tmp / "w"),
                 "--json", str(bench.out), "--engine", str(bench.good)])
    assert code == 3
    err = capsys.readouterr().err
    assert "not valid TOML" in err and str(bench.toml) in err
    assert not bench.out.exists()


def second_corpus(bench: Bench, body: str) -> None:
    with bench.toml.open("a") as fh:
        fh.write(body)


def test_malformed_query_file_spares_other_corpora(bench: Bench) -> None:
    (bench.tmp / "broken.jsonl").write_text('{"id": "x", "query": \n')
    (bench.tmp / "p2").mkdir()
    (bench.tmp / "p2" / "a.py").write_text("x = 1\n")
    second_corpus(bench, '[corpus.other]\nsource = "path"\npath = "p2"\n'
                         'queries = "broken.jsonl"\ndefault = true\n')
    code, result = bench.run(extra=("--keep-going",))
    assert code == 3
    bench.good_row(result)
    assert {f.corpus for f in result.failures} == {"other"}
    assert "broken.jsonl:1: not JSON" in result.failures[0].message


def test_sha256_mismatch_spares_other_corpora(bench: Bench) -> None:
    make_tar(bench.tmp / "p.tar.gz", {"a.py": b"x = 1\n"})
    second_corpus(bench, f'[corpus.other]\nsource = "path"\npath = "p.tar.gz"\n'
                         f'sha256 = "{"0" * 64}"\nqueries = "mini.jsonl"\ndefault = true\n')
    code, result = bench.run(extra=("--keep-going",))
    assert code == 3
    bench.good_row(result)
    assert "sha256 mismatch" in result.failures[0].message


@pytest.mark.parametrize("member", [{"../escape.py": b"x"}, {"link": ("symlink", "/etc")}])
def test_malicious_archive_spares_other_corpora(bench: Bench, member: dict) -> None:
    archive = make_tar(bench.tmp / "evil.tar.gz", {"a.py": b"x = 1\n", **member})
    sha = hashlib.sha256(archive.read_bytes()).hexdigest()
    second_corpus(bench, f'[corpus.other]\nsource = "path"\npath = "evil.tar.gz"\n'
                         f'sha256 = "{sha}"\nqueries = "mini.jsonl"\ndefault = true\n')
    code, result = bench.run(extra=("--keep-going",))
    assert code == 3
    bench.good_row(result)
    assert "refusing to unpack" in result.failures[0].message
    assert not (bench.tmp / "escape.py").exists()


def test_query_with_shell_metacharacters_is_one_argument(tmp_path: Path) -> None:
    record = tmp_path / "argv.json"
    script = tmp_path / "argv.py"
    script.write_text("import json, sys\n"
                      f"json.dump(sys.argv[1:], open({str(record)!r}, 'w'))\nprint('[]')\n")
    engine = tmp_path / "argv.json.spec"
    engine.write_text(json.dumps({"name": "argv", "search": {
        "command": [sys.executable, str(script), "--q", "{{query}}"]},
        "parse": {"format": "json"}}))
    (tmp_path / "root").mkdir()
    evil = 'x"; rm -rf ~; echo "$(touch pwned)`touch pwned2`'
    assert main(["probe", "--engine", str(engine), "--root", str(tmp_path / "root"),
                 "--text", evil, "--work", str(tmp_path / "w")]) == 0
    assert json.loads(record.read_text()) == ["--q", evil]
    assert not list(tmp_path.rglob("pwned*"))


def test_ctrl_c_mid_compare_then_resume(bench: Bench) -> None:
    """A real bench process gets SIGINT while an engine is mid-query, then resumes."""
    marker = bench.tmp / "interrupt-now"
    pids = bench.tmp / "pids"
    slow = spec(bench.tmp, "slow", "sigint-parent", persistent=True)
    argv = [sys.executable, "-m", "codesearch_bench", "compare", "--corpora-file",
            str(bench.toml), "--work", str(bench.tmp / "work"), "--json", str(bench.out),
            "--engine", str(bench.good), "--engine", str(slow)]
    env = {**os.environ, "FAULTY_MARKER": str(marker), "FAULTY_PIDS": str(pids)}
    marker.touch()
    first = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 130, first.stderr
    partial = ResultFile.model_validate_json(bench.out.read_text())
    assert partial.interrupted
    assert {r.engine for r in partial.rows} == {"good"}  # only the finished cell
    for pid in pids.read_text().split():
        assert not psutil.pid_exists(int(pid)) or psutil.Process(int(pid)).status() == \
            psutil.STATUS_ZOMBIE, f"engine {pid} survived the interrupt"
    marker.unlink()
    second = subprocess.run([*argv, "--resume", str(bench.out)], env=env, capture_output=True,
                            text=True, timeout=120)
    assert second.returncode == 0, second.stderr
    resumed = ResultFile.model_validate_json(bench.out.read_text())
    assert not resumed.interrupted
    assert {r.engine for r in resumed.rows} == {"good", "slow"}
    before = [q.latency_s for r in partial.rows for q in r.queries]
    after = [q.latency_s for r in resumed.rows if r.engine == "good" for q in r.queries]
    assert before == after  # the finished cell was kept, not run again
