"""Render spec templates: one argv element, env entry or stdin at a time.

Templates are jinja2 in its immutable sandbox with StrictUndefined, so a typo
is an error rather than an empty string, and a template cannot reach Python
internals; `sandbox.py` also holds every render to a budget of steps, bytes
and time, so a template bomb is an error, not an outage. Each argv element
renders on its own: a query is always exactly one argument, whatever quotes
or semicolons it holds, because no shell ever sees it. Which variables exist,
and their values, is `variables.py`'s business; this module only renders.
Every problem, whatever jinja2 or Python raised, leaves as a TemplateProblem.

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

from . import sandbox
from .allowance import MAX_TEMPLATE_CHARS, RenderLimit

_GO_STYLE = re.compile(r"\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

_ENV = sandbox.BoundedEnvironment(
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


def _too_long(template: str) -> None:
    if len(template) > MAX_TEMPLATE_CHARS:
        raise TemplateProblem(f"a template of {len(template)} characters; at most "
                              f"{MAX_TEMPLATE_CHARS} (put long text in a file the spec's "
                              f"command reads)")


def _compile_problem(exc: Exception) -> TemplateProblem:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        return TemplateProblem(f"template syntax error: {exc.message}")
    if isinstance(exc, RecursionError | MemoryError):
        return TemplateProblem("template nested too deep to compile")
    return TemplateProblem(f"template cannot be compiled: {type(exc).__name__}: {exc}")


@lru_cache(maxsize=1024)
def _compile(template: str) -> jinja2.Template:
    _too_long(template)
    try:
        return _ENV.from_string(go_to_jinja(template))
    except Exception as exc:  # jinja's parser and Python's compiler raise more than one kind
        raise _compile_problem(exc) from None


def variables_used(template: str) -> set[str]:
    """The variables a template refers to."""
    _too_long(template)
    try:
        ast = _ENV.parse(go_to_jinja(template))
        return set(meta.find_undeclared_variables(ast))
    except Exception as exc:
        raise _compile_problem(exc) from None


def check(template: str, allowed: Iterable[str]) -> None:
    """Raise TemplateProblem when the template is malformed or uses an unknown variable.

    A trial render with placeholder values also catches sandbox violations
    (`{{ ''.__class__ }}`) when the spec loads instead of mid-run.
    """
    if "{" not in template:
        return  # a literal: no syntax, nothing to render
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
    """Render one template string, within the sandbox's budget."""
    if "{" not in template:
        return template  # a literal argument: nothing to render
    compiled = _compile(template)
    try:
        return sandbox.render(compiled, context)
    except SecurityError as exc:
        raise TemplateProblem(f"refused by the template sandbox: {exc}") from None
    except RenderLimit as exc:
        raise TemplateProblem(f"refused by the template sandbox: {exc}") from None
    except jinja2.UndefinedError as exc:
        raise TemplateProblem(
            f"{exc.message}; available: {', '.join(sorted(context))}"
        ) from None
    except jinja2.TemplateError as exc:
        raise TemplateProblem(f"template error: {exc}") from None
    except RecursionError:
        raise TemplateProblem("template nested too deep for the interpreter's stack") from None
    except MemoryError:
        raise TemplateProblem("template ran out of memory while rendering") from None
    except Exception as exc:  # a template's arithmetic or a filter's argument went wrong
        raise TemplateProblem(f"template error: {type(exc).__name__}: {exc}") from None


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
