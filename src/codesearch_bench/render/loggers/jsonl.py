"""`--log-to jsonl:PATH`: one JSON line per row appended to a file, no extra needed."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from ...errors import LoggingFailed, UsageError
from ...results.schema import ResultFile
from .record import check_artifacts, params


def _finite(value: object) -> object:
    """JSON has no NaN; a number that is not one is recorded as missing."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


class JsonlLogger:
    def __init__(self, path: Path) -> None:
        self.path = path

    def check(self) -> None:
        """The file can be appended to, or made: a folder on the way that is a file, the
        path itself a folder, or a place bench may not write is refused before the run."""
        shown = f"--log-to jsonl:{self.path}"
        hint = "point --log-to jsonl: at a file bench can append to"
        if self.path.is_dir():
            raise UsageError(f"{shown}: {self.path} is a folder, not a file", hint=hint)
        if self.path.exists():
            if not os.access(self.path, os.W_OK):
                raise UsageError(f"{shown}: {self.path} is not writable", hint=hint)
            return
        # The nearest folder that exists must be one bench may make files in.
        parent = self.path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            raise UsageError(f"{shown}: {parent} is a file, not a folder", hint=hint)
        if not os.access(parent, os.W_OK | os.X_OK):
            raise UsageError(f"{shown}: cannot make {self.path}: {parent} is not writable",
                             hint=hint)

    def lines(self, result: ResultFile, result_path: Path | None,
              extra_artifacts: list[Path]) -> list[str]:
        out = []
        for row in result.rows:
            record = {
                **params(result, row),
                "metrics": {name: {k: _finite(v) for k, v in est.model_dump().items()}
                            for name, est in row.metrics.items()},
                "queries": len(row.queries), "errors": row.errors, "flags": row.flags,
                "index": {"cached": row.index.cached, "wall_s": row.index.wall_s,
                          "peak_rss_bytes": row.index.peak_rss_bytes},
                "search": {"mode": row.search.mode, "p50_s": row.search.p50_s,
                           "p95_s": row.search.p95_s,
                           "peak_rss_bytes": row.search.peak_rss_bytes},
                "interrupted": result.interrupted, "shard": result.shard,
                "result": str(result_path) if result_path else None,
                "artifacts": [str(p) for p in extra_artifacts],
            }
            out.append(json.dumps(record, sort_keys=True, allow_nan=False) + "\n")
        return out

    def log(self, result: ResultFile, result_path: Path | None,
              extra_artifacts: list[Path]) -> str:
        check_artifacts(extra_artifacts)
        text = "".join(self.lines(result, result_path, extra_artifacts)).encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # All lines in one write on an O_APPEND descriptor: two runs tracking into
            # the same file at once interleave whole batches, not halves of lines.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                view = memoryview(text)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise LoggingFailed(f"{self.path}: cannot append log lines "
                                 f"({exc.strerror or exc})") from None
        return f"logged {len(result.rows)} rows in {self.path}"
