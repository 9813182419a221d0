"""Human durations (`30s`, `2m`, `6h`, `1h30m`, `250ms`) as seconds."""

from __future__ import annotations

import math
import re

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d)")
DURATION_PATTERN = r"^\s*(\d+(\.\d+)?(ms|s|m|h|d))+\s*$"


def parse_duration(value: object) -> float:
    """Seconds from a number (already seconds) or a string like `1h30m`."""
    if isinstance(value, bool):
        raise ValueError("a duration is a string like '30s', '2m', '6h' or a number of seconds")
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(DURATION_PATTERN, text):
            raise ValueError(
                f"{value!r} is not a duration; write it like '30s', '2m', '6h' or '1h30m'"
            )
        seconds = sum(float(n) * _UNITS[u] for n, u in _PART.findall(text))
    else:
        raise ValueError("a duration is a string like '30s', '2m', '6h' or a number of seconds")
    if not math.isfinite(seconds):  # NaN or Infinity would disable the deadline
        raise ValueError(f"{value!r}: a timeout must be a finite number of seconds")
    if seconds <= 0:
        raise ValueError(f"{value!r}: a timeout must be longer than zero")
    return seconds
