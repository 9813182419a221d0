"""The house keeps its shape: docs/ARCHITECTURE.md's map is the package, and its rules hold.

- the module map lists exactly the package's modules;
- every import between units is one the rules table allows (arrows point down);
- no import cycle between modules, lazy imports inside functions included;
- only render/ and cli.py import rich;
- no module over 400 lines, in the package, in scripts/, tools/ or benchmarks/.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "src" / "codesearch_bench"
DOC = REPO / "docs" / "ARCHITECTURE.md"
MAX_LINES = 400


def _section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package modules this module imports, anywhere in its body."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                module = ".".join(base + (node.module.split(".") if node.module else []))
            else:
                module = node.module or ""
            targets = [f"{module}.{alias.name}" for alias in node.names] + [module]
        elif isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        for target in targets:
            while target and target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]
            if target in modules and target != name:
                found.add(target)
                break
    return found


def _unit(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_the_map_lists_every_module_and_nothing_else() -> None:
    listed = set(re.findall(r"^\| `([\w/]+\.py)` \|", _section("Module map"), re.M))
    actual = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}
    assert listed == actual, (f"in the package, not in docs/ARCHITECTURE.md: "
                              f"{sorted(actual - listed)}; listed but gone: "
                              f"{sorted(listed - actual)}")


def test_imports_follow_the_rules_table() -> None:
    rules: dict[str, set[str]] = {}
    for unit, allowed in re.findall(r"^\| `(\w+)` \|(.*)\|$", _section("Who may import whom"),
                                    re.M):
        rules[unit] = set(re.findall(r"`(\w+)`", allowed))
    modules = _modules()
    broken = []
    for name, path in sorted(modules.items()):
        unit = _unit(name)
        assert unit in rules, f"{unit} has no row in the rules table"
        for dep in sorted(_imports(name, path, modules)):
            if _unit(dep) != unit and _unit(dep) not in rules[unit]:
                broken.append(f"{name} imports {dep}")
    assert not broken, "imports the rules table does not allow:\n" + "\n".join(broken)


def test_no_import_cycle() -> None:
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    # A package's __init__ importing its own submodules is how a package shows its face.
    graph = {name: {d for d in deps if not d.startswith(name + ".")}
             for name, deps in graph.items()}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                cycle = [*trail[trail.index(dep):], dep] if dep in trail else [node, dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep, [*trail, dep])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_only_render_and_cli_touch_rich() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "cli.py" or rel.startswith("render/"):
            continue
        if re.search(r"^\s*(from rich\b|import rich\b)", path.read_text(), re.M):
            offenders.append(rel)
    assert not offenders, offenders


def test_no_module_is_two_concepts_long() -> None:
    files = [p for folder in ("scripts", "tools", "benchmarks")
             for p in (REPO / folder).iterdir() if p.is_file()]
    scripts = [p for p in files if p.suffix == ".py" or
               p.read_text(errors="replace").startswith("#!/usr/bin/env python")]
    long = [f"{p.relative_to(REPO)}: {n} lines" for p in [*PACKAGE.rglob("*.py"), *scripts]
            if (n := len(p.read_text().splitlines())) > MAX_LINES]
    assert not long, long
