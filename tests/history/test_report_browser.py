"""The HTML report, opened in a real headless Chromium (Debian's package, driven by Playwright).

Checked there: no console error, every chart drawn (a non-blank screenshot
of each), a point's tooltip names its revision, the page makes no network
request, and strings from users — a label that is an HTML tag, one that
tries to close the script element holding the data — show as text and
run nothing.
"""

from __future__ import annotations

import dataclasses
import io
import os
from pathlib import Path

import pytest

from asyncbench.history import store, target
from asyncbench.report import html
from asyncbench.results import schema
from tests.support.helpers import quick_numpy_results

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("ASYNCBENCH_CHROMIUM", "/usr/bin/chromium")
# As the machine's notes say: without the background-networking flags Chromium's own connections are refused
# here, many at a time, and it looks up Google's hosts at every start.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TAG_LABEL = "<img src=x onerror=alert(1)>"
SCRIPT_LABEL = "</script><script>alert(2)</script>"
REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    """A store with three real quick runs (one labelled with an HTML tag, one with a script breaker) and its page."""
    folder = tmp_path_factory.mktemp("report")
    opened = store.open_store(target.resolve(str(folder / "h.sqlite")))
    for index, label in enumerate(["v1", TAG_LABEL, SCRIPT_LABEL]):
        report = schema.load(quick_numpy_results(folder / f"r{index}.json"))
        environment = {**report.environment, "git_sha": REVISION if index == 2 else report.environment.get("git_sha")}
        opened.record(dataclasses.replace(report, environment=environment), label=label)
    page = folder / "report.html"
    page.write_text(
        html.render(opened.series(None, html.CHART_POINTS), opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown)
    )
    return page


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield launched
        launched.close()


def opened_page(browser, page_file: Path):
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    seen = {"errors": [], "requests": [], "dialogs": []}
    page.on("console", lambda message: seen["errors"].append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("dialog", lambda dialog: (seen["dialogs"].append(dialog.message), dialog.dismiss()))
    page.goto(page_file.as_uri())
    charts = page.locator(".chart").count()
    page.wait_for_function(f"document.querySelectorAll('.chart .main-svg').length >= {charts}", timeout=30_000)
    return page, seen


def test_the_page_draws_every_chart_without_an_error_or_a_request(browser, page_file):
    page, seen = opened_page(browser, page_file)
    charts = page.locator(".chart")
    assert charts.count() > 3
    from matplotlib import image

    for index in range(charts.count()):
        chart = charts.nth(index)
        assert chart.locator(".scatterlayer .trace .points path").count() >= 3, f"chart {index} has no points"
        pixels = image.imread(io.BytesIO(chart.screenshot()), format="png")
        colours = {tuple(p) for p in pixels.reshape(-1, pixels.shape[-1])[::7].round(2).tolist()}
        assert len(colours) > 10, f"chart {index} looks blank"
    assert seen["errors"] == []
    assert [url for url in seen["requests"] if not url.startswith("file://")] == []
    page.close()


def test_a_points_tooltip_shows_its_revision(browser, page_file):
    page, _ = opened_page(browser, page_file)
    last_point = page.locator(".chart").first.locator(".scatterlayer .trace").first.locator(".points path").last
    last_point.scroll_into_view_if_needed()
    box = last_point.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
    tooltip = page.locator(".hoverlayer .hovertext").first.text_content()
    assert f"revision {REVISION}" in tooltip
    page.close()


def test_strings_from_users_show_as_text_and_run_nothing(browser, page_file):
    page, seen = opened_page(browser, page_file)
    assert page.locator("img").count() == 0
    assert page.get_by_text(TAG_LABEL).count() >= 1
    assert page.get_by_text(SCRIPT_LABEL).count() >= 1
    assert seen["dialogs"] == []
    assert seen["errors"] == []
    page.close()
