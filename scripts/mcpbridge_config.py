"""The MCP bridge's configuration: a bridge.json loaded, checked and rendered.

Templates are bench's own (codesearch_bench.engine.templates.rendering: jinja2 in its
sandbox, StrictUndefined), so a bridge config writes `{{ root }}` exactly as
an engine spec does. Every template is checked when the config loads, so an
unknown variable is an error naming the file and the field. The old bridge
syntax, `{name}`, is refused with a message saying what to write instead.

The extraction fields of the structured and json_text modes become a bench
ParseSpec (format json), read by bench's own parser; see mcpbridge_hits.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from codesearch_bench.engine.spec import ParseSpec
from codesearch_bench.engine.templates import rendering

MODES = ("structured", "json_text", "markdown", "blob")
HIT_FIELDS = ("path", "start", "end", "text", "score")
#: What bench sends with each request (engine/driver.py); `arguments` may use them.
REQUEST_FIELDS = frozenset({"query", "k", "n", "per_file", "root", "corpus", "state"})
REGEX_FLAGS = {"MULTILINE": re.MULTILINE, "DOTALL": re.DOTALL, "IGNORECASE": re.IGNORECASE}
CONFIG_KEYS = {"server", "setup", "tool", "arguments", "lookup", "extract", "error_prefixes",
               "timeout", "start_timeout", "description"}
DEFAULT_TIMEOUT = 90.0
DEFAULT_START_TIMEOUT = 600.0
#: markdown mode: a match's named groups are a record with these very field names.
MARKDOWN_RECORDS = ParseSpec(format="json", path="path", start="start", end="end",
                             text="text", score="score")

_WHOLE = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")
_JINJA = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_OLD_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DIGIT_PART = re.compile(r"(^|\.)(\d+)(?=\.|$)")


class BridgeError(Exception):
    """A problem with the configuration or the command line."""


class ToolFailure(Exception):
    """One request failed; the message becomes the error response."""


# -- templates ---------------------------------------------------------------
def render(template: Any, context: Mapping[str, Any]) -> Any:
    """Every string of a JSON value rendered; `"{{ name }}"` alone keeps the value's type.

    So `"limit": "{{ n }}"` sends the integer, as a tool's input schema expects.
    Raises rendering.TemplateProblem.
    """
    if isinstance(template, str):
        whole = _WHOLE.match(template)
        if whole and whole.group(1) in context:
            return context[whole.group(1)]
        return rendering.render(template, context)
    if isinstance(template, list):
        return [render(item, context) for item in template]
    if isinstance(template, dict):
        return {key: render(item, context) for key, item in template.items()}
    return template


def render_request(template: Any, context: Mapping[str, Any], where: str) -> Any:
    """render() for one request: a problem fails that request only."""
    try:
        return render(template, context)
    except rendering.TemplateProblem as exc:
        raise ToolFailure(f"{where}: {exc}") from None


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{where}.{key}")


def check(value: Any, allowed: Iterable[str], path: str, where: str) -> None:
    """Every template in a JSON value is valid and uses only allowed variables."""
    allowed = frozenset(allowed)
    for name, text in _strings(value, where):
        old = _OLD_PLACEHOLDER.search(_JINJA.sub("", text))
        if old:
            raise BridgeError(
                f"{path}: `{name}`: {old.group(0)} is the old bridge placeholder syntax; "
                f"templates are bench's: write {{{{ {old.group(1)} }}}}")
        try:
            rendering.check(text, allowed)
        except rendering.TemplateProblem as exc:
            raise BridgeError(f"{path}: `{name}`: {exc}") from None


# -- configuration -----------------------------------------------------------
@dataclass(frozen=True)
class Config:
    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str | None
    setup: list[tuple[str, dict[str, Any]]]
    tool: str
    arguments: dict[str, Any]  # templates, rendered per request
    mode: str
    lookup: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    error_prefixes: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    start_timeout: float = DEFAULT_START_TIMEOUT
    records: ParseSpec | None = None  # structured, json_text, markdown
    pattern: re.Pattern[str] | None = None  # markdown
    label: str | None = None  # blob: a template, rendered per request


def load_config(path: str, values: Mapping[str, str]) -> Config:
    """The config at path; `values` are the --set values the server and setup see."""
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except OSError as exc:
        raise BridgeError(f"{path}: cannot read: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise BridgeError(f"{path}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}") from None
    if not isinstance(raw, dict):
        raise BridgeError(f"{path}: a bridge config is a JSON object")
    unknown = set(raw) - CONFIG_KEYS
    if unknown:
        raise BridgeError(f"{path}: unknown keys {sorted(unknown)}; known: {sorted(CONFIG_KEYS)}")
    server = raw.get("server")
    if not isinstance(server, dict) or not isinstance(server.get("command"), str):
        raise BridgeError(f"{path}: `server.command` (a string) is required")
    extra = set(server) - {"command", "args", "env", "cwd"}
    if extra:
        raise BridgeError(f"{path}: unknown keys in `server`: {sorted(extra)}")
    check(server, values, path, "server")
    server = render(server, values)
    args = server.get("args", [])
    env = server.get("env", {})
    if not isinstance(args, list) or not isinstance(env, dict):
        raise BridgeError(f"{path}: `server.args` is a list and `server.env` an object")
    setup = []
    for i, step in enumerate(raw.get("setup", [])):
        if not isinstance(step, dict) or not isinstance(step.get("tool"), str):
            raise BridgeError(f"{path}: `setup[{i}]` needs a `tool` name")
        check(step.get("arguments", {}), values, path, f"setup[{i}].arguments")
        setup.append((step["tool"], render(step.get("arguments", {}), values)))
    tool = raw.get("tool")
    if not isinstance(tool, str):
        raise BridgeError(f"{path}: `tool` (the tool answering each query) is required")
    arguments = raw.get("arguments", {})
    if not isinstance(arguments, dict):
        raise BridgeError(f"{path}: `arguments` is an object")
    tables: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, table in (raw.get("lookup") or {}).items():
        if (not isinstance(table, dict) or not isinstance(table.get("key"), str)
                or not isinstance(table.get("values"), dict) or set(table) - {"key", "values"}):
            raise BridgeError(f"{path}: `lookup.{name}` is {{\"key\": NAME, \"values\": {{...}}}}")
        tables[name] = (table["key"], table["values"])
    per_request = {*values, *REQUEST_FIELDS, *tables}
    check(arguments, per_request, path, "arguments")
    prefixes = raw.get("error_prefixes", [])
    if not isinstance(prefixes, list) or not all(isinstance(p, str) and p for p in prefixes):
        raise BridgeError(f"{path}: `error_prefixes` is a list of non-empty strings")
    return Config(
        command=server["command"], args=[str(a) for a in args],
        env={str(k): str(v) for k, v in env.items()},
        cwd=str(server["cwd"]) if server.get("cwd") else None,
        setup=setup, tool=tool, arguments=arguments, lookup=tables,
        error_prefixes=tuple(prefixes),
        timeout=_seconds(raw.get("timeout", DEFAULT_TIMEOUT), path, "timeout"),
        start_timeout=_seconds(raw.get("start_timeout", DEFAULT_START_TIMEOUT), path,
                               "start_timeout"),
        **_extraction(raw.get("extract", {}), path, per_request),
    )


def _extraction(extract: Any, path: str, per_request: set[str]) -> dict[str, Any]:
    """The Config fields of the `extract` block: mode, and records, pattern or label."""
    if not isinstance(extract, dict) or extract.get("mode") not in MODES:
        raise BridgeError(f"{path}: `extract.mode` is one of {', '.join(MODES)}")
    mode = extract["mode"]
    allowed = {"structured": {"mode", "results", "error", *HIT_FIELDS},
               "json_text": {"mode", "results", "error", *HIT_FIELDS},
               "markdown": {"mode", "pattern", "flags"}, "blob": {"mode", "path"}}[mode]
    extra = set(extract) - allowed
    if extra:
        raise BridgeError(f"{path}: `extract` keys {sorted(extra)} do not apply to mode {mode!r}")
    if mode in ("structured", "json_text"):
        return {"mode": mode, "records": _records_spec(extract, path)}
    if mode == "markdown":
        return {"mode": mode, "records": MARKDOWN_RECORDS, "pattern": _pattern(extract, path)}
    if not isinstance(extract.get("path"), str):
        raise BridgeError(f"{path}: mode 'blob' needs `extract.path`, the hit's label")
    check(extract["path"], per_request, path, "extract.path")
    return {"mode": mode, "label": extract["path"]}


def _records_spec(extract: dict[str, Any], path: str) -> ParseSpec:
    """The extract block as the parse section of an engine spec would say it."""
    fields = {name: extract.get(name, name) for name in HIT_FIELDS}  # a field defaults to its name
    fields["results"] = extract.get("results") or None  # "" or absent: the document is the list
    fields["error"] = extract.get("error")
    if fields["path"] is None:
        raise BridgeError(f"{path}: `extract.path` names the field holding a hit's path")
    for name, value in fields.items():
        if isinstance(value, str) and _DIGIT_PART.search(value):
            # Bench's paths read `lines.0` as a key "0"; the old bridge read a list index.
            hint = _DIGIT_PART.sub(lambda m: f"[{m.group(2)}]", value)
            raise BridgeError(f"{path}: `extract.{name}` is {value!r}: a list index in a field "
                              f"path is written in brackets, as in engine specs: {hint!r}")
    try:
        return ParseSpec(format="json", **fields)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'extract'}: {e['msg']}"
                             for e in exc.errors())
        raise BridgeError(f"{path}: `extract`: {problems}") from None


def _pattern(extract: dict[str, Any], path: str) -> re.Pattern[str]:
    flags = 0
    for name in extract.get("flags", ["MULTILINE"]):
        if name not in REGEX_FLAGS:
            raise BridgeError(f"{path}: unknown regex flag {name!r}; use {sorted(REGEX_FLAGS)}")
        flags |= REGEX_FLAGS[name]
    try:
        pattern = re.compile(extract.get("pattern", ""), flags)
    except re.error as exc:
        raise BridgeError(f"{path}: `extract.pattern` is not a valid regex: {exc}") from None
    if "path" not in pattern.groupindex:
        raise BridgeError(f"{path}: `extract.pattern` needs a named group (?P<path>...)")
    extra_groups = set(pattern.groupindex) - set(HIT_FIELDS)
    if extra_groups:
        raise BridgeError(f"{path}: unknown named groups {sorted(extra_groups)}")
    return pattern


def _seconds(value: Any, path: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise BridgeError(f"{path}: `{key}` is a number of seconds > 0")
    return float(value)


def request_values(config: Config, values: Mapping[str, str],
                   request: Mapping[str, Any]) -> dict[str, Any]:
    """The --set values, the request's fields over them, then the lookup values."""
    merged: dict[str, Any] = {**values, **request}
    for name, (key, table) in config.lookup.items():
        if key not in merged:
            raise ToolFailure(f"lookup {name!r}: the request has no `{key}` to look up")
        if str(merged[key]) not in table:
            raise ToolFailure(f"lookup {name!r}: no entry for {key}={merged[key]!r} "
                              f"(known: {', '.join(sorted(table))})")
        merged[name] = table[str(merged[key])]
    return merged


def render_arguments(config: Config, merged: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's arguments for one request (merged: request_values)."""
    return render_request(config.arguments, merged, "arguments")
