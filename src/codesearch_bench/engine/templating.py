"""Render spec templates: one argv element, env entry or stdin at a time.

Templates are jinja2 in its immutable sandbox with StrictUndefined, so a typo
is an error rather than an empty string, and a template cannot reach Python
internals. Each argv element renders on its own: a query is always exactly
one argument, whatever quotes or semicolons it holds, because no shell ever
sees it. Which variables exist, and their values, is `variables.py`'s
business; this module only renders.

Specs written for the Go codesearch-bench use `{{.Root}}`; those placeholders
are rewritten to `{{ root }}` before jinja sees them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

import jinja2
from jinja2 import meta
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

_GO_STYLE = re.compile(r"\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

_ENV = ImmutableSandboxedEnvironment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
)


class TemplateProblem(ValueError):
    """A template that cannot be compiled or rendered; the caller adds the field."""


def go_to_jinja(template: str) -> str:
    """Rewrite Go text/template field references (`{{.PerFile}}`) to `{{ per_file }}`."""

    def repl(match: re.Match[str]) -> str:
        return "{{ " + _CAMEL.sub("_", match.group(1)).lower() + " }}"

    return _GO_STYLE.sub(repl, template)


@lru_cache(maxsize=1024)
def _compile(template: str) -> jinja2.Template:
    try:
        return _ENV.from_string(go_to_jinja(template))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateProblem(f"template syntax error: {exc.message}") from None


def variables_used(template: str) -> set[str]:
    """The variables a template refers to."""
    try:
        ast = _ENV.parse(go_to_jinja(template))
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateProblem(f"template syntax error: {exc.message}") from None
    return set(meta.find_undeclared_variables(ast))


def check(template: str, allowed: Iterable[str]) -> None:
    """Raise TemplateProblem when the template is malformed or uses an unknown variable.

    A trial render with placeholder values also catches sandbox violations
    (`{{ ''.__class__ }}`) when the spec loads instead of mid-run.
    """
    allowed = frozenset(allowed)
    unknown = variables_used(template) - allowed
    if unknown:
        names = ", ".join(sorted(unknown))
        raise TemplateProblem(
            f"unknown template variable {names}; available here: {', '.join(sorted(allowed))}"
        )
    render(template, {name: _placeholder(name) for name in allowed})


def _placeholder(name: str) -> object:
    return 1 if name in {"k", "n", "per_file"} else f"<{name}>"


def render(template: str, context: Mapping[str, object]) -> str:
    """Render one template string."""
    if "{" not in template:
        return template  # a literal argument: nothing to render
    try:
        return _compile(template).render(**context)
    except SecurityError as exc:
        raise TemplateProblem(f"refused by the template sandbox: {exc}") from None
    except jinja2.UndefinedError as exc:
        raise TemplateProblem(
            f"{exc.message}; available: {', '.join(sorted(context))}"
        ) from None
    except jinja2.TemplateError as exc:
        raise TemplateProblem(f"template error: {exc}") from None


def render_argv(command: Iterable[str], context: Mapping[str, object]) -> list[str]:
    """Render each argv element separately; an element never splits or merges."""
    return [render(part, context) for part in command]


def render_env(entries: Iterable[str], context: Mapping[str, object]) -> dict[str, str]:
    """Render `KEY=value` entries into a mapping (the key is not templated)."""
    out: dict[str, str] = {}
    for entry in entries:
        key, _, value = entry.partition("=")
        out[key] = render(value, context)
    return out
