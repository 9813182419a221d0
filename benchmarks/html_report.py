#!/usr/bin/env python3
"""What writing the HTML report of a result file costs, and what it weighs.

    python benchmarks/html_report.py RESULT.json.gz OUT_DIR [--corpora A,B] [--engines X,Y]
                                     [--browser]

Loads the result as `bench report` does (--corpora and --engines keep only those
corpora, each with its tracks, and engines: a default-sized run cut from the full
suite's result), then writes the report the way
`bench report --format html --out OUT_DIR` does, and prints: the seconds spent
drawing the figures and writing the pages; the resident memory after the load and the
peak while writing (the kernel's VmHWM, reset after the load through
/proc/self/clear_refs, so the load's own peak is not counted); each file written and
its size. With --browser, headless Chromium (selenium, /usr/bin/chromium) opens the
entry page and the largest corpus page from file:// and prints how long each took to
be ready (the page's script has run) and, with a drill-down, until its first corpus's
data was unpacked and shown. Not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from codesearch_bench.render.html import pages  # noqa: E402
from codesearch_bench.results.schema import ResultFile  # noqa: E402


def _status(field: str) -> float:
    """A /proc/self/status memory field in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def _browse(paths: list[Path]) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--window-size=1300,1100", f"--user-data-dir={tempfile.mkdtemp()}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "chromedriver"),
                              options=opts)
    try:
        for path in paths:
            started = time.monotonic()
            driver.get(path.resolve().as_uri())
            WebDriverWait(driver, 120).until(lambda d: d.find_element(
                By.TAG_NAME, "body").get_attribute("data-ready") == "1")
            ready = time.monotonic() - started
            said = f"{path.name}: ready in {ready:.2f} s"
            if driver.find_elements(By.ID, "bench-data"):
                WebDriverWait(driver, 120).until(lambda d: d.find_element(
                    By.ID, "drill").get_attribute("data-loaded"))
                said += f", drill-down shown at {time.monotonic() - started:.2f} s"
            print(said)
    finally:
        driver.quit()


def _only(result: ResultFile, corpora: set[str] | None,
          engines: set[str] | None) -> ResultFile:
    def kept(corpus: str, *names: str) -> bool:
        return ((corpora is None or corpus.split(":", 1)[0] in corpora)
                and (engines is None or all(n in engines for n in names)))

    return result.model_copy(update={
        "corpora": {k: v for k, v in result.corpora.items() if kept(k)},
        "engines": {k: v for k, v in result.engines.items() if engines is None or k in engines},
        "rows": [r for r in result.rows if kept(r.corpus, r.engine)],
        "failures": [f for f in result.failures if kept(f.corpus, f.engine)],
        "comparisons": [c for c in result.comparisons
                        if kept(c.corpus, c.engine_a, c.engine_b)],
        "tiers": [t for t in result.tiers if kept(t.corpus)], "summary": None,
        "summaries": []})


def _names(value: str | None) -> set[str] | None:
    return None if value is None else set(value.split(","))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--corpora", help="keep these corpora (with their tracks)")
    parser.add_argument("--engines", help="keep these engines")
    parser.add_argument("--browser", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    result = ResultFile.load(args.result)
    print(f"load: {time.perf_counter() - started:.1f} s, peak {_status('VmHWM'):.0f} MiB")
    if args.corpora or args.engines:
        result = _only(result, _names(args.corpora), _names(args.engines))
    print(f"{len(result.corpora)} corpora, {len(result.rows)} rows, "
          f"{sum(len(r.queries) for r in result.rows)} outcomes")
    gc.collect()
    before = _status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # VmHWM from here on
    started = time.perf_counter()
    plots, note = pages.figures(result)
    drawn = time.perf_counter() - started
    pages.figures = lambda _result: (plots, note)  # type: ignore[assignment]
    written = pages.write_report(result, args.out)
    total = time.perf_counter() - started
    print(f"figures {drawn:.1f} s, pages {total - drawn:.1f} s; resident {before:.0f} MiB "
          f"after the load, peak {_status('VmHWM'):.0f} MiB while writing")
    for path in sorted(written, key=lambda p: -p.stat().st_size):
        print(f"  {path.name}: {path.stat().st_size / 1e6:.2f} MB")
    print(f"{len(written)} files, {sum(p.stat().st_size for p in written) / 1e6:.1f} MB")
    if args.browser:
        largest = max(written[1:], key=lambda p: p.stat().st_size, default=None)
        _browse([written[0], *([largest] if largest else [])])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
