"""Template rendering: sandboxed, strict, one argv element at a time, Go-style accepted."""

from __future__ import annotations

import pytest

from codesearch_bench.engine.templates import rendering
from codesearch_bench.engine.templates.rendering import (
    TemplateProblem,
    check,
    go_to_jinja,
    render,
    render_argv,
    render_env,
    variables_used,
)
from codesearch_bench.engine.templates.variables import COMMON_VARS, SEARCH_VARS, VERSION_VARS

CTX = {"root": "/tree", "state": "/state", "name": "acme", "lang": "python",
       "corpus": "rich", "spec_dir": "/specs", "python": "/usr/bin/python3",
       "query": "q", "k": 20, "n": 60, "per_file": 2}

NASTY_QUERIES = [
    'x"; rm -rf ~; echo "',
    "$(touch /tmp/pwned) `id` && || ; |",
    "  leading and trailing spaces  ",
    "line one\nline two",
    "{{ state }} {% if true %}not a template{% endif %}",
    "'single' \"double\" \\backslash\\",
    "*.py ~/x $HOME",
    "",
]


def test_variable_sets() -> None:
    assert COMMON_VARS < SEARCH_VARS
    assert {"query", "k", "n", "per_file"} == SEARCH_VARS - COMMON_VARS
    assert VERSION_VARS < COMMON_VARS
    assert set(CTX) == SEARCH_VARS


@pytest.mark.parametrize(
    ("go", "jinja"),
    [
        ("{{.Root}}", "{{ root }}"),
        ("{{ .State }}", "{{ state }}"),
        ("{{.PerFile}}", "{{ per_file }}"),
        ("{{.K}}", "{{ k }}"),
        ("{{.N}}", "{{ n }}"),
        ("{{.Query}}", "{{ query }}"),
        ("--db={{.State}}/index.db", "--db={{ state }}/index.db"),
        ("{{root}}", "{{root}}"),
        ("plain", "plain"),
    ],
)
def test_go_to_jinja(go: str, jinja: str) -> None:
    assert go_to_jinja(go) == jinja


def test_go_style_renders() -> None:
    argv = ["acme", "-n", "{{.N}}", "--per-file={{.PerFile}}", "{{.Root}}", "{{.Query}}"]
    assert render_argv(argv, CTX) == ["acme", "-n", "60", "--per-file=2", "/tree", "q"]


def test_render_basic_and_filters() -> None:
    assert render("{{ root }}/{{name}}", CTX) == "/tree/acme"
    assert render("{{ query | upper }}", CTX) == "Q"
    assert render("{{ k * 2 }}", CTX) == "40"
    assert render("no variables", {}) == "no variables"
    assert render("trailing\n", {}) == "trailing\n"


def test_unknown_variable_at_render_lists_available() -> None:
    with pytest.raises(TemplateProblem) as info:
        render("{{ qurey }}", CTX)
    message = str(info.value)
    assert "'qurey' is undefined" in message
    assert "available: " in message
    for name in CTX:
        assert name in message


def test_check_unknown_variable_lists_allowed() -> None:
    with pytest.raises(TemplateProblem) as info:
        check("{{ roott }}/{{ qurey }}", COMMON_VARS)
    message = str(info.value)
    assert message.startswith("unknown template variable qurey, roott; available here: ")
    assert message.endswith(", ".join(sorted(COMMON_VARS)))


def test_check_accepts_known_and_numeric_use() -> None:
    check("{{ n + 1 }} {{ query }} {{.Root}}", SEARCH_VARS)
    check("{{ python }}", VERSION_VARS)


def test_syntax_error() -> None:
    with pytest.raises(TemplateProblem, match="template syntax error"):
        check("{{ query ", SEARCH_VARS)
    with pytest.raises(TemplateProblem, match="template syntax error"):
        render("{% if %}", CTX)


def test_variables_used() -> None:
    assert variables_used("{{.Root}} {{ n }} {% for x in [1] %}{{ x }}{% endfor %}") == {
        "root", "n"}


@pytest.mark.parametrize(
    "template",
    [
        "{{ ''.__class__ }}",
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ query.__init__.__globals__ }}",
        "{{ cycler.__init__.__globals__.os }}",
        "{{ [].append(1) }}",
        "{{ {}.update(a=1) }}",
        "{{ '{0.__class__}'.format(query) }}",
    ],
)
def test_sandbox_refuses(template: str) -> None:
    with pytest.raises(TemplateProblem, match="refused by the template sandbox"):
        render(template, CTX)
    with pytest.raises(TemplateProblem, match="refused by the template sandbox"):
        check(template, SEARCH_VARS)


@pytest.mark.parametrize("query", NASTY_QUERIES)
def test_query_is_one_argv_element_verbatim(query: str) -> None:
    argv = ["engine", "--query", "{{query}}", "{{ root }}"]
    rendered = render_argv(argv, {**CTX, "query": query})
    assert rendered == ["engine", "--query", query, "/tree"]


def test_argv_elements_never_split_or_merge() -> None:
    argv = ["a b", "{{ root }} {{ state }}", "", "{{query}}{{query}}"]
    assert render_argv(argv, CTX) == ["a b", "/tree /state", "", "qq"]


def test_render_env() -> None:
    env = render_env(["ACME_STATE={{state}}", "EQ=a=b={{.Name}}", "EMPTY="], CTX)
    assert env == {"ACME_STATE": "/state", "EQ": "a=b=acme", "EMPTY": ""}


def test_render_env_key_is_not_templated() -> None:
    assert render_env(["{{root}}=x"], CTX) == {"{{root}}": "x"}


def test_compiled_templates_are_cached() -> None:
    rendering._compile.cache_clear()
    render("{{ root }}", CTX)
    render("{{ root }}", {**CTX, "root": "/other"})
    assert rendering._compile.cache_info().hits == 1
