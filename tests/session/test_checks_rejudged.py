"""A results file's checks on the bound are judged again from its own perturbation rounds on reading
(session.check_held): a trial's `slack_s[host] >= 1ms` edited from "inconclusive" to "pass" (its detail still saying
the interval straddles), `bound == device` edited to "fail" beside a DEVICE-BOUND reading, and a ceiling check edited
to "pass" with new bounds were shown, counted and written to JUnit as the file said. A genuine file reads as it was
written; a check whose level is not stored, and so cannot be judged again, is shown as stored unless it claims a
PASS or FAIL."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results import budget
from asyncbench.results.model import Result, Verdict
from asyncbench.results.schema import Report
from asyncbench.session import reading
from asyncbench.spec import expect
from asyncbench.verdicts import checks
from tests.support.bounds import result_with
from tests.support.cli import invoke
from tests.support.helpers import report_of
from tests.verdicts.test_bound_levels import WORKLOAD, _planted

TEXTS = ("bound == device", "slack_s[host] >= 200us", "slack_s[host] >= 0.8ms", "ceiling[host] <= 1.10")


def _written() -> Result:
    """A device-bound step whose checks `run` judged at their share of a run's budget."""
    result = result_with(_planted(0.6, 1.0, (0.2, 0.8, 1 - 1 / 1.1)))
    shared = budget.Budget(budget.FAMILY_ERROR, len(TEXTS), 10, 100)
    judged = checks.evaluate(tuple(expect.parse(text, WORKLOAD) for text in TEXTS), result, shared)
    return dataclasses.replace(result, checks=judged)


def _read(raw: dict[str, Any]) -> Report:
    return reading.reverified(Report.from_dict(raw, "edited.json"), "edited.json")


def _raw() -> dict[str, Any]:
    return json.loads(report_of([_written()]).to_json())


def test_a_genuine_files_checks_read_back_as_run_judged_them():
    written = _written()
    assert [c.verdict for c in written.checks] == [Verdict.PASS, Verdict.INCONCLUSIVE, Verdict.FAIL, Verdict.PASS]
    (result,) = _read(_raw()).results
    assert result.checks == written.checks


@pytest.mark.parametrize(
    "index, edited",
    [
        (0, {"verdict": "fail"}),  # `bound == device` beside a DEVICE-BOUND reading
        (1, {"verdict": "pass"}),  # the trial's: its interval straddles the tolerance
        (2, {"verdict": "pass"}),  # its interval wholly above the tolerance of the delay
        (3, {"verdict": "fail"}),
    ],
)
def test_an_edited_verdict_of_a_bound_check_is_refused(index, edited):
    raw = _raw()
    raw["results"][0]["checks"][index].update(edited)
    with pytest.raises(InputError, match=rf"checks\[{index}\]\.verdict: .* judged again from the file's own perturbation rounds"):
        _read(raw)


def test_an_edited_interval_of_a_bound_check_is_refused():
    raw = _raw()
    check = raw["results"][0]["checks"][3]
    check["bounds"] = [0.0, 1e-05]
    check["value"] = 5e-06
    with pytest.raises(InputError, match=r"checks\[3\]\.bounds"):
        _read(raw)


def test_an_edited_detail_is_shown_in_the_tools_words():
    raw = _raw()
    raw["results"][0]["checks"][1]["detail"] = "slack_s[host]: all fine"
    (result,) = _read(raw).results
    assert result.checks == _written().checks


def test_a_pass_with_no_level_cannot_be_judged_again_and_is_refused_an_inconclusive_one_is_shown():
    raw = _raw()
    raw["results"][0]["checks"][3]["confidence"] = None
    with pytest.raises(InputError, match=r"checks\[3\]\.confidence"):
        _read(raw)
    raw = _raw()
    check = raw["results"][0]["checks"][1]
    check.update(verdict="inconclusive", confidence=None, bounds=None, detail="slack_s[host]: too few rounds")
    (result,) = _read(raw).results
    assert result.checks[1].verdict == Verdict.INCONCLUSIVE


def _saved(raw: dict[str, Any], tmp_path: Path) -> Path:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(raw))
    return path


def test_show_refuses_the_trials_edit_in_one_line_and_exits_2(tmp_path):
    raw = _raw()
    raw["results"][0]["checks"][1]["verdict"] = "pass"
    for fmt in ("table", "junit"):
        shown = invoke("show", str(_saved(raw, tmp_path)), "--format", fmt)
        assert shown.exit_code == 2, shown.output
        assert "checks[1].verdict" in shown.output
        assert "passed" not in shown.output


def test_show_prints_what_run_printed_under_its_report_each_check_that_fails_the_gate(tmp_path):
    """`run` ended with a line per check short of a pass and the reasons for its exit code; `show` printed only the
    counts there ("3 checks: 1 passed, 2 inconclusive")."""
    shown = invoke("show", str(_saved(_raw(), tmp_path)))
    assert shown.exit_code == 0, shown.output
    tail = shown.output.rpartition("4 checks:")[2]
    assert "? m[torch,cpu]: slack_s[host] >= 200us — slack_s[host]:" in tail
    assert "✗ m[torch,cpu]: slack_s[host] >= 0.8ms — slack_s[host]:" in tail
    assert "a gate on these checks exits 1 because:" in tail
    allowed = invoke("show", str(_saved(_raw(), tmp_path)), "--allow-inconclusive").output.rpartition("4 checks:")[2]
    assert "slack_s[host] >= 200us" not in allowed
    assert "slack_s[host] >= 0.8ms" in allowed


def test_show_as_markdown_says_why_a_gate_on_the_checks_exits_as_run_markdown_did(tmp_path):
    """`run --markdown` opens with the exit and its reasons; `show --format markdown` of the same file left them out
    (a trial: the table form had them). Read back, the code is said as the gate's: `show` itself exits 0."""
    shown = invoke("show", str(_saved(_raw(), tmp_path)), "--format", "markdown")
    assert shown.exit_code == 0, shown.output
    assert "**a gate on these checks exits 1** because:" in shown.output
    assert "because:\n- 1 check failed\n- 1 check inconclusive: an interval that straddles the threshold" in shown.output
    assert "**exit 1**" not in shown.output


def test_a_ceiling_check_judged_before_shared_cores_had_no_ceiling_reads_as_the_rule_now_says():
    # a file written when a ceiling on a device sharing the host's cores was still judged: its stored PASS is read as
    # the rule reads it now (NOT_MEASURED: no ceiling there), not refused as a forged verdict
    raw = _raw()
    for bound in raw["results"][0]["bound"].values():
        bound["shares_cores"] = True
    assert raw["results"][0]["checks"][3]["verdict"] == "pass"
    (result,) = _read(raw).results
    assert result.checks[3].verdict == Verdict.NOT_MEASURED
    assert "shares the host's cores" in result.checks[3].detail
    assert [c.verdict for c in result.checks[:3]] == [Verdict.PASS, Verdict.INCONCLUSIVE, Verdict.FAIL]


@pytest.mark.parametrize(
    "text",
    [
        "slack_s[host] >= banana",  # the user's edit: its number a word
        "slack_s[host] >= 1ms --strict; rm -rf /",  # a valid check with words after it
        "slack_s[host, host] >= 200us",  # split by the grammar's expression, but no check on the bound
        "slack_share[host] >= 20",  # a share without its %
        "ceiling[device] <= 1.10",  # the device's ceiling is not measured
        "bound == banana",  # no reading
        "bound == device; exit 0",
    ],
)
def test_a_stored_bound_check_whose_text_does_not_parse_is_refused_never_shown_with_its_verdict(text):
    """The user's edit: `checks[1]` turned `slack_s[host] >= banana` with a "pass" was shown as a passed check (✓,
    "1 passed", exit 0): neither results.check_rule nor session.check_held judged a text they could not split."""
    for verdict in ("pass", "inconclusive"):
        raw = _raw()
        raw["results"][0]["checks"][1].update(expect=text, verdict=verdict)
        with pytest.raises(InputError, match=r"edited\.json: results\[0\]\.checks\[1\]\.expect: .* is no check a run judges"):
            _read(raw)


def test_show_refuses_a_forged_pass_of_a_check_that_does_not_parse_in_one_line_and_exits_2(tmp_path):
    raw = _raw()
    raw["results"][0]["checks"][1].update(expect="slack_s[host] >= banana", verdict="pass")
    shown = invoke("show", str(_saved(raw, tmp_path)))
    assert shown.exit_code == 2
    assert "checks[1].expect: 'slack_s[host] >= banana' is no check a run judges" in shown.output
    assert "passed" not in shown.output


def _undecided_raw() -> dict[str, Any]:
    """A file whose `slack_s[host] >= 200us` `run` judged INCONCLUSIVE with no level stored: its 30 rounds too few for
    an interval at its share of a family rate of 1e-9 (it needs 34)."""
    result = result_with(_planted(0.6, 1.0, (0.2, 0.8, 1 - 1 / 1.1)))
    shared = budget.Budget(1e-9, 1, 10, 100)
    judged = checks.evaluate((expect.parse("slack_s[host] >= 200us", WORKLOAD),), result, shared)
    assert judged[0].verdict == Verdict.INCONCLUSIVE
    assert judged[0].confidence is None
    assert judged[0].value is not None
    return json.loads(report_of([dataclasses.replace(result, checks=judged)]).to_json())


def test_an_undecided_checks_value_and_delay_as_run_read_back_as_run_judged_them():
    raw = _undecided_raw()
    (result,) = _read(raw).results
    assert result.checks[0].value == raw["results"][0]["checks"][0]["value"]
    assert result.checks[0].delay_as_run_s == raw["results"][0]["checks"][0]["delay_as_run_s"]


@pytest.mark.parametrize("key, edited", [("value", 0.0), ("delay_as_run_s", 0.001)])
def test_an_undecided_checks_value_or_delay_as_run_the_rounds_do_not_give_is_refused(key, edited):
    """The trial's: an INCONCLUSIVE slack check with no level, its `value` set to 0.0 (beside a detail that says how
    much the delay slowed the step) or its `delay_as_run_s` to 1 ms, was shown: neither depends on the level, so both
    are held to the stored rounds as a decided check's are."""
    raw = _undecided_raw()
    raw["results"][0]["checks"][0][key] = edited
    with pytest.raises(InputError, match=rf"checks\[0\]\.{key}: .*perturbation rounds"):
        _read(raw)
