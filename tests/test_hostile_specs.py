"""The hostile suite, class "specs": engine specs, templates and queries built to hurt.

A spec is loaded from a file anyone can write and its templates are rendered
for every query, so each case here is an attack on loading or rendering, and
each asserts the exact outcome: a SpecError naming the file and the field
within a second and without gigabytes allocated, or that one query's error
with the advice to use stdin or persistent mode while the cell's other queries
are scored and the JSON is written.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from minicorpus import QUERIES, make_corpus

from codesearch_bench.cli import main
from codesearch_bench.engine import driver
from codesearch_bench.engine.driver import Context, Searcher
from codesearch_bench.engine.spec import LoadedSpec, load_spec
from codesearch_bench.engine.templates import allowance, rendering
from codesearch_bench.errors import CommandRejected, SpecError
from codesearch_bench.results.schema import ResultFile

pytestmark = pytest.mark.hostile

FAKES = Path(__file__).resolve().parent / "fakes"
FAULTY = FAKES / "faulty.py"
ECHO = FAKES / "persistent_echo.py"
ONESHOT = FAKES / "oneshot_json.py"
PARSE = {"format": "json", "results": "hits", "start": "start", "end": "end", "text": "text"}
ADVICE = ("stdin", "persistent")
LONG = "where is the config parsed " * 7500  # 202,500 bytes: over Linux's 128 KiB per argument


def spec_data(**extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "victim", "spans": True, "tokens": True,
        "search": {"command": [sys.executable, str(FAULTY), "ok", "{{query}}"], "timeout": "10s"},
        "parse": PARSE,
    }
    data.update(extra)
    return data


def write(tmp: Path, data: object, name: str = "victim.json") -> Path:
    path = tmp / name
    path.write_text(json.dumps(data))
    return path


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def load_fails(path: Path) -> tuple[str, float]:
    """load_spec's SpecError message and how long it took; it must name the file."""
    start = time.monotonic()
    with pytest.raises(SpecError) as info:
        load_spec(path)
    elapsed = time.monotonic() - start
    message = str(info.value)
    assert str(path) in message
    assert "Traceback" not in message
    return message, elapsed


# -- template bombs, rejected at load -----------------------------------------

S = "{% set s = 'x' * 1000000 %}"
BOMBS = [
    ("range-1e9", "{% for i in range(10**9) %}x{% endfor %}", "range"),
    ("range-1e18-length", "{{ range(10**18)|length }}", "range"),
    ("pow-10-5000", "{{ 10**5000 }}", "integer"),
    ("pow-2-2-36", "{{ 2**(2**36) }}", "integer"),
    ("mul-int-chain", "{{ 99999999999 * 99999999999 * 99999999999 * 99999999999 }}",
     "integer"),
    ("str-times-1e10", "{{ 'x' * 10**10 }}", "bytes"),
    ("str-times-2-62", "{{ 'x' * 2**62 }}", "bytes"),
    ("query-times-1e8", "{{ query * 10**8 }}", "bytes"),
    ("list-times", "{{ [0] * 10**9 }}", "bytes"),
    ("nested-loops", "{% for i in range(100000) %}{% for j in range(100000) %}"
                     "{% endfor %}{% endfor %}", "steps"),
    ("loop-over-long-string", "{% for c in 'y' * 1000000 %}{% endfor %}", "steps"),
    ("literal-in-loop", "{% for i in range(100000) %}" + "z" * 2000 + "{% endfor %}", "bytes"),
    ("macro-infinite", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "deep"),
    ("macro-exponential", "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}"
                          "{% endmacro %}{{ f(40) }}", "steps"),
    ("macro-doubling-arg", "{% macro d(s, n) %}{% if n %}{{ d(s ~ s, n - 1) }}{% endif %}"
                           "{% endmacro %}{{ d('x', 64) }}", "bytes"),
    ("recursive-loop", "{% for x in [1] recursive %}{{ loop([x]) }}{% endfor %}", "deep"),
    ("join-repeated-list", "{{ ''.join(['x' * 100000] * 100000) }}", "bytes"),
    ("join-long-separator", "{{ ('x' * 1000000).join(['a'] * 100000) }}", "bytes"),
    ("join-filter", "{{ (['x' * 1000000] * 10)|join('y' * 1000000) }}", "bytes"),
    ("shared-references",
     "{% set a = ['x' * 100000] %}{% set b = [a, a, a, a, a, a, a, a, a, a] %}"
     "{% set c = [b, b, b, b, b, b, b, b, b, b] %}{% set d = [c, c, c, c, c, c, c, c, c, c] %}"
     "{{ d }}", "bytes"),
    ("concat-chain", S + "{{ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s ~ s"
                         " ~ s ~ s }}", "bytes"),
    ("namespace-doubling", "{% set ns = namespace(s='x') %}{% for i in range(64) %}"
                           "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}", "bytes"),
    ("namespace-deep-list", "{% set ns = namespace(x=[]) %}{% for i in range(100000) %}"
                            "{% set ns.x = [ns.x] %}{% endfor %}{{ ns.x }}", "deep"),
    ("macro-output-in-loop", S + "{% macro m() %}{% for i in range(100) %}{{ s }}{% endfor %}"
                                 "{% endmacro %}{{ m() }}", "bytes"),
    ("center-filter", "{{ 'x'|center(1000000000) }}", "bytes"),
    ("indent-filter", "{{ ('\n' * 100000)|indent(100000) }}", "bytes"),
    ("wordwrap-filter", "{{ ('x ' * 100000)|wordwrap(1, wrapstring='y' * 10000) }}", "bytes"),
    ("replace-filter", "{{ ('x' * 100000)|replace('x', 'y' * 100000) }}", "bytes"),
    ("format-filter", "{{ '%999999999d'|format(1) }}", "bytes"),
    ("tojson-indent", "{{ (range(100000)|list)|tojson(indent=100000) }}", "bytes"),
    ("string-filter-nested", "{{ ([['x' * 1000] * 1000] * 1000)|string }}", "bytes"),
    ("ljust-method", "{{ 'x'.ljust(1000000000) }}", "bytes"),
    ("zfill-method", "{{ '1'.zfill(1000000000) }}", "bytes"),
    ("expandtabs-method", "{{ ('\t' * 100000).expandtabs(100000) }}", "bytes"),
    ("replace-method", "{{ ('x' * 100000).replace('x', 'y' * 100000) }}", "bytes"),
    ("percent-width", "{{ '%999999999d' % 1 }}", "bytes"),
    ("percent-precision", "{{ '%.999999999f' % 1.5 }}", "bytes"),
    ("percent-star", "{{ '%*d' % (999999999, 1) }}", "bytes"),
    ("format-width", "{{ '{:>999999999}'.format(1) }}", "bytes"),
    ("format-nested-width", "{{ '{:>{}}'.format('x', 999999999) }}", "bytes"),
    ("to-bytes", "{{ (1).to_bytes(1000000000, 'big') }}", "not allowed"),
    ("translate", "{{ ('x' * 100000).translate({120: 'y' * 100000}) }}", "not allowed"),
    ("lipsum", "{{ lipsum(100000, min=100, max=100) }}", "lipsum"),
    ("urlize", "{{ ('http://a ' * 1000)|urlize(target='y' * 100000) }}", "urlize"),
    ("division-by-zero", "{{ 1 / 0 }}", "division by zero"),
    ("float-overflow", "{{ 10.0 ** 400 }}", "Overflow"),
    ("deep-parentheses", "{{ " + "(" * 1500 + "1" + ")" * 1500 + " }}", "deep"),
    ("deep-blocks", "{% if 1 %}" * 120 + "{% endif %}" * 120, "compiled"),
    ("too-long", "{{ query }}" + "x" * 100000, "a template of 100011 characters; at most 4096"),
]


@pytest.mark.parametrize(("template", "reason"), [(t, r) for _, t, r in BOMBS],
                         ids=[i for i, _, _ in BOMBS])
def test_template_bomb_is_a_spec_error_within_a_second(tmp_path: Path, template: str,
                                                       reason: str) -> None:
    data = spec_data()
    data["search"]["command"] = [sys.executable, str(FAULTY), "ok", template]
    before = peak_rss_mib()
    message, elapsed = load_fails(write(tmp_path, data))
    assert elapsed < 1.0, f"took {elapsed:.2f}s"
    assert peak_rss_mib() - before < 256, "the bomb allocated hundreds of MiB"
    assert "field `search.command[3]`" in message
    # A loaded machine may reach the clock before the step count: both are the bound.
    assert reason in message or (reason == "steps" and "took longer than" in message), message
    assert len(message.splitlines()) <= 2  # the message and its hint


@pytest.mark.parametrize("field", ["env", "stdin", "dir"])
def test_bomb_in_env_stdin_or_dir_names_that_field(tmp_path: Path, field: str) -> None:
    bomb = "{{ 'x' * 10**10 }}"
    data = spec_data()
    if field == "env":
        data["env"] = ["OK=1", f"BOMB={bomb}"]
        where = "field `env[1]`"
    else:
        data["search"][field] = bomb
        where = f"field `search.{field}`"
    message, elapsed = load_fails(write(tmp_path, data))
    assert elapsed < 1.0 and where in message and "bytes" in message


def test_templates_of_a_spec_are_bounded_in_total(tmp_path: Path) -> None:
    data = spec_data()
    data["search"]["command"] = [sys.executable, str(FAULTY), "ok"] + ["{{ query }}" * 300] * 6
    message, elapsed = load_fails(write(tmp_path, data))
    assert "field `search.command[7]`" in message and "add up to more than 16384" in message
    assert elapsed < 1.0


def test_ordinary_templates_still_render(tmp_path: Path) -> None:
    """The bounds leave room for everything a real spec does."""
    data = spec_data(env=["A={{ state }}/idx", "B={{ corpus|upper }}"])
    data["search"]["command"] = [
        sys.executable, str(FAULTY), "ok", "{{ query }}", "{{ n * 2 }}", "{{ k // 2 + 1 }}",
        "{{ '%05d' % n }}", "{{ '{:>8}'.format(query) }}", "{{ query|replace(' ', '+') }}",
        "{% for i in range(per_file) %}-v{% endfor %}", "{{ query|tojson }}",
        "{{ [root, state]|join(':') }}", "{{ 'x' * 1000 }}", "{{ query.split()|first }}",
        "{{ 2 ** 62 }}", "{{ '-'.join(query.split()) }}",
    ]
    loaded = load_spec(write(tmp_path, data))
    ctx = Context(root=tmp_path / "root", state=tmp_path / "state", corpus="mini", lang="py")
    rendered = driver.render_search(loaded, ctx, "find the config", 20, 2)
    assert rendered.argv[3:] == [
        "find the config", "40", "11", "00020", "find the config", "find+the+config", "-v-v",
        '"find the config"', f"{tmp_path / 'root'}:{tmp_path / 'state'}", "x" * 1000, "find",
        str(2 ** 62), "find-the-config"]
    assert rendered.env == {"A": f"{tmp_path / 'state'}/idx", "B": "MINI"}


# -- names, env keys, timeouts, the file itself -------------------------------

@pytest.mark.parametrize(("name", "words"), [
    ("grep\n", "letters, digits"),
    ("g" * 10000, "at most 64"),
    ("g" * 65, "at most 64"),
    ("a/b", "letters, digits"),
    ("a\\b", "letters, digits"),
    (".hidden", "letters, digits"),
    ("..", "letters, digits"),
    ("", "letters, digits"),
    ("grep\x00", "letters, digits"),
    ("grép", "letters, digits"),
])
def test_bad_engine_name(tmp_path: Path, name: str, words: str) -> None:
    message, _ = load_fails(write(tmp_path, spec_data(name=name)))
    assert "field `name`" in message and words in message
    assert len(message) < 400  # a 10,000-character name is not echoed whole


def test_longest_name_loads(tmp_path: Path) -> None:
    assert load_spec(write(tmp_path, spec_data(name="g" * 64))).name == "g" * 64


@pytest.mark.parametrize("entry", ["KEY\n=x", "KE Y=x", "K\x00=x", "=x", "\nKEY=x"])
def test_bad_env_key(tmp_path: Path, entry: str) -> None:
    message, _ = load_fails(write(tmp_path, spec_data(env=[entry])))
    assert "field `env`" in message and "KEY=value" in message


@pytest.mark.parametrize(("field", "value"), [
    ("command", [sys.executable, "a\x00b"]), ("env", ["K=a\x00b"]), ("dir", "/tmp/a\x00b")])
def test_literal_nul_is_a_spec_error(tmp_path: Path, field: str, value: Any) -> None:
    data = spec_data()
    if field == "env":
        data["env"] = value
    else:
        data["search"][field] = value
    message, _ = load_fails(write(tmp_path, data))
    assert "NUL" in message
    assert {"command": "field `search.command[1]`", "env": "field `env[0]`",
            "dir": "field `search.dir`"}[field] in message


@pytest.mark.parametrize("timeout", [1e300, "99999999999d", "31d", 10**400, "721h", 2592001])
def test_timeout_too_large_for_the_os(tmp_path: Path, timeout: object) -> None:
    data = spec_data()
    data["search"]["timeout"] = timeout
    message, elapsed = load_fails(write(tmp_path, data))
    assert "field `search.timeout`" in message and "at most 30 days" in message
    assert elapsed < 1.0


def test_thirty_days_is_accepted(tmp_path: Path) -> None:
    data = spec_data(index={"command": ["true"], "timeout": "30d"})
    assert load_spec(write(tmp_path, data)).spec.index_timeout == 30 * 86400


@pytest.mark.parametrize(("change", "field"), [
    ({"candidates": 10**30}, "candidates"), ({"per_file": [1, 10**30]}, "per_file")])
def test_depth_too_large(tmp_path: Path, change: dict[str, Any], field: str) -> None:
    message, _ = load_fails(write(tmp_path, spec_data(**change)))
    assert f"field `{field}`" in message and "1000" in message


def test_spec_file_too_large(tmp_path: Path) -> None:
    data = spec_data(description="x" * (2 << 20))
    message, elapsed = load_fails(write(tmp_path, data))
    assert "larger than" in message and elapsed < 1.0


@pytest.mark.parametrize(("text", "words"), [
    ("[" * 100000 + "]" * 100000, "nested"),
    ('{"name": "x", "candidates": 1' + "0" * 5000 + "}", "digits"),
])
def test_hostile_json(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "victim.json"
    path.write_text(text)
    message, elapsed = load_fails(path)
    assert words in message and elapsed < 1.0


# -- queries the OS cannot pass, in a full compare ------------------------------

class Compare:
    """One corpus (the mini one plus hostile queries) and one engine spec."""

    def __init__(self, tmp: Path, *extra_queries: str) -> None:
        self.tmp = tmp
        self.toml = make_corpus(tmp)
        queries = list(QUERIES) + [
            {"id": f"h{i}", "query": text, "gold": [{"path": "pkg/config.py"}]}
            for i, text in enumerate(extra_queries, 1)]
        (tmp / "mini.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
        self.out = tmp / "out.json"

    def run(self, engine: Path) -> tuple[int, ResultFile]:
        code = main(["compare", "--corpora-file", str(self.toml), "--work",
                     str(self.tmp / "work"), "--json", str(self.out), "--engine", str(engine)])
        assert self.out.is_file(), "the JSON must be written whatever happened"
        return code, ResultFile.model_validate_json(self.out.read_text())


def failed_one_of_five(result: ResultFile) -> str:
    """The cell's row survives: four queries scored as usual, the hostile one failed."""
    (row,) = [r for r in result.rows if r.headline]
    assert [q.id for q in row.queries] == ["q1", "q2", "q3", "q4", "h1"]
    assert all(q.error is None for q in row.queries[:4])
    assert "errors=1" in row.flags
    assert row.metrics["file.recall@5"].mean == pytest.approx(2 / 5)  # q1 and q4
    error = row.queries[4].error or ""
    assert "\n" not in error
    return error


@pytest.mark.parametrize(("query", "words"), [
    ("settings\x00parsed", "argument 3 contains a NUL byte"),
    (LONG, "argument 3 is 202500 bytes; Linux passes at most 131071 bytes in one "
           "(MAX_ARG_STRLEN)"),
], ids=["nul", "200kb"])
def test_query_the_os_refuses_fails_alone(tmp_path: Path, query: str, words: str) -> None:
    bench = Compare(tmp_path, query)
    _, result = bench.run(write(tmp_path, spec_data()))
    error = failed_one_of_five(result)
    assert words in error and all(a in error for a in ADVICE), error
    assert error.startswith("engine 'victim' (")


def test_a_refused_query_makes_the_run_exit_1(tmp_path: Path) -> None:
    """Scored as a miss like any failed query, and never a silent one: the run says so."""
    bench = Compare(tmp_path, "settings\x00parsed")
    code, result = bench.run(write(tmp_path, spec_data()))
    failed_one_of_five(result)
    assert code == 1
    (failure,) = result.failures
    assert failure.stage == "search" and "NUL" in failure.message


def test_template_that_blows_up_only_at_run_time(tmp_path: Path) -> None:
    data = spec_data()
    data["search"]["command"] = [sys.executable, str(FAULTY), "ok", "settings"]
    data["search"]["stdin"] = "{{ query * 100 }}"  # 700 bytes at load, 20 MB for LONG
    bench = Compare(tmp_path, LONG)
    _, result = bench.run(write(tmp_path, data))
    error = failed_one_of_five(result)
    assert error.startswith(f"cannot render this query's command: {tmp_path / 'victim.json'}: "
                            f"field `search.stdin`: refused by the template sandbox: "
                            f"repeating a value would build 20250000 more bytes"), error


def test_unrenderable_first_query_still_shows_a_command(tmp_path: Path, ctx: Context) -> None:
    """The command recorded for a cell is the spec's templates when its query cannot render."""
    loaded = load(tmp_path, search={"command": [sys.executable, str(FAULTY), "ok",
                                                "{{ query * 100 }}"]})
    searcher = Searcher(loaded, ctx)
    assert searcher.command(LONG, 5, 1).argv == [sys.executable, str(FAULTY), "ok",
                                                  "{{ query * 100 }}"]
    assert searcher.command("short", 5, 1).argv[-1] == "short" * 100
    assert searcher.search(LONG, 5, 1).rejected


def test_render_budget_is_per_render() -> None:
    """A long query may be rendered for every query of a run: nothing accumulates."""
    start = time.monotonic()
    for _ in range(200):
        assert rendering.render("--q={{ query }}", {"query": LONG}) == "--q=" + LONG
    assert time.monotonic() - start < 2.0
    with pytest.raises(rendering.TemplateProblem, match="repeating a value"):
        rendering.render("{{ query * 100 }}", {"query": LONG})


def test_clock_is_a_backstop_that_spares_ordinary_templates(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(allowance, "MAX_SECONDS", 0.0)
    assert rendering.render("{{ query|upper }}-{{ n * 2 }}", {"query": "q", "n": 2}) == "Q-4"
    with pytest.raises(rendering.TemplateProblem, match=r"took longer than 0\.0s"):
        rendering.render("{% for i in range(5000) %}{% endfor %}", {})


# -- the same queries where they are fine: stdin and persistent mode ------------

@pytest.fixture
def ctx(tmp_path: Path) -> Context:
    state = tmp_path / "state"
    state.mkdir()
    return Context(root=tmp_path / "tree", state=state, corpus="mini", lang="python")


def load(tmp: Path, **extra: Any) -> LoadedSpec:
    return load_spec(write(tmp, spec_data(**extra)))


@pytest.mark.parametrize("query", ["a\x00b", LONG], ids=["nul", "200kb"])
def test_query_on_stdin_reaches_the_engine(tmp_path: Path, ctx: Context, query: str) -> None:
    loaded = load(tmp_path, search={"command": [sys.executable, str(ONESHOT)],
                                    "stdin": "{{ query }}"},
                  parse={"format": "json", "results": "hits", "path": "file"}, tokens=False,
                  spans=False)
    result = Searcher(loaded, ctx).search(query, 5, 1)
    assert result.error is None
    assert json.loads(result.raw)["stdin"] == query


@pytest.mark.parametrize("query", ["a\x00b", LONG], ids=["nul", "200kb"])
def test_query_through_a_persistent_engine(tmp_path: Path, ctx: Context, query: str) -> None:
    loaded = load(tmp_path, mode="persistent", tokens=False,
                  search={"command": [sys.executable, str(ECHO)], "timeout": "10s"})
    with Searcher(loaded, ctx) as searcher:
        result = searcher.search(query, 5, 1)
        after = searcher.search("next", 5, 1)
    assert result.error is None and result.hits[0].text == query
    assert after.error is None and after.hits[0].text == "next"


def test_unencodable_query_fails_the_query(tmp_path: Path, ctx: Context) -> None:
    result = Searcher(load(tmp_path), ctx).search("settings \ud800 parsed", 5, 1)
    assert result.rejected and result.error is not None
    assert "argument 3 cannot be encoded for the OS" in result.error
    assert all(a in result.error for a in ADVICE)


def test_query_that_is_not_text_fails_alone_in_a_persistent_engine(tmp_path: Path,
                                                                  ctx: Context) -> None:
    """`bench probe --text` of raw bytes gives surrogates: no JSON request can carry them."""
    loaded = load(tmp_path, mode="persistent", tokens=False,
                  search={"command": [sys.executable, str(ECHO)], "timeout": "10s"})
    with Searcher(loaded, ctx) as searcher:
        bad = searcher.search("bytes \udcff from a shell", 5, 1)
        after = searcher.search("next", 5, 1)
        assert searcher.session is not None and searcher.session.restarts == 0
    assert bad.rejected and bad.error is not None
    assert bad.error.startswith("the query cannot be sent as JSON: it is not valid text")
    assert after.error is None and after.hits[0].text == "next"


def test_many_long_arguments_over_arg_max(tmp_path: Path, ctx: Context) -> None:
    piece = "q" * 100_000  # each under the per-argument limit, together over ARG_MAX
    loaded = load(tmp_path, search={"command": [sys.executable, str(FAULTY), "ok"]
                                    + ["{{ query }}"] * 40})
    result = Searcher(loaded, ctx).search(piece, 5, 1)
    assert result.error is not None and "ARG_MAX" in result.error
    assert all(a in result.error for a in ADVICE)
    assert result.rejected


def test_nul_from_a_variable_in_env_fails_the_query(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    ctx = Context(root=tmp_path / "tree", state=state, corpus="mini\x00evil", lang="python")
    loaded = load(tmp_path, env=["FAKE_CORPUS={{ corpus }}"])
    result = Searcher(loaded, ctx).search("settings", 5, 1)
    assert result.error is not None and "NUL" in result.error and "env FAKE_CORPUS" in result.error
    assert all(a in result.error for a in ADVICE)


def test_refusal_by_spawn_is_caught_too(tmp_path: Path, ctx: Context,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """spawning raises CommandRejected for what a pre-check could still miss."""
    def refuse(*args: object, **kwargs: object) -> None:
        raise CommandRejected("engine 'victim' search: exec said E2BIG")

    monkeypatch.setattr(driver.command, "run", refuse)
    result = Searcher(load(tmp_path), ctx).search("settings", 5, 1)
    assert result.rejected and result.error is not None
    assert result.error.startswith("engine 'victim' search: exec said E2BIG; pass long")
    assert all(a in result.error for a in ADVICE)


def test_persistent_start_command_the_os_refuses(tmp_path: Path) -> None:
    state = tmp_path / "state"
    ctx = Context(root=tmp_path / "tree", state=state, corpus="mini\x00evil", lang="python")
    loaded = load(tmp_path, mode="persistent", tokens=False, env=["C={{ corpus }}"],
                  search={"command": [sys.executable, str(ECHO)]})
    with pytest.raises(CommandRejected, match="env C contains a NUL byte"), Searcher(loaded, ctx):
        pass


def test_run_index_rejects_before_spawning(tmp_path: Path) -> None:
    state = tmp_path / "state"
    ctx = Context(root=tmp_path / "tree\x00x", state=state, corpus="mini", lang="python")
    loaded = load(tmp_path, index={"command": [sys.executable, str(FAULTY), "{{ root }}"]})
    with pytest.raises(CommandRejected) as info:
        driver.run_index(loaded, ctx)
    assert "NUL" in info.value.message and "index" in info.value.message
