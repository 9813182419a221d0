"""render/html: the one-file static page of a comparison.

Hermetic tests parse the page with html.parser (tables, drill-down data,
provenance, escaping, no network); the browser test loads it in headless
Chromium through selenium, sorts a column, opens a query and saves a
screenshot under .ci-artifacts/ for CI to keep.
"""

from __future__ import annotations

import base64
import importlib.util
import io
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from htmlpage import (
    GOLDEN,
    REPO,
    browser_missing,
    chromium,
    data_of,
    golden,
    page,
    slots_of,
    span_lines,
    with_tree,
)
from minicorpus import QUERIES, SOURCES
from rich.console import Console

from codesearch_bench.errors import UsageError
from codesearch_bench.render.html import export, render_html
from codesearch_bench.render.html.tiers import derived
from codesearch_bench.render.ui import UI
from codesearch_bench.results.schema import Failure, ResultFile, SlotOut
from codesearch_bench.results.statistics import ComparisonOut

ARTIFACTS = REPO / ".ci-artifacts"
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


@pytest.fixture
def no_figures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Figures take seconds to draw and have their own tests (test_plots.py)."""
    monkeypatch.setattr("codesearch_bench.render.html.pages.figures",
                        lambda result: ({}, "figures left out by this test"))


@pytest.mark.usefixtures("no_figures")
def test_every_corpus_track_and_engine_is_in_a_sortable_table(tmp_path: Path) -> None:
    result = golden()
    _, dom = page(result, tmp_path / "out")
    sections = {s.attrs["data-corpus"]: s for s in dom.root.find("section", class_="corpus")}
    assert set(sections) == set(result.corpora) == {"mini", "tiny"}
    for corpus, section in sections.items():
        tables = {t.attrs["data-track"]: t for t in section.find("table")
                  if t.attrs.get("data-track")}
        assert set(tables) == {"file", "chunk"}
        for table in tables.values():
            assert "sortable" in (table.attrs["class"] or "")
            engines = {tr.attrs["data-engine"] for tr in table.find("tr")
                       if tr.attrs.get("data-engine")}
            assert engines == {r.engine for r in result.rows if r.corpus == corpus}
    mini = sections["mini"].find("table", data_track="file")[0]
    fake = next(tr for tr in mini.find("tr") if tr.attrs.get("data-engine") ==
                "fixed-table-fake" and tr.attrs.get("class") is None)
    est = next(r for r in result.rows if r.engine == "fixed-table-fake" and r.corpus == "mini"
               and r.headline).metrics["file.recall@10"]
    assert est.mean is not None and est.lo is not None and est.hi is not None
    head = [h.text() for h in mini.find("th")]
    recall = fake.find("td")[head.index("recall@10 [95% CI]")]
    assert recall.text() == f"{est.mean:.2f} [{est.lo:.2f}, {est.hi:.2f}]"
    assert recall.attrs["data-v"] == repr(est.mean)  # what sorting reads


@pytest.mark.usefixtures("no_figures")
def test_paired_comparisons_show_difference_and_corrected_p(tmp_path: Path) -> None:
    result = golden()
    (c,) = [c for c in result.comparisons if c.corpus == "mini" and c.metric == "file.hit@10"
            and (c.engine_a, c.engine_b) == ("grep", "fixed-table-fake")]
    assert c.delta and c.p_adjusted is not None
    _, dom = page(result, tmp_path / "out")
    section = dom.root.find("section", data_corpus="mini")[0]
    (paired,) = section.find("table", class_="sortable paired")
    head = [h.text() for h in paired.find("th")]
    rows = [{h: td.text() for h, td in zip(head, tr.find("td"), strict=True)}
            for tr in paired.find("tr")[1:]]
    row = next(r for r in rows if r["A − B"] == "grep − fixed-table-fake"
               and r["metric"] == "file.hit@10")
    assert row["difference [95% CI]"] == f"{c.delta:+.3f} [{c.lo:+.3f}, {c.hi:+.3f}]"
    assert row["p (Holm)"].startswith(f"{c.p_adjusted:.3f}") and row["n"] == str(c.n)


class NewerComparison(ComparisonOut):
    """What the schema's comparisons are about to gain (read through getattr by the page)."""

    mdd: float | None = None
    failed_a: int = 0
    failed_b: int = 0
    failures_a: int = 0  # a field this page has never heard of


@pytest.mark.usefixtures("no_figures")
def test_fields_the_schema_is_gaining_are_rendered_when_present(tmp_path: Path) -> None:
    result = golden()
    comps = [NewerComparison(**{**c.model_dump(), "mdd": 0.3125, "failed_a": 2,
                                "failed_b": 1, "failures_a": 7}) for c in result.comparisons]
    _, dom = page(result.model_copy(update={"comparisons": comps}), tmp_path / "out")
    paired = dom.root.find("table", class_="sortable paired")[0]
    head = [th.text() for th in paired.find("th")]
    assert {"MDD", "failed A / B", "failures_a"} <= set(head)
    first = [td.text() for td in paired.find("tr")[1].find("td")]
    assert first[head.index("MDD")] == "0.312" and first[head.index("failed A / B")] == "2 / 1"
    assert first[head.index("failures_a")] == "7"


def labels(result: ResultFile) -> dict[str, str]:
    return {engine: t.label for engine, t in derived(result, "mini", 1, "file").items()}


def test_tiers_come_from_significant_pairs_only() -> None:
    result = golden()
    # every pair was tested and none separated: one tier
    assert labels(result) == {"grep": "T1", "bm25": "T1", "bm25-persistent": "T1",
                              "fixed-table-fake": "T1"}
    comps = [c.model_copy(update={"p_adjusted": 0.01}) if c.corpus == "mini"
             and c.metric == "file.hit@10" and "fixed-table-fake" in (c.engine_a, c.engine_b)
             else c for c in result.comparisons]
    assert labels(result.model_copy(update={"comparisons": comps})) == {
        "grep": "T1", "bm25": "T1", "bm25-persistent": "T1", "fixed-table-fake": "T2"}
    untested = [c for c in comps if not (c.corpus == "mini" and {c.engine_a, c.engine_b} ==
                                         {"grep", "bm25"})]
    # never compared with its tier's leader: no tier, rather than tier 1 (a twin is
    # compared through the engine it equals, so take the twins away to see it)
    assert "bm25" not in labels(result.model_copy(update={"comparisons": untested,
                                                          "twins": []}))


@pytest.mark.usefixtures("no_figures")
def test_tiers_the_result_states_are_shown_as_stated(tmp_path: Path) -> None:
    data = golden().model_dump(mode="json")
    entries = [("grep", "a", 1, 1), ("bm25", "ab", 1, 3), ("bm25-persistent", "b", 2, 4),
               ("fixed-table-fake", "b", 2, 4)]
    data["tiers"] = [{"corpus": "mini", "per_file": 1, "metric": "file.hit@10", "group": None,
                      "engines": [{"engine": e, "mean": 1.0, "letters": letters,
                                   "rank_lo": lo, "rank_hi": hi}
                                  for e, letters, lo, hi in entries]},
                     {"corpus": "mini", "per_file": 1, "metric": "file.hit@10",
                      "group": "split:test", "engines": [
                          {"engine": "grep", "mean": 1.0, "letters": "z", "rank_lo": 1,
                           "rank_hi": 1}]}]
    text, dom = page(ResultFile.model_validate(data), tmp_path / "out")
    table = dom.root.find("section", data_corpus="mini")[0].find("table", data_track="file")[0]
    tiers = {tr.attrs["data-engine"]: tr.find("td")[1] for tr in table.find("tr")
             if tr.attrs.get("data-engine") and tr.attrs.get("class") is None}
    assert {e: cell.text() for e, cell in tiers.items()} == {
        "grep": "a", "bm25": "ab", "bm25-persistent": "b", "fixed-table-fake": "b"}
    assert tiers["bm25"].attrs["title"] == ("ranks 1–3; engines sharing a letter are not "
                                            "significantly different on file.hit@10")
    assert "Tiers as the result file states them" in text
    assert "split:test" in dom.root.find("section", data_corpus="mini")[0].text()
    # the tiny corpus states none: its tiers are derived from its comparisons
    tiny = dom.root.find("section", data_corpus="tiny")[0].find("table", data_track="file")[0]
    assert {tr.find("td")[1].text() for tr in tiny.find("tr")
            if tr.attrs.get("data-engine") and tr.attrs.get("class") is None} == {"T1"}


@pytest.mark.usefixtures("no_figures")
def test_the_summary_across_corpora_is_shown_when_present(tmp_path: Path) -> None:
    data = golden().model_dump(mode="json")
    data["summary"] = {
        "corpora": ["mini", "tiny"],
        "macro": [{"engine": "grep", "metric": "file.hit@10", "corpora": ["mini", "tiny"],
                   "mean": 0.875, "lo": 0.5, "hi": 1.0}],
        "pairs": [{"metric": "file.hit@10", "engine_a": "grep", "engine_b": "bm25",
                   "wins": 1, "ties": 1, "losses": 0,
                   "outcomes": {"mini": "win", "tiny": "tie"}}]}
    _, dom = page(ResultFile.model_validate(data), tmp_path / "out")
    (section,) = dom.root.find("section", id="summary")
    (macro,) = section.find("table", class_="sortable macro")
    assert [td.text() for td in macro.find("td")] == ["grep", "0.88 [0.50, 1.00]"]
    (pairs,) = section.find("table", class_="sortable pairs")
    assert [td.text() for td in pairs.find("td")] == [
        "file.hit@10", "grep vs bm25", "1", "1", "0", "mini: win, tiny: tie"]
    data["summary"], data["summaries"] = None, []
    _, dom = page(ResultFile.model_validate(data), tmp_path / "none")
    assert not dom.root.find("section", id="summary")


@pytest.mark.usefixtures("no_figures")
def test_drill_down_has_every_query_slots_gains_text_and_gold(tmp_path: Path) -> None:
    _, dom = page(with_tree(golden(), tmp_path), tmp_path / "out")
    data = data_of(dom)
    mini = data["corpora"]["mini"]
    assert [q["id"] for q in mini["queries"]] == [q["id"] for q in QUERIES]
    q1 = mini["queries"][0]
    assert q1["text"] == QUERIES[0]["query"]
    (gold,) = q1["gold"]
    assert (gold["path"], gold["start"], gold["end"]) == ("pkg/config.py", 4, 7)
    assert "def load_settings(path):" in (span_lines(mini, "pkg/config.py", 4, 7) or [])
    grep = mini["runs"]["grep|1"]["outcomes"]["q1"]
    (slot,) = slots_of(mini, grep)
    assert (slot["path"], slot["fg"], slot["cg"]) == ("pkg/config.py", 1, 1)
    (chunk,) = slot["chunks"]
    assert (chunk["s"], chunk["e"], chunk["gold"]) == (1, 12, True)
    assert (span_lines(mini, "pkg/config.py", 1, 12) or [])[3] == "def load_settings(path):"
    fake = mini["runs"]["fixed-table-fake|1"]["outcomes"]["q1"]
    assert [(s["path"], s["fg"], s["chunks"][0]["gold"]) for s in slots_of(mini, fake)] == [
        ("pkg/cells.py", 0, False), ("pkg/config.py", 1, False)]  # lines 9-11 miss 4-7
    assert fake["scores"]["chunk.hit@10"] == 0.0 and grep["scores"]["chunk.hit@10"] == 1.0
    assert any("resolved from the tree at report time" in n for n in mini["notes"])


@pytest.mark.usefixtures("no_figures")
def test_a_chunk_overlaps_gold_when_they_share_a_line(tmp_path: Path) -> None:
    result = with_tree(golden(), tmp_path)
    rows = list(result.rows)
    i, row = next((i, r) for i, r in enumerate(rows) if r.engine == "fixed-table-fake"
                  and r.corpus == "mini" and r.headline)
    spans = [(7, 9), (8, 9), (1, 4), (1, 3)]  # load_settings is lines 4-7
    slot = SlotOut(path="pkg/config.py", chunks=spans)
    rows[i] = row.model_copy(update={"queries": [
        row.queries[0].model_copy(update={"slots": [slot], "file_gains": [1]}),
        *row.queries[1:]]})
    _, dom = page(result.model_copy(update={"rows": rows}), tmp_path / "out")
    mini = data_of(dom)["corpora"]["mini"]
    (got,) = slots_of(mini, mini["runs"]["fixed-table-fake|1"]["outcomes"]["q1"])
    assert [c["gold"] for c in got["chunks"]] == [True, False, True, False]


@pytest.mark.usefixtures("no_figures")
def test_a_gone_or_rebuilt_tree_is_said_not_guessed(tmp_path: Path) -> None:
    _, dom = page(golden(), tmp_path / "gone")
    mini = data_of(dom)["corpora"]["mini"]
    assert mini["text"] == {} and mini["queries"][0]["text"] is None
    assert any("not on this machine" in n for n in mini["notes"])
    assert mini["runs"]["grep|1"]["outcomes"]["q1"]["slots"][0][1] == 1  # the file gain, still
    _, dom = page(with_tree(golden(), tmp_path / "b", identity="another entry"),
                  tmp_path / "rebuilt")
    mini = data_of(dom)["corpora"]["mini"]
    assert mini["text"] == {}
    assert any("rebuilt from another corpora.toml entry" in n for n in mini["notes"])
    changed = with_tree(golden(), tmp_path / "c")
    Path(changed.corpora["mini"].query_set).write_text("")
    mini = data_of(page(changed, tmp_path / "changed")[1])["corpora"]["mini"]
    assert mini["queries"][0]["text"] is None
    assert any("changed since this run" in n for n in mini["notes"])


@pytest.mark.usefixtures("no_figures")
def test_provenance_has_environment_pins_hashes_commands_and_protocol(tmp_path: Path) -> None:
    result = golden()
    _, dom = page(result, tmp_path / "out")
    (prov,) = dom.root.find("section", id="provenance")
    text = prov.text()
    for corpus in result.corpora.values():
        assert corpus.pin in text and corpus.query_set_sha256 in text and corpus.identity in text
    for engine in result.engines.values():
        assert engine.spec_sha256 in text and engine.spec_file in text
    assert result.protocol_version in text and str(result.environment["python"]) in text
    assert "tokenizer.ranks_sha256" in text
    assert "grep-engine /fixture/w/corpora/mini/tree 60 1 'where are the settings" in text


@pytest.mark.usefixtures("no_figures")
def test_nothing_is_fetched_from_the_network(tmp_path: Path) -> None:
    _, dom = page(with_tree(golden(), tmp_path), tmp_path / "out")
    assert not dom.root.find("link") and not dom.root.find("iframe")
    for node in dom.root.walk():
        for key, value in node.attrs.items():
            if key in ("src", "href", "action", "poster", "srcset"):
                assert value is not None and value.startswith(("#", "data:")), (key, value)
    for style in dom.root.find("style"):
        assert "url(" not in style.text() and "@import" not in style.text()
    scripts = dom.root.find("script")
    assert all("src" not in s.attrs for s in scripts)
    code = next(s for s in scripts if s.attrs.get("type") is None).text()
    assert "fetch(" not in code and "XMLHttpRequest" not in code and "http" not in code
    (csp,) = [m for m in dom.root.find("meta")
              if m.attrs.get("http-equiv") == "Content-Security-Policy"]
    assert (csp.attrs["content"] or "").startswith("default-src 'none'")


@pytest.mark.usefixtures("no_figures")
def test_user_text_is_escaped_everywhere(tmp_path: Path) -> None:
    result = golden()
    hostile = '<script>alert("fail")</script>'
    path = "</script><script>alert(1)</script><!--<script>.py"
    rows = list(result.rows)
    first = rows[0]
    outcome = first.queries[0].model_copy(update={"slots": [SlotOut(path=path, chunks=[])]})
    rows[0] = first.model_copy(update={"flags": ["!! <img src=x onerror=alert(2)>"],
                                       "queries": [outcome, *first.queries[1:]]})
    failure = Failure(engine="grep", corpus="mini", stage="search", message=hostile,
                      stderr_tail="<b>bold</b>\n</pre><script>x()</script>")
    text, dom = page(result.model_copy(update={"rows": rows, "failures": [failure]}),
                     tmp_path / "out")
    # the index block, a packed block per corpus and the page's own script
    assert [s.attrs.get("type") for s in dom.root.find("script")] == [
        "application/octet-stream", "application/octet-stream", "application/json", None]
    assert not [n for n in dom.root.find("img") if "onerror" in n.attrs]
    (failures,) = [d for d in dom.root.find("div") if d.attrs.get("class") == "failures"]
    assert hostile in failures.text() and "</pre><script>x()</script>" in failures.text()
    assert "&lt;script&gt;alert(&quot;fail&quot;)&lt;/script&gt;" in text
    flags = [s.text() for s in dom.root.find("span", class_="flag bad")]
    assert "!! <img src=x onerror=alert(2)>" in flags
    mini = data_of(dom)["corpora"]["mini"]
    slot = slots_of(mini, mini["runs"]["grep|1"]["outcomes"]["q1"])[0]
    assert slot["path"] == path  # the packed block hides it from the HTML parser, not from JSON


@pytest.mark.usefixtures("no_figures")
def test_exporter_writes_the_page_and_refuses_a_file(tmp_path: Path) -> None:
    out = io.StringIO()
    ui = UI(out=Console(file=out, width=200), err=Console(file=io.StringIO()))
    export(golden(), SimpleNamespace(out=tmp_path / "report"), ui)
    assert (tmp_path / "report" / "index.html").is_file()
    assert f"wrote {tmp_path / 'report' / 'index.html'}" in out.getvalue()
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="is a file"):
        export(golden(), SimpleNamespace(out=tmp_path / "file"), ui)


def test_cli_format_html(tmp_path: Path, no_figures: None) -> None:
    from codesearch_bench.cli import main
    from codesearch_bench.render import EXPORTERS

    if "html" not in EXPORTERS:
        pytest.skip("render/__init__.py's EXPORTERS has no html entry yet")
    assert main(["report", str(GOLDEN), "--format", "html", "--out",
                 str(tmp_path / "r")]) == 0
    assert (tmp_path / "r" / "index.html").is_file()


def test_without_matplotlib_the_page_names_the_extra(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise UsageError("plots need matplotlib, which is not installed",
                         hint="pip install 'codesearch-bench[plots]'")

    monkeypatch.setattr("codesearch_bench.render.plots.matplotlib_module", missing)
    _, dom = page(golden(), tmp_path / "out")
    assert not dom.root.find("img")
    assert ("install the `plots` extra: pip install 'codesearch-bench[plots]'"
            in dom.root.find("section", data_corpus="mini")[0].text())
    assert dom.root.find("table", data_track="file")  # the rest of the page is whole


@pytest.mark.skipif(not HAS_MPL, reason="matplotlib (the `plots` extra) not installed")
def test_figures_are_inline_pngs(tmp_path: Path) -> None:
    _, dom = page(golden(), tmp_path / "out")
    images = dom.root.find("img")
    assert len(images) == 4 * 2  # four figures for each of the two corpora
    for img in images:
        src = img.attrs["src"] or ""
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == b"\x89PNG\r\n\x1a\n"


# ---- the page in a real browser ------------------------------------------------------

@pytest.mark.browser
@pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")
def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    (path,) = render_html(with_tree(golden(), tmp_path), tmp_path / "out")
    started = time.monotonic()
    with chromium(tmp_path) as driver:
        driver.get(path.as_uri())
        WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
        table = driver.find_element(By.CSS_SELECTOR,
                                    "section[data-corpus=mini] table[data-track=file]")

        def order() -> list[str]:
            return [tr.get_attribute("data-engine") or "" for tr in
                    table.find_elements(By.CSS_SELECTOR, "tbody tr") if tr.is_displayed()]

        assert order() == ["grep", "bm25", "bm25-persistent", "fixed-table-fake"]
        recall = next(th for th in table.find_elements(By.TAG_NAME, "th")
                      if th.text.startswith("recall@10"))
        recall.click()
        assert recall.get_attribute("aria-sort") == "descending"
        assert order()[-1] == "fixed-table-fake"
        recall.click()
        assert recall.get_attribute("aria-sort") == "ascending"
        assert order()[0] == "fixed-table-fake"
        table.find_element(By.XPATH, ".//th[starts-with(normalize-space(.), 'engine')]").click()
        assert order() == ["bm25", "bm25-persistent", "fixed-table-fake", "grep"]

        Select(driver.find_element(By.ID, "dd-corpus")).select_by_value("mini")
        # the corpus's data is unpacked in the page (DecompressionStream) before it shows
        WebDriverWait(driver, 10).until(
            lambda d: d.find_element(By.ID, "drill").get_attribute("data-loaded") == "mini")
        Select(driver.find_element(By.ID, "dd-a")).select_by_value("grep")
        Select(driver.find_element(By.ID, "dd-b")).select_by_value("fixed-table-fake")
        listed = [tr.get_attribute("data-query") for tr in
                  driver.find_elements(By.CSS_SELECTOR, "#dd-list tr.q")]
        assert listed == ["q4"]  # on file.hit@10 only q4 differs; none is missed by both
        Select(driver.find_element(By.ID, "dd-metric")).select_by_value("chunk.hit@10")
        rows = driver.find_elements(By.CSS_SELECTOR, "#dd-list tr.q")
        assert [r.get_attribute("data-query") for r in rows] == ["q1", "q2", "q3"]
        assert "A only" in rows[0].text
        rows[0].click()
        detail = driver.find_element(By.ID, "dd-detail")
        assert QUERIES[0]["query"] in detail.text
        gold = detail.find_element(By.CSS_SELECTOR, ".gold")
        assert "pkg/config.py:load_settings (lines 4-7)" in gold.text
        assert "def load_settings(path):" in gold.text  # the gold span's own lines
        columns = detail.find_elements(By.CSS_SELECTOR, ".engine-col")
        assert [c.get_attribute("data-engine") for c in columns] == ["grep",
                                                                     "fixed-table-fake"]
        grep, fake = columns
        assert [s.text for s in grep.find_elements(By.CSS_SELECTOR, ".path")] == [
            "pkg/config.py"]
        assert "✓ gold chunk" in grep.text and "overlaps gold" in grep.text
        assert "def load_settings(path):" in grep.text  # the text the slot shows, opened
        assert [s.text for s in fake.find_elements(By.CSS_SELECTOR, ".path")] == [
            "pkg/cells.py", "pkg/config.py"]
        assert "✓ gold file" in fake.text and "✓ gold chunk" not in fake.text
        errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
        assert not errors, errors
        marked = grep.find_elements(By.CSS_SELECTOR, ".ln.g")
        # the gold lines, marked inside the slot's text
        assert [e.text for e in marked] == SOURCES["pkg/config.py"].splitlines()[3:7]
        ARTIFACTS.mkdir(exist_ok=True)
        driver.execute_script("document.getElementById('drill').scrollIntoView()")
        assert driver.save_screenshot(str(ARTIFACTS / "html-report-drilldown.png"))
        driver.execute_script("window.scrollTo(0, 0)")
        assert driver.save_screenshot(str(ARTIFACTS / "html-report.png"))
    assert time.monotonic() - started < 60
