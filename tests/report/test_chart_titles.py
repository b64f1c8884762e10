"""A chart's title on the history page names the case, the variant and the quantity, each whole: the variant and
the quantity are the series', never "VARIANT QUANTITY" split at its first space (a trial: the variant
`a | b | <b>c</b> --history=x` was titled `a · | b | <b>c</b> --history=x ab:a | b | …`)."""

from __future__ import annotations

import json
import re

from asyncbench.history.model import LatestRun, Point, Series
from asyncbench.report import html


def _series(variant: str, quantity: str) -> Series:
    points = tuple(Point(run, f"2026-11-{run:02d}T10:00:00+00:00", None, f"{run:040x}", 0.004, 0.0039, 0.0041) for run in (1, 2, 3))
    return Series("np_step[numpy,cpu]", variant, quantity, "s", "m00000000001", {"cpu": "CPU", "cores": 2}, points, (), 3)


def _titles(found: list[Series]) -> list[str]:
    latest = LatestRun(3, "2026-11-03T10:00:00+00:00", None, f"{3:040x}", None, "runner", ())
    page = html.render(found, latest, [], "h.sqlite")
    data = re.search(r'<script type="application/json" id="asyncbench-data">(.*?)</script>', page, re.S)
    assert data is not None
    return [chart["title"] for chart in json.loads(data.group(1))["charts"]]


def test_a_variant_with_spaces_is_titled_whole_beside_its_quantity():
    assert _titles([_series("a | b --history=x", "done_s")]) == ["np_step[numpy,cpu] · a | b --history=x · done_s"]


def test_a_case_metric_is_titled_by_its_quantity_alone():
    assert _titles([_series("", "step_s_k0")]) == ["np_step[numpy,cpu] · step_s_k0"]
