"""An `ab` file held whole (a CI engineer's trial): head's loosened margin kept and said wherever the report is
read, a `family_error` held to the levels its intervals were split from, and a file with no case refused as one."""

from __future__ import annotations

import dataclasses
import json
from types import SimpleNamespace
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.report import paired as views
from asyncbench.results import blocks
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.session import paired as session
from tests.hostile.make_cases import AB_WAITED_NOTE

CASE_ID = "matmul[numpy,cpu]"
LOOSENED = f"{CASE_ID}: head's config states ab_margin 60%; it is judged at 5%, the base side's, until that change is merged"


def _report(case: PairedCase, family_error: float = 0.01) -> ABReport:
    side = Side("head", "a1b2c3d4e5 (HEAD)", "python3", "3.11")
    return ABReport(
        "2026-11-23T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.05, family_error, False, "SIGSTOP", (case,)
    )


def _case(**fields: object) -> PairedCase:
    row = PairedRatio("matmul", "variant", "s", 0.01, 0.0101, 1.01, (0.99, 1.02), Label.SAME)
    return PairedCase(CASE_ID, "ok", ratios=(row,), rounds=60, blocks=12, **fields)  # type: ignore[arg-type]


def _read(report: ABReport) -> ABReport:
    return ABReport.from_dict(json.loads(report.to_json()), "ab.json")


def test_head_s_loosened_margin_is_in_the_file_under_the_table_and_in_the_comment():
    """The trial: head's `ab_margin: 60%`, judged at the base's 5%, was said on stderr only: the file, `show` and the
    pull-request comment had no trace of it."""
    read = _read(_report(_case(margin=0.05, head_margin=0.6)))
    assert read.cases[0].head_margin == pytest.approx(0.6)
    shown = views.shown_again(read)
    assert any(note.startswith(LOOSENED) for note in shown.notes)
    assert LOOSENED in views.markdown(shown)


def test_ab_keeps_head_s_margin_only_where_another_judges_the_case():
    """What the run keeps (session.paired._head_margins): head's ab_margin where it is not the one judging."""

    def planned(case_id: str, ab_margin: float | None) -> tuple[Any, None]:
        return SimpleNamespace(id=case_id, settings=SimpleNamespace(ab_margin=ab_margin)), None

    base = [planned("a", None), planned("b", 0.6), planned("c", None)]
    head = [planned("a", 0.6), planned("b", 0.6), planned("c", 0.05)]
    assert session._head_margins(base, head, 0.05) == {"a": 0.6}


@pytest.mark.parametrize(
    ("head_margin", "margin", "says"),
    [(0.05, 0.05, "is the margin that judged"), (0.6, None, "judged at no margin"), (50, 0.05, "ab_margin")],
)
def test_a_file_s_head_margin_is_held_to_what_ab_keeps(head_margin, margin, says):
    raw = json.loads(_report(_case(margin=margin)).to_json())
    raw["cases"][0]["head_margin"] = head_margin
    with pytest.raises(InputError, match=rf"cases\[0\]\.head_margin: .*{says}"):
        ABReport.from_dict(raw, "ab.json")


def test_a_family_error_its_intervals_were_not_split_from_is_refused():
    """The trial: `family_error: 0.5` beside intervals at 98% (1% over one case, one verdict, one look) was shown as
    "A 50% family-wise false-alarm rate…" and recorded."""
    level = blocks.BlockBudget(0.01, 1, 12).confidence()  # one look: 98%
    assert _read(_report(_case(confidence=level))).family_error == 0.01
    raw = json.loads(_report(_case(confidence=level)).to_json())
    raw["family_error"] = 0.5
    with pytest.raises(InputError, match=r"family_error: 0\.5 is not the rate the cases' intervals were split from"):
        ABReport.from_dict(raw, "ab.json")


@pytest.mark.parametrize("scheduled", [1, 30, 60, 100])
def test_every_level_ab_writes_reads_back(scheduled):
    """Each schedule's level, as engine.paired stores it, is one its rate was split from (over 3 cases, 2 verdicts)."""
    row = _case().ratios[0]
    two = (row, dataclasses.replace(row, name="other", kind="metric", unit="GFLOP/s"))
    level = blocks.BlockBudget(0.01 / 3, 2, scheduled).confidence()
    cases = tuple(dataclasses.replace(_case(confidence=level), id=f"m{index}[numpy,cpu]", ratios=two) for index in range(3))
    report = dataclasses.replace(_report(_case()), cases=cases)
    raw = json.loads(report.to_json())
    for case in raw["cases"]:
        case.pop("workload", None)
    assert ABReport.from_dict(raw, "ab.json").cases[0].confidence == level


def test_a_file_edited_to_no_case_is_refused_as_one_not_for_its_time_notes():
    """The trial: `cases: []` was refused with "time_notes[0]: … is not a note `ab` writes of its time"."""
    raw = json.loads(dataclasses.replace(_report(_case()), time_notes=(AB_WAITED_NOTE,)).to_json())
    assert ABReport.from_dict(raw, "ab.json").time_notes == (AB_WAITED_NOTE,)
    raw["cases"] = []
    with pytest.raises(InputError, match=r"cases: the file holds no case") as refused:
        ABReport.from_dict(raw, "ab.json")
    assert "time_notes" not in str(refused.value)
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize(("key", "value"), [("head_margin", 1e300), ("margin", 1e300), ("head_margin", -1e-300)])
def test_a_refused_number_is_quoted_short(key, value):
    """`show` of an ab file with `head_margin: 1e300` refused it in one line that wrote the number out in 300
    digits: a number quoted back in a refusal is a few characters (`1e+302%`)."""
    raw = json.loads(_report(_case(margin=0.05)).to_json())
    raw["cases"][0][key] = value
    with pytest.raises(InputError, match=rf"cases\[0\]\.{key}: ") as refused:
        ABReport.from_dict(raw, "ab.json")
    assert len(str(refused.value)) < 200, str(refused.value)
    assert "e+302%" in str(refused.value) or "e-298%" in str(refused.value)


@pytest.mark.parametrize(
    ("case_id", "params", "refused"),
    [
        (" my exp[numpy,cpu,size=64]", {"size": 64}, None),  # a config's name may start with a space: a real file's id
        ("   ", {}, "names no experiment"),
        ("totally-other[jax,cuda]", {}, "names backend 'jax'"),
        ("matmul[numpy,cpu,size=65]", {"size": 64}, "names another size"),
    ],
)
def test_a_case_s_id_is_held_to_the_backend_device_and_params_it_states(case_id: str, params: dict, refused: str | None) -> None:
    """A trial recorded and gated ids of three spaces and of another case; an id a real config makes still reads."""
    case = dataclasses.replace(_case(), id=case_id, workload="matmul", backend="numpy", device="cpu", params=params)
    if refused is None:
        assert _read(_report(case)).cases[0].id == case_id
        return
    with pytest.raises(InputError, match=refused):
        _read(_report(case))
