"""Engine specs: the JSON file that describes how to drive one search tool.

The models are frozen and forbid unknown fields. `load_spec` turns every
problem -- unreadable JSON, an unknown or misspelled field, a bad value, a
template naming a variable that does not exist, a contradictory combination
-- into one SpecError that names the file, the field and the fix.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from rapidfuzz import process as fuzz_process

from ..errors import SpecError
from .durations import DURATION_PATTERN, parse_duration
from .output.parsespec import ParseSpec
from .output.parsespec import Strict as _Model
from .templates import rendering, variables
from .templates.allowance import MAX_TEMPLATE_CHARS

#: The longest timeout a spec may ask for. Waits take at most
#: threading.TIMEOUT_MAX (about 292 years on Linux, far less elsewhere), and
#: no benchmark step needs a month; past this a number is a typo or an attack.
MAX_TIMEOUT = 30 * 86400.0
#: The shortest: bench's own start of a command takes about a millisecond, so
#: below this no engine could ever answer and every query would time out.
MIN_TIMEOUT = 0.01


def _duration(value: object) -> float:
    # A huge int is refused before float() overflows, which pydantic would not catch.
    huge = isinstance(value, int) and not isinstance(value, bool) and value > MAX_TIMEOUT
    seconds = MAX_TIMEOUT + 1 if huge else parse_duration(value)
    if seconds > MAX_TIMEOUT:
        raise ValueError(f"{str(value)[:24]}: a timeout is at most 30 days "
                         f"({MAX_TIMEOUT:.0f} seconds)")
    if seconds < MIN_TIMEOUT:
        raise ValueError(f"{str(value)[:24]}: a timeout is at least 10ms ({MIN_TIMEOUT} "
                         "seconds); no engine answers sooner")
    return seconds


Duration = Annotated[
    float,
    BeforeValidator(_duration),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "pattern": DURATION_PATTERN},
                {"type": "number", "minimum": MIN_TIMEOUT},
            ],
            "description": "'30s', '2m', '6h', '1h30m', or a number of seconds; at least "
                           "10ms",
        }
    ),
]

DEFAULT_INDEX_TIMEOUT = 6 * 3600.0
DEFAULT_SEARCH_TIMEOUT = 120.0
MAX_NAME = 64
#: Read before parsing: a spec is a page of JSON, not a data file.
MAX_SPEC_BYTES = 1 << 20
#: n = k x candidates results are asked for; a tool serves hundreds at most.
MAX_CANDIDATES = 1000
MAX_SPEC_TEMPLATE_CHARS = 16 * 1024
# Always fullmatch: `$` would accept a trailing newline.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_ENV_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_NO_RESULTS_SCHEMA: dict[str, Any] = {
    "type": "array", "uniqueItems": True,
    "items": {"type": "integer", "minimum": 1, "maximum": 255},
}


class CommandSpec(_Model):
    """One command: an argv list (never a shell string) and how to run it."""

    command: list[str] = Field(min_length=1, description="argv; each element is a template")
    timeout: Duration | None = Field(
        default=None, description="default 6h for index, 2m for search"
    )
    dir: str | None = Field(default=None, description="working directory (template)")
    stdin: str | None = Field(default=None, description="text fed on stdin (template)")

    def timeout_or(self, default: float) -> float:
        return self.timeout if self.timeout is not None else default


class EngineSpec(_Model):
    """A code-search tool, described so the harness can drive it."""

    schema_: str | None = Field(default=None, alias="$schema", description="editor hint")
    name: str = Field(description="names every row and keys the state directory")
    description: str | None = None
    requires: str | None = Field(default=None, description="what to install, in words")
    version: list[str] | None = Field(
        default=None, description="argv whose output is recorded as the engine's version"
    )
    spans: bool = Field(default=False, description="results carry line numbers")
    per_file: list[int] = Field(default=[1], min_length=1, description="chunks-per-file settings")
    candidates: int = Field(default=1, ge=1, description="n = k x candidates raw results")
    tokens: bool = Field(default=False, description="results carry the text they would show")
    text_from_corpus: bool = Field(
        default=False, description="price results by reading their lines from the tree"
    )
    strip_prefix: str = Field(default="", description="path prefix dropped from every result")
    line_base: Literal[0, 1] = Field(default=1, description="0 for a tool counting from zero")
    mode: Literal["oneshot", "persistent"] = "oneshot"
    answer: Literal["ranked", "text", "blob"] = Field(
        default="ranked", description="ranked: places in the tree, graded by path and span; "
        "text: a ranked list of text items, graded by content; blob: one text answer, graded "
        "by content, rank-1 metrics only")
    covers: list[str] | None = Field(
        default=None, description="the corpora this engine can answer for at all (a hosted "
        "service's index of some libraries); any other corpus is a gap in the results, "
        "never a row of zeros")
    reads: list[str] | None = Field(
        default=None, description="the only files this engine indexes, as file-name globs "
        "(a documentation index's *.md, *.rst); a corpus whose tree holds none of them is a "
        "gap in the results, never a failed index")
    content_threshold: int = Field(
        default=85, ge=1, le=100, description="text and blob answers: an item is relevant "
        "when rapidfuzz partial_ratio with a gold span's text reaches this")
    env: list[str] = Field(default=[], description="KEY=value entries; values are templates")
    no_results_exit: Annotated[list[int], WithJsonSchema(_NO_RESULTS_SCHEMA)] = Field(
        default=[], description="one-shot search exit statuses that mean no match (grep's 1): "
        "the query's output is read as usual, and none is zero results, not a failure")
    index: CommandSpec | None = None
    search: CommandSpec
    parse: ParseSpec

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if len(value) > MAX_NAME:
            raise ValueError(f"a name of {len(value)} characters; a name is at most "
                             f"{MAX_NAME} (it names a directory)")
        if not _NAME.fullmatch(value):
            raise ValueError(
                f"{value!r}: use letters, digits, '.', '_' and '-', starting with a letter or "
                f"digit (it names a directory)"
            )
        return value

    @field_validator("per_file")
    @classmethod
    def _per_file(cls, value: list[int]) -> list[int]:
        if any(v < 1 or v > MAX_CANDIDATES for v in value):
            raise ValueError(f"every per_file setting is a whole number from 1 to "
                             f"{MAX_CANDIDATES}")
        if len(set(value)) != len(value):
            raise ValueError("per_file lists a setting twice")
        return value

    @field_validator("candidates")
    @classmethod
    def _candidates(cls, value: int) -> int:
        if value > MAX_CANDIDATES:
            raise ValueError(f"{str(value)[:20]}: candidates is at most {MAX_CANDIDATES}")
        return value

    @field_validator("no_results_exit", mode="before")
    @classmethod
    def _no_results_exit(cls, value: object) -> object:
        fix = "list the exit statuses that mean no match, e.g. [1] for grep"
        if not isinstance(value, list):
            raise ValueError(f"a list of exit statuses, not {type(value).__name__}; {fix}")
        for status in value:
            # bool is an int to Python; `true` is no exit status.
            if isinstance(status, bool) or not isinstance(status, int):
                raise ValueError(f"{str(status)[:20]!r} is no exit status: each is a whole "
                                 f"number from 1 to 255; {fix}")
            if status == 0:
                raise ValueError("0 is success already; list only the statuses other than 0 "
                                 "that mean no match, e.g. [1]")
            if not 1 <= status <= 255:
                raise ValueError(f"{str(status)[:20]}: an exit status is from 1 to 255 (a "
                                 f"signal is never a 'no match'); {fix}")
        if len(set(value)) != len(value):
            raise ValueError("no_results_exit lists a status twice; list each once")
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: list[str]) -> list[str]:
        for entry in value:
            key, sep, _ = entry.partition("=")
            if not sep or not _ENV_KEY.fullmatch(key):
                raise ValueError(f"{entry[:80]!r} is not KEY=value (KEY: letters, digits and "
                                 f"'_', not starting with a digit)")
        return value

    @model_validator(mode="after")
    def _cross_field(self) -> EngineSpec:
        if self.answer != "ranked" and not self.parse.has_text():
            raise ValueError(f"answer {self.answer!r} is graded by its text: set parse.text to "
                             "the field holding it")
        if self.answer == "ranked" and not self.parse.path:
            raise ValueError("parse.path is null: an engine without paths declares answer "
                             "'text' (a ranked list of text items) or 'blob' (one answer)")
        if self.text_from_corpus and not self.spans:
            raise ValueError("text_from_corpus needs spans: true (it reads the lines at each span)")
        if self.spans and not self.parse.has_spans():
            raise ValueError(
                "spans is true but parse names no line field: set parse.start (and end) or "
                "parse.lines, or a (?P<start>...) group in the pattern"
            )
        if self.tokens and not self.parse.has_text():
            raise ValueError("tokens is true but parse names no text field: set parse.text")
        if self.mode == "persistent" and self.no_results_exit:
            raise ValueError("no_results_exit is for one-shot search commands: a persistent "
                             "engine answers each query in a line, and its exit is always a "
                             "failure; remove no_results_exit or answer with no results")
        if self.mode == "persistent" and self.search.stdin is not None:
            raise ValueError(
                "a persistent engine's stdin carries the requests; remove search.stdin"
            )
        return self

    @property
    def index_timeout(self) -> float:
        return self.index.timeout_or(DEFAULT_INDEX_TIMEOUT) if self.index else 0.0

    @property
    def search_timeout(self) -> float:
        return self.search.timeout_or(DEFAULT_SEARCH_TIMEOUT)

    @property
    def has_token_column(self) -> bool:
        return self.text_from_corpus or self.tokens


@dataclass(frozen=True)
class LoadedSpec:
    """A validated spec and where it came from."""

    spec: EngineSpec
    file: Path
    sha256: str

    @property
    def spec_dir(self) -> Path:
        return self.file.parent

    @property
    def name(self) -> str:
        return self.spec.name


def engine_json_schema() -> dict[str, Any]:
    schema = EngineSpec.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "codesearch-bench engine spec"
    return schema


def load_spec(path: str | Path) -> LoadedSpec:
    """Read, validate and template-check one engine spec."""
    file = Path(path)
    try:
        with file.open("rb") as fh:
            raw = fh.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise SpecError(
            f"{file}: no such engine spec (looked for {file.absolute()})",
            hint="a relative path is tried from the current directory, then from the "
            "checkout, so `--engine engines/grep.json` works from anywhere in it",
        ) from None
    except OSError as exc:
        raise SpecError(f"{file}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise SpecError(f"{file}: larger than {MAX_SPEC_BYTES} bytes; an engine spec is a page "
                        f"of JSON", hint="keep data the engine needs in a file next to the spec")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SpecError(f"{file}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise SpecError(
            f"{file}:{exc.lineno}:{exc.colno}: not valid JSON: {exc.msg}",
            hint="JSON has no comments or trailing commas",
        ) from None
    except RecursionError:
        raise SpecError(f"{file}: JSON nested too deep to read") from None
    except ValueError:  # the only other one json raises: an integer too long to convert
        raise SpecError(f"{file}: a number with more than {sys.get_int_max_str_digits()} "
                        f"digits") from None
    if not isinstance(data, dict):
        raise SpecError(f"{file}: an engine spec is a JSON object, not {type(data).__name__}")
    try:
        spec = EngineSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_describe(file, exc)) from None
    _check_templates(file, spec)
    return LoadedSpec(spec=spec, file=file.resolve(), sha256=hashlib.sha256(raw).hexdigest())


def _describe(file: Path, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"]]
        field = ".".join(loc) or "(top level)"
        if err["type"] == "extra_forbidden":
            lines.append(f"{file}: field `{field}`: unknown field{_suggest(loc)}")
        elif err["type"] == "missing":
            lines.append(f"{file}: field `{field}`: required but missing")
        else:
            msg = err["msg"].removeprefix("Value error, ")
            lines.append(f"{file}: field `{field}`: {msg}")
    return "\n".join(lines)


_NESTED: dict[str, type[BaseModel]] = {"index": CommandSpec, "search": CommandSpec,
                                       "parse": ParseSpec}


def _suggest(loc: list[str]) -> str:
    model: type[BaseModel] = EngineSpec
    for part in loc[:-1]:
        nested = _NESTED.get(part)
        if nested is None:
            return ""
        model = nested
    names = [f.alias or n for n, f in model.model_fields.items()]
    if model is not EngineSpec and loc[-1] in EngineSpec.model_fields:
        return f"; `{loc[-1]}` is a top-level field: move it out of `{'.'.join(loc[:-1])}`"
    match = fuzz_process.extractOne(loc[-1], names, score_cutoff=60)
    if match:
        return f"; did you mean `{match[0]}`?"
    return f"; known fields: {', '.join(names)}"


def _check_templates(file: Path, spec: EngineSpec) -> None:
    compiled = 0

    def check(field: str, template: str, allowed: frozenset[str], *, nul: bool = False) -> None:
        nonlocal compiled
        if "\x00" in template and not nul:
            raise SpecError(f"{file}: field `{field}`: contains a NUL byte, which no OS passes "
                            f"in an argument, environment variable or path; remove it")
        compiled += len(template) if "{" in template else 0
        # jinja2 compiles some 30 KB a second; one over-long template says so itself.
        if compiled > MAX_SPEC_TEMPLATE_CHARS and len(template) <= MAX_TEMPLATE_CHARS:
            raise SpecError(f"{file}: field `{field}`: the spec's templates add up to more than "
                            f"{MAX_SPEC_TEMPLATE_CHARS} characters")
        try:
            rendering.check(template, allowed)
        except rendering.TemplateProblem as exc:
            raise SpecError(f"{file}: field `{field}`: {exc}") from None

    for i, part in enumerate(spec.version or []):
        check(f"version[{i}]", part, variables.VERSION_VARS)
    for i, entry in enumerate(spec.env):
        # env applies to index and search alike, so only the shared variables.
        check(f"env[{i}]", entry.partition("=")[2], variables.COMMON_VARS)
    commands = [("index", spec.index, variables.COMMON_VARS)]
    search_vars = variables.COMMON_VARS if spec.mode == "persistent" else variables.SEARCH_VARS
    commands.append(("search", spec.search, search_vars))
    for label, cmd, allowed in commands:
        if cmd is None:
            continue
        for i, part in enumerate(cmd.command):
            check(f"{label}.command[{i}]", part, allowed)
        if cmd.dir is not None:
            check(f"{label}.dir", cmd.dir, allowed)
        if cmd.stdin is not None:
            check(f"{label}.stdin", cmd.stdin, allowed, nul=True)  # stdin is bytes
