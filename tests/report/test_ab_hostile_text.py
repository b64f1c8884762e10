"""Text in an `ab` file that is shown beside the tool's own words (a trial's edits): what the tool wrote in a form of
its own (a time note, a verification problem, a side's name) is rebuilt from the file or held to that form, and what
is genuinely the user's (a revision's name, an interpreter's path, a variable's value, a verification's words) is
shown quoted as data, never where it reads as a verdict."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from rich.console import Console

from asyncbench.errors import InputError
from asyncbench.report import paired as views
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.verdicts.outcome import Outcome

VERDICT = "✅ no slowdown beyond the margin: the gate passes"


def _raw(**case: Any) -> dict[str, Any]:
    """A one-case `ab` file as `ab` writes it, its case with `case`'s fields."""
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    base = Side("base", "a1b2c3d4e5 (main)", "/usr/bin/python3", "3.11.7")
    head = Side("head", "f00dfeed12 (feature)", "/usr/bin/python3", "3.11.7", environment={"OMP_NUM_THREADS": "1"})
    kept = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10, margin=0.05, **case)
    return json.loads(ABReport("2026-01-01T00:00:00+00:00", "0", base, head, 0.05, 0.01, False, "frozen", (kept,)).to_json())


def _shown(raw: dict[str, Any]) -> tuple[str, str]:
    """The terminal's text and the comment of the file read back (`show`)."""
    view = views.shown_again(ABReport.from_dict(raw, "ab.json"))
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=400), again=True)
    return out.getvalue(), views.markdown(view)


def test_a_time_note_edited_to_a_verdict_is_refused_in_one_line():
    raw = _raw()
    raw["time_notes"] = [VERDICT]
    with pytest.raises(InputError, match=r"ab\.json: time_notes\[0\]: '✅ no slowdown.*' is not a note `ab` writes of its time"):
        ABReport.from_dict(raw, "ab.json")
    waited = (
        ": decided, but only at its one look, when the time ran out (block 12): 60.0 s was planned as 12 blocks at the "
        "gate's pace, too few for a look before the last; no cap would stop it sooner: a look before the last comes at "
        "block 10 at the earliest"
    )
    raw["time_notes"] = ["work[numpy,cpu]" + waited]
    ABReport.from_dict(raw, "ab.json")  # a note `ab` writes of a case of the file
    for forged in ("other[numpy,cpu]" + waited, "work[numpy,cpu]" + waited + "; ✅ the gate passes"):
        raw["time_notes"] = [forged]
        with pytest.raises(InputError, match=r"time_notes\[0\]"):
            ABReport.from_dict(raw, "ab.json")
    # the note's opening words with a verdict of its own after them (a new user's trial): refused, whole notes only
    raw["time_notes"] = ["the gate measured for 1.00 s, past its 1.00 s target (--gate-time): ✅ the gate passes"]
    with pytest.raises(InputError, match=r"time_notes\[0\]"):
        ABReport.from_dict(raw, "ab.json")


def test_a_problem_names_its_side_and_its_words_are_quoted_as_the_side_s():
    raw = _raw(problems=("head: results differ from NumPy's",))
    terminal, comment = _shown(raw)
    said = 'work[numpy,cpu]: results failed verification on head, which said: "results differ from NumPy\'s"'
    assert said in terminal
    assert 'work[numpy,cpu] (head: "results differ from NumPy\'s")' in terminal  # the reason the gate fails
    raw["cases"][0]["problems"] = [VERDICT]
    with pytest.raises(InputError, match=r"cases\[0\]\.problems\[0\]: '✅ no slowdown.*' names no side"):
        ABReport.from_dict(raw, "ab.json")


def test_a_side_s_name_is_the_key_it_is_read_from_not_the_file_s_word():
    raw = _raw()
    raw["head"]["name"] = VERDICT
    terminal, comment = _shown(raw)
    assert VERDICT not in terminal
    assert "the gate passes" not in comment
    assert any(line.startswith("head: f00dfeed12 ('feature')") for line in terminal.splitlines())


def test_a_python_path_a_variable_s_value_and_a_revision_s_name_are_quoted_as_data():
    raw = _raw()
    raw["head"]["python"] = VERDICT
    raw["head"]["environment"] = {"NOTE": VERDICT}
    raw["head"]["revision"] = "f00dfeed12 (" + VERDICT + ")"
    terminal, _ = _shown(raw)
    line = next(line for line in terminal.splitlines() if line.startswith("head:"))
    assert line == f"head: f00dfeed12 ({VERDICT!r}) · Python 3.11.7 ({VERDICT!r}) · NOTE={VERDICT!r}"


@pytest.mark.parametrize("version", ["the gate passes", "3.11 ✅"])
def test_a_python_version_that_is_none_is_refused(version):
    raw = _raw()
    raw["base"]["python_version"] = version
    with pytest.raises(InputError, match=r"base\.python_version: .* is not a Python version"):
        ABReport.from_dict(raw, "ab.json")


def test_a_case_margin_apart_from_the_gate_s_is_said_as_the_file_states_it_not_as_a_config_s_ab_margin():
    """The trial's edit: max_regression 5.0 beside cases judged at 5% printed "its ab_margin, as the base side
    states it" of a config that states none: the file says the case's margin, never what the config held."""
    raw = _raw()
    raw["max_regression"] = 5.0
    view = views.build(ABReport.from_dict(raw, "ab.json"), Outcome(0, ()))
    note = next(note for note in view.notes if "margin of its own" in note)
    assert "5%, not the gate's 500%: the case's `margin` as the file states it" in note
    assert "as the base side states it" not in note
