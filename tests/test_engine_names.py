"""What `--engine` names, and what bench says when a flag or a spec path is misspelt:
`defaults` and .txt lists of specs, did-you-means for spec paths, flags and choices."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from minicorpus import make_corpus

from codesearch_bench import workdir
from codesearch_bench.cli import main
from codesearch_bench.errors import SpecError
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
TOOL = "import json; print(json.dumps({'hits': [{'path': 'pkg/config.py'}]}))"


def error_of(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    return " ".join(capsys.readouterr().err.split())


@pytest.fixture
def elsewhere(tmp_path: Path) -> Iterator[Path]:
    """Run from a folder outside the checkout, as `--engine engines/...` users do."""
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


# -- misspelt flags and choices -----------------------------------------------------

def test_a_misspelt_flag_is_named_with_the_flag_meant(capsys: pytest.CaptureFixture[str]) -> None:
    err = error_of(["compare", "--egnine", "engines/grep.json"], capsys)
    assert "unrecognized arguments: --egnine engines/grep.json" in err
    assert "--egnine: bench compare has no such flag; did you mean --engine?" in err


def test_a_misspelt_flag_with_a_value_and_another_after_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    err = error_of(["compare", "--egnine=x.json", "--limt", "3"], capsys)
    assert "--egnine: bench compare has no such flag; did you mean --engine?" in err
    assert "--limt: bench compare has no such flag; did you mean --limit?" in err


def test_a_misspelt_required_flag_says_more_than_required(
        capsys: pytest.CaptureFixture[str]) -> None:
    err = error_of(["probe", "--egnine", "x.json", "--root", ".", "--text", "q"], capsys)
    assert "the following arguments are required: --engine" in err
    assert "--egnine: bench probe has no such flag; did you mean --engine?" in err


def test_an_abbreviation_and_a_value_after_two_dashes_are_no_misspelling(
        capsys: pytest.CaptureFixture[str]) -> None:
    err = error_of(["report", "--form", "nope", "x.json"], capsys)
    assert "invalid choice: 'nope'" in err and "no such flag" not in err
    err = error_of(["compare", "--zzzz"], capsys)
    assert "--zzzz: bench compare has no such flag" in err and "did you mean" not in err


def test_a_misspelt_command_or_choice_is_named_with_the_one_meant(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert "invalid choice: 'comapre'" in (err := error_of(["comapre"], capsys))
    assert err.endswith("did you mean 'compare'? hint: run `bench <command> --help` for the "
                        "flags")
    err = error_of(["compare", "--query-set", "needle"], capsys)
    assert "did you mean 'needles'?" in err


# -- misspelt spec paths ------------------------------------------------------------

def test_a_misspelt_spec_path_suggests_the_spec(elsewhere: Path) -> None:
    with pytest.raises(SpecError) as info:
        workdir.find_spec(Path("engines/gerp.json"))
    message = info.value.message
    assert "engines/gerp.json: no such engine spec" in message
    assert str(REPO / "engines" / "gerp.json") in message  # where it looked, both places
    assert message.endswith("did you mean engines/grep.json?")


def test_a_bare_name_suggests_the_checkouts_spec(elsewhere: Path) -> None:
    for typed, meant in [("grep", "engines/grep.json"), ("bm25s", "engines/bm25s.json"),
                         ("default", "defaults")]:
        with pytest.raises(SpecError) as info:
            workdir.find_spec(Path(typed))
        assert info.value.message.endswith(f"did you mean {meant}?"), typed


def test_a_spec_beside_the_one_typed_is_suggested(tmp_path: Path) -> None:
    (tmp_path / "mine.json").write_text("{}")
    with pytest.raises(SpecError) as info:
        workdir.find_spec(tmp_path / "mien.json")
    assert info.value.message.endswith(f"did you mean {tmp_path / 'mine.json'}?")
    with pytest.raises(SpecError) as info:
        workdir.find_spec(tmp_path / "zzzzzz.json")
    assert "did you mean" not in info.value.message


def test_probe_says_the_spec_meant(tmp_path: Path, elsewhere: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    err = error_of(["probe", "--engine", "engines/gerp.json", "--root", str(tmp_path),
                    "--text", "q", "--work", str(tmp_path / "w")], capsys)
    assert "did you mean engines/grep.json?" in err


def test_probe_refuses_a_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    err = error_of(["probe", "--engine", "defaults", "--root", str(tmp_path), "--text", "q"],
                   capsys)
    assert "probe runs one engine" in err


# -- defaults and lists -------------------------------------------------------------

def test_engine_list_reads_a_list_file_relative_to_itself(tmp_path: Path) -> None:
    listing = tmp_path / "mine.txt"
    listing.write_text("# my engines\nfake.json  # the fake\n\nsub/other.json\n")
    assert workdir.engine_list(listing) == [tmp_path / "fake.json",
                                            tmp_path / "sub" / "other.json"]
    assert workdir.engine_list(Path("defaults")) == workdir.default_engines()
    assert workdir.engine_list(Path("x.json")) == [Path("x.json")]


@pytest.mark.parametrize(("text", "expected"), [
    ("# nothing\n\n", "lists no engine spec"),
    ("other.txt\n", "lists another list, other.txt"),
])
def test_a_bad_list_file_says_why(tmp_path: Path, text: str, expected: str) -> None:
    listing = tmp_path / "mine.txt"
    listing.write_text(text)
    with pytest.raises(SpecError, match=expected) as info:
        workdir.engine_list(listing)
    assert str(listing) in info.value.message


def test_the_shipped_list_loads_as_a_list() -> None:
    listed = workdir.engine_list(REPO / "engines" / "default-engines.txt")
    assert listed == workdir.default_engines() and all(p.is_file() for p in listed)


def fake_spec(folder: Path, name: str = "mine") -> Path:
    path = folder / f"{name}.json"
    path.write_text(json.dumps({"name": name, "search": {"command": [sys.executable, "-c",
                                                                     TOOL, "{{query}}"]},
                                "parse": {"format": "json", "results": "hits"}}))
    return path


def compare(tmp_path: Path, *engines: str) -> tuple[int, ResultFile | None]:
    toml = tmp_path / "corpora.toml"
    if not toml.exists():
        make_corpus(tmp_path)
    out = tmp_path / "out.json"
    out.unlink(missing_ok=True)
    args = ["compare", "--corpora-file", str(toml), "--work", str(tmp_path / "w"),
            "--corpora-root", str(tmp_path / "w" / "corpora"), "--json", str(out),
            "--headline-only"]
    for engine in engines:
        args += ["--engine", engine]
    code = main(args)
    return code, ResultFile.load(out) if out.exists() else None


def test_defaults_plus_a_spec_of_ones_own(tmp_path: Path) -> None:
    mine = fake_spec(tmp_path)
    code, result = compare(tmp_path, "defaults", str(mine),
                           str(REPO / "engines" / "grep.json"))  # grep twice: run once
    assert code == 0 and result is not None
    defaults = [json.loads(p.read_text())["name"] for p in workdir.default_engines()]
    assert list(result.engines) == [*defaults, "mine"]


def test_a_list_file_runs_its_specs_and_names_a_missing_one(tmp_path: Path) -> None:
    folder = tmp_path / "specs"
    folder.mkdir()
    fake_spec(folder, "one")
    fake_spec(folder, "two")
    listing = folder / "mine.txt"
    listing.write_text("one.json\ntwo.json\n")
    code, result = compare(tmp_path, str(listing))
    assert code == 0 and result is not None and list(result.engines) == ["one", "two"]


def test_a_list_with_a_missing_spec_says_which(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "specs"
    folder.mkdir()
    fake_spec(folder, "one")
    listing = folder / "mine.txt"
    listing.write_text("one.json\nnoe.json\n")
    code, result = compare(tmp_path, str(listing))
    assert result is None  # stopped before any engine ran
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2
    assert f"{folder / 'noe.json'}: no such engine spec" in err
    assert f"did you mean {folder / 'one.json'}?" in err
