"""The terminal output fits its width: every shipped engine's name, three corpora with real
pins and deep trees, three per_file passes and long flags, rendered at 80 columns (the
default view) and at 120 (--wide), on a terminal and piped; and the shortening rules
themselves (render/fit.py).
"""

from __future__ import annotations

import io
import re

import pytest
from realistic_result import CORPORA, SHIPPED, realistic
from rich.console import Console

from codesearch_bench.render.fit import (
    MIN_ROOM,
    SHORT_NAMES,
    middle,
    short_hashes,
    short_names,
    where_lines,
    wrapped,
)
from codesearch_bench.render.table import render_compare, shortened
from codesearch_bench.results.schema import ResultFile

VIEWS = [(80, False), (120, True)]  # the default view at 80 columns, --wide at 120


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> ResultFile:
    return realistic(tmp_path_factory.mktemp("specs"))


_RENDERED: dict[tuple[int, int, bool, bool], str] = {}


def render(result: ResultFile, width: int, *, terminal: bool, wide: bool) -> str:
    key = (id(result), width, terminal, wide)
    if key not in _RENDERED:
        _RENDERED[key] = _render(result, width, terminal=terminal, wide=wide)
    return _RENDERED[key]


def _render(result: ResultFile, width: int, *, terminal: bool, wide: bool) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=terminal, color_system=None,
                      legacy_windows=False)
    render_compare(console, result, wide=wide)
    return buf.getvalue()


def _row_tables(text: str, wide: bool) -> list[list[str]]:
    """The lines of each corpus's table of engine rows (the headline, or --wide's passes)."""
    out = []
    for corpus in CORPORA:
        info = f"{corpus}: 1234 files"
        block = text.split(info, 1)[1]
        end = f"{corpus}: recall at each cutoff" if wide else f"{corpus}: paired"
        out.append(block.split(end, 1)[0].splitlines())
    return out


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "piped"])
@pytest.mark.parametrize(("width", "wide"), VIEWS, ids=["80", "wide-120"])
def test_no_line_is_wider_than_the_console(result: ResultFile, width: int, wide: bool,
                                           terminal: bool) -> None:
    text = render(result, width, terminal=terminal, wide=wide)
    long = [line for line in text.splitlines() if len(line) > width]
    assert not long, "\n".join(long[:5])
    if not terminal:
        assert not set(text) & set("─━│┃"), "piped output is plain ASCII tables"


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "piped"])
@pytest.mark.parametrize(("width", "wide"), VIEWS, ids=["80", "wide-120"])
def test_every_engine_is_named_whole_on_its_row(result: ResultFile, width: int, wide: bool,
                                                terminal: bool) -> None:
    text = render(result, width, terminal=terminal, wide=wide)
    short = shortened(result, width, wide=wide)
    shown = {name: short.get(name, name) for name in SHIPPED}
    passes = 3 if wide else 1
    for lines in _row_tables(text, wide):
        for name in SHIPPED:
            rows = [line for line in lines if line.startswith(shown[name] + " ")]
            assert len(rows) >= passes, (name, shown[name], "\n".join(lines))
    # nothing in any table is a piece of a name: a name broken across lines leaves one
    tables = text.split("verdict (")[0]
    words = set(tables.split()) - {"persistent", "oneshot"}  # the mode column's words
    forms = set(shown.values())
    for form in forms:
        pieces = {w for w in words if w not in forms and len(w) >= 3 and w != form
                  and (form.startswith(w) or form.endswith(w))}
        assert not pieces, (form, pieces)


@pytest.mark.parametrize(("width", "wide"), VIEWS, ids=["80", "wide-120"])
def test_a_shortened_name_is_in_the_legend(result: ResultFile, width: int,
                                           wide: bool) -> None:
    text = render(result, width, terminal=True, wide=wide)
    short = shortened(result, width, wide=wide)
    legend = " ".join(line for line in text.splitlines() if line.startswith("short names:")
                      or line.startswith(tuple(f"{s} = " for s in short.values())))
    for name, form in short.items():
        assert f"{form} = {name}" in " ".join(text.split()), (name, form)
        assert len(name) > len(form)
    assert bool(short) == ("short names:" in text), legend
    # the longest shipped name does not fit 80 columns beside the headline's numbers
    if width == 80:
        assert short == {"pydocs-mcp-composite": "pyd-comp"}


def test_wide_at_120_names_every_engine_whole(result: ResultFile) -> None:
    assert shortened(result, 120, wide=True) == {}


def test_pins_show_short_hashes_and_trees_fit(result: ResultFile) -> None:
    text = render(result, 80, terminal=False, wide=False)
    for pin, tree, _ in CORPORA.values():
        full = re.findall(r"[0-9a-f]{40,}", pin)[0]
        assert full not in text and f"{full[:12]}" in text
        tail = tree[-20:]
        assert any(line.startswith("tree=") and line.endswith(tail) and "…" in line
                   for line in text.splitlines()), tree
    assert "pin=git https://github.com/pallets/click@8f9a3e1bd5c2\n" in text


def test_flags_too_wide_for_the_row_are_listed_under_the_table(result: ResultFile) -> None:
    text = render(result, 80, terminal=True, wide=False)
    head = next(line for line in text.splitlines() if line.startswith("engine "))
    assert "flags" not in head.split()
    assert "  bm25s-persistent: errors=1 !! depth=3 concurrent=2" in text.splitlines()
    # at 120 in --wide they stand beside the rows
    wide = render(result, 120, terminal=True, wide=True)
    assert any(line.startswith("bm25s-persistent ") and "!! depth=3 concurrent=2" in line
               for line in wide.splitlines())


def test_wide_does_not_grow_with_the_cutoffs(result: ResultFile) -> None:
    more = result.model_copy(update={"cutoffs": [1, 3, 5, 10, 20, 50, 100]})
    three, seven = render(result, 120, terminal=True, wide=True), _render(
        more, 120, terminal=True, wide=True)
    width = max(len(line) for line in three.splitlines())
    assert max(len(line) for line in seven.splitlines()) == width
    assert len(seven.splitlines()) > len(three.splitlines())  # rows, not columns


def test_the_verdict_never_breaks_a_name_at_its_hyphen(result: ResultFile) -> None:
    text = render(result, 80, terminal=True, wide=False)
    block = text.split("verdict (")[1].split("short names:")[0]
    lines = block.splitlines()[1:]
    assert lines and max(len(line) for line in lines) <= 80
    assert not [line for line in lines if line.endswith("-")]
    assert "pydocs-mcp-composite" in block  # prose names the engines in full


# -- the rules


def test_every_shipped_name_longer_than_ten_has_a_fixed_short_form() -> None:
    assert set(SHORT_NAMES) == {name for name in SHIPPED if len(name) > 10}
    forms = list(SHORT_NAMES.values())
    assert len(set(forms)) == len(forms)
    assert all(len(form) <= 10 for form in forms)
    assert not set(forms) & set(SHIPPED)


def test_short_names_are_unique_and_kept_only_where_needed() -> None:
    names = ["grep", "pydocs-mcp-composite", "my-engine-alpha-large", "my-engine-beta-large",
             "my-engine-gamma-large", "my-e…large"]
    short = short_names(names, 10)
    assert short["pydocs-mcp-composite"] == "pyd-comp"
    assert "grep" not in short and "my-e…large" not in short
    forms = [*short.values(), "grep", "my-e…large"]
    assert len(set(forms)) == len(forms), short
    assert all(len(form) <= 10 and "…" in form for name, form in short.items()
               if name.startswith("my-"))
    assert short_names(names, 10) == short  # deterministic
    assert short_names(names, 40) == {}
    assert all(len(form) <= MIN_ROOM for form in short_names(names, 3).values())


def test_middle_and_hashes() -> None:
    assert middle("abcdefghij", 10) == "abcdefghij"
    assert middle("abcdefghijk", 7) == "abc…ijk"
    assert len(middle("/a/very/long/path/to/a/tree", 12)) == 12
    commit = "8f9a3e1bd5c2a4471e8c06f3c1d2b9a7e5f40d13"
    assert short_hashes(f"git https://x/y@{commit}") == "git https://x/y@8f9a3e1bd5c2"
    assert short_hashes("pypi rich==13.7.1 sha256:" + "ab" * 32) == \
        "pypi rich==13.7.1 sha256:" + "ab" * 6
    assert short_hashes("npm a@1 sha512-" + "Qx9+" * 20 + "==") == "npm a@1 sha512-" + \
        "Qx9+" * 3 + "…"
    assert short_hashes("path mini-proj (unpinned)") == "path mini-proj (unpinned)"


def test_where_lines() -> None:
    assert where_lines("/t", "path p (unpinned)", 80) == ["tree=/t  pin=path p (unpinned)"]
    tree = "/home/" + "x" * 100 + "/corpora/click/tree"
    lines = where_lines(tree, "git https://github.com/pallets/click@" + "a" * 40, 80)
    assert lines == ["tree=" + middle(tree, 75), "pin=git https://github.com/pallets/click@"
                     + "a" * 12]
    assert all(len(line) <= 80 for line in lines)


def test_wrapped_keeps_hyphenated_names_whole() -> None:
    text = "questions: pydocs-mcp-composite vs bm25s-persistent: " * 4
    for width in range(30, 60):
        lines = wrapped(text, width, "  ")
        assert all(len(line) <= width for line in lines)
        words = " ".join(lines).split()
        assert set(words) <= {"questions:", "pydocs-mcp-composite", "vs",
                              "bm25s-persistent:"}
