"""`--log-to mlflow[:URI]`: each row one MLflow run, behind the `mlflow` extra.

mlflow is imported only when this logger is chosen, so bench runs without it
and a missing one is a UsageError naming the extra. The client is made when the
logger is, before any engine runs: a bad URI fails in a second, not after the
comparison.
"""

from __future__ import annotations

import importlib
import os
import re
import time
from pathlib import Path
from typing import Any

from ...errors import BenchError, LoggingFailed, UsageError
from ...results.schema import ResultFile, Row
from .record import aggregates, check_artifacts, params

EXPERIMENT = "codesearch-bench"
_NOT_A_KEY = re.compile(r"[^\w.\- :/]")
_URI_HINT = ("MLflow takes a tracking server (http://host:5000), sqlite:///mlflow.db (with the "
             "full `mlflow` package), or file:///path with MLFLOW_ALLOW_FILE_STORE=true "
             "(MLflow 3 keeps file stores only on request); without a URI, "
             "$MLFLOW_TRACKING_URI or MLflow's default")


#: MLflow's HTTP client settings for the one question asked before the run.
_QUICK = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0", "MLFLOW_HTTP_REQUEST_TIMEOUT": "10"}


def metric_key(name: str) -> str:
    """MLflow refuses `@` in names: `file.hit@10` is logged as `file.hit_at_10`."""
    return _NOT_A_KEY.sub("_", name.replace("@", "_at_"))


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    text = lines[0] if lines else type(exc).__name__
    if len(text) <= 400:
        return text
    # MLflow's messages run long; the hint says what to do, so end on a whole sentence.
    return text[:400].rsplit(". ", 1)[0] + ". …"


def _import_mlflow() -> tuple[Any, Any]:
    try:
        return (importlib.import_module("mlflow.tracking"),
                importlib.import_module("mlflow.entities"))
    except ImportError:
        raise UsageError("--log-to mlflow needs MLflow, which is not installed",
                         hint="pip install 'codesearch-bench[mlflow]'") from None


class MlflowLogger:
    def __init__(self, uri: str | None) -> None:
        self.tracking, self.entities = _import_mlflow()
        shown = f"mlflow:{uri}" if uri else "mlflow"
        try:
            self.client = self.tracking.MlflowClient(tracking_uri=uri)
            self.where = str(self.client.tracking_uri)
        except Exception as exc:  # mlflow raises many kinds; each is a bad URI here
            raise UsageError(f"--log-to {shown}: MLflow cannot track there: {_first_line(exc)}",
                             hint=_URI_HINT) from None

    def check(self) -> None:
        """Ask the tracking server once, with no retries, before the run: one that is down
        or refuses bench fails now (MLflow's own retries would take minutes)."""
        saved = {k: os.environ.get(k) for k in _QUICK}
        os.environ.update(_QUICK)
        try:
            self.client.get_experiment_by_name(EXPERIMENT)
        except Exception as exc:  # mlflow raises many kinds; each means "cannot log there"
            raise UsageError(f"--log-to mlflow: MLflow at {self.where} does not answer: "
                             f"{_first_line(exc)}", hint=_URI_HINT) from None
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def log(self, result: ResultFile, result_path: Path | None,
              extra_artifacts: list[Path]) -> str:
        check_artifacts(extra_artifacts)
        try:
            found = self.client.get_experiment_by_name(EXPERIMENT)
            experiment = (found.experiment_id if found is not None
                          else self.client.create_experiment(EXPERIMENT))
            for row in result.rows:
                self._log_row(str(experiment), result, row, result_path, extra_artifacts)
        except BenchError:
            raise
        except Exception as exc:  # a server down, a full disk: the result JSON still stands
            raise LoggingFailed(f"MLflow at {self.where}: {_first_line(exc)}") from None
        return (f"logged {len(result.rows)} rows as MLflow runs in experiment "
                f"{EXPERIMENT!r} at {self.where}")

    def _log_row(self, experiment: str, result: ResultFile, row: Row,
                 result_path: Path | None, extra_artifacts: list[Path]) -> None:
        tags = {"bench.result": str(result_path) if result_path else "",
                "bench.interrupted": str(result.interrupted).lower(),
                "bench.shard": result.shard or ""}
        run = self.client.create_run(
            experiment, run_name=f"{row.engine} × {row.corpus} per_file={row.per_file}",
            tags=tags)
        run_id = run.info.run_id
        status = "FAILED"
        try:
            now = int(time.time() * 1000)
            self.client.log_batch(
                run_id,
                metrics=[self.entities.Metric(metric_key(k), v, now, 0)
                         for k, v in aggregates(row).items()],
                params=[self.entities.Param(k, str(v).lower() if isinstance(v, bool) else str(v))
                        for k, v in params(result, row).items() if v is not None])
            if result_path is not None:
                self.client.log_artifact(run_id, str(result_path))
            else:
                self.client.log_text(run_id, result.dumps(), "result.json")
            for path in extra_artifacts:
                self.client.log_artifact(run_id, str(path))
            status = "FINISHED"
        finally:
            self.client.set_terminated(run_id, status)
