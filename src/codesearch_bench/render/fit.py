"""Text made to fit a terminal's width: engine names short enough for their column, hashes
cut to 12 hex characters, long paths cut in the middle, prose wrapped whole-word.

The rule for names, the same wherever the terminal shows one:

- the room is the least any of the output's tables leaves its name column at the
  console's width, every other column as wide as its widest cell (render/table.py),
  never less than MIN_ROOM; one room for the whole output, so an engine has one form;
- a name that fits the room is shown whole;
- a longer name is shown by its short form: a shipped engine's is fixed (SHORT_NAMES),
  any other name is cut in the middle to the room with '…' (its start and end kept);
- a short form is never one that another engine shows (its name or its short form):
  the next cut is taken instead, the head one character longer each time, then a
  numbered form;
- every name shortened is listed once, short form = name, in a legend line.

The JSON keeps every name and every hash whole.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable, Iterator

#: The shipped engines' names (engines/*.json) longer than 10 characters, shortened by
#: hand to at most 10 so that each still reads as its tool.
SHORT_NAMES = {
    "bm25-persistent": "bm25-pers",
    "bm25s-persistent": "bm25s-pers",
    "code-index-mcp": "code-index",
    "code-search-cli": "code-srch",
    "ctags-symbols": "ctags-syms",
    "dense-minilm": "minilm",
    "neuledge-context": "neuledge",
    "pydocs-mcp-composite": "pyd-comp",
    "pydocs-mcp-dense": "pyd-dense",
    "pydocs-mcp-mcp": "pyd-mcp",
}

#: No column is made narrower than this for a name: below it a cut name says too little.
MIN_ROOM = 8

#: A hash is shown by its first HASH_CHARS characters, as git shows a commit.
HASH_CHARS = 12

ELLIPSIS = "…"

_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{16,}(?![0-9A-Za-z])")
# npm's integrity is Subresource Integrity: the algorithm, then base64.
_SRI = re.compile(r"\b(sha(?:1|256|384|512)-)([A-Za-z0-9+/]{16,}={0,2})")


def middle(text: str, width: int) -> str:
    """text cut to width in the middle, '…' where the cut is; the end keeps the larger half
    (a path's or a name's end tells more apart than its start)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    head = (width - 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (width - 1 - head):]


def short_hashes(text: str) -> str:
    """Every run of 16 or more hex digits cut to its first 12 (a git commit, a sha256), and an
    integrity string's base64 to its first 12 characters and '…'."""
    text = _SRI.sub(lambda m: m.group(1) + m.group(2)[:HASH_CHARS] + ELLIPSIS, text)
    return _HEX.sub(lambda m: m.group(0)[:HASH_CHARS], text)


def _cuts(name: str, room: int) -> Iterator[str]:
    """The short forms name may take in room, the preferred first."""
    short = SHORT_NAMES.get(name)
    if short is not None and len(short) <= room:
        yield short
    first = (room - 1) // 2
    for head in (first, *range(first + 1, room - 1), *range(first - 1, 0, -1)):
        yield name[:head] + ELLIPSIS + name[len(name) - (room - 1 - head):]
    number = 2
    while True:  # ends: a number no other form holds is always found
        tag = f"{ELLIPSIS}{number}"
        yield name[:max(room - len(tag), 1)] + tag
        number += 1


def short_names(names: Iterable[str], room: int) -> dict[str, str]:
    """Each name longer than room -> its short form, distinct from every name shown and
    from every other short form; names in the order given, the first keeping the
    preferred form. room is raised to MIN_ROOM."""
    room = max(room, MIN_ROOM)
    order = list(dict.fromkeys(names))
    taken = {name for name in order if len(name) <= room}
    out: dict[str, str] = {}
    for name in order:
        if name in taken:
            continue
        form = next(c for c in _cuts(name, room) if c not in taken and c not in order)
        taken.add(form)
        out[name] = form
    return out


def legend(shortened: dict[str, str]) -> str:
    """`short names: bm25-pers = bm25-persistent, …`, or "" when none was shortened."""
    if not shortened:
        return ""
    return "short names: " + ", ".join(f"{short} = {name}" for name, short in
                                       shortened.items())


def wrapped(text: str, width: int, indent: str = "") -> list[str]:
    """text as lines of at most width: broken between words, never inside a hyphenated name
    (only a word longer than a line is cut), its own line breaks kept, every line but the
    first indented."""
    out: list[str] = []
    width = max(width, len(indent) + 1)
    for i, line in enumerate(text.splitlines() or [""]):
        out += textwrap.wrap(line, width=width, initial_indent=indent if i else "",
                             subsequent_indent=indent, break_on_hyphens=False) or [""]
    return out


def where_lines(tree: str, pin: str, width: int) -> list[str]:
    """`tree=…  pin=…` on one line when it fits, else each on its own, a value too long for
    its line cut in the middle; the pin's hashes cut to 12 characters."""
    pin = short_hashes(pin)
    line = f"tree={tree}  pin={pin}"
    if len(line) <= width:
        return [line]
    return [f"{key}={middle(value, max(width - len(key) - 1, 1))}"
            for key, value in (("tree", tree), ("pin", pin))]
