"""scripts/enginekit.py: the skeleton every engine adapter shares."""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import enginekit  # as the adapters import it: a module in scripts/

SCRIPTS = Path(enginekit.__file__).parent


# --- a tree's files -----------------------------------------------------------
@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for rel in ("b.py", "a/z.txt", "a/y.txt", ".git/config", ".hg/x", ".svn/x", ".bzr/x",
                "node/.gitkeep", "sub/.git/HEAD"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "link.py").symlink_to(root / "b.py")
    (root / "linked-dir").symlink_to(root / "a", target_is_directory=True)
    return root


def test_walk_is_sorted_relative_and_skips_vcs_folders_and_symlinks(tree: Path) -> None:
    # A folder's own files come before its subfolders' (os.walk, top down).
    assert list(enginekit.walk(str(tree))) == ["b.py", "a/y.txt", "a/z.txt", "node/.gitkeep"]
    assert list(enginekit.walk(str(tree), frozenset({"a", "node"}))) == [
        "b.py", ".bzr/x", ".git/config", ".hg/x", ".svn/x", "sub/.git/HEAD"]


def test_read_text_caps_size_refuses_binary_and_normalizes_crlf(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"one\r\ntwo\rthree\n")
    assert enginekit.read_text(str(path)) == "one\ntwo\rthree\n"  # a lone CR stays
    assert enginekit.read_text(str(path), max_bytes=15) == "one\ntwo\rthree\n"
    assert enginekit.read_text(str(path), max_bytes=14) is None
    path.write_bytes(b"text\0more")
    assert enginekit.read_text(str(path)) is None
    path.write_bytes(b"x" * enginekit.BINARY_SNIFF + b"\0late")  # only the start is sniffed
    assert enginekit.read_text(str(path)) == "x" * enginekit.BINARY_SNIFF + "\0late"
    path.write_bytes(b"caf\xe9")
    assert enginekit.read_text(str(path)) == "caf\ufffd"
    assert enginekit.read_text(str(tmp_path / "missing")) is None


def test_texts_yields_only_what_reads_as_text(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.bin").write_bytes(b"\0\1")
    (tmp_path / "c.txt").write_text("x" * (enginekit.MAX_FILE_BYTES + 1))
    (tmp_path / "d.txt").write_text("")
    assert list(enginekit.texts(str(tmp_path))) == [("a.txt", "a\n"), ("d.txt", "")]


def test_split_lines_splits_on_lf_only() -> None:
    assert enginekit.split_lines("a\nb\n") == ["a", "b"]
    assert enginekit.split_lines("a\nb") == ["a", "b"]
    assert enginekit.split_lines("a\n\n") == ["a", ""]
    assert enginekit.split_lines("") == []
    assert enginekit.split_lines("a\x0cb\u2028c\n") == ["a\x0cb\u2028c"]


def test_attach_text_clips_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("one\ntwo\nthree\n")
    hits = [{"path": "a.py", "start": 2, "end": 9}, {"path": "gone.py", "start": 1, "end": 3},
            {"path": "a.py", "start": 5, "end": 7}]
    enginekit.attach_text(str(tmp_path), hits)
    assert hits[0]["end"] == 3 and hits[0]["text"] == "two\nthree"
    assert hits[1] == {"path": "gone.py", "start": 1, "end": 1, "text": ""}
    assert hits[2] == {"path": "a.py", "start": 5, "end": 5, "text": ""}  # past the end


def test_attach_text_reads_lines_as_str_splitlines_does(tmp_path: Path) -> None:
    """Universal newlines and splitlines: the grep and ctags adapters always read so."""
    (tmp_path / "a.txt").write_bytes(b"one\r\ntwo\rthree\x0cfour\n")
    hits = [{"path": "a.txt", "start": 1, "end": 9}]
    enginekit.attach_text(str(tmp_path), hits)
    assert hits[0]["text"] == "one\ntwo\nthree\nfour" and hits[0]["end"] == 4


# --- the JSON-lines loop --------------------------------------------------------
class Missing(Exception):
    pass


def run_serve(lines: list[str], default_state: str | None = "s1") -> tuple[list[dict], list[str]]:
    opened: list[str] = []

    def open_state(state: str) -> str:
        if state == "missing":
            raise Missing(f"no index in {state}")
        opened.append(state)
        return state.upper()

    def answer(index: str, request: enginekit.Request) -> list[dict]:
        if request.query == "boom":
            raise RuntimeError("an adapter bug")
        return [{"index": index, "query": request.query, "n": request.n,
                 "per_file": request.per_file, "k": request.fields.get("k")}]

    out = io.StringIO()
    code = enginekit.serve("test-engine", default_state, open_state, answer,
                           errors=(Missing,), stdin=io.StringIO("\n".join(lines) + "\n"),
                           stdout=out)
    assert code == 0
    return [json.loads(line) for line in out.getvalue().splitlines()], opened


def test_serve_answers_each_line_and_keeps_going_after_a_malformed_one(
        capsys: pytest.CaptureFixture[str]) -> None:
    replies, opened = run_serve([
        json.dumps({"query": "a", "n": 3, "per_file": 2, "k": 1}),
        "{not json",
        "",
        "   ",
        "[1, 2]",
        json.dumps({"query": "b", "state": "s2"}),
        json.dumps({"query": "c", "state": "missing"}),
        json.dumps({"query": "d", "n": "many"}),
        json.dumps({"query": "e", "n": None}),
        json.dumps({"n": 1}),
    ])
    assert len(replies) == 8  # blank lines get no answer
    assert replies[0] == {"hits": [{"index": "S1", "query": "a", "n": 3, "per_file": 2, "k": 1}]}
    assert set(replies[1]) == {"error"} and "Expecting property name" in replies[1]["error"]
    assert replies[2] == {"error": "a request is a JSON object"}
    assert replies[3]["hits"][0] == {"index": "S2", "query": "b", "n": 10, "per_file": 1,
                                     "k": None}
    assert replies[4] == {"error": "no index in missing"}
    assert "invalid literal for int()" in replies[5]["error"]
    assert "NoneType" in replies[6]["error"]  # a TypeError is a failed request too
    assert replies[7]["hits"][0]["query"] == ""
    assert opened == ["s1", "s2"]  # each state opened once
    assert "test-engine: no index in missing" in capsys.readouterr().err


def test_serve_needs_a_state_and_lets_adapter_bugs_through() -> None:
    replies, _ = run_serve([json.dumps({"query": "a"})], default_state=None)
    assert replies == [{"error": "request has no state and no --state was given"}]
    with pytest.raises(RuntimeError, match="an adapter bug"):
        run_serve([json.dumps({"query": "boom"})])


def test_decode_request() -> None:
    assert enginekit.decode_request(b'{"query": "x"}\n') == {"query": "x"}
    for line in ("null", '"x"', "[]", "nope"):
        with pytest.raises(ValueError):
            enginekit.decode_request(line)


def test_emit_writes_one_line() -> None:
    out = io.StringIO()
    enginekit.emit({"hits": [{"text": "a\nb"}]}, out)
    assert out.getvalue() == '{"hits": [{"text": "a\\nb"}]}\n'


def test_brief() -> None:
    assert enginekit.brief("  a\n b\t c ") == "a b c"
    assert enginekit.brief("x" * 20, limit=10) == "xxxxxxx..."


# --- the command line ---------------------------------------------------------------
def test_command_line_skeleton() -> None:
    parser, commands = enginekit.command_line("Title line.\n\nMore.", {
        "index": "i", "search": "s", "serve": "v"})
    assert parser.description == "Title line."
    args = parser.parse_args(["search", "ST", "5", "2", "a query"])
    assert (args.command, args.state, args.n, args.per_file, args.query) == (
        "search", "ST", 5, 2, "a query")
    assert parser.parse_args(["index", "R", "ST"]).root == "R"
    assert parser.parse_args(["serve"]).state is None
    with pytest.raises(SystemExit):
        parser.parse_args([])  # a subcommand is required
    commands["serve"].add_argument("--extra")
    assert parser.parse_args(["serve", "--extra", "x", "--state", "S"]).extra == "x"


def test_command_line_with_root_and_version() -> None:
    parser, commands = enginekit.command_line(None, {"search": "s"}, search_root=True,
                                              version_help="v")
    assert set(commands) == {"search"}
    args = parser.parse_args(["search", "R", "ST", "1", "1", "q"])
    assert (args.root, args.state) == ("R", "ST")
    args = parser.parse_args(["--version"])
    assert args.version and args.command is None
    with pytest.raises(ValueError, match="unknown subcommand"):
        enginekit.command_line(None, {"fetch": "f"})


# --- another interpreter ----------------------------------------------------------
def script_using_the_kit(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "adapter"
    script.write_text(f"import sys\nsys.path.insert(0, {str(SCRIPTS)!r})\nimport enginekit\n"
                      + textwrap.dedent(body))
    return script


def fake_python(tmp_path: Path) -> Path:
    fake = tmp_path / "fakepython"
    fake.write_text('#!/bin/sh\necho "reexec:$KIT_TEST_REEXECUTED:$*"\n')
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return fake


REEXEC = """
    python = enginekit.Interpreter("KIT_TEST_PYTHON", "KIT_TEST_REEXECUTED", "kit-test")
    python.maybe_reexec(__file__, sys.argv[1:])
    print("ran here" + python.hint("it"))
"""


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "ran here (set KIT_TEST_PYTHON to a Python that has it)"),
    ({"KIT_TEST_PYTHON": ""}, "ran here (set KIT_TEST_PYTHON to a Python that has it)"),
    ({"KIT_TEST_PYTHON": "FAKE", "KIT_TEST_REEXECUTED": "1"}, "ran here (KIT_TEST_PYTHON=FAKE)"),
    ({"KIT_TEST_PYTHON": "FAKE"}, "reexec:1:SCRIPT serve --state S"),
])
def test_reexec_once_under_the_named_interpreter(tmp_path: Path, env: dict[str, str],
                                                 expected: str) -> None:
    script = script_using_the_kit(tmp_path, REEXEC)
    fake = fake_python(tmp_path)
    base = {k: v for k, v in os.environ.items() if not k.startswith("KIT_TEST_")}
    base.update({k: str(fake) if v == "FAKE" else v for k, v in env.items()})
    out = subprocess.run([sys.executable, str(script), "serve", "--state", "S"],
                         capture_output=True, text=True, env=base, check=True)
    assert out.stdout.strip() == expected.replace("SCRIPT", str(script)).replace("FAKE", str(fake))


def test_reexec_into_a_missing_interpreter_fails_clearly(tmp_path: Path) -> None:
    script = script_using_the_kit(tmp_path, REEXEC)
    env = {**os.environ, "KIT_TEST_PYTHON": str(tmp_path / "nope")}
    env.pop("KIT_TEST_REEXECUTED", None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert out.returncode == 1 and out.stdout == ""
    assert f"kit-test: cannot run KIT_TEST_PYTHON={tmp_path / 'nope'}: " in out.stderr


def test_claim_stdout_keeps_every_other_write_off_the_channel(tmp_path: Path) -> None:
    script = script_using_the_kit(tmp_path, """
        import os
        out = enginekit.claim_stdout()
        print("a stray print")
        os.write(1, b"native code writing to fd 1\\n")
        enginekit.emit({"hits": []}, out)
    """)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=True)
    assert done.stdout == '{"hits": []}\n'
    assert "a stray print" in done.stderr and "native code" in done.stderr
