"""HTML built as strings with every piece of user text escaped on the way in.

Engine names are restricted, but paths, flags, failure messages, stderr and
query text are not, so nothing reaches the page unescaped: element text and
attribute values go through `esc`, and data for the script goes through
`json_script`, which keeps `</script>` and `<!--` from ending or hiding the block.
"""

from __future__ import annotations

import html
import json
from importlib import resources


class Markup(str):
    """Text that is already HTML: `esc` passes it through, and only this module makes it."""

    __slots__ = ()


def esc(text: object) -> Markup:
    if isinstance(text, Markup):
        return text
    return Markup(html.escape("" if text is None else str(text), quote=True))


def join(parts: list[Markup] | tuple[Markup, ...], sep: str = "") -> Markup:
    return Markup(sep.join(esc(p) for p in parts))


def tag(element: str, *children: object, **attrs: object) -> Markup:
    """`<name attrs>children</name>`; attribute names take `_` for `-` and a trailing `_`
    for reserved words (`class_`); None and False leave the attribute out."""
    rendered = []
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        rendered.append(attr if value is True else f'{attr}="{esc(value)}"')
    head = " ".join([element, *rendered])
    return Markup(f"<{head}>" + "".join(esc(c) for c in children) + f"</{element}>")


def void(element: str, **attrs: object) -> Markup:
    """An element without content (`img`, `meta`): the attributes of `tag`, no end tag."""
    full = tag(element, **attrs)
    return Markup(full[: -len(f"</{element}>")])


def json_script(element_id: str, data: object) -> Markup:
    """Data for the page's script as an inert JSON block.

    `<`, `>` and `&` become JSON escapes, so no string in the data can close the
    script element or open a comment; the browser's JSON.parse restores them.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    text = (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    return Markup(f'<script type="application/json" id="{esc(element_id)}">{text}</script>')


def asset(name: str) -> str:
    """A file shipped beside this module (the page's script and style)."""
    return resources.files(__package__ or __name__).joinpath(name).read_text(encoding="utf-8")


def inline_script(source: str) -> Markup:
    # Our own script, never user text; only a literal `</script` could end it early.
    if "</script" in source.lower():
        raise ValueError("the page script must not contain '</script'")
    return Markup(f"<script>{source}</script>")


def inline_style(source: str) -> Markup:
    if "</style" in source.lower():
        raise ValueError("the page style must not contain '</style'")
    return Markup(f"<style>{source}</style>")
