"""What a result was measured on: recorded in every result file."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from importlib.metadata import PackageNotFoundError, version

from .. import __version__


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


def host() -> dict[str, object]:
    """The machine's fingerprint: what decides whether two latencies are comparable."""
    try:
        import psutil

        memory: int | None = psutil.virtual_memory().total
    except Exception:  # pragma: no cover - psutil is a dependency
        memory = None
    facts: dict[str, object] = {"cpu": _cpu(), "cpus": os.cpu_count(), "memory_bytes": memory,
                                "kernel": platform.release(), "machine": platform.machine()}
    blob = json.dumps(facts, sort_keys=True)
    return {**facts, "fingerprint": hashlib.sha256(blob.encode()).hexdigest()[:16]}


def describe() -> dict[str, object]:
    from ..gold.grammars import grammar_versions
    from ..scoring import tokens

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
        "host": host(),
    }
