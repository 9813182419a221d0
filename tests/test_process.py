"""One-shot runs: deadlines kill the whole tree, output is capped, RSS is measured."""

from __future__ import annotations

import json
import re
import resource
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import alive, children, fake, new_children

from codesearch_bench.errors import EngineUnavailable
from codesearch_bench.processes import command

MiB = 1024 * 1024


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    """Every test here must leave no child of the test process, running or zombie."""
    before = {c.pid for c in children()}
    yield
    left = new_children(before)
    assert not left, f"left behind (pid, status): {left}"


def read_pids(pidfile: Path) -> list[int]:
    return [int(line) for line in pidfile.read_text().split()]


def test_ok_run() -> None:
    m = command.run(fake("oneshot_json.py", "a b", 'x"; rm -rf ~; echo "'), timeout=30)
    assert m.ok and m.returncode == 0 and not m.timed_out and not m.killed
    assert json.loads(m.stdout)["argv"] == ["a b", 'x"; rm -rf ~; echo "']
    assert m.stderr == b""
    assert not m.stdout_truncated and not m.stderr_truncated
    assert m.wall_s > 0
    assert m.peak_rss_bytes is not None and m.peak_rss_bytes > MiB
    assert m.rss_method == command.RSS_METHOD
    assert m.leftovers_killed == 0
    assert m.argv[-1] == 'x"; rm -rf ~; echo "'


def test_stdin_env_and_cwd(tmp_path: Path) -> None:
    m = command.run(fake("oneshot_json.py"), timeout=30, stdin=b"fed on stdin",
                    env={"FAKE_ONE": "1"}, cwd=str(tmp_path))
    out = json.loads(m.stdout)
    assert out["stdin"] == "fed on stdin"
    assert out["env"] == {"FAKE_ONE": "1"}
    assert Path(out["cwd"]).resolve() == tmp_path.resolve()


def test_failing_engine_keeps_stderr() -> None:
    m = command.run(fake("crasher.py"), timeout=30)
    assert m.returncode == 3 and not m.ok and not m.timed_out
    assert m.describe_failure() == "exited with status 3"
    assert m.stderr_tail(2).splitlines() == [
        "crasher: stderr line 29", "crasher: fatal: index is corrupt"]
    assert len(m.stderr_tail().splitlines()) == 15


def test_killed_by_signal_is_described() -> None:
    m = command.run([*fake("oneshot_json.py")[:1], "-c", "import os; os.kill(os.getpid(), 9)"],
                    timeout=30)
    assert m.returncode == -9
    assert m.describe_failure() == "killed by signal 9"


@pytest.mark.parametrize("ignore_term", [False, True])
def test_timeout_kills_whole_tree(tmp_path: Path, ignore_term: bool) -> None:
    pidfile = tmp_path / "pids"
    args = [str(pidfile)] + (["--ignore-term"] if ignore_term else [])
    before = {c.pid for c in children()}
    start = time.monotonic()
    m = command.run(fake("sleeper.py", *args), timeout=1.5, grace=0.5)
    elapsed = time.monotonic() - start
    assert m.timed_out and not m.ok
    assert m.killed is ignore_term  # SIGKILL only when TERM was ignored
    assert m.describe_failure().startswith("timed out after")
    assert m.stdout == b"ready\n"
    assert elapsed < 1.5 + 0.5 * 2 + 5
    pids = read_pids(pidfile)
    assert len(pids) == 2
    for pid in pids:  # the same-group grandchild and the one that called setsid
        assert not alive(pid), pid
    assert not new_children(before)  # all reaped: not even a zombie is left


def test_leftovers_of_an_exited_engine_are_killed(tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    before = {c.pid for c in children()}
    m = command.run(fake("sleeper.py", str(pidfile), "--exit"), timeout=30, grace=0.5)
    assert m.ok and not m.timed_out
    assert m.leftovers_killed == 2
    for pid in read_pids(pidfile):
        assert not alive(pid), pid
    assert not new_children(before)


def test_stdout_cap_keeps_head_and_bounds_memory() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    m = command.run(fake("garbage.py", "huge", "100"), timeout=60, max_stdout=MiB)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert m.ok
    assert m.stdout_truncated and not m.stderr_truncated
    assert len(m.stdout) == MiB
    assert m.stdout.startswith(b"x" * 1023 + b"\n")
    assert after - before < 32 * MiB  # 100 MiB went through the pipe, not into memory


def test_stderr_keeps_the_tail() -> None:
    m = command.run(fake("garbage.py", "stderr", "2"), timeout=60, max_stderr=64 * 1024)
    assert m.ok and m.stderr_truncated and not m.stdout_truncated
    assert len(m.stderr) == 64 * 1024
    assert m.stderr.endswith(b"\nthe last line\n")
    assert m.stderr_tail(1) == "the last line"


def test_missing_executable_names_binary_and_requires() -> None:
    with pytest.raises(EngineUnavailable) as info:
        command.run(["no-such-engine-binary-xyz", "--query", "q"], timeout=5,
                    owner="engine 'acme'", requires="pip install acme-search")
    message = str(info.value)
    assert "engine 'acme'" in message
    assert "'no-such-engine-binary-xyz' not found" in message
    assert "it requires: pip install acme-search" in message
    assert info.value.exit_code == 4


def test_missing_working_directory(tmp_path: Path) -> None:
    with pytest.raises(EngineUnavailable, match=r"working directory .* does not exist"):
        command.run(fake("oneshot_json.py"), timeout=5, cwd=str(tmp_path / "gone"))


def test_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "engine"
    script.write_text("#!/bin/sh\necho hi\n")
    with pytest.raises(EngineUnavailable, match="is not executable"):
        command.run([str(script)], timeout=5)


def _kernel_maxrss(argv: list[str]) -> int | None:
    time_bin = Path("/usr/bin/time")
    if not time_bin.exists():
        return None
    done = subprocess.run([str(time_bin), "-v", *argv], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL,
                          timeout=60, check=True)
    match = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    return int(match.group(1)) * 1024 if match else None


def test_peak_rss_matches_the_kernel() -> None:
    argv = fake("hog.py", "200")
    m = command.run(argv, timeout=60)
    assert m.ok and m.stdout.strip() == str(200 * MiB).encode()
    assert m.peak_rss_bytes is not None
    expected = _kernel_maxrss(argv) or 200 * MiB
    assert abs(m.peak_rss_bytes - expected) <= 0.10 * expected, (m.peak_rss_bytes, expected)
    assert m.peak_rss_bytes >= 200 * MiB


def test_timeout_returns_promptly_with_no_grace_needed() -> None:
    start = time.monotonic()
    m = command.run([*fake("oneshot_json.py")[:1], "-c", "import time; time.sleep(60)"],
                    timeout=0.3, grace=2.0)
    assert m.timed_out and not m.killed
    assert time.monotonic() - start < 2.0



def test_peak_rss_sums_the_tree() -> None:
    # Two 100 MiB hogs at once under one parent: the kernel's ru_maxrss sees ~100 MiB
    # (one child at a time), the sampled tree sees both together.
    hog = fake("hog.py")[1]
    code = ("import subprocess, sys; "
            f"ps = [subprocess.Popen([sys.executable, {hog!r}, '100']) for _ in range(2)]; "
            "[p.wait() for p in ps]")
    m = command.run([fake("hog.py")[0], "-c", code], timeout=60)
    assert m.ok
    assert m.peak_rss_bytes is not None and m.peak_rss_bytes >= 180 * MiB
