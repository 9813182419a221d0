"""Reading the HTML report in tests: the page parsed with html.parser, the drill-down's
data unpacked as report.js reads it, and headless Chromium through selenium."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from minicorpus import QUERIES, SOURCES

from codesearch_bench.render.html import render_html
from codesearch_bench.render.html.packed import unpack
from codesearch_bench.results.schema import ResultFile

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "result-two-corpora.json"
VOID = {"meta", "img", "input", "br", "hr", "link"}
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
HAS_SELENIUM = importlib.util.find_spec("selenium") is not None


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def walk(self) -> list[Node]:
        out = [self]
        for c in self.children:
            if isinstance(c, Node):
                out += c.walk()
        return out

    def find(self, tag: str, **attrs: str) -> list[Node]:
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [n for n in self.walk() if n.tag == tag
                and all(n.attrs.get(k) == v for k, v in wanted.items())]


class Dom(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {}, None)
        self.cur = self.root
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.cur = node.parent

    def handle_data(self, data: str) -> None:
        self.cur.children.append(data)


def golden() -> ResultFile:
    return ResultFile.load(GOLDEN)


def with_tree(result: ResultFile, base: Path, *, identity: str | None = None) -> ResultFile:
    """The result as if its corpora were still set up under base: trees, markers, query sets."""
    corpora = {}
    for name, info in result.corpora.items():
        tree = base / "corpora" / name / "tree"
        for rel, text in SOURCES.items():
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (tree / rel).write_text(text)
        (tree.parent / ".setup-done.json").write_text(
            json.dumps({"identity": identity or info.identity, "pin": info.pin}))
        qs = base / f"{name}.jsonl"
        qs.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
        corpora[name] = info.model_copy(update={
            "tree": str(tree), "query_set": str(qs),
            "query_set_sha256": hashlib.sha256(qs.read_bytes()).hexdigest()})
    return result.model_copy(update={"corpora": corpora})


def page(result: ResultFile, out: Path) -> tuple[str, Dom]:
    (path,) = render_html(result, out)
    assert path == out / "index.html"
    text = path.read_text(encoding="utf-8")
    return text, Dom(text)


def data_of(dom: Dom) -> dict[str, Any]:
    """The drill-down's data as the page's script reads it: the index block, and each
    corpus's packed block unpacked."""
    (block,) = dom.root.find("script", id="bench-data")
    index: dict[str, Any] = json.loads(block.text())
    corpora = {}
    for entry in index["corpora"]:
        (packed,) = dom.root.find("script", id=entry["block"])
        assert packed.attrs["data-encoding"] == "gzip+base64"
        corpora[entry["name"]] = unpack(packed.text())
    return {**index, "corpora": corpora}


def slots_of(corpus: dict[str, Any], outcome: dict[str, Any]) -> list[dict[str, Any]]:
    """An outcome's slots with their names: [path index, gains, [[start, length, gold]]]
    read as report.js reads them."""
    return [{"path": corpus["paths"][p], "fg": fg, "cg": cg,
             "chunks": [{"s": s, "e": None if n is None else s + n, "gold": bool(g)}
                        for s, n, g in chunks]}
            for p, fg, cg, chunks in outcome["slots"]]


def span_lines(corpus: dict[str, Any], path: str, start: int, end: int,
               shown: int = 40) -> list[str] | None:
    """The lines the page shows for a span, cut from its file's runs as report.js does."""
    text = corpus["text"].get(path)
    if not text:
        return None
    first, stop = max(start, 1), min(end, text["n"])
    last = min(stop, first + shown - 1)
    for at, lines in text["runs"]:
        if at <= first and last < at + len(lines):
            return list(lines[first - at:last - at + 1])
    return None


def browser_missing() -> str | None:
    if not HAS_SELENIUM:
        return "selenium not installed (pip install -e '.[browser]')"
    if CHROMIUM is None or CHROMEDRIVER is None:
        return "chromium and chromium-driver not installed (apt-get install chromium " \
               "chromium-driver)"
    return None


@contextmanager
def chromium(tmp_path: Path) -> Iterator[Any]:
    """A headless Chromium driven by selenium, its console log kept, quit at the end."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)
    # The background-networking flags keep Chromium from hanging on connections a closed
    # network never answers.
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1300,1100",
                 f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=opts)
    try:
        driver.set_page_load_timeout(30)
        yield driver
    finally:
        driver.quit()
