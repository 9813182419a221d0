"""Gold spans: a symbol named in a query's gold item -> the line span its grammar gives it.

``definitions`` lists what a source file defines (tree-sitter, one grammar wheel per
language, parsers built lazily and cached); ``resolve`` finds one gold symbol in a file of a
candidate tree and explains, with candidates or suggestions, when it cannot. The per-language
naming rules live in ``gold_rules.py``; the span policy is written down in
protocol/PROTOCOL.md, "Gold spans".
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from rapidfuzz import fuzz, process
from tree_sitter import Language, Parser

from codesearch_bench.errors import BenchError
from codesearch_bench.gold_rules import walk

#: The kinds a definition can have (``kind`` in a gold item must be one of them).
KINDS = frozenset({
    "function", "method", "class", "struct", "union", "enum", "interface", "trait", "impl",
    "module", "namespace", "type", "macro", "variable",
    "property_getter", "property_setter", "property_deleter",
})

#: File extension (without the dot) -> language. ``h`` is C unless ``h_as_cpp``.
LANGUAGES: dict[str, str] = {
    "py": "python", "pyi": "python",
    "c": "c", "h": "c",
    "cc": "cpp", "cpp": "cpp", "cxx": "cpp", "c++": "cpp", "hpp": "cpp", "hh": "cpp",
    "hxx": "cpp", "h++": "cpp",
    "go": "go",
    "rs": "rust",
    "js": "javascript", "mjs": "javascript", "cjs": "javascript", "jsx": "javascript",
    "ts": "typescript", "mts": "typescript", "cts": "typescript",
    "tsx": "tsx",
    "java": "java",
}

# language -> (distribution, module, function returning the grammar)
_GRAMMARS: dict[str, tuple[str, str, str]] = {
    "python": ("tree-sitter-python", "tree_sitter_python", "language"),
    "c": ("tree-sitter-c", "tree_sitter_c", "language"),
    "cpp": ("tree-sitter-cpp", "tree_sitter_cpp", "language"),
    "go": ("tree-sitter-go", "tree_sitter_go", "language"),
    "rust": ("tree-sitter-rust", "tree_sitter_rust", "language"),
    "javascript": ("tree-sitter-javascript", "tree_sitter_javascript", "language"),
    "typescript": ("tree-sitter-typescript", "tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree-sitter-typescript", "tree_sitter_typescript", "language_tsx"),
    "java": ("tree-sitter-java", "tree_sitter_java", "language"),
}

_NAMESPACES = frozenset({"namespace", "module"})


@dataclass(frozen=True)
class Definition:
    """One definition in a source file, as the grammar sees it."""

    qualname: str  # dotted nesting: "Console.print", Go "Server.Serve", Rust "Worker.search"
    name: str  # last component of qualname
    kind: str  # one of KINDS
    start: int  # 1-based first line, decorators/attributes included
    end: int  # 1-based last line, inclusive, trailing comments trimmed
    is_declaration: bool = False  # no body: C/C++ prototype, interface/trait method, overload


@dataclass(frozen=True)
class Span:
    """The answer to a gold item: where its symbol is defined."""

    path: str
    start: int
    end: int
    qualname: str
    kind: str


class GoldError(BenchError):
    """A gold reference that does not resolve to exactly one span.

    The message says what failed (and lists the candidates of an ambiguous reference);
    ``suggestions`` holds the nearest qualnames of an unknown symbol for the caller to show.
    """

    exit_code = 3

    def __init__(self, message: str, *, candidates: list[Definition] | None = None,
                 suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.candidates: list[Definition] = list(candidates or [])
        self.suggestions: list[str] = list(suggestions or [])


def language_for(path: str, *, h_as_cpp: bool = False) -> str | None:
    """The language of ``path`` by its extension, or None when no grammar covers it."""
    suffix = os.path.splitext(path)[1].lower().lstrip(".")
    if suffix == "h" and h_as_cpp:
        return "cpp"
    return LANGUAGES.get(suffix)


@functools.cache
def _parser(language: str) -> Parser:
    if language not in _GRAMMARS:
        raise GoldError(f"no grammar for language {language!r}; known: "
                        f"{', '.join(sorted(_GRAMMARS))}")
    distribution, module_name, function = _GRAMMARS[language]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise GoldError(f"the {language} grammar is not installed: pip install {distribution}"
                        ) from exc
    return Parser(Language(getattr(module, function)()))


def definitions(source: bytes, language: str) -> list[Definition]:
    """Every definition in ``source``, ordered by first line (then outermost first)."""
    tree = _parser(language).parse(source)
    found = [
        Definition(".".join(names), names[-1], kind, start, max(start, end), declaration)
        for names, kind, start, end, declaration in walk(tree.root_node, language)
        if names and all(names)
    ]
    return sorted(found, key=lambda d: (d.start, -d.end, d.qualname))


@functools.lru_cache(maxsize=256)
def _file_definitions(path: str, mtime_ns: int, size: int, language: str
                      ) -> tuple[Definition, ...]:
    return tuple(definitions(Path(path).read_bytes(), language))


def _matches(defs: tuple[Definition, ...], symbol: str) -> list[Definition]:
    """Exact qualname; else JS ``Foo.bar`` for ``Foo.prototype.bar``; else the name with its
    enclosing namespaces (C++ namespace, Rust mod, TS namespace) left out."""
    exact = [d for d in defs if d.qualname == symbol]
    if exact:
        return exact
    if "prototype" not in symbol.split("."):
        alias = [d for d in defs
                 if ".".join(p for p in d.qualname.split(".") if p != "prototype") == symbol
                 and ".prototype." in f".{d.qualname}."]
        if alias:
            return alias
    spaces = {d.qualname for d in defs if d.kind in _NAMESPACES}
    return [d for d in defs if any(d.qualname == f"{ns}.{symbol}" for ns in spaces)]


def _describe(defs: list[Definition]) -> str:
    return "; ".join(
        f"{d.qualname} ({d.kind}{', declaration' if d.is_declaration else ''}) "
        f"at lines {d.start}-{d.end}" for d in defs)


def _pick_line(defs: list[Definition], line: int) -> list[Definition]:
    inside = [d for d in defs if d.start <= line <= d.end]
    exact = [d for d in inside if d.start == line]
    if exact or not inside:
        return exact
    smallest = min(d.end - d.start for d in inside)
    return [d for d in inside if d.end - d.start == smallest]


def resolve(root: Path, path: str, symbol: str, *, kind: str | None = None,
            line: int | None = None, h_as_cpp: bool = False) -> Span:
    """The span of ``symbol`` in ``root/path``; GoldError when it is missing or ambiguous.

    ``kind`` and ``line`` (any line inside the wanted definition) narrow same-named
    definitions; a declaration without a body yields to a definition of the same name.
    """
    where = f"{path}: {symbol!r}"
    if kind is not None and kind not in KINDS:
        raise GoldError(f"{where}: unknown kind {kind!r}; kinds are {', '.join(sorted(KINDS))}")
    language = language_for(path, h_as_cpp=h_as_cpp)
    if language is None:
        raise GoldError(f"{path}: no grammar for this file type; give a file-level gold item "
                        f"(no symbol) or use one of .{', .'.join(sorted(LANGUAGES))}")
    file = Path(root) / path
    if not file.is_file():
        raise GoldError(f"{path}: no such file under {root}")
    stat = file.stat()
    defs = _file_definitions(str(file), stat.st_mtime_ns, stat.st_size, language)
    named = _matches(defs, symbol)
    if not named:
        choices = sorted({d.qualname for d in defs})
        suggestions = [c for c, _, _ in process.extract(
            symbol, choices, scorer=fuzz.WRatio, limit=5, score_cutoff=50)]
        raise GoldError(f"{where}: no such definition in this {language} file",
                        suggestions=suggestions)
    chosen = named
    if kind is not None:
        chosen = [d for d in chosen if d.kind == kind]
        if not chosen:
            raise GoldError(f"{where}: no definition of kind {kind!r}; found {_describe(named)}",
                            candidates=named)
    if line is not None:
        chosen = _pick_line(chosen, line)
        if not chosen:
            raise GoldError(f"{where}: no definition covers line {line}; found "
                            f"{_describe(named)}", candidates=named)
    bodies = [d for d in chosen if not d.is_declaration]
    chosen = bodies or chosen
    if len({(d.start, d.end) for d in chosen}) > 1:
        raise GoldError(f"{where} is ambiguous: {_describe(chosen)}; add kind or line to the "
                        f"gold item", candidates=chosen)
    best = chosen[0]
    return Span(path, best.start, best.end, best.qualname, best.kind)


def grammar_versions() -> dict[str, str]:
    """Installed versions of tree-sitter and every grammar wheel (for the result JSON)."""
    versions: dict[str, str] = {}
    for distribution in ["tree-sitter", *sorted({g[0] for g in _GRAMMARS.values()})]:
        try:
            versions[distribution] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[distribution] = "not installed"
    return versions
