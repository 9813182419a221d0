"""A doc's summary: its first sentence or two, in plain words, as the needle's query.

Markers (`/**`, `*`, `///`, quotes) and markup (`{@link X}`, backticks, links)
come out; the summary ends at the first paragraph break, tag line (`@param`,
`Args:`, `# Examples`, `>>>`) or code block (a line indented past the first, an
rST `::`). A doc opening with its own definition's name ("ReadFile reads the
named file", Go's convention) loses that name, so the query says what the code
does, not what it is called. The summary is whole sentences: one longer than
MAX_CHARS is no summary (`overlong`), never a cut. `debris` names the texts
that are no question at all: a bare URL or reference, boilerplate, fewer than
MIN_WORDS content words once URLs and code are taken out, brackets left open
(an example, not a sentence).
"""

from __future__ import annotations

import inspect
import re

from .names import STOPWORDS

MIN_WORDS = 6
MIN_CONTENT = 4
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
_CODE_LINE = re.compile(r"^\s*(\{(?!@)|\$ |<pre\b|[\w.]+\s*=\s*\S|[\w.]+\(.*\)\s*;?\s*$)")
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
    """The doc's opening prose: up to a blank line, a tag line or the start of a code block."""
    kept: list[str] = []
    indent = 0
    for line in text.split("\n"):
        if not line.strip():
            if kept:
                break
            continue
        if _TAG_LINE.match(line) or _CODE_LINE.match(line):
            break
        depth = len(line) - len(line.lstrip())
        if kept and depth >= indent + 4:
            break  # an indented block under the prose: an example
        if not kept:
            indent = depth
        kept.append(line.strip())
        if line.rstrip().endswith("::"):
            kept[-1] = kept[-1][:-1]  # rST: what follows "::" is a literal block
            break
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
    """The query a doc makes: first sentence, a second when the first is short (whole ones)."""
    text = drop_own_name(plain(first_paragraph(words_of(raw, style))), name)
    sentences = _SENTENCE_END.split(text)
    summary = sentences[0] if sentences else ""
    if len(prose_words(summary)) < MIN_WORDS + 2 and len(sentences) > 1 and \
            len(summary) + 1 + len(sentences[1]) <= MAX_CHARS and \
            not _URL.search(sentences[1]) and not reference(sentences[1]):
        summary = f"{summary} {sentences[1]}"
    return summary.strip()


_URL = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+\.\w+")
_CODE_TOKEN = re.compile(r"\S*(?:[_{}\[\]=<>;/\\#$@]|::|\w\(|\w\.\w|[a-z][A-Z])\S*")
_REFERENCE = re.compile(
    r"^(references?|see|cf|source|sources|from|via|link|links|more info(rmation)?|"
    r"(adapted|ported|copied|taken|derived|borrowed|extracted) from|based on|inspired by|"
    r"originally from|credit|credits|thanks to|same as|ditto|as above|see (above|below)|"
    r"needed (to|for|by|so)|required (to|for|by|so)|(the )?following|these|those|below|"
    r"above|for discussion|similar to|and|or|but|also|note that|repro|reproduces?|"
    r"\d+(\.\d+)+)\b[\s:,.-]", re.IGNORECASE)
_LABEL = re.compile(r"^\S+:\s")  # "true: after the = sign", a value's meaning, not a thing
_OPEN = {"(": ")", "[": "]", "{": "}"}


def prose_words(summary: str) -> list[str]:
    """The summary's words once URLs and code are out."""
    return re.findall(r"[A-Za-z]{2,}", _CODE_TOKEN.sub(" ", _URL.sub(" ", summary)))


def content_words(summary: str) -> list[str]:
    """The prose words that carry meaning: no function word."""
    return [w for w in prose_words(summary) if w.lower() not in STOPWORDS]


def too_short(summary: str) -> bool:
    """Under MIN_CHARS, under MIN_WORDS words of prose, or under MIN_CONTENT content words."""
    return (len(summary) < MIN_CHARS or len(prose_words(summary)) < MIN_WORDS
            or len(content_words(summary)) < MIN_CONTENT)


def overlong(summary: str) -> bool:
    """A first sentence past MAX_CHARS: cutting it would leave half a thought or an example."""
    return len(summary) > MAX_CHARS


def reference(summary: str) -> bool:
    """A pointer or a fragment, not a description: 'Reference: URL', 'See RFC 7230', 'Ported
    from X', 'Similar to the above', 'And then ...', 'Note that ...', 'Repro from #123', a
    numbered section heading ('13.1 Load and Store'), 'true: after the sign', '..., then:'."""
    bare = _URL.sub("", summary).strip(" .:;,-")
    return not bare or bool(_REFERENCE.match(summary + " ")) or bool(_LABEL.match(summary)) \
        or summary.rstrip().endswith((":", ",", ";"))


def unbalanced(summary: str) -> bool:
    """Brackets or quotes left open: the text runs into an example or a code block."""
    closing = {v: k for k, v in _OPEN.items()}
    stack: list[str] = []
    for c in summary:
        if c in _OPEN:
            stack.append(c)
        elif c in closing and (not stack or stack.pop() != closing[c]):
            return True
    return bool(stack) or summary.count('"') % 2 == 1 or summary.count("`") % 2 == 1


def boilerplate(summary: str) -> bool:
    """Says nothing a search can use: a constructor's stock line, a TODO, a license."""
    letters = sum(c.isalpha() for c in summary)
    return bool(_BOILERPLATE.match(summary)) or letters < 0.6 * max(len(summary), 1)
