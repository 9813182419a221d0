"""The manual builds as a site with no broken link, and README.md stays a front page.

`mkdocs build --strict` turns every warning into a failure: a page missing from the nav, a
link to a page or heading that does not exist. README.md is not part of the site, so its
relative links are checked here against the files they name.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README_MAX_LINES = 250


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        pytest.fail("mkdocs and mkdocs-material are part of the test extra: "
                    "pip install -e '.[test]'")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file",
         str(REPO / "mkdocs.yml"), "--site-dir", str(tmp_path / "site")],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_readme_is_a_front_page() -> None:
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines; keep it under {README_MAX_LINES} and move the "
        "detail into a page under docs/")


def test_readme_links_resolve() -> None:
    text = (REPO / "README.md").read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", text) + re.findall(r'src="([^"]+)"', text)
    local = [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z]+:", t)]
    assert local, "README.md links to no page of the manual"
    missing = [t for t in local if t and not (REPO / t).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def _anchors(page: Path) -> set[str]:
    """The ids mkdocs gives a page's headings: lower case, punctuation dropped, spaces as -."""
    headings = re.findall(r"^#{1,6} (.+)$", page.read_text(), re.M)
    return {re.sub(r"\s+", "-", re.sub(r"[^\w\s-]", "", h).strip().lower()) for h in headings}


def test_hints_in_the_package_name_pages_that_exist() -> None:
    """An error hint sends the user to a page (and heading) of the manual: both must exist."""
    cited = {(path, m.group(1), m.group(2)) for path in (REPO / "src").rglob("*.py")
             for m in re.finditer(r"\b(docs/[\w/.-]+?\.md)(?:#([\w-]+))?\b", path.read_text())}
    assert any(page == "docs/engine-specs.md" for _, page, _ in cited), "no hint names a page"
    broken = [f"{src.relative_to(REPO)}: {page}{'#' + anchor if anchor else ''}"
              for src, page, anchor in cited
              if not (REPO / page).is_file() or (anchor and anchor not in _anchors(REPO / page))]
    assert not broken, f"hints name pages or headings that do not exist: {broken}"
