"""What the docs say of `--bound`'s levels is what measure.perturbation injects: the five fixed levels in every round,
and two more per side at its knee after each look of the stop rule, which the next look replaces (a trial's `levels_s`
listed 11 and 14 values where the guide said the levels were the five fixed ones, "the same for the whole case")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from asyncbench.measure.perturbation import KNEE_GRID, KNEE_WIDTH, LEVELS, Look, Taker
from asyncbench.results.bound import Side

ROOT = Path(__file__).resolve().parents[1]
#: the pages that say which levels a side is injected at
PAGES = ("docs/guides/bound.md", "docs/reference/results-schema.md")


def _text(name: str) -> str:
    return " ".join(ROOT.joinpath(name).read_text(encoding="utf-8").split())


def _number(value: float) -> str:
    return f"{value:g}"


def test_no_page_says_the_five_levels_are_all_a_case_gets():
    for name in PAGES:
        assert not re.search(r"1\.5 times the step's own time .{0,80}the same for the whole case", _text(name)), name


def test_the_pages_state_the_fixed_and_the_knee_levels_as_the_code_sets_them():
    fixed = ", ".join(_number(level) for level in LEVELS[:-1]) + f" and {_number(LEVELS[-1])}"
    for name in PAGES:
        text = _text(name)
        assert fixed in text, name
        assert f"± {_number(KNEE_WIDTH)} of" in text, name
        assert f"grid of {_number(KNEE_GRID)}" in text or f"multiple of {_number(KNEE_GRID)}" in text, name
        assert f"[{_number(KNEE_GRID)}, {_number(max(LEVELS))}]" in text, name


def _taker() -> Taker:
    taker = Taker(lambda before: {}, object(), steps_per_call=4)  # type: ignore[arg-type]  # a device side, no rounds
    taker.scale_s["v"] = 1e-3
    return taker


def _look(taker: Any, host: float, device: float) -> None:
    taker._adapt(Look(widest=1.0, slack_s={("v", Side.HOST): host * 1e-3, ("v", Side.DEVICE): device * 1e-3}))


def test_each_look_replaces_a_sides_knee_levels_the_way_the_guide_says():
    taker = _taker()
    _look(taker, host=0.6, device=0.25)  # the knee ± 0.15, on the 0.05 grid, the fixed levels left out
    assert taker.knee_levels == {("v", Side.HOST): (0.45,), ("v", Side.DEVICE): (0.1, 0.4)}  # 0.75 is a fixed one
    _look(taker, host=1.05, device=0.45)  # the next look replaces them; within [0.05, 1.5]
    assert taker.knee_levels[("v", Side.HOST)] == (0.9, 1.2)
    assert taker.knee_levels[("v", Side.DEVICE)] == (0.3, 0.6)
    _look(taker, host=1.5, device=0.1)  # 1.65 is past the largest fixed level; 0.25 is a fixed one
    assert taker.knee_levels[("v", Side.HOST)] == (1.35,)
    assert taker.knee_levels[("v", Side.DEVICE)] == ()
