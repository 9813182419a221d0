"""Reading what was typed: the parser class whose errors are UsageErrors, the Go tool's
single-dash flags, and a misspelt command, choice or flag named with what it most likely is.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence

from .errors import UsageError


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}{_choice_hint(message)}")


# argparse's own wording; Python 3.12+ can suggest (suggest_on_error) but 3.11 is supported.
_INVALID_CHOICE = re.compile(r"invalid choice: (?P<value>.*?) \(choose from (?P<choices>.*)\)$")


def _choice_hint(message: str) -> str:
    """`; did you mean 'compare'?` for a misspelt command or choice."""
    found = _INVALID_CHOICE.search(message)
    if found is None or "maybe you meant" in message:
        return ""
    value = found["value"].strip("'\"")
    choices = [c.strip().strip("'\"") for c in found["choices"].split(",")]
    close = difflib.get_close_matches(value, choices, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def go_style(argv: Sequence[str], parser: argparse.ArgumentParser) -> list[str]:
    """Accept the Go tool's single-dash long flags: `-engine x` -> `--engine x`."""
    longs: set[str] = set()
    shorts: set[str] = set()
    for action in _all_actions(parser):
        for opt in action.option_strings:
            (longs if opt.startswith("--") else shorts).add(opt)
    out = []
    for arg in argv:
        if arg.startswith("-") and not arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if "-" + name in longs and name not in shorts:
                arg = "-" + name + eq + value
        out.append(arg)
    return out


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                actions.extend(_all_actions(child))
    return actions


def parse(parser: Parser, argv: Sequence[str]) -> argparse.Namespace:
    """parse_args, except that a misspelt flag is named with the flag it most likely is."""
    typed = go_style(argv, parser)
    try:
        args, extra = parser.parse_known_args(typed)
    except UsageError as exc:  # a misspelt --engine also reads as "--engine is required"
        raise UsageError(exc.message + _flag_hints(parser, typed)) from None
    if extra:
        prog = _subparser(parser, typed).prog
        raise UsageError(f"{prog}: unrecognized arguments: {' '.join(extra)}"
                         + _flag_hints(parser, typed))
    return args


def _subparser(parser: Parser, typed: Sequence[str]) -> argparse.ArgumentParser:
    """The parser of the command typed, or the top one."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for arg in typed:
                if arg in action.choices:
                    chosen: argparse.ArgumentParser = action.choices[arg]
                    return chosen
    return parser


def _flag_hints(parser: Parser, typed: Sequence[str]) -> str:
    """A line per `--flag` the command has not, with the one it most likely is."""
    command = _subparser(parser, typed)
    known = sorted({opt for action in [*command._actions, *parser._actions]
                    for opt in action.option_strings if opt.startswith("--")})
    lines = []
    for arg in typed:
        if arg == "--":
            break  # what follows is never a flag
        name = arg.split("=", 1)[0]
        if not name.startswith("--") or any(k.startswith(name) for k in known):
            continue  # a flag, or an abbreviation argparse takes (or calls ambiguous)
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        lines.append(f"\n  {name}: {command.prog} has no such flag"
                     + (f"; did you mean {close[0]}?" if close else ""))
    return "".join(dict.fromkeys(lines))
