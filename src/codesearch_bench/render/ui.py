"""The two consoles a command prints through: results to stdout, everything else to stderr.

User text (paths, names, engine stderr) is never read as console markup: the
helpers here escape it, so `mine[v2].json` prints as written. Nor as emoji codes:
`a:fire:b` stays as written (escape leaves colons alone), and rich's emoji
table is never loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.console import Console
from rich.markup import escape


@dataclass
class UI:
    out: Console = field(default_factory=lambda: Console(emoji=False))
    err: Console = field(default_factory=lambda: Console(stderr=True, emoji=False))

    def warn(self, label: str, text: str) -> None:
        self.err.print(f"[yellow]{escape(label)}:[/] {escape(text)}", soft_wrap=True)

    def error(self, message: str, hint: str = "") -> None:
        self.err.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
        if hint:
            self.err.print(f"[dim]hint: {escape(hint)}[/]", highlight=False, soft_wrap=True)
