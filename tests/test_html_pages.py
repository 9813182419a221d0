"""render/html at size: a run of many queries stays one page small enough to open, its
drill-down packed and unpacked again whole; a report too big for one page is a summary
page and a page per corpus, linked both ways; the tree's text is kept a line once per
file within a budget the corpora of a page share.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from htmlpage import Dom, browser_missing, chromium, data_of, golden, slots_of, with_tree

from codesearch_bench.corpus.tree import TreeText
from codesearch_bench.render.html import pages, render_html
from codesearch_bench.render.html.pages import estimate, groups_of
from codesearch_bench.render.html.texts import Budget, Texts
from codesearch_bench.results.schema import QueryOutcome, ResultFile, SlotOut

BOUND = 5_000_000  # what a default run's page may weigh, figures included
QUERIES_PER_ROW = 400  # 24 rows: 9,600 outcomes of 20 slots, more than a default run's


@pytest.fixture(autouse=True)
def no_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Figures have their own tests; these are about the rest of the weight."""
    monkeypatch.setattr("codesearch_bench.render.html.pages.figures",
                        lambda result: ({}, "figures left out by this test"))


def _outcome(first: QueryOutcome, qid: str, rng: random.Random, hit: bool) -> QueryOutcome:
    # The first slot is a file of the mini corpus's tree (tests/minicorpus.py), so the
    # page has its text when the tree is there; the rest are files it does not have.
    slots = [SlotOut(path="pkg/config.py", chunks=[(1, 12)])] + [
        SlotOut(path=f"src/pkg{rng.randrange(40)}/mod{rng.randrange(60)}.py",
                chunks=[(start, start + rng.choice((29, 39, 49)))
                        for start in [rng.randrange(1, 3000)]]) for _ in range(19)]
    gains = [int(hit and i == 2) for i in range(20)]
    scores = {**first.scores, "file.hit@10": float(hit), "chunk.hit@10": float(hit)}
    return first.model_copy(update={
        "id": qid, "slots": slots, "file_gains": gains, "chunk_gains": gains,
        "n_slots": 20, "latency_s": rng.uniform(0.001, 0.3), "scores": scores,
        "first_file_slot": 3 if hit else None, "first_chunk_slot": 3 if hit else None})


def big_result(per_row: int = QUERIES_PER_ROW) -> ResultFile:
    """The golden result with every row holding per_row queries of 20 varied slots;
    each engine finds a different third of them, so any two differ on some."""
    result = golden()
    rng = random.Random(7)
    engines = list(result.engines)
    rows = [row.model_copy(update={"queries": [
        _outcome(row.queries[0], f"q{k:04d}", rng, (k + engines.index(row.engine)) % 3 == 0)
        for k in range(per_row)]}) for row in result.rows]
    return result.model_copy(update={"rows": rows})


def test_a_run_of_many_queries_is_one_page_within_the_bound(tmp_path: Path) -> None:
    result = big_result()
    (path,) = render_html(result, tmp_path / "out")
    size = path.stat().st_size
    assert size <= BOUND, size
    data = data_of(Dom(path.read_text(encoding="utf-8")))
    # the same data inline as JSON text, as the page once held it, would be over the bound
    assert len(json.dumps(data, separators=(",", ":"))) > BOUND
    assert estimate(result, {}) >= size  # the layout is chosen on an estimate not below it
    mini = data["corpora"]["mini"]
    assert [q["id"] for q in mini["queries"]] == [f"q{k:04d}" for k in range(QUERIES_PER_ROW)]
    row = next(r for r in result.rows if r.engine == "bm25" and r.corpus == "mini"
               and r.per_file == 2)
    want = row.queries[123]
    got = slots_of(mini, mini["runs"]["bm25|2"]["outcomes"][want.id])
    assert [(s["path"], [(c["s"], c["e"]) for c in s["chunks"]], s["fg"], s["cg"])
            for s in got] == [(s.path, list(s.chunks), g, g) for s, g in
                              zip(want.slots, want.file_gains, strict=True)]
    outcome = mini["runs"]["bm25|2"]["outcomes"][want.id]
    assert outcome["scores"] == {"file.hit@10": want.scores["file.hit@10"],
                                 "chunk.hit@10": want.scores["chunk.hit@10"]}
    assert outcome["latency"] == pytest.approx(want.latency_s, abs=5e-5)


@pytest.mark.browser
@pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")
def test_the_big_page_shows_a_querys_slots_in_chromium(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    result = with_tree(big_result(), tmp_path)
    (path,) = render_html(result, tmp_path / "out")
    with chromium(tmp_path) as driver:
        driver.get(path.as_uri())
        WebDriverWait(driver, 20).until(
            lambda d: d.find_element(By.ID, "drill").get_attribute("data-loaded") == "mini")
        Select(driver.find_element(By.ID, "dd-corpus")).select_by_value("tiny")
        WebDriverWait(driver, 20).until(
            lambda d: d.find_element(By.ID, "drill").get_attribute("data-loaded") == "tiny")
        Select(driver.find_element(By.ID, "dd-a")).select_by_value("grep")
        Select(driver.find_element(By.ID, "dd-b")).select_by_value("bm25")
        rows = driver.find_elements(By.CSS_SELECTOR, "#dd-list tr.q")
        assert len(rows) == QUERIES_PER_ROW  # a third each finds, a third neither: none both
        qid = rows[5].get_attribute("data-query")
        rows[5].click()
        (grep,) = driver.find_elements(By.CSS_SELECTOR, ".engine-col[data-engine=grep]")
        want = next(o for r in result.rows if r.engine == "grep" and r.corpus == "tiny"
                    and r.headline for o in r.queries if o.id == qid)
        assert [e.text for e in grep.find_elements(By.CSS_SELECTOR, ".path")] == [
            s.path for s in want.slots]
        (shown,) = grep.find_elements(By.CSS_SELECTOR, "details")  # the one file it has
        opener = shown.find_element(By.TAG_NAME, "summary")
        assert opener.text == "L1–12"
        opener.click()  # closed: the slot overlaps no gold this query is known to have
        assert "def load_settings(path):" in shown.text
        assert "not in the tree" in grep.text  # the other nineteen
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, errors


@pytest.mark.browser
@pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")
def test_a_browser_that_cannot_unpack_says_so_and_keeps_the_tables(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    (path,) = render_html(golden(), tmp_path / "out")
    with chromium(tmp_path) as driver:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                               {"source": "delete window.DecompressionStream;"})
        driver.get(path.as_uri())
        WebDriverWait(driver, 10).until(
            lambda d: "DecompressionStream" in d.find_element(By.ID, "dd-list").text)
        assert "the tables above do not need it" in driver.find_element(By.ID, "dd-list").text
        th = driver.find_element(By.CSS_SELECTOR, "section[data-corpus=mini] th")
        th.click()
        assert th.get_attribute("aria-sort")  # the page's own script still runs


def _hrefs(text: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', text)


def test_too_big_for_one_page_is_a_summary_and_a_page_per_corpus(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pages, "ONE_PAGE", 0)
    out = tmp_path / "out"
    paths = render_html(with_tree(golden(), tmp_path), out)
    assert [p.name for p in paths] == ["index.html", "corpus-mini.html", "corpus-tiny.html"]
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)
    summary = paths[0].read_text(encoding="utf-8")
    dom = Dom(summary)
    assert not dom.root.find("script", id="bench-data")  # the drill-down is on each page
    (table,) = dom.root.find("table", class_="sortable corpora")
    assert [a.attrs["href"] for a in table.find("a")] == ["corpus-mini.html#corpus-0",
                                                         "corpus-tiny.html#corpus-1"]
    assert dom.root.find("section", id="provenance")
    for i, (corpus, file) in enumerate((("mini", paths[1]), ("tiny", paths[2]))):
        text = file.read_text(encoding="utf-8")
        page = Dom(text)
        assert [s.attrs["data-corpus"] for s in page.root.find("section", class_="corpus")] \
            == [corpus]
        assert page.root.find("section", id=f"corpus-{i}")
        assert "index.html" in _hrefs(text) and "index.html#provenance" in _hrefs(text)
        data = data_of(page)
        assert list(data["corpora"]) == [corpus]
        assert data["corpora"][corpus]["runs"]["grep|1"]["outcomes"]
    assert "corpus-tiny.html" in _hrefs(paths[1].read_text())  # the next corpus's page
    for path in paths:  # every link stays in the report's folder, and no file fetches
        text = path.read_text(encoding="utf-8")
        for href in _hrefs(text):
            assert re.fullmatch(r"(index|corpus-[a-z]+)\.html(#[\w-]+)?|#[\w-]+", href), href
        (csp,) = [m for m in Dom(text).root.find("meta")
                  if m.attrs.get("http-equiv") == "Content-Security-Policy"]
        assert (csp.attrs["content"] or "").startswith("default-src 'none'")
        assert "<link" not in text


def test_the_tracks_of_a_corpus_share_its_page() -> None:
    result = golden()
    info = result.corpora["mini"]
    needles = info.model_copy(update={"name": "mini:needles", "track": "needles",
                                      "corpus": "mini"})
    odd = info.model_copy(update={"name": "Mini"})
    corpora = {**result.corpora, "mini:needles": needles, "Mini": odd}
    groups = groups_of(result.model_copy(update={"corpora": corpora}))
    assert [(g.name, g.file, [c for _, c in g.corpora]) for g in groups] == [
        ("mini", "corpus-mini.html", ["mini", "mini:needles"]),
        ("tiny", "corpus-tiny.html", ["tiny"]),
        ("Mini", "corpus-Mini-2.html", ["Mini"])]  # one name on a case-blind disk


def _texts(tmp_path: Path, budget: int) -> Texts:
    (tmp_path / "a.py").write_text("".join(f"line {n}\n" for n in range(1, 101)))
    return Texts(TreeText(tmp_path), Budget(budget))


def test_overlapping_spans_keep_each_line_once(tmp_path: Path) -> None:
    texts = _texts(tmp_path, 10_000)
    for start, end in ((10, 20), (15, 30), (31, 35), (60, 200)):
        texts.want("a.py", start, end)
    texts.want("gone.py", 1, 5)
    table: dict[str, Any] = texts.table()
    assert table["gone.py"] is None
    runs = table["a.py"]["runs"]
    assert [(at, len(lines)) for at, lines in runs] == [(10, 26), (60, 40)]  # 40 a span
    assert runs[0][1][0] == "line 10" and table["a.py"]["n"] == 100
    assert not texts.cut


def test_a_spent_budget_stops_the_text_and_says_so(tmp_path: Path) -> None:
    texts = _texts(tmp_path, 80)  # "line 10" and its newline: 8 characters a line
    texts.want("a.py", 10, 19)
    texts.want("a.py", 12, 14)  # already kept: costs nothing
    texts.want("a.py", 50, 50)
    assert texts.cut and list(texts.table()["a.py"]["runs"]) == [
        [10, [f"line {n}" for n in range(10, 20)]]]


def test_the_corpora_of_a_page_share_its_text_budget(tmp_path: Path) -> None:
    budget = Budget(900, corpora=3)
    first = budget.share()
    assert first.left == 300
    first.left -= 100  # the first corpus took a third of its share
    budget.spent(first, 300)
    assert (budget.left, budget.share().left) == (800, 400)  # what it left goes on
