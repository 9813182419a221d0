"""Normalizing hit paths to the candidate tree, and collapsing hits per file."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers import fake

from codesearch_bench.engine.output.parse import parse
from codesearch_bench.engine.spec import ParseSpec
from codesearch_bench.model import Hit, Slot
from codesearch_bench.scoring.normalize import collapse, normalize, normalize_path

ROOT = Path("/work/tree")


@pytest.mark.parametrize(
    ("raw", "strip", "expected"),
    [
        ("pkg/a.py", "", "pkg/a.py"),
        ("./pkg/a.py", "", "pkg/a.py"),
        ("././pkg/a.py", "", "pkg/a.py"),
        ("pkg//a.py", "", "pkg/a.py"),
        ("pkg/./sub/../a.py", "", "pkg/a.py"),
        ("  pkg/a.py\n", "", "pkg/a.py"),
        ("pkg\\win\\a.py", "", "pkg/win/a.py"),
        ("/work/tree/pkg/a.py", "", "pkg/a.py"),
        ("/work/tree//pkg/a.py", "", "pkg/a.py"),
        ("/work/tree/x/../pkg/a.py", "", "pkg/a.py"),
        ("/build/src/pkg/a.py", "/build/src/", "pkg/a.py"),
        ("repo/pkg/a.py", "repo/", "pkg/a.py"),
        ("other/pkg/a.py", "repo/", "other/pkg/a.py"),
        ("/build/src/./pkg/a.py", "/build/src", "pkg/a.py"),
    ],
)
def test_normalize_path_kept(raw: str, strip: str, expected: str) -> None:
    assert normalize_path(raw, ROOT, strip) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "../../etc/passwd", "..", "pkg/../../x.py", "/etc/passwd", "/work/treehouse/a.py",
        "/work/tree/../../etc/passwd", "/work/tree/pkg/../../tree2/a", "/work/tree",
        "", ".", "./", "   ", "/build/src/pkg/a.py",
    ],
)
def test_normalize_path_outside(raw: str) -> None:
    assert normalize_path(raw, ROOT) is None


def test_absolute_path_under_resolved_root(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "pkg").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    # The engine was given the symlink but reports resolved paths, or the other way round.
    assert normalize_path(f"{real}/pkg/a.py", link) == "pkg/a.py"
    assert normalize_path(f"{link}/pkg/a.py", link) == "pkg/a.py"


def test_normalize_counts_and_drops_outside() -> None:
    hits = [
        Hit("./a.py", 1, 2, rank=0),
        Hit("../../etc/passwd", 1, 1, rank=1),
        Hit("/work/tree/b.py", 5, 5, rank=2),
        Hit("/etc/shadow", rank=3),
    ]
    out = normalize(hits, ROOT)
    assert [(h.path, h.start, h.end, h.rank) for h in out.hits] == [
        ("a.py", 1, 2, 0), ("b.py", 5, 5, 2)]
    assert out.outside == 2
    assert out.outside_examples == ("../../etc/passwd", "/etc/shadow")


def test_outside_examples_are_capped() -> None:
    out = normalize([Hit(f"../x{i}.py") for i in range(9)], ROOT)
    assert out.outside == 9 and len(out.outside_examples) == 5


def test_line_base_zero_shifts_to_one_based() -> None:
    argv = fake("zero_based.py")
    stdout = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, check=True,
                            timeout=30).stdout
    parsed = parse(ParseSpec(format="json", results="hits", start="start", end="end"), stdout)
    out = normalize(parsed.hits, ROOT, line_base=0)
    assert [(h.path, h.start, h.end) for h in out.hits] == [("a.py", 1, 5), ("b.py", 10, 10)]
    assert json.loads(stdout)["hits"][0]["start"] == 0


def test_line_base_one_leaves_lines_and_none_stays_none() -> None:
    hits = [Hit("a.py", 3, 4), Hit("b.py")]
    assert [(h.start, h.end) for h in normalize(hits, ROOT).hits] == [(3, 4), (None, None)]
    assert [(h.start, h.end) for h in normalize(hits, ROOT, line_base=0).hits] == [
        (4, 5), (None, None)]


def test_normalize_keeps_text_score_rank() -> None:
    hit = Hit("./a.py", 1, 1, text="t", score=0.5, rank=7)
    assert normalize([hit], ROOT, strip_prefix="").hits == [Hit("a.py", 1, 1, "t", 0.5, 7)]


def test_collapse_order_is_first_appearance_not_score() -> None:
    hits = [
        Hit("b.py", 1, 1, score=0.1, rank=0),
        Hit("a.py", 5, 9, score=0.9, rank=1),
        Hit("b.py", 20, 30, score=0.8, rank=2),
        Hit("c.py", 1, 2, score=1.0, rank=3),
        Hit("b.py", 40, 41, score=0.7, rank=4),
        Hit("a.py", 50, 51, score=0.6, rank=5),
    ]
    slots = collapse(hits, per_file=2)
    assert [(s.path, s.rank) for s in slots] == [("b.py", 1), ("a.py", 2), ("c.py", 3)]
    assert [h.rank for h in slots[0].chunks] == [0, 2]  # third b.py chunk over the cap
    assert [h.rank for h in slots[1].chunks] == [1, 5]
    assert [h.rank for h in slots[2].chunks] == [3]


def test_collapse_per_file_one_and_large() -> None:
    hits = [Hit("a.py", i, i, rank=i) for i in range(1, 6)] + [Hit("b.py", rank=6)]
    assert collapse(hits, per_file=1) == [
        Slot("a.py", 1, (hits[0],)), Slot("b.py", 2, (hits[5],))]
    assert len(collapse(hits, per_file=10)[0].chunks) == 5


def test_collapse_empty() -> None:
    assert collapse([], per_file=3) == []
