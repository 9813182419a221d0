"""The hostile suite, class "protocol": persistent engines that break one line per request.

The invariant: either every answer is attributed to the request it answers
(the engine echoes the request's `id` and bench verifies it), or the lines
that could have shifted an answer are counted (`Reply.unsolicited`,
`EngineSession.unsolicited_lines`) so the row says `!!`. Never a silently
wrong score. Each answer of the hostile engine names the query it answers,
which is how these tests see attribution.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import FAKES, alive, children, fake, new_children
from minicorpus import QUERIES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.engine.session import EngineSession, Reply
from codesearch_bench.results.schema import ResultFile

pytestmark = pytest.mark.hostile

TEXTS = [str(q["query"]) for q in QUERIES]
HOSTILE = FAKES / "hostile_engine.py"


@pytest.fixture(autouse=True)
def no_leftovers() -> Iterator[None]:
    before = {c.pid for c in children()}
    yield
    left = new_children(before)
    for pid, _ in left:
        with contextlib.suppress(ProcessLookupError, ChildProcessError):
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    assert not left, f"left behind (pid, status): {left}"


def serve(*flags: str, texts: list[str] = TEXTS, timeout: float = 2.0,
          ) -> tuple[list[Reply], EngineSession]:
    """Every text through one session, then close it (the close counts trailing lines)."""
    s = EngineSession(fake("hostile_engine.py", *flags), owner="engine 'hostile'", grace=0.5)
    try:
        s.start()
        replies = [s.request({"query": t}, timeout=timeout) for t in texts]
    finally:
        s.close()
    return replies, s


def answered(reply: Reply) -> str | None:
    """The query this reply's line answers, None for an error or a line that is no answer."""
    if reply.line is None:
        return None
    data = json.loads(reply.line)
    return data.get("query") if isinstance(data, dict) else None


def wrongly_credited(replies: list[Reply]) -> list[int]:
    return [i for i, r in enumerate(replies) if r.error is None and answered(r) != TEXTS[i]]


def test_a_well_behaved_engine_is_verified_and_clean() -> None:
    replies, s = serve("--echo-id")
    assert [answered(r) for r in replies] == TEXTS
    assert all(r.verified for r in replies)
    assert [r.unsolicited for r in replies] == [0, 0, 0, 0]
    assert s.unsolicited_lines == 0 and s.restarts == 0


def test_double_answers_with_ids_are_attributed_by_id() -> None:
    replies, s = serve("--echo-id", "--twice", "0.05")
    assert wrongly_credited(replies) == []
    assert all(r.verified and r.error is None for r in replies)
    # Each late copy arrives while the next request waits and is discarded by its id.
    assert [r.unsolicited for r in replies] == [0, 1, 1, 1]
    assert s.unsolicited_lines == 4  # the last copy came during close
    assert s.restarts == 0


def test_double_answers_without_ids_are_never_silent() -> None:
    """The issue's engine: every later answer shifted by one; the count must say so."""
    replies, s = serve("--twice", "0.05")
    assert 1 in wrongly_credited(replies)  # the attack is real: request 2 got answer 1 again
    assert not any(r.verified for r in replies)
    # Eight lines for four requests. Which request's drain sees a stray line is a race
    # (it may arrive just after), but the session's count, complete after close, is not.
    assert s.unsolicited_lines == 4


@pytest.mark.parametrize("flag", ["--wrong-id", "--string-id"])
def test_an_answer_with_another_id_is_never_credited(flag: str) -> None:
    replies, s = serve(flag, timeout=0.5)
    assert [r.line for r in replies] == [None] * 4
    assert replies[0].error == "no response within 0.5s; killed (1 line with another id discarded)"
    assert replies[0].unsolicited == 1
    assert replies[1].restarted and s.down_reason is not None
    assert replies[2].error == replies[3].error == f"engine is down: {s.down_reason}"
    assert s.unsolicited_lines == 2


def test_ids_are_a_sequence_never_reused_across_restarts() -> None:
    replies, s = serve("--echo-id", "--partial-on", "terminal")
    assert [r.id for r in replies] == [1, 2, 3, 4]
    assert replies[1].error is not None and "partial response" in replies[1].error
    assert replies[2].restarted and s.restarts == 1
    assert [json.loads(r.line)["id"] for r in replies if r.line] == [1, 3, 4]
    assert [answered(r) for r in replies] == [TEXTS[0], None, TEXTS[2], TEXTS[3]]


def test_banner_with_ids_costs_one_answer_and_is_counted() -> None:
    replies, s = serve("--banner", "--echo-id")
    assert replies[0].line == b'{"banner": "hostile engine ready"}'
    assert not replies[0].verified  # nothing told bench yet that this engine echoes ids
    assert [answered(r) for r in replies[1:]] == TEXTS[1:]
    assert all(r.verified for r in replies[1:])
    assert s.unsolicited_lines == 1


def test_banner_without_ids_is_counted() -> None:
    replies, s = serve("--banner")
    assert replies[0].line == b'{"banner": "hostile engine ready"}'
    assert s.unsolicited_lines == 1  # n + 1 lines for n requests: the row says so


@pytest.mark.parametrize("ids", [True, False])
def test_two_lines_per_answer(ids: bool) -> None:
    replies, s = serve("--extra-line", *(["--echo-id"] if ids else []))
    assert s.unsolicited_lines == 4  # one extra line per answer
    if ids:  # the extra line has no id: once ids are known, it is discarded
        assert wrongly_credited(replies) == [] and all(r.verified for r in replies)
        assert [r.unsolicited for r in replies] == [0, 1, 1, 1]


@pytest.mark.parametrize("ids", [True, False])
def test_an_answer_after_its_deadline_is_never_credited_later(ids: bool) -> None:
    replies, s = serve("--late", "parsed:1.0", *(["--echo-id"] if ids else []), timeout=0.5)
    assert replies[0].error == "no response within 0.5s; killed"
    assert replies[1].restarted and s.restarts == 1
    assert [answered(r) for r in replies[1:]] == TEXTS[1:]  # the late one died with its engine
    assert s.unsolicited_lines == 0


def test_out_of_order_answers_are_sorted_out_by_id() -> None:
    replies, s = serve("--out-of-order", "--echo-id")
    assert wrongly_credited(replies) == [] and all(r.verified for r in replies)
    assert [r.unsolicited for r in replies] == [0, 1, 1, 1]
    assert s.unsolicited_lines == 3


def test_a_partial_line_then_death_fails_that_query_only() -> None:
    replies, s = serve("--partial-on", "parsed")
    assert replies[0].line is None
    assert replies[0].error is not None and "mid-line (partial response)" in replies[0].error
    assert [answered(r) for r in replies[1:]] == TEXTS[1:] and s.restarts == 1


def test_an_engine_that_never_reads_is_killed_at_the_write_deadline(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    s = EngineSession(fake("hostile_engine.py", "--no-read", "--pidfile", str(pids)), grace=0.5)
    with s:
        began = time.monotonic()
        reply = s.request({"query": "x" * (1 << 20)}, timeout=0.5)  # past any pipe buffer
        took = time.monotonic() - began
    assert reply.error == "the engine did not read its request within 0.5s; killed"
    assert took < 0.5 + 0.5
    assert not alive(int(pids.read_text()))


def test_one_deadline_covers_the_write_and_the_wait() -> None:
    """A slow reader must not get the request's timeout twice (once writing, once waiting)."""
    s = EngineSession(fake("hostile_engine.py", "--slow-read", "0.7", "--hang-on", "1"),
                      grace=0.5)
    with s:
        began = time.monotonic()
        reply = s.request({"query": "y" * (1 << 20)}, timeout=1.0)
        took = time.monotonic() - began
    assert reply.error == "no response within 1s; killed"
    assert took < 1.4


def test_a_request_that_is_not_text_fails_alone() -> None:
    """Raw bytes smuggled in as surrogates cannot be JSON; nothing is sent, nothing restarts."""
    replies, s = serve("--echo-id", texts=[TEXTS[0], "bad \udcff bytes", TEXTS[2]])
    assert replies[1].line is None and replies[1].error is not None
    assert replies[1].error.startswith("the request cannot be sent as JSON")
    assert [answered(replies[0]), answered(replies[2])] == [TEXTS[0], TEXTS[2]]
    assert replies[2].verified and not replies[2].restarted and s.restarts == 0


def test_an_id_inside_the_hits_is_not_an_echo() -> None:
    replies, s = serve("--nested-id")
    assert [answered(r) for r in replies] == TEXTS
    assert not any(r.verified for r in replies) and s.unsolicited_lines == 0


# -- end to end: what the scores say ---------------------------------------------------------

def spec(tmp: Path, name: str, *flags: str) -> Path:
    data = {"name": name, "spans": True, "mode": "persistent",
            "search": {"command": [sys.executable, str(HOSTILE), *flags], "timeout": "5s"},
            "parse": {"format": "json", "results": "hits", "start": "start", "end": "end"}}
    path = tmp / f"{name}.json"
    path.write_text(json.dumps(data))
    return path


def test_double_answering_engine_with_ids_scores_like_a_good_one(tmp_path: Path) -> None:
    toml = make_corpus(tmp_path)
    out = tmp_path / "out.json"
    code = main(["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "work"),
                 "--json", str(out), "--engine", str(spec(tmp_path, "well", "--echo-id")),
                 "--engine", str(spec(tmp_path, "double", "--echo-id", "--twice", "0.3"))])
    assert code == 0
    result = ResultFile.model_validate_json(out.read_text())
    rows = {r.engine: r for r in result.rows if r.headline}
    assert rows["well"].metrics["file.recall@5"].mean == 1.0
    for metric, value in rows["well"].metrics.items():
        assert rows["double"].metrics[metric].mean == value.mean, metric
    assert rows["double"].errors == 0
