"""Experiment logging: `--log-to jsonl:PATH` with no extra, `--log-to mlflow[:URI]` behind one."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from codesearch_bench.errors import UsageError
from codesearch_bench.render.loggers import LoggingFailed, logger_for
from codesearch_bench.render.loggers.jsonl import JsonlLogger
from codesearch_bench.render.loggers.mlflow_runs import EXPERIMENT, metric_key
from codesearch_bench.render.loggers.record import aggregates, params
from codesearch_bench.results.schema import ResultFile

GOLDEN = Path(__file__).resolve().parent / "golden" / "result-two-corpora.json"


@pytest.fixture(scope="module")
def golden() -> ResultFile:
    return ResultFile.load(GOLDEN)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    result = tmp_path / "out.json"
    shutil.copy(GOLDEN, result)
    report = tmp_path / "report.html"
    report.write_text("<html><body>the report</body></html>\n")
    return result, report


def test_jsonl_appends_one_line_per_row(golden: ResultFile, files: tuple[Path, Path],
                                        tmp_path: Path) -> None:
    result, report = files
    path = tmp_path / "history" / "runs.jsonl"
    logger = logger_for(f"jsonl:{path}")
    assert isinstance(logger, JsonlLogger)
    n = len(golden.rows)
    assert logger.log(golden, result, [report]) == f"logged {n} rows in {path}"
    assert logger.log(golden, None, []) == f"logged {n} rows in {path}"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == 2 * n
    first, row = lines[0], golden.rows[0]
    assert {k: first[k] for k in ("engine", "corpus", "per_file", "split", "protocol_version",
                                  "spec_sha256", "corpus_pin", "query_set_sha256")} == {
        "engine": row.engine, "corpus": row.corpus, "per_file": row.per_file, "split": "all",
        "protocol_version": golden.protocol_version,
        "spec_sha256": golden.engines[row.engine].spec_sha256,
        "corpus_pin": golden.corpora[row.corpus].pin,
        "query_set_sha256": golden.corpora[row.corpus].query_set_sha256}
    assert first["metrics"]["file.hit@10"] == row.metrics["file.hit@10"].model_dump()
    assert set(first["metrics"]) == set(row.metrics)
    assert (first["result"], first["artifacts"]) == (str(result), [str(report)])
    assert (lines[n]["result"], lines[n]["artifacts"]) == (None, [])
    assert [(x["engine"], x["corpus"], x["per_file"]) for x in lines[:n]] == [
        (r.engine, r.corpus, r.per_file) for r in golden.rows]


def test_jsonl_needs_no_mlflow_and_nothing_imports_it_early(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    code = (
        "import sys; sys.modules['mlflow'] = None  # as if not installed\n"
        "from pathlib import Path\n"
        "from codesearch_bench.results.schema import ResultFile\n"
        "from codesearch_bench.render.loggers import logger_for\n"
        f"result = ResultFile.load(Path({str(GOLDEN)!r}))\n"
        f"print(logger_for({'jsonl:' + str(out)!r}).log(result, None, []))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("logged ") and out.read_text().count("\n") > 1


def test_jsonl_refuses_what_it_cannot_do(golden: ResultFile, tmp_path: Path) -> None:
    missing = tmp_path / "report.html"
    with pytest.raises(UsageError, match=f"{missing}: no such file to log as an artifact"):
        logger_for(f"jsonl:{tmp_path / 'runs.jsonl'}").log(golden, None, [missing])
    assert not (tmp_path / "runs.jsonl").exists()
    (tmp_path / "adir").mkdir()
    with pytest.raises(LoggingFailed, match=f"{tmp_path / 'adir'}: cannot append") as caught:
        logger_for(f"jsonl:{tmp_path / 'adir'}").log(golden, None, [])
    assert caught.value.exit_code == 1


def test_track_values_name_a_tracker() -> None:
    with pytest.raises(UsageError, match="--log-to jsonl needs a file"):
        logger_for("jsonl")
    with pytest.raises(UsageError, match="--log-to jsonl needs a file"):
        logger_for("jsonl:")
    with pytest.raises(UsageError, match="no logger 'wandb'") as caught:
        logger_for("wandb:project")
    assert "jsonl:PATH; mlflow, mlflow:URI" in str(caught.value)
    logger = logger_for("jsonl:a:b.jsonl")  # only the first colon separates
    assert isinstance(logger, JsonlLogger) and logger.path == Path("a:b.jsonl")


def test_a_row_with_a_split_is_logged_with_it(golden: ResultFile) -> None:
    row = golden.rows[0].model_copy(update={"split": "test"})
    assert params(golden, row)["split"] == "test"
    assert params(golden, golden.rows[0])["split"] == "all"


def test_every_aggregate_is_one_finite_number(golden: ResultFile) -> None:
    row = golden.rows[0]
    numbers = aggregates(row)
    assert numbers["file.hit@10"] == row.metrics["file.hit@10"].mean
    assert numbers["file.mrr.lo"] == row.metrics["file.mrr"].lo
    assert numbers["queries"] == len(row.queries) and numbers["errors"] == row.errors
    assert {f"{m}{s}" for m in row.metrics for s in ("", ".lo", ".hi")} <= set(numbers)
    assert metric_key("file.hit@10") == "file.hit_at_10"
    assert metric_key("chunk.ndcg@10.lo") == "chunk.ndcg_at_10.lo"


def test_a_missing_mlflow_is_a_usage_error_naming_the_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("mlflow", "mlflow.tracking", "mlflow.entities"):
        monkeypatch.setitem(sys.modules, name, None)  # what an uninstalled package looks like
    with pytest.raises(UsageError, match="needs MLflow, which is not installed") as caught:
        logger_for("mlflow:file:///nowhere")
    assert "pip install 'codesearch-bench[mlflow]'" in str(caught.value)


def test_mlflow_logs_each_row_as_a_run(golden: ResultFile, files: tuple[Path, Path],
                                       tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("mlflow", reason="mlflow-skinny is in the test extra: "
                                         "pip install -e '.[test]'")
    from mlflow.tracking import MlflowClient

    # MLflow 3 keeps the file store only on request; the test asks, bench never does.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    result_path, report = files
    result = golden.model_copy(update={"rows": [r for r in golden.rows if r.per_file == 1]})
    n = len(result.rows)
    said = logger_for(f"mlflow:{uri}").log(result, result_path, [report])
    assert said == f"logged {n} rows as MLflow runs in experiment 'codesearch-bench' at {uri}"

    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name(EXPERIMENT)
    assert experiment is not None
    runs = client.search_runs([experiment.experiment_id], max_results=100)
    assert len(runs) == n > 1
    rows = {(r.engine, r.corpus): r for r in result.rows}
    for run in runs:
        p = run.data.params
        row = rows.pop((p["engine"], p["corpus"]))
        assert run.info.status == "FINISHED"
        assert run.info.run_name == f"{row.engine} × {row.corpus} per_file=1"
        assert p["spec_sha256"] == result.engines[row.engine].spec_sha256
        assert p["corpus_pin"] == result.corpora[row.corpus].pin
        assert (p["per_file"], p["split"], p["protocol_version"], p["headline"]) == (
            "1", "all", result.protocol_version, "true")
        for name, est in row.metrics.items():
            if est.mean is None:  # no query to average (no gold chunk was ever reached)
                assert metric_key(name) not in run.data.metrics
                continue
            assert run.data.metrics[metric_key(name)] == est.mean
            assert run.data.metrics[metric_key(name) + ".hi"] == est.hi
        assert {a.path for a in client.list_artifacts(run.info.run_id)} == {
            "out.json", "report.html"}
    assert not rows
    got = Path(client.download_artifacts(runs[0].info.run_id, "report.html",
                                         str(tmp_path / "down")))
    assert got.read_text() == report.read_text()

    # Without a saved file the result JSON is logged from memory, into the same experiment.
    logger_for(f"mlflow:{uri}").log(result.model_copy(update={"rows": result.rows[:1]}),
                                       None, [])
    newest = client.search_runs([experiment.experiment_id], order_by=["start_time DESC"],
                                max_results=1)[0]
    path = Path(client.download_artifacts(newest.info.run_id, "result.json",
                                          str(tmp_path / "down2")))
    assert ResultFile.model_validate_json(path.read_text()).rows[0] == result.rows[0]


def test_an_unusable_mlflow_uri_fails_before_any_engine_runs() -> None:
    pytest.importorskip("mlflow", reason="mlflow-skinny is in the test extra: "
                                         "pip install -e '.[test]'")
    with pytest.raises(UsageError, match="--log-to mlflow:bogus://x: MLflow cannot track "
                                         "there") as caught:
        logger_for("mlflow:bogus://x")
    assert "MLFLOW_ALLOW_FILE_STORE=true" in str(caught.value)
