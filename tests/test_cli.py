from __future__ import annotations

import json
from pathlib import Path

import pytest

from codesearch_bench.arguments import go_style
from codesearch_bench.cli import build_parser, main


def write_spec(tmp_path: Path, data: dict, name: str = "eng.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "probe" in capsys.readouterr().out


def test_single_dash_long_flags_are_accepted() -> None:
    parser = build_parser()
    argv = go_style(["probe", "-engine", "x.json", "-root=/tmp", "-text", "q", "-k", "5"], parser)
    assert argv == ["probe", "--engine", "x.json", "--root=/tmp", "--text", "q", "--k", "5"]
    # A value that merely looks like a flag is left alone.
    assert go_style(["probe", "--text", "-weird"], parser)[2] == "-weird"


def _help_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> set[str]:
    capsys.readouterr()
    assert main([*argv, "--help"]) == 0
    return {word.strip("[],") for word in capsys.readouterr().out.split()
            if word.strip("[],").startswith("--")}


#: the flags of `bench import` only some datasets read
OWN_FLAGS = {"--name", "--split", "--ext", "--variant", "--hub", "--max-tasks", "--task-bytes",
             "--corpora-root", "--language", "--repos"}


@pytest.mark.parametrize(("dataset", "own"), [
    ("beir", {"--name", "--split", "--ext", "--hub"}),
    ("repoqa", {"--language", "--max-tasks", "--task-bytes", "--corpora-root"}),
    ("swebench", {"--variant", "--hub", "--split", "--max-tasks", "--task-bytes",
                  "--corpora-root"}),
    ("lca", {"--variant", "--hub", "--split", "--max-tasks", "--task-bytes", "--corpora-root"}),
    ("sweqa", {"--repos", "--max-tasks", "--task-bytes", "--corpora-root"}),
])
def test_each_importer_help_shows_its_own_flags_only(
        dataset: str, own: set[str], capsys: pytest.CaptureFixture[str]) -> None:
    from codesearch_bench.datasets import IMPORTERS

    shown = _help_of(["import", dataset], capsys)
    assert {"--from", "--out", "--limit", "--license"} <= shown
    assert shown & OWN_FLAGS == own
    assert IMPORTERS[dataset].flags <= shown, "a flag the importer declares is not offered"


def test_import_help_lists_the_datasets(capsys: pytest.CaptureFixture[str]) -> None:
    from codesearch_bench.datasets import IMPORTERS

    assert main(["import", "--help"]) == 0
    text = capsys.readouterr().out
    assert all(name in text for name in IMPORTERS) and "--language" not in text
    assert main(["import", "repoqa", "--from", "x.json", "--ext", "py"]) == 2
    assert "unrecognized arguments: --ext" in capsys.readouterr().err


def test_misspelled_field_exits_2_naming_file_field_and_fix(
    tmp_path: Path, small_tree: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = json.loads((repo / "engines" / "grep.json").read_text())
    spec["candidatse"] = spec.pop("candidates")
    path = write_spec(tmp_path, spec)
    code = main(["probe", "--engine", str(path), "--root", str(small_tree), "--text", "x",
                 "--work", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert code == 2
    assert str(path) in err.replace("\n", "")
    assert "candidatse" in err
    assert "did you mean `candidates`" in err


def test_missing_binary_exits_4_with_requires(
    tmp_path: Path, small_tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_spec(tmp_path, {
        "name": "ghost", "requires": "pip install ghost-search",
        "search": {"command": ["ghost-search-binary-that-does-not-exist", "{{query}}"]},
        "parse": {"format": "json"},
    })
    code = main(["probe", "--engine", str(path), "--root", str(small_tree), "--text", "x",
                 "--work", str(tmp_path / "w")])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 4
    assert "ghost-search-binary-that-does-not-exist" in err
    assert "pip install ghost-search" in err
    assert str(path) in err


def test_probe_grep_prints_parsed_hits_and_expected(
    tmp_path: Path, small_tree: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["probe", "-engine", str(repo / "engines" / "grep.json"), "-root",
                 str(small_tree), "-text", "where are the settings parsed from json",
                 "--expect", "pkg/config.py:4-7", "--work", str(tmp_path / "w")])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "pkg/config.py" in out
    assert "◀" in out
    assert "chunk hit at slot: 1" in out
    # probe state is separate from compare's
    assert (tmp_path / "w" / "probe" / "grep").is_dir()
    assert not (tmp_path / "w" / "state").exists()


def test_probe_flags_missing_spans(
    tmp_path: Path, small_tree: Path, python: str, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "nospan.py"
    script.write_text(
        "import json\n"
        "print(json.dumps({'hits': [{'file': 'pkg/config.py'}, {'file': 'README.md'}]}))\n"
    )
    path = write_spec(tmp_path, {
        "name": "nospan", "spans": True,
        "search": {"command": [python, str(script), "{{query}}"]},
        "parse": {"format": "json", "results": "hits", "path": "file", "start": "line"},
    })
    code = main(["probe", "--engine", str(path), "--root", str(small_tree), "--text", "x",
                 "--k", "2", "--work", str(tmp_path / "w")])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "!! results carry no line spans" in out


def test_probe_flags_request_depth(
    tmp_path: Path, small_tree: Path, python: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three chunks of one file fill n=3 but only one file slot for k=3.
    script = tmp_path / "deep.py"
    script.write_text(
        "import json, sys\nn = int(sys.argv[1])\n"
        "print(json.dumps([{'path': 'pkg/config.py', 'start': i + 1} for i in range(n)]))\n"
    )
    path = write_spec(tmp_path, {
        "name": "deep", "spans": True,
        "search": {"command": [python, str(script), "{{n}}"]},
        "parse": {"format": "json", "start": "start"},
    })
    code = main(["probe", "--engine", str(path), "--root", str(small_tree), "--text", "x",
                 "--k", "3", "--work", str(tmp_path / "w")])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "!! only 1 file slots from 3 raw results" in out


def test_probe_failed_search_exits_1(
    tmp_path: Path, small_tree: Path, python: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_spec(tmp_path, {
        "name": "boom",
        "search": {"command": [python, "-c", "import sys; sys.exit('kaboom')"]},
        "parse": {"format": "json"},
    })
    code = main(["probe", "--engine", str(path), "--root", str(small_tree), "--text", "x",
                 "--work", str(tmp_path / "w")])
    out = " ".join(capsys.readouterr().out.split())
    assert code == 1
    assert "kaboom" in out


def test_probe_index_runs_once_then_cached(
    tmp_path: Path, small_tree: Path, python: str, capsys: pytest.CaptureFixture[str]
) -> None:
    counter = tmp_path / "count"
    path = write_spec(tmp_path, {
        "name": "idx",
        "index": {"command": [python, "-c",
                              f"open({str(counter)!r}, 'a').write('x')"]},
        "search": {"command": [python, "-c", "print('[]')"]},
        "parse": {"format": "json"},
    })
    args = ["probe", "--engine", str(path), "--root", str(small_tree), "--text", "x",
            "--work", str(tmp_path / "w")]
    assert main(args) == 0
    assert main(args) == 0
    assert counter.read_text() == "x"
    assert "index: cached" in capsys.readouterr().out
    assert main([*args, "--reindex"]) == 0
    assert counter.read_text() == "xx"


def test_compare_loads_the_tokenizer_before_its_own_imports(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Loading it on top of every import made its load bench's peak (133 vs 115 MiB).
    from codesearch_bench import cli as cli_module
    from codesearch_bench.scoring import tokens

    monkeypatch.setattr(tokens, "_loaded", {})
    seen: dict[str, bool] = {}

    def imported(name: str) -> object:
        seen[name] = tokens.DEFAULT_ENCODING in tokens._loaded
        raise SystemExit(0)  # stop before the command runs

    monkeypatch.setattr(cli_module.importlib, "import_module", imported)
    for command in ("compare", "validate"):
        monkeypatch.setattr(tokens, "_loaded", {})
        with pytest.raises(SystemExit):
            cli_module.run([command], cli_module.UI())
    assert seen == {"codesearch_bench.commands.compare": True,
                    "codesearch_bench.commands.validate": False}
