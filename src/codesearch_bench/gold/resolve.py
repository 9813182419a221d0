"""Gold symbol -> span: find one named definition in a file of a candidate tree.

``resolve`` explains, with candidates or suggestions, when a symbol cannot be
found or names several definitions. The span policy is written down in
protocol/PROTOCOL.md, "Gold spans".
"""

from __future__ import annotations

from pathlib import Path

from rapidfuzz import fuzz, process

from ..corpus.languages import LANGUAGES, language_for
from ..model import Span
from .grammars import KINDS, Definition, GoldError, file_definitions

_NAMESPACES = frozenset({"namespace", "module"})


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
    defs = file_definitions(str(file), stat.st_mtime_ns, stat.st_size, language)
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


