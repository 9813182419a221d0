"""A doc's summary: its first sentence or two, in plain words, as the needle's query.

Markers (`/**`, `*`, `///`, quotes) and markup (`{@link X}`, backticks, links)
come out; the summary ends at the first paragraph break or tag line (`@param`,
`Args:`, `# Examples`, `>>>`). A doc opening with its own definition's name
("ReadFile reads the named file", Go's convention) loses that name, so the
query says what the code does, not what it is called. `boilerplate` names the
summaries that say nothing a search could use.
"""

from __future__ import annotations

import inspect
import re

MIN_WORDS = 6
MIN_CHARS = 30
MAX_CHARS = 300

_TAG_LINE = re.compile(
    r"^\s*(@\w|:(param|type|return|returns|rtype|raises|arg|ivar|cvar|meta)\b|"
    r"(args|arguments|parameters|params|returns?|yields?|raises|throws|examples?|example usage|"
    r"note|notes|see also|warning|todo|attributes|usage|safety|panics|errors)\s*:|"
    r"#\s|>>>|\.\. |-{3,}|={3,}|```)", re.IGNORECASE)
_LINE_MARKER = re.compile(r"^\s*(///?!?|//|\*+(?!/)|#)\s?")
_MARKUP = [
    (re.compile(r"\{@\w+\s+([^}]*)\}"), r"\1"),  # {@link Foo#bar label} -> Foo#bar label
    (re.compile(r"\[`?([^\]`]+)`?\]\([^)]*\)"), r"\1"),  # [text](url)
    (re.compile(r"\[`([^\]`]+)`\]"), r"\1"),  # rustdoc [`Type`]
    (re.compile(r":\w+:`~?([^`]+)`"), r"\1"),  # :func:`name`
    (re.compile(r"`+([^`]+)`+"), r"\1"),
    (re.compile(r"</?\w+[^>]*>"), ""),  # <code>, <p>
    (re.compile(r"\*\*([^*]+)\*\*"), r"\1"),
]
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\"'])")
_BOILERPLATE = re.compile(
    r"^(the )?(default )?(constructor|destructor|initiali[sz]es?|creates? (a |an )?(new )?"
    r"(instance|object)|returns? the (value|result|name|string|instance)\b|"
    r"(gets?|sets?|returns?) (the )?(value )?of\b|getter|setter|"
    r"todo|fixme|xxx|hack|deprecated|no-?op|overrides?|inherit(ed)?doc|implementation of|"
    r"implements?|see\b|copyright|licensed|license|spdx|this file|this module|auto-?generated|"
    r"generated (by|from|code)|do not (edit|modify)|code generated|private\b|internal\b|"
    r"test(s|ing)? (for|that|of)\b|helper (function|method) (for|to)\b|"
    r"(for|used for) internal use|see the|see also)", re.IGNORECASE)


def words_of(raw: str, style: str) -> str:
    """The doc's text without comment markers or quotes, lines kept."""
    if style == "docstring":
        return inspect.cleandoc(raw)
    text = raw.strip()
    lines: list[str] = []
    for piece in text.split("\n"):
        line = piece.strip()
        if line.startswith("/*"):
            line = line.lstrip("/").lstrip("*!")
        if line.endswith("*/"):
            line = line[:-2]
        lines.append(_LINE_MARKER.sub("", line, count=1).rstrip())
    return "\n".join(lines).strip()


def first_paragraph(text: str) -> str:
    kept: list[str] = []
    for line in text.split("\n"):
        if not line.strip():
            if kept:
                break
            continue
        if _TAG_LINE.match(line):
            break
        kept.append(line.strip())
    return " ".join(kept)


def plain(text: str) -> str:
    for pattern, repl in _MARKUP:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


def drop_own_name(text: str, name: str) -> str:
    """'ReadFile reads the file' -> 'Reads the file'; the name as written, case and all."""
    match = re.match(rf"^(?:(?:[Tt]he|[Aa]n?)\s+)?`?{re.escape(name)}(?:\(\))?`?\s+(?=[a-z])",
                     text)
    if match is None:
        return text
    rest = text[match.end():]
    return rest[:1].upper() + rest[1:]


def summarize(raw: str, style: str, name: str) -> str:
    """The query a doc makes: first sentence, a second when the first is short."""
    text = drop_own_name(plain(first_paragraph(words_of(raw, style))), name)
    sentences = _SENTENCE_END.split(text)
    summary = sentences[0] if sentences else ""
    if len(summary.split()) < MIN_WORDS + 2 and len(sentences) > 1:
        summary = f"{summary} {sentences[1]}"
    if len(summary) > MAX_CHARS:
        summary = summary[:MAX_CHARS].rsplit(" ", 1)[0]
    return summary.strip()


def too_short(summary: str) -> bool:
    return len(summary) < MIN_CHARS or len(re.findall(r"[A-Za-z]{2,}", summary)) < MIN_WORDS


def boilerplate(summary: str) -> bool:
    """Says nothing a search can use: a constructor's stock line, a TODO, a license."""
    letters = sum(c.isalpha() for c in summary)
    return bool(_BOILERPLATE.match(summary)) or letters < 0.6 * max(len(summary), 1)
