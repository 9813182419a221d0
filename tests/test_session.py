"""Persistent engines: JSON lines, deadlines, restarts, giving up, clean close."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import alive, children, fake, new_children

from codesearch_bench.engine.session import EngineSession, Reply
from codesearch_bench.errors import EngineUnavailable


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    before = {c.pid for c in children()}
    yield
    left = new_children(before)
    assert not left, f"left behind (pid, status): {left}"


def answer(reply: Reply) -> dict[str, object]:
    assert reply.error is None, reply.error
    assert reply.line is not None
    return json.loads(reply.line)


def session(*flags: str, grace: float = 0.5) -> EngineSession:
    return EngineSession(fake("persistent_echo.py", *flags), owner="engine 'echo'", grace=grace)


def test_request_and_response() -> None:
    with session() as s:
        payload = {"query": 'x"; rm -rf ~; echo "', "k": 5, "n": 15, "per_file": 1}
        first = s.request(payload, timeout=10)
        out = answer(first)
        assert out["request"] == {"id": 1, **payload}  # the sequence number rides along
        assert first.id == 1 and not first.verified  # this engine does not echo it
        assert out["hits"] == [{"path": "echo.py", "start": 1, "end": 1,
                                "text": 'x"; rm -rf ~; echo "'}]
        assert first.latency_s > 0 and not first.restarted
        second = answer(s.request({"query": "ünïcode ✓"}, timeout=10))
        assert second["hits"][0]["text"] == "ünïcode ✓"  # type: ignore[index]
        assert second["pid"] == out["pid"]  # one process for the whole run
        assert s.restarts == 0 and s.down_reason is None
        pid = int(out["pid"])  # type: ignore[call-overload]
    assert not alive(pid)


def test_close_leaves_no_process(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    s = session("--starts", str(starts))
    s.start()
    pid = int(answer(s.request({"query": "a"}, timeout=10))["pid"])  # type: ignore[call-overload]
    assert alive(pid)
    s.close()
    assert not alive(pid)
    assert s.returncode is None  # no process any more
    s.close()  # closing twice is harmless
    assert starts.read_text().split() == [str(pid)]


def test_deadline_fails_the_query_and_restarts(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    with session("--starts", str(starts)) as s:
        first_pid = answer(s.request({"query": "warm"}, timeout=10))["pid"]
        began = time.monotonic()
        hung = s.request({"query": "please HANG"}, timeout=0.5)
        assert time.monotonic() - began < 0.5 + 3
        assert hung.line is None
        assert hung.error == "no response within 0.5s; killed"
        assert hung.latency_s >= 0.5
        assert not alive(int(first_pid))  # type: ignore[call-overload]
        after = s.request({"query": "next"}, timeout=10)
        assert after.restarted
        assert answer(after)["pid"] != first_pid
        assert s.restarts == 1 and s.down_reason is None
    assert len(starts.read_text().split()) == 2


def test_crash_then_next_query_works() -> None:
    with session() as s:
        crashed = s.request({"query": "CRASH now"}, timeout=10)
        assert crashed.error is not None
        assert "engine exited without answering (status 3)" in crashed.error
        assert "crashing as asked" in crashed.error  # stderr tail
        ok = s.request({"query": "fine"}, timeout=10)
        assert answer(ok)["hits"][0]["text"] == "fine"  # type: ignore[index]
        assert ok.restarted and s.restarts == 1
        # A success resets the count: one more crash is restarted again, not fatal.
        assert s.request({"query": "CRASH"}, timeout=10).error is not None
        assert answer(s.request({"query": "fine again"}, timeout=10))
        assert s.restarts == 2 and s.down_reason is None


def test_failing_right_after_restart_is_down() -> None:
    with session() as s:
        assert s.request({"query": "CRASH 1"}, timeout=10).error is not None
        again = s.request({"query": "CRASH 2"}, timeout=10)
        assert again.error is not None and again.restarted
        assert s.down_reason is not None
        assert s.down_reason.startswith("failed again right after a restart")
        assert s.restarts == 1
        began = time.monotonic()
        later = s.request({"query": "fine"}, timeout=10)
        assert time.monotonic() - began < 0.1
        assert later.line is None and later.latency_s == 0.0
        assert later.error == f"engine is down: {s.down_reason}"
        assert s.restarts == 1  # no further restarts once down


def test_never_answering_engine_goes_down_fast() -> None:
    with session("--never-answer") as s:
        began = time.monotonic()
        first = s.request({"query": "a"}, timeout=0.3)
        second = s.request({"query": "b"}, timeout=0.3)
        assert first.error == second.error == "no response within 0.3s; killed"
        assert s.down_reason is not None
        for q in "cdefgh":
            assert s.request({"query": q}, timeout=0.3).error is not None
        assert time.monotonic() - began < 0.3 * 2 + 5  # not 8 deadlines


def test_partial_line_is_an_error() -> None:
    with session() as s:
        partial = s.request({"query": "PARTIAL"}, timeout=10)
        assert partial.line is None
        assert partial.error is not None and "mid-line (partial response)" in partial.error
        assert answer(s.request({"query": "whole"}, timeout=10))
        assert s.restarts == 1


def test_chatty_stderr_never_blocks() -> None:
    with session("--chatty") as s:  # ~200 KB of stderr per request, past any pipe buffer
        for i in range(5):
            assert answer(s.request({"query": f"q{i}"}, timeout=10))
        assert s.restarts == 0
    assert s.stderr_tail(1).startswith("debug 1999: ")  # close() drained stderr to the end


def test_oversize_line_is_an_error() -> None:
    s = EngineSession(fake("persistent_echo.py"), max_line=300, grace=0.5)
    with s:
        big = s.request({"query": "y" * 500}, timeout=10)
        assert big.error == "response line longer than 300 bytes"
        assert s.request({"query": "ok"}, timeout=10).error is None


def test_peak_rss_is_sampled() -> None:
    s = EngineSession(fake("persistent_echo.py"), sample_interval=0.01, grace=0.5)
    with s:
        answer(s.request({"query": "a"}, timeout=10))
        time.sleep(0.1)
    assert s.peak_rss_bytes > 1024 * 1024


def test_missing_executable() -> None:
    s = EngineSession(["no-such-persistent-engine", "serve"], owner="engine 'x'",
                      requires="cargo install x")
    with pytest.raises(EngineUnavailable) as info:
        s.start()
    assert "'no-such-persistent-engine' not found" in str(info.value)
    assert "cargo install x" in str(info.value)


@pytest.mark.parametrize("ignore_term", [False, True])
def test_close_kills_grandchildren(tmp_path: Path, ignore_term: bool) -> None:
    pidfile = tmp_path / "pids"
    args = [str(pidfile)] + (["--ignore-term"] if ignore_term else [])
    s = EngineSession(fake("sleeper.py", *args), grace=0.3)
    s.start()
    deadline = time.monotonic() + 10
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    pids = [int(p) for p in pidfile.read_text().split()]
    assert all(alive(pid) for pid in pids)
    s.close()
    for pid in pids:  # the same-group grandchild and the one that called setsid
        assert not alive(pid), pid
