"""The report site in a real browser: headless Chromium driven by selenium.

Builds the site from the committed generated reports, opens the index, follows every
link (HTML pages are loaded, other files must exist, anchors must resolve), checks that
every table has the rows its source CSV or Markdown implies, that every image loads
(naturalWidth > 0) and that the console shows no error, and saves screenshots of the
index and of one table page under the test's tmp_path.

Needs Debian's ``chromium`` and ``chromium-driver`` and ``selenium`` (``make
setup-cluster``; ``.ci/run`` installs them). Outside CI the test skips when they are
missing; in CI (``CI`` set) it fails instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pandas as pd
import pytest

from reports import site

pytestmark = [pytest.mark.browser, pytest.mark.slow]

IN_CI = bool(os.environ.get("CI"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


def _require(ok: bool, reason: str) -> None:
    if ok:
        return
    if IN_CI:
        pytest.fail(f"{reason} (CI must run the browser test: .ci/run installs it)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    # committed files only: no result records (CI has none)
    return site.build_site(out, results=None)


@pytest.fixture(scope="module")
def driver():
    _require(
        CHROMIUM is not None and DRIVER is not None,
        "Chromium or chromedriver not found (apt-get install chromium chromium-driver)",
    )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _require(False, "selenium is not installed (make setup-cluster)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
        "--allow-file-access-from-files",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        yield drv
    finally:
        drv.quit()


def _local_path(url: str) -> Path:
    return Path(unquote(urlparse(url).path))


def _console_errors(drv) -> list[str]:
    return [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]


def _markdown_tables(md: Path) -> list[int]:
    """Body rows of each Markdown table of ``md``, in order."""
    counts, rows, in_table = [], 0, False
    for line in md.read_text().splitlines() + [""]:
        if line.startswith("|"):
            if not in_table:
                in_table, rows = True, -2  # header and separator lines
            rows += 1
        elif in_table:
            counts.append(rows)
            in_table = False
    return counts


def _expected_rows(table, page: Path, generated: Path) -> int | None:
    """Rows of a site table computed from its source, independently of the site."""
    source = table.get_attribute("data-source")
    if not source:
        return None
    paper = page.parent.name
    csv = generated / paper / Path(source).name
    df = pd.read_csv(csv)
    block = table.get_attribute("data-block")
    if block:
        col, value = block.split("=", 1)
        df = df[df[col].astype(str) == value]
        return df["dataset"].nunique()
    # a side table (arbf's check variants: dataset, method and published_* columns
    # too) is shown row for row, not folded into one row per dataset
    long = (
        table.get_attribute("data-kind") != "side"
        and {"dataset", "method"} <= set(df.columns)
        and any(c.startswith("published_") for c in df.columns)
    )
    if long:  # one row per (dataset, method) with a published value: one per dataset
        return df["dataset"].nunique()
    return len(df)


def _check_page(drv, url: str, generated: Path, report: dict) -> list[str]:
    from selenium.webdriver.common.by import By

    drv.get(url)
    page = _local_path(url)
    assert drv.title, f"{page}: no title"
    errors = _console_errors(drv)
    assert not errors, f"{page}: console errors {errors}"
    for img in drv.find_elements(By.TAG_NAME, "img"):
        width = drv.execute_script(
            "return arguments[0].complete && arguments[0].naturalWidth", img
        )
        assert width and width > 0, f"{page}: image {img.get_attribute('src')} broken"
        report["images"] += 1
    tables = drv.find_elements(By.CSS_SELECTOR, "main table")
    md_tables = []
    if drv.find_elements(By.CSS_SELECTOR, "article.doc"):
        # a document page: its tables are those of its Markdown source
        md_tables = _markdown_tables(generated / page.parent.name / f"{page.stem}.md")
    doc_i = 0
    for table in tables:
        rows = table.find_elements(By.CSS_SELECTOR, "tbody > tr")
        assert rows, f"{page}: a table without rows"
        expected = _expected_rows(table, page, generated)
        if expected is not None:
            cell_rows = table.find_elements(By.CSS_SELECTOR, "tbody > tr.cell-row")
            assert len(cell_rows) == expected, (
                f"{page}: table from {table.get_attribute('data-source')} "
                f"{table.get_attribute('data-block') or ''} has {len(cell_rows)} "
                f"rows, its source has {expected}"
            )
            report["tables"] += 1
        elif md_tables:
            assert len(rows) == md_tables[doc_i], f"{page}: table {doc_i} rows"
            doc_i += 1
            report["tables"] += 1
    if md_tables:
        assert doc_i == len(md_tables), f"{page}: {doc_i} tables of {len(md_tables)}"
    links = []
    for a in drv.find_elements(By.CSS_SELECTOR, "a[href]"):
        links.append(a.get_attribute("href"))
    return links


def _screenshot(drv, url: str, path: Path) -> None:
    drv.get(url)
    height = drv.execute_script("return document.documentElement.scrollHeight")
    drv.set_window_size(1400, min(max(int(height), 600), 6000))
    drv.save_screenshot(str(path))
    drv.set_window_size(1400, 1000)
    assert path.stat().st_size > 10_000, f"{path}: an empty screenshot?"


def test_site_in_chromium(built_site: Path, driver, tmp_path: Path) -> None:
    generated = site.GENERATED
    root = built_site.parent.resolve()
    start = built_site.resolve().as_uri()
    seen: set[str] = set()
    todo = [start]
    report = {"pages": 0, "files": 0, "anchors": 0, "images": 0, "tables": 0}
    anchors: list[tuple[str, str]] = []
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        seen.add(url)
        report["pages"] += 1
        for href in _check_page(driver, url, generated, report):
            target, frag = urldefrag(href)
            assert target.startswith("file://"), f"{url}: external link {href}"
            path = _local_path(target)
            assert root in path.parents or path == root, f"{url}: {href} leaves site"
            assert path.exists(), f"{url}: broken link {href}"
            if frag:
                anchors.append((target, frag))
            if path.suffix == ".html":
                todo.append(target)
            else:
                report["files"] += 1
    from selenium.webdriver.common.by import By

    for target, frag in set(anchors):
        driver.get(target)
        assert driver.find_elements(By.ID, frag), f"{target}#{frag}: no such anchor"
        report["anchors"] += 1

    # the index: one row per paper and artifact of the descriptors
    driver.get(start)
    expected = sum(len(p.artifacts) for p in site.papers())
    rows = driver.find_elements(By.CSS_SELECTOR, "table.index tbody tr.artifact-row")
    assert len(rows) == expected
    published = {p.stem for p in site.PUBLISHED.glob("*.csv") if "_" not in p.stem}
    folders = {p.name for p in generated.iterdir() if p.is_dir()}
    for key in published | folders | {"kdml"}:
        assert driver.find_elements(By.ID, key), f"index: no row for paper {key}"
    reproduced = [p for p in folders if (generated / p / "table1.csv").exists()]
    for key in reproduced:
        link = driver.find_elements(By.CSS_SELECTOR, f"a[href='{key}/table1.html']")
        assert link, f"index: no link to {key}/table1.html"
    assert report["pages"] >= 1 + len(reproduced)
    assert report["images"] >= 1 and report["tables"] >= 5

    shots = tmp_path / "screenshots"
    shots.mkdir()
    _screenshot(driver, start, shots / "index.png")
    table_page = (built_site.parent / "mlsvm" / "table1.html").resolve().as_uri()
    _screenshot(driver, table_page, shots / "mlsvm_table1.png")
    print(f"\nsite checked: {report}; screenshots in {shots}")
