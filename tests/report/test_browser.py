"""The evolve and research reports, the comparison page and the live view (`report --watch`)
of small sim runs opened in headless Chromium (Debian's
chromium and chromedriver, driven by Selenium; no browser download): no console errors, every
chart present and drawn, the simulated banner visible. A screenshot is saved in the test's
folder.

CI needs: apt-get install chromium chromium-driver; pip install selenium.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loopwright.report import Watcher, write_comparison
from loopwright.report._html import Section, page
from loopwright.search import evolve_run
from tests.report.conftest import CliRun
from tests.report.test_evolve_report import EVOLVE_CHARTS
from tests.report.test_research_page import RESEARCH_CHARTS
from tests.report.test_watch import young_copy

_BROWSERS = ("chromium", "chromium-browser")

_CHART_STATE = """
return Array.from(document.querySelectorAll('figure.chart')).map(f => {
  const svg = f.querySelector('svg');
  const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
  const drawn = svg ? Array.from(svg.querySelectorAll('.mark, .node')).filter(m => {
    const b = m.getBoundingClientRect(); return b.width > 0 || b.height > 0; }).length : 0;
  return {id: f.dataset.chart, width: box.width, height: box.height, drawn: drawn};
});
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    webdriver = pytest.importorskip(
        "selenium.webdriver", reason="selenium is not installed (pip install selenium)"
    )
    binary = next((shutil.which(name) for name in _BROWSERS if shutil.which(name)), None)
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        pytest.skip("no chromium/chromedriver on PATH (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=driver_path)  # no Selenium Manager
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_window_size(1280, 1600)
    try:
        yield driver
    finally:
        driver.quit()


def test_the_evolve_report_renders_in_chromium(
    browser: Any, sim_evolution: CliRun, tmp_path: Path
) -> None:
    report = sim_evolution.run_dir / "report.html"
    browser.get(report.resolve().as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []

    charts = browser.execute_script(_CHART_STATE)
    assert {c["id"] for c in charts} == EVOLVE_CHARTS
    for chart in charts:
        assert chart["width"] > 50 and chart["height"] > 50, chart
        assert chart["drawn"] > 0, f"chart {chart['id']} has nothing drawn"

    banner = browser.find_element("id", "sim-banner")
    assert banner.is_displayed() and "SIMULATED" in banner.text
    top = browser.execute_script("return arguments[0].getBoundingClientRect().top", banner)
    assert 0 <= top < 600  # seen without scrolling

    shot = tmp_path / "report-evolve.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_the_research_report_renders_in_chromium(
    browser: Any, sim_research: CliRun, tmp_path: Path
) -> None:
    browser.get((sim_research.run_dir / "report.html").resolve().as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    charts = browser.execute_script(_CHART_STATE)
    assert {c["id"] for c in charts} == RESEARCH_CHARTS
    for chart in charts:
        assert chart["width"] > 50 and chart["height"] > 50, chart
        assert chart["drawn"] > 0, f"chart {chart['id']} has nothing drawn"
    banner = browser.find_element("id", "sim-banner")
    assert banner.is_displayed() and "SIMULATED" in banner.text
    top = browser.execute_script("return arguments[0].getBoundingClientRect().top", banner)
    assert 0 <= top < 600  # seen without scrolling
    shot = tmp_path / "report-research.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_the_browser_check_catches_an_external_load(browser: Any, tmp_path: Path) -> None:
    """The report page's Content-Security-Policy turns any external resource into a console
    error, so the test above would see a report that needs the network."""
    bad = Section("x", "x", '<img src="https://cdn.example.invalid/chart.png">')
    html = page(title="t", kind="run", stamp_html="", banners=[], sections=[bad], partial=False)
    path = tmp_path / "bad.html"
    path.write_text(html, encoding="utf-8")
    browser.get(path.resolve().as_uri())
    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert any("Content Security Policy" in m for m in severe), severe


def _wait_for(browser: Any, script: str, timeout_s: float = 60) -> Any:
    """Poll `script` in the page until it returns something truthy (the value), or fail."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = browser.execute_script(script)
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"the page never satisfied: {script}")


def test_the_live_view_refreshes_as_the_run_grows_in_chromium(
    browser: Any, sim_evolution: CliRun, tmp_path: Path
) -> None:
    """A run just started (one progress line, no checkpoint; this test holds its lock as the
    evolve process would): the page says LIVE with the holder's pid; the run grows and the page
    swaps in the new report by itself, keeping what the reader closed; the holder goes and the
    page says FINISHED; the Stop button ends the watcher."""
    run, lines, checkpoint = young_copy(sim_evolution.run_dir, tmp_path / "young")
    watcher = Watcher(run, interval_s=0.2)
    server = threading.Thread(target=watcher.serve, daemon=True)
    server.start()
    try:
        with evolve_run(run).lock():
            browser.get(watcher.url)
            bar = browser.find_element("id", "live-bar")
            assert bar.get_attribute("data-state") == "live"
            assert f"pid {os.getpid()}" in bar.text and "Stop watching" in bar.text
            assert browser.find_elements("id", "chart-scores") == []  # nothing summarised yet
            (run / "checkpoint.json").write_bytes(checkpoint)
            (run / "progress.jsonl").write_text("".join(lines), encoding="utf-8")
            _wait_for(browser, "return document.getElementById('chart-scores')")
            assert int(bar.get_attribute("data-updates")) >= 1
            seed = browser.find_element("css selector", "#lineage-tree > details.ind")
            assert seed.get_attribute("open") is not None
            browser.execute_script("arguments[0].open = false", seed)  # the reader closes it
            updates = int(bar.get_attribute("data-updates"))
        # the holder is gone: the page learns it, re-renders, and keeps the seed closed
        _wait_for(browser, "return document.getElementById('live-bar').dataset.state"
                  " === 'finished'")  # fmt: skip
        _wait_for(browser, f"return Number(document.getElementById('live-bar')"
                  f".dataset.updates) > {updates}")  # fmt: skip
        seed = browser.find_element("css selector", "#lineage-tree > details.ind")
        assert seed.get_attribute("open") is None
        assert "FINISHED" in browser.find_element("id", "live-bar").text
        charts = browser.execute_script(_CHART_STATE)
        assert {c["id"] for c in charts} == EVOLVE_CHARTS
        assert all(c["drawn"] > 0 for c in charts), charts
        errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        assert browser.save_screenshot(str(tmp_path / "live.png"))
        browser.find_element("id", "stop-watch").click()
        _wait_for(browser, "return document.getElementById('live-bar').dataset.state"
                  " === 'stopped'")  # fmt: skip
        server.join(timeout=30)
        assert not server.is_alive() and watcher.stopped_from_page
    finally:
        watcher.stop()
        server.join(timeout=30)


def test_the_comparison_page_renders_in_chromium(
    browser: Any, sim_evolution: CliRun, sim_evolution_seed1: CliRun, tmp_path: Path
) -> None:
    out = tmp_path / "compare.html"
    write_comparison([sim_evolution.run_dir, sim_evolution_seed1.run_dir], out)
    browser.get(out.resolve().as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []
    charts = browser.execute_script(_CHART_STATE)
    expected = {"compare-scores", "compare-spend", "compare-graph-0", "compare-graph-1"}
    assert {c["id"] for c in charts} == expected
    for chart in charts:
        assert chart["width"] > 50 and chart["height"] > 50, chart
        assert chart["drawn"] > 0, f"chart {chart['id']} has nothing drawn"
    graphs = browser.execute_script(
        "return ['compare-graph-0', 'compare-graph-1'].map(id => "
        "document.getElementById('chart-' + id).getBoundingClientRect().top)"
    )
    assert abs(graphs[0] - graphs[1]) < 5  # side by side, not one under the other
    assert browser.find_element("id", "sim-banner").is_displayed()
    shot = tmp_path / "compare.png"
    assert browser.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
