"""The chart of what bounds a step (`run --bound` recorded), drawn in a real headless Chromium: the two slacks as
traces with their points and error bars, the reading a label on each point, no console error, no request, and a
variant name that is markup shown as text."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.history import store, target
from asyncbench.report import html
from asyncbench.results.schema import Report
from tests.history.test_bound_history import TAG_VARIANT, with_bound
from tests.support.bounds import device_bound, host_bound
from tests.support.browser import opened_page
from tests.support.helpers import quick_numpy_results

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    """Three runs of a quick numpy case with bounds (host, host, device), its variant renamed to markup."""
    folder = tmp_path_factory.mktemp("bound-report")
    report = Report.load(quick_numpy_results(folder / "r.json"))
    first = report.results[0]
    (variant,) = first.variants
    report = dataclasses.replace(report, results=(dataclasses.replace(first, variants={TAG_VARIANT: first.variants[variant]}),))
    opened = store.open_store(target.resolve(str(folder / "h.sqlite")), writing=True)
    for index, make in enumerate((host_bound, host_bound, device_bound)):
        opened.record(with_bound(report, make, f"bound-{index}"))
    page = folder / "report.html"
    page.write_text(
        html.render(opened.series(None, html.CHART_POINTS), opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown)
    )
    return page


def test_the_bound_chart_draws_both_slacks_with_the_reading_on_each_point(browser, page_file):
    page, seen = opened_page(browser, page_file)
    titles = page.locator(".chart .gtitle")
    [index] = [i for i in range(titles.count()) if "what bounds the step" in titles.nth(i).text_content()]
    assert f"{TAG_VARIANT} · what bounds the step" in titles.nth(index).text_content()  # the markup shown as text
    chart = titles.nth(index).locator("xpath=ancestor::div[contains(@class, 'chart')]")
    traces = chart.locator(".scatterlayer .trace")
    assert traces.count() == 2
    for trace in range(2):
        assert traces.nth(trace).locator(".points path").count() == 3
    assert chart.locator(".errorbars .errorbar").count() >= 3
    labels = [text.text_content() for text in chart.locator(".scatterlayer .trace").first.locator(".textpoint text").all()]
    assert labels == ["host-bound", "host-bound", "device-bound"]
    legend = chart.locator(".legend").text_content()
    assert "host slack" in legend
    assert "device slack" in legend
    assert seen["errors"] == []
    assert seen["dialogs"] == []
    assert page.evaluate("window.__violations") == []
    assert [url for url in seen["requests"] if not url.startswith("file://")] == []
    page.close()
