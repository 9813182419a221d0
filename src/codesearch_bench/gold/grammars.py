"""The grammars: one tree-sitter wheel per language, and what a source file defines.

Parsers are built lazily and cached; ``definitions`` lists every definition of a
file by the per-language rules in ``gold/rules``.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tree_sitter import Language, Parser, Tree

from ..errors import QueryError
from .rules import walk

#: The kinds a definition can have (``kind`` in a gold item must be one of them).
KINDS = frozenset({
    "function", "method", "class", "struct", "union", "enum", "interface", "trait", "impl",
    "module", "namespace", "type", "macro", "variable",
    "property_getter", "property_setter", "property_deleter",
})

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


@dataclass(frozen=True)
class Definition:
    """One definition in a source file, as the grammar sees it."""

    qualname: str  # dotted nesting: "Console.print", Go "Server.Serve", Rust "Worker.search"
    name: str  # last component of qualname
    kind: str  # one of KINDS
    start: int  # 1-based first line, decorators/attributes included
    end: int  # 1-based last line, inclusive, trailing comments trimmed
    is_declaration: bool = False  # no body: C/C++ prototype, interface/trait method, overload



class GoldError(QueryError):
    """A gold reference that does not resolve to exactly one span.

    The message says what failed (and lists the candidates of an ambiguous reference);
    ``suggestions`` holds the nearest qualnames of an unknown symbol for the caller to show.
    """

    hint = ""  # the message itself says what to change in the gold item

    def __init__(self, message: str, *, candidates: list[Definition] | None = None,
                 suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.candidates: list[Definition] = list(candidates or [])
        self.suggestions: list[str] = list(suggestions or [])


@functools.cache
def grammar(language: str) -> Language:
    if language not in _GRAMMARS:
        raise GoldError(f"no grammar for language {language!r}; known: "
                        f"{', '.join(sorted(_GRAMMARS))}")
    distribution, module_name, function = _GRAMMARS[language]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise GoldError(f"the {language} grammar is not installed: pip install {distribution}"
                        ) from exc
    return Language(getattr(module, function)())


@functools.cache
def _parser(language: str) -> Parser:
    return Parser(grammar(language))


def parse(source: bytes, language: str) -> Tree:
    return _parser(language).parse(source)


def definitions(source: bytes, language: str) -> list[Definition]:
    """Every definition in ``source``, ordered by first line (then outermost first)."""
    return definitions_of(parse(source, language), language)


def definitions_of(tree: Tree, language: str) -> list[Definition]:
    found = [
        Definition(".".join(names), names[-1], kind, start, max(start, end), declaration)
        for names, kind, start, end, declaration in walk(tree.root_node, language)
        if names and all(names)
    ]
    return sorted(found, key=lambda d: (d.start, -d.end, d.qualname))


@functools.lru_cache(maxsize=256)
def file_definitions(path: str, mtime_ns: int, size: int, language: str
                      ) -> tuple[Definition, ...]:
    return tuple(definitions(Path(path).read_bytes(), language))


def grammar_versions() -> dict[str, str]:
    """Installed versions of tree-sitter and every grammar wheel (for the result JSON)."""
    versions: dict[str, str] = {}
    for distribution in ["tree-sitter", *sorted({g[0] for g in _GRAMMARS.values()})]:
        try:
            versions[distribution] = metadata.version(distribution)
        except metadata.PackageNotFoundError:
            versions[distribution] = "not installed"
    return versions
