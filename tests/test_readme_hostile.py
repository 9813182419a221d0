"""The reliability page's hostile-suite table counts what `pytest -m hostile` runs, file by file.

The table drifted once (it said 348 while 353 cases were marked): each row's
count and files are checked against the collected cases, so a new hostile test
needs its row, and the total in the sentence above the table is their sum.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _collected() -> Counter[str]:
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", "hostile",
         "-p", "no:cacheprovider", "tests"],
        cwd=REPO, capture_output=True, text=True, check=True).stdout
    return Counter(line.split("::", 1)[0] for line in out.splitlines() if "::" in line)


def test_the_hostile_table_counts_the_collected_cases() -> None:
    text = (REPO / "docs" / "reliability.md").read_text()
    section = text[text.index("## The hostile suite"):]
    end = section.find("\n## ", 1)
    section = section if end < 0 else section[:end]
    rows = re.findall(r"^\| ([^|]+?) \| (\d+) \| [^|]+ \| (.+?) \|$", section, re.M)
    assert rows, "no table rows found"
    match = re.search(r"`pytest -m hostile` runs (\d+) cases", section)
    assert match, "the sentence that states the total is gone"
    stated = int(match.group(1))
    collected = _collected()
    assert sum(int(n) for _, n, _ in rows) == stated == sum(collected.values())
    # Each file's cases are all in rows that name it: a row's count may span its files.
    named = {f for _, _, files in rows for f in re.findall(r"`(tests/[\w/]+\.py)`", files)}
    assert set(collected) <= named, f"hostile cases in files no row names: {set(collected) - named}"
