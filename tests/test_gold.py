"""gold.py: symbol -> span on small per-language snippets (tests/gold_snippets/)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from codesearch_bench.corpus.languages import LANGUAGES, language_for
from codesearch_bench.gold.grammars import (
    KINDS,
    Definition,
    GoldError,
    definitions,
    grammar_versions,
)
from codesearch_bench.gold.resolve import resolve

SNIPPETS = Path(__file__).resolve().parent / "gold_snippets"

# (file, symbol, {kind/line}, (start, end, kind))
CASES = [
    # Python: decorators (a comment between them) included, trailing comment trimmed
    ("sample.py", "cached", {}, (8, 17, "function")),
    ("sample.py", "cached.helper", {}, (14, 15, "function")),
    ("sample.py", "Console", {}, (21, 37, "class")),
    ("sample.py", "Console.print", {}, (24, 25, "method")),
    ("sample.py", "Console.width", {"kind": "property_getter"}, (27, 29, "property_getter")),
    ("sample.py", "Console.width", {"kind": "property_setter"}, (31, 33, "property_setter")),
    ("sample.py", "Console.width", {"line": 32}, (31, 33, "property_setter")),
    ("sample.py", "Console.Options.update", {}, (36, 37, "method")),
    # C: the definition wins over its prototype; structs, typedefs, macros
    ("sample.c", "add", {}, (22, 25, "function")),
    ("sample.c", "add", {"line": 19}, (19, 19, "function")),
    ("sample.c", "describe", {}, (27, 36, "function")),
    ("sample.c", "point", {}, (8, 11, "struct")),
    ("sample.c", "node_t", {}, (13, 15, "type")),
    ("sample.c", "node", {}, (13, 15, "struct")),
    ("sample.c", "color", {}, (17, 17, "enum")),
    ("sample.c", "MAX", {}, (5, 6, "macro")),
    ("sample.c", "BUFFER_SIZE", {}, (4, 4, "macro")),
    ("sample.c", "handler", {}, (38, 38, "variable")),
    # C++: in-class and out-of-class methods, namespace (may be left out), template
    ("sample.cpp", "shapes.Circle.area", {}, (16, 18, "method")),
    ("sample.cpp", "Circle.area", {}, (16, 18, "method")),
    ("sample.cpp", "Circle.radius", {}, (10, 10, "method")),
    ("sample.cpp", "shapes.Circle", {}, (6, 14, "class")),
    ("sample.cpp", "shapes", {}, (4, 26, "namespace")),
    ("sample.cpp", "Box", {}, (20, 24, "struct")),
    ("sample.cpp", "Box.get", {}, (23, 23, "method")),
    ("sample.cpp", "main", {}, (28, 31, "function")),
    # Go: receivers *T and generic List[T]; doc comments excluded
    ("sample.go", "Server.Serve", {}, (14, 16, "method")),
    ("sample.go", "List.Push", {}, (18, 20, "method")),
    ("sample.go", "List.Len", {}, (22, 22, "method")),
    ("sample.go", "List", {}, (9, 11, "struct")),
    ("sample.go", "New", {}, (24, 27, "function")),
    # Rust: impl T and impl Trait for T both name methods T.method; attributes included
    ("sample.rs", "SearchWorker.search", {}, (11, 14, "method")),
    ("sample.rs", "SearchWorker.fmt", {}, (18, 20, "method")),
    ("sample.rs", "SearchWorker", {"kind": "struct"}, (4, 7, "struct")),
    ("sample.rs", "SearchWorker", {"kind": "impl", "line": 17}, (17, 21, "impl")),
    ("sample.rs", "Searcher.search", {}, (24, 24, "method")),
    ("sample.rs", "util.helper", {}, (28, 28, "function")),
    ("sample.rs", "square", {}, (31, 35, "macro")),
    # JavaScript: CommonJS assignments, arrow const, class
    ("sample.js", "proto", {}, (3, 5, "function")),
    ("sample.js", "proto.handle", {}, (10, 13, "function")),
    ("sample.js", "Router.prototype.route", {}, (15, 17, "method")),
    ("sample.js", "Router.route", {}, (15, 17, "method")),
    ("sample.js", "exports.parse", {}, (19, 21, "function")),
    ("sample.js", "normalize", {}, (23, 25, "function")),
    ("sample.js", "plain", {}, (27, 27, "function")),
    ("sample.js", "Widget.render", {}, (34, 36, "method")),
    # TypeScript: interface, decorated class and method, overloads -> the implementation
    ("sample.ts", "Shape", {}, (1, 4, "interface")),
    ("sample.ts", "Circle", {}, (6, 18, "class")),
    ("sample.ts", "Circle.area", {}, (14, 17, "method")),
    ("sample.ts", "Id", {}, (20, 20, "type")),
    ("sample.ts", "over", {}, (24, 26, "function")),
    ("sample.tsx", "Props", {}, (3, 5, "interface")),
    ("sample.tsx", "Header", {}, (7, 9, "function")),
    ("sample.tsx", "App", {}, (11, 17, "function")),
    # Java: overloads told apart by line; annotations included, javadoc excluded
    ("Sample.java", "Sample.add", {"line": 14}, (14, 16, "method")),
    ("Sample.java", "Sample.add", {"line": 20}, (18, 21, "method")),
    ("Sample.java", "Sample.Sample", {}, (9, 11, "method")),
    ("Sample.java", "Sample.Inner.run", {}, (24, 24, "method")),
]


@pytest.mark.parametrize(("path", "symbol", "extra", "expected"), CASES,
                         ids=[f"{c[0]}:{c[1]}:{'/'.join(map(str, c[2].values()))}"
                              for c in CASES])
def test_resolve(path: str, symbol: str, extra: dict, expected: tuple[int, int, str]) -> None:
    span = resolve(SNIPPETS, path, symbol, **extra)
    assert (span.start, span.end, span.kind) == expected
    assert span.path == path


def test_every_snippet_language_is_covered() -> None:
    languages = {language_for(p.name) for p in SNIPPETS.iterdir()}
    assert languages == set(LANGUAGES.values())


def test_python_snippet_agrees_with_ast() -> None:
    source = (SNIPPETS / "sample.py").read_bytes()
    expected = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            start = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            expected.add((node.name, start, node.end_lineno))
    assert {(d.name, d.start, d.end) for d in definitions(source, "python")} == expected


def test_definitions_are_ordered_and_well_formed() -> None:
    for path in SNIPPETS.iterdir():
        language = language_for(path.name)
        assert language is not None
        defs = definitions(path.read_bytes(), language)
        assert defs, path
        assert defs == sorted(defs, key=lambda d: (d.start, -d.end, d.qualname))
        for d in defs:
            assert isinstance(d, Definition)
            assert d.kind in KINDS, d
            assert 1 <= d.start <= d.end, d
            assert d.qualname.split(".")[-1] == d.name, d


def test_declarations_are_flagged() -> None:
    defs = definitions((SNIPPETS / "sample.c").read_bytes(), "c")
    adds = [(d.start, d.is_declaration) for d in defs if d.qualname == "add"]
    assert adds == [(19, True), (22, False)]
    defs = definitions((SNIPPETS / "sample.rs").read_bytes(), "rust")
    assert [d.is_declaration for d in defs if d.qualname == "Searcher.search"] == [True]


def test_struct_and_impl_of_one_name_are_ambiguous() -> None:
    with pytest.raises(GoldError) as info:
        resolve(SNIPPETS, "sample.rs", "SearchWorker")
    error = info.value
    assert "ambiguous" in str(error)
    assert sorted((d.kind, d.start, d.end) for d in error.candidates) == [
        ("impl", 9, 15), ("impl", 17, 21), ("struct", 4, 7)]
    for text in ("struct", "impl", "4-7", "9-15", "17-21", "kind or line"):
        assert text in str(error)


def test_property_getter_and_setter_are_ambiguous_without_kind() -> None:
    with pytest.raises(GoldError) as info:
        resolve(SNIPPETS, "sample.py", "Console.width")
    assert {d.kind for d in info.value.candidates} == {"property_getter", "property_setter"}


def test_java_overloads_are_ambiguous_without_line() -> None:
    with pytest.raises(GoldError) as info:
        resolve(SNIPPETS, "Sample.java", "Sample.add")
    assert [d.start for d in info.value.candidates] == [14, 18]


def test_misspelled_symbol_gets_suggestions() -> None:
    with pytest.raises(GoldError) as info:
        resolve(SNIPPETS, "sample.py", "Consle.print")
    assert info.value.suggestions[0] == "Console.print"
    assert "'Consle.print'" in str(info.value) and "no such definition" in str(info.value)
    assert info.value.candidates == []


def test_kind_or_line_that_matches_nothing() -> None:
    with pytest.raises(GoldError, match="kind 'struct'"):
        resolve(SNIPPETS, "sample.py", "Console.print", kind="struct")
    with pytest.raises(GoldError, match="line 5"):
        resolve(SNIPPETS, "sample.py", "Console.print", line=5)
    with pytest.raises(GoldError, match="unknown kind"):
        resolve(SNIPPETS, "sample.py", "Console.print", kind="routine")


def test_missing_file_and_unknown_type(tmp_path: Path) -> None:
    with pytest.raises(GoldError, match="no such file"):
        resolve(SNIPPETS, "nope.py", "x")
    (tmp_path / "notes.txt").write_text("hello\n")
    with pytest.raises(GoldError, match="no grammar"):
        resolve(tmp_path, "notes.txt", "hello")


def test_resolve_sees_edits(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("def f():\n    pass\n")
    assert resolve(tmp_path, "m.py", "f").end == 2
    target.write_text("\n\ndef f():\n    x = 1\n    return x\n")
    span = resolve(tmp_path, "m.py", "f")
    assert (span.start, span.end) == (3, 5)


def test_header_language_follows_h_as_cpp(tmp_path: Path) -> None:
    assert language_for("a/b.h") == "c"
    assert language_for("a/b.h", h_as_cpp=True) == "cpp"
    assert language_for("x.TSX") == "tsx"
    assert language_for("x.md") is None
    (tmp_path / "w.h").write_text("namespace w {\nclass A {\n  int f() { return 1; }\n};\n}\n")
    span = resolve(tmp_path, "w.h", "w.A.f", h_as_cpp=True)
    assert (span.start, span.end, span.kind) == (3, 3, "method")


def test_c_typedef_struct_of_one_name_is_not_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "r.h").write_text("typedef struct reply {\n  int type;\n} reply;\n")
    span = resolve(tmp_path, "r.h", "reply")
    assert (span.start, span.end) == (1, 3)


def test_js_object_methods_and_getters() -> None:
    source = (b"module.exports = {\n  list() {},\n  get size() { return 1; },\n"
              b"  nested: { deep: () => 1 },\n};\n")
    got = {(d.qualname, d.kind, d.start) for d in definitions(source, "javascript")}
    assert got == {("module.exports", "variable", 1), ("module.exports.list", "method", 2),
                   ("module.exports.size", "property_getter", 3),
                   ("module.exports.nested.deep", "method", 4)}


def test_grammar_versions() -> None:
    versions = grammar_versions()
    assert "tree-sitter" in versions and "tree-sitter-typescript" in versions
    assert all(v and v != "not installed" for v in versions.values()), versions


def test_gold_error_is_a_bench_error() -> None:
    from codesearch_bench.errors import BenchError

    error = GoldError("x", candidates=None, suggestions=["a"])
    assert isinstance(error, BenchError) and error.exit_code == 3
    assert error.suggestions == ["a"] and error.candidates == []
