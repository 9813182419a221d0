"""`bench import NAME` with no --from: the pinned revision through `datasets`, never required.

Hermetic: a fake `datasets` module (in sys.modules) records what load_dataset
is asked for and returns small rows written here in each upstream schema.
The suite must equal what --from gives on the same rows; the provenance names
the hub dataset and revision; a missing library, a dataset with no hub, and a
failed load are errors that say what to do. One `network` test per importer
tries the real thing and skips, with the reason, when it cannot.
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import sys
import types
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import load_corpora
from codesearch_bench.datasets import IMPORTERS, beir, hub, lca, repoqa, swebench
from codesearch_bench.datasets.base import HubSource, ImportOptions, Suite
from codesearch_bench.errors import CorpusError, UsageError

SHA = "0123456789abcdef0123456789abcdef01234567"
PATCH = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -1 +1 @@
-old = 1
+new = 1
diff --git a/tests/test_core.py b/tests/test_core.py
--- a/tests/test_core.py
+++ b/tests/test_core.py
@@ -1 +1 @@
-a
+b
"""
SWE_ROWS = [
    {"instance_id": "acme__widget-11", "repo": "acme/widget", "base_commit": SHA,
     "problem_statement": "Widgets forget their colour after a reload.", "patch": PATCH,
     "test_patch": "", "hints_text": "", "created_at": "2024-01-02T03:04:05Z",
     "version": "1.0", "FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]",
     "environment_setup_commit": SHA},
    {"instance_id": "acme__widget-12", "repo": "acme/widget", "base_commit": "abc",
     "problem_statement": "A short commit id is dropped.", "patch": PATCH},
]
LCA_ROWS = [
    {"id": 3, "text_id": "t3", "repo_owner": "acme", "repo_name": "gadget", "base_sha": SHA,
     "issue_title": "Gadget crashes on start", "issue_body": "Stack trace attached.",
     "diff": PATCH.replace("pkg/core.py", "src/main/java/Gadget.java"),
     "pull_create_at": datetime.datetime(2023, 5, 6, 7, 8, 9), "changed_files_count": 2},
]
CORPUS_ROWS = [
    {"_id": "c1", "title": "", "text": "def add(a, b):\n    return a + b\n"},
    {"_id": "c2", "title": "lists", "text": "def flatten(xs):\n    return sum(xs, [])\n"},
]
QUERY_ROWS = [{"_id": "q1", "text": "sum two numbers"}, {"_id": "q2", "text": "flatten a list"}]
QRELS_ROWS = [{"query-id": "q1", "corpus-id": "c1", "score": 1},
              {"query-id": "q2", "corpus-id": "c2", "score": 1}]


class FakeHub:
    """load_dataset's stand-in: records each call, serves rows by (id, config, split)."""

    def __init__(self, tables: dict[tuple[str, str | None, str], list[dict[str, Any]]],
                 error: Exception | None = None) -> None:
        self.tables, self.error = tables, error
        self.calls: list[dict[str, Any]] = []

    def load_dataset(self, path: str, name: str | None = None, split: str | None = None,
                     revision: str | None = None) -> list[dict[str, Any]]:
        self.calls.append({"path": path, "name": name, "split": split, "revision": revision})
        if self.error is not None:
            raise self.error
        key = (path, name, split or "")
        if key not in self.tables:
            raise ValueError(f'Unknown split "{split}" of config {name!r}')
        return [dict(row) for row in self.tables[key]]


class _FakeDatasets(types.ModuleType):
    __version__ = "9.9.9"

    def __init__(self, fake: FakeHub) -> None:
        super().__init__("datasets")
        self.load_dataset = fake.load_dataset


def _install(monkeypatch: pytest.MonkeyPatch, fake: FakeHub) -> None:
    monkeypatch.setitem(sys.modules, "datasets", _FakeDatasets(fake))


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows))
    return path


def _same_suite(from_hub: Suite, from_file: Suite) -> None:
    assert from_hub.corpora == from_file.corpora
    assert (from_hub.kept, from_hub.dropped) == (from_file.kept, from_file.dropped)
    plain = {k: v for k, v in from_hub.provenance.items() if k != "hub"}
    assert plain.keys() == from_file.provenance.keys()  # every --from field is kept


def test_swebench_loads_the_pinned_variant(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    lite = swebench.HUB.variants["lite"]
    fake = FakeHub({(lite.id, None, "test"): SWE_ROWS})
    _install(monkeypatch, fake)
    suite = hub.load(IMPORTERS["swebench"], ImportOptions(source=Path()), variant="lite")
    assert fake.calls == [{"path": "SWE-bench/SWE-bench_Lite", "name": None, "split": "test",
                           "revision": lite.revision}]
    _same_suite(suite, swebench.load(ImportOptions(source=_jsonl(tmp_path / "lite.jsonl",
                                                           SWE_ROWS))))
    assert suite.provenance["hub"] == {
        "id": "SWE-bench/SWE-bench_Lite", "revision": lite.revision, "config": "default",
        "split": "test", "variant": "lite", "library": "datasets 9.9.9",
        "rows": {"default/test": 2}}
    assert suite.provenance["tasks_read"] == 2 and suite.provenance["tasks_kept"] == 1


def test_the_cli_writes_the_hub_provenance(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    verified = swebench.HUB.variants["verified"]  # the default variant
    fake = FakeHub({(verified.id, None, "test"): SWE_ROWS})
    _install(monkeypatch, fake)
    out = tmp_path / "suite"
    assert main(["import", "swebench", "--out", str(out)]) == 0
    assert [c["revision"] for c in fake.calls] == ["91aa3ed51b709be6457e12d00300a6a596d4c6a3"]
    (corpus,) = load_corpora(out / "corpora.toml").values()
    prov = corpus.spec.provenance
    assert prov is not None and prov["dataset"] == "swe-bench"
    assert prov["hub"]["id"] == "SWE-bench/SWE-bench_Verified"
    assert prov["hub"]["revision"] == verified.revision
    assert prov["hub"]["rows"] == {"default/test": 2}
    assert len(prov["sha256"]) == 64  # the exported rows' digest, as --from records the file's


def test_lca_loads_the_named_configuration(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    java = lca.HUB.variants["java"]
    fake = FakeHub({(java.id, "java", "dev"): LCA_ROWS})
    _install(monkeypatch, fake)
    suite = hub.load(IMPORTERS["lca"], ImportOptions(source=Path(), split="dev"), variant="java")
    assert fake.calls == [{"path": "JetBrains-Research/lca-bug-localization", "name": "java",
                           "split": "dev", "revision": java.revision}]
    _same_suite(suite, lca.load(ImportOptions(source=_jsonl(tmp_path / "lca.jsonl", LCA_ROWS))))
    assert suite.corpora[0].languages == ["java"]
    assert suite.provenance["hub"]["config"] == "java"
    assert suite.provenance["hub"]["rows"] == {"java/dev": 1}


def test_beir_loads_the_dataset_hub_names(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeHub({("acme/toy-beir", "corpus", "corpus"): CORPUS_ROWS,
                    ("acme/toy-beir", "queries", "queries"): QUERY_ROWS,
                    ("acme/toy-beir", None, "test"): QRELS_ROWS})
    _install(monkeypatch, fake)
    suite = hub.load(IMPORTERS["beir"], ImportOptions(source=Path()), ref=f"acme/toy-beir@{SHA}")
    assert [(c["name"], c["split"]) for c in fake.calls] == [
        ("corpus", "corpus"), ("queries", "queries"), (None, "test")]
    assert {c["revision"] for c in fake.calls} == {SHA}
    folder = tmp_path / "toy-beir"
    _jsonl(folder / "corpus.jsonl", CORPUS_ROWS)
    _jsonl(folder / "queries.jsonl", QUERY_ROWS)
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n"
                                               "q1\tc1\t1\nq2\tc2\t1\n")
    from_file = beir.load(ImportOptions(source=folder))
    _same_suite(suite, from_file)
    assert suite.provenance["files"] == from_file.provenance["files"]  # the same bytes
    assert suite.provenance["hub"]["rows"] == {"corpus/corpus": 2, "queries/queries": 2,
                                               "default/test": 2}
    assert "variant" not in suite.provenance["hub"]


def test_beir_needs_a_named_and_pinned_dataset(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, FakeHub({}))
    with pytest.raises(UsageError, match=r"--hub ID@REVISION") as err:
        hub.load(IMPORTERS["beir"], ImportOptions(source=Path()))
    assert "--from" in str(err.value)
    with pytest.raises(UsageError, match="full"):  # a branch name is not a pin
        hub.load(IMPORTERS["beir"], ImportOptions(source=Path()), ref="acme/toy-beir@main")


def test_repoqa_has_no_hub_and_names_the_release_file(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _install(monkeypatch, FakeHub({}))
    assert IMPORTERS["repoqa"].hub is None
    with pytest.raises(UsageError) as err:
        hub.load(IMPORTERS["repoqa"], ImportOptions(source=Path()))
    assert "repoqa-2024-06-23.json.gz" in str(err.value) and "--from" in str(err.value)
    assert repoqa.RELEASE in str(err.value)
    assert main(["import", "repoqa"]) == 2
    assert "GitHub release" in " ".join(capsys.readouterr().err.split())


def test_without_the_library_the_error_names_the_extra(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # `import datasets` fails
    with pytest.raises(UsageError) as err:
        hub.load(IMPORTERS["swebench"], ImportOptions(source=Path()))
    assert "pip install 'codesearch-bench[datasets]'" in str(err.value)
    assert "--from" in str(err.value)
    assert main(["import", "lca"]) == 2
    assert "codesearch-bench[datasets]" in capsys.readouterr().err


def test_a_failed_load_is_a_clean_error(monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    offline = ConnectionError("Couldn't reach 'SWE-bench/SWE-bench_Verified' on the Hub "
                              "(LocalEntryNotFoundError)")
    _install(monkeypatch, FakeHub({}, error=offline))
    with pytest.raises(CorpusError) as err:
        hub.load(IMPORTERS["swebench"], ImportOptions(source=Path()))
    text = str(err.value)
    assert "ConnectionError: Couldn't reach" in text
    assert "SWE-bench/SWE-bench_Verified@91aa3ed51b70" in text
    assert "--from" in text and "to_json" in text  # the way round: download, pass the file
    assert main(["import", "swebench", "--out", "/nonexistent/never-written"]) == 3
    err_text = capsys.readouterr().err
    assert "could not load" in err_text and "Traceback" not in err_text


def test_a_split_the_revision_lacks_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, FakeHub({}))
    with pytest.raises(CorpusError, match=r"Unknown split \"train\"") as err:
        hub.load(IMPORTERS["lca"], ImportOptions(source=Path(), split="train"))
    assert "--split" in str(err.value)


def test_variants_and_from_do_not_mix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install(monkeypatch, FakeHub({}))
    rows = _jsonl(tmp_path / "rows.jsonl", SWE_ROWS)
    assert main(["import", "swebench", "--from", str(rows), "--variant", "lite",
                 "--out", str(tmp_path / "o")]) == 2
    with pytest.raises(UsageError, match="variants: full, lite, verified"):
        hub.load(IMPORTERS["swebench"], ImportOptions(source=Path()), variant="mini")


def test_hub_overrides_the_pin_and_keeps_the_variant_config(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeHub({("mirror/lca", "kt", "test"): LCA_ROWS})
    _install(monkeypatch, fake)
    suite = hub.load(IMPORTERS["lca"], ImportOptions(source=Path()), variant="kt",
                     ref=f"mirror/lca@{SHA}")
    assert fake.calls == [{"path": "mirror/lca", "name": "kt", "split": "test",
                           "revision": SHA}]
    assert suite.provenance["hub"]["id"] == "mirror/lca"


def test_every_pin_is_a_full_commit() -> None:
    for importer in IMPORTERS.values():
        for source in (importer.hub.variants.values() if importer.hub else ()):
            assert hub.parse_ref(f"{source.id}@{source.revision}") == HubSource(
                source.id, source.revision)


# -- the real thing ------------------------------------------------------------------
def _reachable(url: str) -> None:
    """Skip, naming the reason, when the host cannot be reached; an HTTP answer is reachable."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=15).close()
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError) as exc:
        pytest.skip(f"{url} cannot be reached: {exc}")


def _hub_or_skip(source: HubSource) -> None:
    if importlib.util.find_spec("datasets") is None:
        pytest.skip(f"the `datasets` library is not installed ({hub.EXTRA})")
    _reachable(f"https://huggingface.co/api/datasets/{source.id}/revision/{source.revision}")


def _provenance(out: Path) -> dict[str, Any]:
    corpus = next(iter(load_corpora(out / "corpora.toml").values()))
    assert corpus.spec.provenance is not None
    return corpus.spec.provenance


@pytest.mark.network
def test_real_swebench_lite_dev(tmp_path: Path) -> None:
    _hub_or_skip(swebench.HUB.variants["lite"])
    out = tmp_path / "suite"  # 23 tasks
    assert main(["import", "swebench", "--variant", "lite", "--split", "dev",
                 "--out", str(out)]) == 0
    prov = _provenance(out)
    assert prov["hub"]["revision"] == swebench.HUB.variants["lite"].revision
    assert prov["hub"]["rows"] == {"default/dev": prov["tasks_read"]}


@pytest.mark.network
def test_real_lca_python_test(tmp_path: Path) -> None:
    _hub_or_skip(lca.HUB.variants["py"])
    out = tmp_path / "suite"  # 50 rows
    assert main(["import", "lca", "--variant", "py", "--out", str(out)]) == 0
    assert _provenance(out)["hub"]["rows"] == {"py/test": _provenance(out)["rows_read"]}


COSQA = "CoIR-Retrieval/cosqa@bc5efb7e9d437246ce393ed19d772e08e4a79535"  # MTEB's pin


@pytest.mark.network
def test_real_beir_cosqa(tmp_path: Path) -> None:
    _hub_or_skip(hub.parse_ref(COSQA))
    out = tmp_path / "suite"
    assert main(["import", "beir", "--hub", COSQA, "--ext", "py", "--limit", "20",
                 "--out", str(out)]) == 0
    assert _provenance(out)["hub"]["id"] == "CoIR-Retrieval/cosqa"


@pytest.mark.network
def test_real_repoqa_release(tmp_path: Path) -> None:
    _reachable(repoqa.RELEASE)
    release = tmp_path / repoqa.RELEASE.rsplit("/", 1)[-1]
    try:  # about 12 MB
        with urllib.request.urlopen(repoqa.RELEASE, timeout=120) as response:
            release.write_bytes(response.read())
    except (urllib.error.URLError, OSError) as exc:
        pytest.skip(f"{repoqa.RELEASE} could not be downloaded: {exc}")
    out = tmp_path / "suite"
    assert main(["import", "repoqa", "--from", str(release), "--language", "python",
                 "--limit", "2", "--out", str(out)]) == 0
    assert _provenance(out)["dataset"] == "repoqa"
