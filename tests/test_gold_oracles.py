"""gold.py against independent oracles: the stdlib ``ast`` for Python, universal-ctags for C.

The Python oracle walks a deterministic half of the running interpreter's stdlib (files up to
300 KB, site-packages left out) under a time budget; ``tools/gold-agreement`` runs the same
comparison over every file. Run with ``pytest -s`` to see the agreement figures.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sysconfig
import time
import warnings
from collections import Counter
from pathlib import Path

import pytest

from codesearch_bench.gold.grammars import Definition, definitions

SNIPPETS = Path(__file__).resolve().parent / "gold_snippets"
MAX_BYTES = 300_000
STRIDE = 2  # every other file, in sorted order
BUDGET = 12.0  # seconds of comparing before the sample stops growing
THIRD_PARTY = frozenset({"site-packages", "dist-packages"})

Key = tuple[str, int, int]  # qualname, first line, last line
BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def ast_spans(tree: ast.AST) -> Counter[Key]:
    """Function and class spans as ``ast`` sees them: first decorator's line to end_lineno."""
    found: Counter[Key] = Counter()
    stack: list[tuple[ast.AST, str]] = [(tree, "")]
    while stack:
        node, scope = stack.pop()
        # definitions are statements: only statement lists need walking, never expressions
        children = [c for field in BLOCKS for c in getattr(node, field, None) or ()]
        for child in children:
            inner = scope
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                inner = f"{scope}.{child.name}" if scope else child.name
                start = child.decorator_list[0].lineno if child.decorator_list else child.lineno
                found[(inner, start, child.end_lineno or child.lineno)] += 1
            stack.append((child, inner))
    return found


def gold_spans(source: bytes) -> Counter[Key]:
    return Counter((d.qualname, d.start, d.end) for d in definitions(source, "python"))


def stdlib_sample() -> list[Path]:
    files = []
    for folder, dirs, names in os.walk(sysconfig.get_paths()["stdlib"]):
        dirs[:] = sorted(d for d in dirs if d not in THIRD_PARTY)
        files += [Path(folder, n) for n in names if n.endswith(".py")]
    files = sorted(p for p in files if p.is_file() and p.stat().st_size <= MAX_BYTES)
    return files[::STRIDE]


def test_python_spans_agree_with_ast_on_the_stdlib() -> None:
    files = stdlib_sample()
    assert files, "no stdlib sources found"
    began = time.perf_counter()
    agree = total = compared = 0
    misses: list[str] = []
    for path in files:
        if time.perf_counter() - began > BUDGET:
            break
        source = path.read_bytes()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in old test files
                tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # Python 2 fixtures, deliberately broken files
        want, got = ast_spans(tree), gold_spans(source)
        agree += sum((want & got).values())
        total += sum((want | got).values())
        compared += 1
        misses.extend(f"{path.name}: ast {k}" for k in want - got)
    ratio = agree / total
    print(f"\nstdlib agreement with ast: {ratio:.5f} ({agree}/{total} definitions, "
          f"{compared} of {len(files)} sampled files, {time.perf_counter() - began:.1f} s)")
    assert total >= 2_000, "too few definitions compared to mean anything"
    assert ratio >= 0.995, "\n".join(misses[:30])


# --- C against universal-ctags ------------------------------------------------------------

SYSTEM_C = [Path("/usr/include/linux/cec-funcs.h"), *sorted(Path("/usr/include/X11/Xtrans")
                                                              .glob("*.c"))]


def _ctags() -> str:
    ctags = shutil.which("ctags")
    if ctags is None:
        pytest.skip("ctags is not on PATH (install universal-ctags)")
    version = subprocess.run([ctags, "--version"], capture_output=True, text=True).stdout
    if "Universal Ctags" not in version or "+json" not in version:
        pytest.skip(f"needs Universal Ctags with JSON output; found {version.splitlines()[:1]}")
    return ctags


def ctags_tags(ctags: str, path: Path) -> list[dict]:
    out = subprocess.run(
        [ctags, "--fields=+ne", "--output-format=json", "--language-force=C",
         "--kinds-C=fsdg", "-f", "-", str(path)],
        capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def _same_start(definition: Definition, tag_line: int, lines: list[str]) -> bool:
    """ctags puts a function at its name's line; gold starts at the return type. They agree
    when only the declaration's leading specifiers lie between."""
    if definition.start == tag_line:
        return True
    between = "".join(lines[definition.start - 1 : tag_line - 1])
    return definition.start < tag_line and not any(c in between for c in ";{}")


def c_agreement(ctags: str, path: Path) -> tuple[int, int, list[str]]:
    """(agreeing, compared, disagreements): ctags' function definitions plus any function
    definition only gold.py sees."""
    source = path.read_bytes()
    lines = source.decode("utf-8", "replace").split("\n")  # not splitlines(): form feeds
    gold = [d for d in definitions(source, "c") if d.kind == "function" and not d.is_declaration]
    tags = [t for t in ctags_tags(ctags, path) if t.get("kind") == "function"]
    agree, misses = 0, []
    for tag in tags:
        match = [d for d in gold if d.name == tag["name"] and d.start <= tag["line"] <= d.end]
        if match and match[0].end == tag.get("end") and _same_start(match[0], tag["line"], lines):
            agree += 1
        else:
            misses.append(f"{path.name}: ctags {tag['name']} {tag['line']}-{tag.get('end')}, "
                          f"gold {[(d.start, d.end) for d in match]}")
    tagged = {(t["name"], t.get("end")) for t in tags}
    extra = [f"{path.name}: gold only {d.name} {d.start}-{d.end}" for d in gold
             if (d.name, d.end) not in tagged]
    return agree, len(tags) + len(extra), misses + extra


def test_c_functions_agree_with_ctags_on_our_snippets() -> None:
    ctags = _ctags()
    for name in ("oracle.c", "sample.c"):
        agree, total, misses = c_agreement(ctags, SNIPPETS / name)
        assert total >= 2 and agree == total, misses


def test_c_types_and_macros_agree_with_ctags_on_our_snippets() -> None:
    ctags = _ctags()
    kinds = {"macro": "macro", "struct": "struct", "enum": "enum"}
    for name in ("oracle.c", "sample.c"):
        path = SNIPPETS / name
        tags = {(t["name"], kinds[t["kind"]], t["line"], t["end"])
                for t in ctags_tags(ctags, path) if t.get("kind") in kinds and "end" in t}
        gold = {(d.name, d.kind, d.start, d.end)
                for d in definitions(path.read_bytes(), "c") if d.kind in kinds.values()}
        assert tags and tags == gold


def test_c_functions_agree_with_ctags_on_system_sources() -> None:
    ctags = _ctags()
    present = [p for p in SYSTEM_C if p.is_file()]
    if not present:
        pytest.skip("none of the system C sources used as a sample is installed")
    agree = total = 0
    misses: list[str] = []
    for path in present:
        a, t, m = c_agreement(ctags, path)
        agree, total, misses = agree + a, total + t, misses + m
    print(f"\nC agreement with ctags: {agree}/{total} function definitions "
          f"in {len(present)} system files")
    # tree-sitter cannot parse a function whose braces are split by #if branches; rare
    assert total and agree / total >= 0.95, misses
