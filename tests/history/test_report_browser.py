"""The HTML report, opened in a real headless Chromium (Debian's package, driven by Playwright).

Checked there: no console error, every chart drawn (a non-blank screenshot
of each), a point's tooltip names its revision, the page makes no network
request, and strings from users — a label that is an HTML tag, one that
tries to close the script element holding the data — show as text and
run nothing. A store written by a careless or hostile hand (a verdict that
is an attribute, a case id, machine, label, revision, host and reason that
are markup and handlers) draws a page that runs none of it, and the page's
Content Security Policy (its own two scripts, by hash) blocks an inline
script or handler that would get in anyway, while the charts still draw
with no violation reported.
"""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from asyncbench.history import store, target
from asyncbench.history.model import ChangePoint, LatestCase, LatestRun, Point, RecentRun, Series
from asyncbench.report import history_tables, html
from asyncbench.results.schema import Report
from tests.support.browser import opened_page
from tests.support.helpers import quick_numpy_results

pytestmark = pytest.mark.browser

TAG_LABEL = "<img src=x onerror=alert(1)>"
SCRIPT_LABEL = "</script><script>alert(2)</script>"
REVISION = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    """A store with three real quick runs (one labelled with an HTML tag, one with a script breaker) and its page."""
    folder = tmp_path_factory.mktemp("report")
    opened = store.open_store(target.resolve(str(folder / "h.sqlite")), writing=True)
    for index, label in enumerate(["v1", TAG_LABEL, SCRIPT_LABEL]):
        report = Report.load(quick_numpy_results(folder / f"r{index}.json"))
        environment = {**report.environment, "git_sha": REVISION if index == 2 else report.environment.get("git_sha")}
        opened.record(dataclasses.replace(report, environment=environment), label=label)
    page = folder / "report.html"
    page.write_text(
        html.render(opened.series(None, html.CHART_POINTS), opened.latest(), opened.recent(html.RECENT_RUNS), opened.target.shown)
    )
    return page


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
    assert page.evaluate("window.__violations") == []
    assert [url for url in seen["requests"] if not url.startswith("file://")] == []
    page.close()


def test_a_points_tooltip_shows_its_revision(browser, page_file):
    """The page builds each tooltip from its tables (runs, labels, revisions, machines): the newest point's says its
    run, its label (as text), its revision and its machine."""
    opened = store.open_store(target.resolve(str(page_file.parent / "h.sqlite")))
    machines = {series.machine for series in opened.series(None, html.CHART_POINTS)}
    assert len(machines) == 1
    page, _ = opened_page(browser, page_file)
    last_point = page.locator(".chart").first.locator(".scatterlayer .trace").first.locator(".points path").last
    last_point.scroll_into_view_if_needed()
    box = last_point.bounding_box()
    assert box is not None
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
    tooltip = page.locator(".hoverlayer .hovertext").first.text_content()
    assert f"revision {REVISION}" in tooltip
    assert f"machine {machines.pop()}" in tooltip
    assert f"run {opened.latest().run} · {SCRIPT_LABEL}" in tooltip
    page.close()


def test_strings_from_users_show_as_text_and_run_nothing(browser, page_file):
    page, seen = opened_page(browser, page_file)
    assert page.locator("img").count() == 0
    assert page.get_by_text(TAG_LABEL).count() >= 1
    assert page.get_by_text(SCRIPT_LABEL).count() >= 1
    assert seen["dialogs"] == []
    assert seen["errors"] == []
    page.close()


# What a hostile file or store could say: each string closes a quoted or unquoted attribute, adds handlers that set
# window.pwned, and carries markup, a script and a title change.
PAYLOAD = (
    "x\" onmouseover=\"window.pwned=1\" x='y' onfocus='window.pwned=2' autofocus tabindex=1 "
    "<script>window.pwned=3;document.title='pwned'</script><img src=x onerror=window.pwned=4><svg onload=window.pwned=5>"
)
HOSTILE_VERDICT = "pass onmouseover=window.pwned=6 style=position:fixed;top:0;left:0;width:100%;height:100%;z-index:9"
Run = RecentRun


def _hostile(name: str) -> str:
    return f"{name} {PAYLOAD}"


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory) -> Path:
    """A page drawn from a store whose every string is hostile: verdict, label, case id, machine, revision, host."""
    created = ("2026-11-01T10:00:00+00:00", "2026-11-02T10:00:00+00:00", "2026-11-03T10:00:00+00:00")
    points = tuple(
        Point(run + 1, at, _hostile("label"), _hostile("revision"), 1.0 + run, 0.9 + run, 1.1 + run) for run, at in enumerate(created)
    )
    series = Series(
        case=_hostile("case"),
        variant=_hostile("variant"),
        quantity=_hostile("quantity"),
        unit=_hostile("unit"),
        machine=_hostile("machine"),
        machine_info={"cpu": _hostile("cpu"), "cores": _hostile("cores"), "gpus": [_hostile("gpu")], "framework": _hostile("fw")},
        points=points,
        change_points=(ChangePoint(2, _hostile("at"), 1.0, 2.0, 2.0, 1.5, 2.5, 0.001),),
        runs=3,
    )
    case = LatestCase(
        case=_hostile("case"),
        machine=_hostile("machine"),
        status=_hostile("status"),
        reason=_hostile("reason"),
        checks=({"verdict": HOSTILE_VERDICT, "expect": _hostile("expect")}, {"verdict": _hostile("verdict"), "expect": "x"}),
        traces={_hostile("variant"): _hostile("/tmp/trace")},
        quantities=[(_hostile("variant"), _hostile("quantity"), "s", 1.0, 0.9, 1.1)],
    )
    latest = LatestRun(3, created[-1], _hostile("label"), _hostile("revision"), _hostile("branch"), _hostile("host"), (case,))
    recent = [
        Run(3, created[-1], _hostile("label"), _hostile("revision"), _hostile("branch"), _hostile("host"), _hostile("version"), "ab", True)
    ]
    page = tmp_path_factory.mktemp("hostile") / "report.html"
    page.write_text(html.render([series], latest, recent, _hostile("postgresql://store")))
    return page


def _provoke(page) -> None:
    """Hover the verdicts with the real mouse, then send every element mouseover and focus."""
    for span in page.locator("td span").all():
        box = span.bounding_box()
        if box is not None:
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.evaluate(
        "document.querySelectorAll('*').forEach((e) => { e.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));"
        " if (e.focus) e.focus(); })"
    )


def test_a_hostile_store_draws_a_page_that_runs_nothing(browser, hostile_page):
    page, seen = opened_page(browser, hostile_page)
    _provoke(page)
    assert page.evaluate("window.pwned") is None
    assert page.title() == "asyncbench history"
    assert page.locator("img, svg[onload], [onmouseover], [onfocus], [autofocus], body script:not([type])").count() == 1  # DRAW only
    assert page.get_by_text(HOSTILE_VERDICT).count() >= 1  # shown as text
    assert page.locator("td span").evaluate_all("spans => spans.map((s) => s.className)") == ["", ""]  # no verdict of ours
    assert page.get_by_text(_hostile("machine"), exact=False).count() >= 1
    assert page.locator(".chart .main-svg").count() >= 1
    assert seen["dialogs"] == []
    assert seen["errors"] == []
    assert page.evaluate("window.__violations") == []
    page.close()


def test_the_policy_blocks_an_inline_script_that_got_in_anyway(browser, page_file, tmp_path):
    """Defence in depth: were a string ever to escape its escaping, the page's policy would not run it."""
    injected = tmp_path / "injected.html"
    injected.write_text(
        page_file.read_text().replace(
            "<h1>", '<script>window.pwned = 1</script><div id="bait" onmouseover="window.pwned = 2">bait</div><h1>', 1
        )
    )
    page, seen = opened_page(browser, injected)
    page.locator("#bait").hover()
    assert page.evaluate("window.pwned") is None
    violations = page.evaluate("window.__violations")
    assert any(v.startswith("script-src") for v in violations), violations
    assert page.locator(".chart:not(:has(.main-svg))").count() == 0  # the page's own scripts still ran
    assert seen["dialogs"] == []
    page.close()


def test_a_point_with_no_interval_is_drawn_hollow_and_the_caption_says_so(browser, tmp_path):
    """A trial's page drew an INCONCLUSIVE `ab` of 4 blocks (no interval) as a filled point with no error bar, as it
    draws a very tight interval: only the tooltip told them apart. It is hollow now, and the caption says what that
    means; a point with an interval, however tight, stays filled."""
    created = ("2026-11-01T10:00:00+00:00", "2026-11-02T10:00:00+00:00", "2026-11-03T10:00:00+00:00")
    bounds = ((1.0, 1.0), (None, None), (1.999, 2.001))  # zero width, none, very tight
    points = tuple(
        Point(run + 1, at, None, None, 1.0 + run, low, high) for run, (at, (low, high)) in enumerate(zip(created, bounds, strict=True))
    )
    series = Series("work[numpy,cpu]", "step", "done_s", "s", "runner", {"cpu": "x"}, points, (), 3)
    page_file = tmp_path / "report.html"
    latest = LatestRun(3, created[-1], None, None, None, "host", ())
    page_file.write_text(html.render([series], latest, [], "h.sqlite"))
    page, seen = opened_page(browser, page_file)
    assert history_tables.NO_INTERVAL_SAID in page.locator(".note").first.inner_text()
    points_drawn = page.locator(".chart").first.locator(".scatterlayer .trace").first.locator(".points path")
    assert points_drawn.count() == 3
    fills = points_drawn.evaluate_all("paths => paths.map((p) => getComputedStyle(p).fillOpacity + ' ' + getComputedStyle(p).fill)")
    hollow = [fill.startswith("0 ") or fill.endswith("none") for fill in fills]
    assert hollow == [False, True, False], fills
    assert seen["errors"] == []
    page.close()
