"""What a command loads before its own imports, so that a load's peak is not bench's.

Commands that count tokens load the tokenizer first: while tiktoken builds its
Rust maps, the 200,000-entry rank table is also held as a Python dict (~24 MiB,
freed right after), and on top of every import that moment was bench's peak
(133.5 MiB driving grep over rich, against 115.0 MiB with the tokenizer loaded
first; benchmarks/overhead.py).
"""

from __future__ import annotations

import contextlib

from ..errors import BenchError

COUNTS_TOKENS = frozenset({"compare", "probe"})


def before(command: str) -> None:
    """Load what `command` will need whose loading peaks high; light to import."""
    if command not in COUNTS_TOKENS:
        return
    from ..scoring import tokens

    # A missing tokenizer is reported where tokens are counted, with its own hint;
    # a run that never counts any must not fail here.
    with contextlib.suppress(BenchError):
        tokens.counter()
