"""`--log-to jsonl:PATH`: one JSON line per row appended to a file, no extra needed."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

from ...errors import LoggingFailed
from ...results.schema import ResultFile
from .record import check_artifacts, params


def _finite(value: object) -> object:
    """JSON has no NaN; a number that is not one is recorded as missing."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


class JsonlLogger:
    def __init__(self, path: Path) -> None:
        self.path = path

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
