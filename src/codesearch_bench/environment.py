"""What a result was measured on: recorded in every result file."""

from __future__ import annotations

import os
import platform
import sys
from importlib.metadata import PackageNotFoundError, version

from . import __version__


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _pkg(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def describe() -> dict[str, object]:
    from .gold.grammars import grammar_versions
    from .scoring import tokens

    try:
        import psutil

        memory = psutil.virtual_memory().total
    except Exception:  # pragma: no cover - psutil is a dependency
        memory = None
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "os": f"{platform.system()} {platform.release()}",
        "machine": platform.machine(),
        "cpu": _cpu(),
        "cpus": os.cpu_count(),
        "memory_bytes": memory,
        "bench_version": __version__,
        "grammars": grammar_versions(),
        "tokenizer": tokens.tokenizer_info(tokens.DEFAULT_ENCODING),
        "packages": {name: _pkg(name) for name in ("pydantic", "jinja2", "psutil", "numpy")},
    }
