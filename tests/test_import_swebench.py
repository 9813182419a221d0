"""`bench import swebench`: SWE-bench rows -> git-pinned localization tasks, gold from the diff."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from codesearch_bench.cli import main
from codesearch_bench.corpus.config import load_corpora
from codesearch_bench.datasets.diffs import changed_files, is_test_path
from codesearch_bench.results.schema import ResultFile

PATCH = """diff --git a/src/app.py b/src/app.py
--- a/src/app.py
+++ b/src/app.py
@@ -1,2 +1,2 @@
-def greet(name):
+def greet(name: str):
diff --git a/tests/test_app.py b/tests/test_app.py
--- a/tests/test_app.py
+++ b/tests/test_app.py
@@ -1 +1 @@
-x
+y
diff --git a/src/extra.py b/src/extra.py
new file mode 100644
--- /dev/null
+++ b/src/extra.py
@@ -0,0 +1 @@
+z = 1
"""


@pytest.mark.parametrize(("path", "test"), [
    ("tests/test_app.py", True), ("pkg/testing/util.py", True), ("conftest.py", True),
    ("src/thing_test.go", True), ("src/test_utils.py", True), ("src/app.py", False),
    ("src/contest.py", False), ("src/attestation.py", False),
])
def test_the_test_path_predicate(path: str, test: bool) -> None:
    assert is_test_path(path) is test


def test_gold_comes_from_the_diff_headers() -> None:
    assert changed_files(PATCH) == (["src/app.py", "tests/test_app.py"], ["src/extra.py"])


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_a_task_runs_on_its_pinned_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    repo = tmp_path / "mirror" / "acme" / "app"
    (repo / "src").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "src" / "app.py").write_text("def greet(name):\n    return 'hello ' + name\n")
    (repo / "tests" / "test_app.py").write_text("x\n")
    _git("init", "-q", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", cwd=repo)
    sha = _git("rev-parse", "HEAD", cwd=repo)
    rows = tmp_path / "verified.jsonl"
    rows.write_text(json.dumps({
        "instance_id": "acme__app-1", "repo": "acme/app", "base_commit": sha,
        "problem_statement": "greeting a user should accept a typed name",
        "patch": PATCH}) + "\n" + json.dumps({
        "instance_id": "acme__app-2", "repo": "acme/app", "base_commit": sha,
        "problem_statement": "only tests change", "patch": PATCH.split("diff --git a/src/extra")[0]
        .replace("src/app.py", "tests/other_test.py")}) + "\n")
    out = tmp_path / "suite"
    assert main(["import", "swebench", "--from", str(rows), "--out", str(out)]) == 0
    corpora = load_corpora(out / "corpora.toml")
    assert list(corpora) == ["swe-acme__app-1"]
    spec = corpora["swe-acme__app-1"].spec
    assert spec.pin().startswith("git https://github.com/acme/app")
    assert spec.provenance is not None
    assert spec.provenance["dropped"]["task with no non-test file changed"] == 1
    # The forge is reached through git's own redirection, as a mirror would be.
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.file://{tmp_path / 'mirror'}/.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "https://github.com/")
    result_file = tmp_path / "r.json"
    assert main(["compare", "--suite", str(out), "--engine", "engines/grep.json",
                 "--work", str(tmp_path / "w"), "--json", str(result_file)]) == 0
    row = next(r for r in ResultFile.load(result_file).rows if r.headline)
    assert [g.path for g in row.queries[0].gold] == ["src/app.py"]


def test_lca_rows_become_localization_tasks(tmp_path: Path) -> None:
    diff = PATCH.replace("src/app.py", "core/src/main/kotlin/App.kt").replace(
        "tests/test_app.py", "core/src/test/kotlin/AppTest.kt")
    rows = tmp_path / "lca.jsonl"
    rows.write_text(json.dumps({
        "id": 7, "repo_owner": "acme", "repo_name": "kapp", "base_sha": "a" * 40,
        "issue_title": "Crash on empty name", "issue_body": "Steps: call greet with ''.",
        "diff": diff}) + "\n" + json.dumps({
        "id": 8, "repo_owner": "acme", "repo_name": "kapp", "base_sha": "short",
        "issue_title": "x", "diff": diff}) + "\n")
    out = tmp_path / "suite"
    assert main(["import", "lca", "--from", str(rows), "--out", str(out)]) == 0
    corpus = load_corpora(out / "corpora.toml")["lca-kapp-7"]
    assert corpus.spec.pin().startswith("git https://github.com/acme/kapp")
    assert "a" * 40 in corpus.spec.pin()
    queries = [json.loads(x) for x in (out / "lca-kapp-7.jsonl").read_text().splitlines()]
    assert queries[0]["query"] == "Crash on empty name\n\nSteps: call greet with ''."
    assert queries[0]["gold"] == [{"path": "core/src/main/kotlin/App.kt"}]
    assert corpus.spec.provenance is not None
    assert corpus.spec.provenance["dropped"]["base_sha is not a full commit id"] == 1
