"""The history page as a reader sees it in a real headless Chromium (issue 53, item 8): the slower case's chart
first, its twins named in its title and not drawn again, the y axis in ms, the x axis labelled with each shown run's
date and label under the chart, and the `ab` run marked among the recent runs."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import pytest

from asyncbench.history.model import ChangePoint, LatestRun, Point, RecentRun, Series
from asyncbench.report import history_tables, html
from tests.support.browser import opened_page

pytestmark = pytest.mark.browser

RUNS = 14


def _series(case: str, variant: str, quantity: str, base: float, step: float, unit: str = "s") -> Series:
    points = tuple(
        Point(
            run,
            f"2026-11-{run:02d}T10:00:00+00:00",
            f"v1.{run}" if run % 4 == 0 else None,
            f"{run:040x}",
            value := base * (step if run > RUNS // 2 else 1.0) * (1 + 0.01 * (run % 3)),
            value * 0.98,
            value * 1.03,
        )
        for run in range(1, RUNS + 1)
    )
    changes = (ChangePoint(RUNS // 2 + 1, "v1.8", base, base * step, step, step * 0.97, step * 1.03, 1e-6),) if step != 1.0 else ()
    return Series(case, variant, quantity, unit, "m00000000001", {"cpu": "CPU", "cores": 2, "framework": "torch"}, points, changes, RUNS)


@pytest.fixture(scope="module")
def readable_page(tmp_path_factory) -> Path:
    done = _series("train[torch,cpu]", "sync_every=0", "done_s", 0.0042, 1.3)
    issue = dataclasses.replace(done, quantity="issue_s")
    per_step = dataclasses.replace(
        done,
        variant="",
        quantity="step_s_k0",
        points=tuple(p._replace(value=p.value / 5, low=p.low / 5, high=p.high / 5) for p in done.points),
    )
    found = [
        _series("alpha[torch,cpu]", "sync_every=0", "done_s", 0.0031, 1.0),
        done,
        issue,
        per_step,
        _series("train[torch,cpu]", "sync_every=0", "ab:sync_every=0@a1b2c3d", 1.0, 1.0, unit="x"),
    ]
    recent = [
        RecentRun(RUNS + 1, "2026-11-20T10:00:00+00:00", "pr-9", "a1b2c3d", None, "runner", "0.1.0", "ab", False),
        RecentRun(RUNS, f"2026-11-{RUNS}T10:00:00+00:00", None, f"{RUNS:040x}", None, "runner", "0.1.0", "run", False),
    ]
    latest = LatestRun(RUNS + 1, "2026-11-20T10:00:00+00:00", "pr-9", "a1b2c3d", None, "runner", (), kind="ab")
    page = tmp_path_factory.mktemp("readable") / "report.html"
    page.write_text(html.render(found, latest, recent, "h.sqlite"))
    return page


def test_the_slower_case_comes_first_its_twins_named_not_drawn_and_its_axes_read(browser, readable_page):
    page, seen = opened_page(browser, readable_page)
    charts = page.locator(".chart")
    assert charts.count() == 3  # train's done_s (standing for issue_s and step_s_k0), train's ab ratio, alpha's done_s
    first = charts.nth(0)
    title = first.locator(".gtitle").text_content()
    assert title.startswith("train[torch,cpu] · sync_every=0 · done_s")
    assert "also sync_every=0 issue_s: the same within 0.1% at every run; step_s_k0: this ÷ 5" in title
    assert first.locator(".ytitle").text_content() == "ms"
    assert charts.nth(1).locator(".ytitle").text_content() == "head/base × (> 1: slower)"
    assert page.locator("h3.case").all_text_contents() == ["train[torch,cpu]", "alpha[torch,cpu]"]
    for index in range(charts.count()):
        chart = charts.nth(index)
        box = chart.bounding_box()
        ticks = chart.locator(".xtick text")
        said = ticks.all_text_contents()
        assert 2 <= len(said) <= html.X_TICKS, said
        assert all(text.startswith("2026-11-") for text in said), said  # each a date, then its label or commit
        assert said[-1] == f"2026-11-{RUNS}" + f"{RUNS:040x}"[: html.REVISION_CHARS], said  # the newest run is labelled
        boxes = [ticks.nth(tick).bounding_box() for tick in range(ticks.count())]
        for where in boxes:  # inside the chart, where a reader sees them
            assert where is not None
            assert where["height"] > 0
            assert box["y"] <= where["y"]
            assert where["y"] + where["height"] <= box["y"] + box["height"]
        for left, right in itertools.pairwise(boxes):  # side by side, none over another
            assert left["x"] + left["width"] <= right["x"], said
    ab_row = page.locator("tr.ab")
    assert ab_row.count() == 1
    assert history_tables.AB_RUN in ab_row.text_content()
    assert seen["errors"] == []
    page.close()


def test_a_working_tree_with_changes_is_not_named_as_its_commit_under_the_axis(browser, tmp_path):
    """An ab of an edited tree against its own commit was drawn under that commit: "fc754beb at 1.86×" read as the
    commit slower than itself. Its tick says the tree had changes."""
    one = _series("train[torch,cpu]", "sync_every=0", "ab:sync_every=0@a1b2c3d", 1.0, 1.0, unit="x")
    newest = one.points[-1]._replace(revision=f"{RUNS:040x}-dirty")
    one = dataclasses.replace(one, points=(*one.points[:-1], newest))
    latest = LatestRun(RUNS, newest.created, None, newest.revision, None, "runner", (), kind="ab")
    page_file = tmp_path / "report.html"
    page_file.write_text(html.render([one], latest, [], "h.sqlite"))
    page, seen = opened_page(browser, page_file)
    said = page.locator(".chart").nth(0).locator(".xtick text").all_text_contents()
    assert said[-1] == f"2026-11-{RUNS}" + f"{RUNS:040x}"[: html.REVISION_CHARS] + "-dirty", said
    assert seen["errors"] == []
    page.close()
