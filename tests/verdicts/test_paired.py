"""An `ab` run's exit code and its words: SLOWER fails, INCONCLUSIVE fails unless allowed, a lost case fails."""

from __future__ import annotations

import dataclasses

from asyncbench.errors import EXIT_ERRORS, EXIT_GATE, EXIT_OK
from asyncbench.report import paired as views
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.model import Verdict
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.verdicts import paired as verdicts


def _ratio(label: str, ratio: float = 1.0, interval=(0.98, 1.02)) -> PairedRatio:
    return PairedRatio("v", "variant", "s", 0.001, 0.001 * ratio, ratio, interval, Label(label))


def _report(*cases: PairedCase, allow_inconclusive: bool = False) -> ABReport:
    base = Side(
        "base", "abc (main)", "/usr/bin/python3", "3.11.7", {"OMP_NUM_THREADS": "1"}, {"frameworks": {"torch": {"version": "2.12"}}}
    )
    head = Side("head", "working tree", "/usr/bin/python3", "3.11.7", {}, {"frameworks": {"torch": {"version": "2.13"}}})
    return ABReport("2026-11-23T00:00:00+00:00", "0", base, head, 0.05, 0.01, allow_inconclusive, "frozen", tuple(cases))


def test_same_passes_slower_fails_and_inconclusive_fails_unless_allowed():
    assert verdicts.judge(_report(PairedCase("a", "ok", ratios=(_ratio("SAME"), _ratio("FASTER", 0.5))))).code == EXIT_OK
    slower = verdicts.judge(_report(PairedCase("a", "ok", ratios=(_ratio("SLOWER", 1.2, (1.1, 1.3)),))))
    assert slower.code == EXIT_GATE
    assert "1 verdict SLOWER beyond its margin: a v (beyond 5%)" in slower.reasons
    own = verdicts.judge(_report(PairedCase("a", "ok", ratios=(_ratio("SLOWER", 1.4, (1.3, 1.5)),), margin=0.25)))
    assert "1 verdict SLOWER beyond its margin: a v (beyond 25%)" in own.reasons  # the case's own, not the gate's 5%
    unsure = PairedCase("a", "ok", ratios=(_ratio("INCONCLUSIVE", 1.04, (0.99, 1.09)),))
    assert verdicts.judge(_report(unsure)).code == EXIT_GATE
    assert verdicts.judge(_report(unsure, allow_inconclusive=True)).code == EXIT_OK


def test_a_lost_case_fails_an_error_is_exit_3_and_nothing_compared_is_no_pass():
    lost = verdicts.judge(_report(PairedCase("a", "error", "head: died", lost=True), PairedCase("b", "ok", ratios=(_ratio("SAME"),))))
    assert lost.code == EXIT_GATE
    assert any("ok on base did not run ok on head: a" in r for r in lost.reasons)
    errored = verdicts.judge(_report(PairedCase("a", "error", "base: died"), PairedCase("b", "ok", ratios=(_ratio("SAME"),))))
    assert errored.code == EXIT_ERRORS
    nothing = verdicts.judge(_report(PairedCase("a", "one-sided", "only on head")))
    assert nothing.code == EXIT_GATE
    assert "nothing was compared" in nothing.reasons[0]


def test_the_comment_names_both_sides_their_differences_and_the_budget():
    report = _report(PairedCase("a", "ok", ratios=(_ratio("SLOWER", 1.2, (1.1, 1.3)),)), PairedCase("b", "one-sided", "only on base"))
    text = views.markdown(views.build(report, verdicts.judge(report)))
    assert "the gate fails (ab exits 1)" in text
    assert "| a | v | 1.00 ms | 1.20 ms | +20.0% | [+10.0% … +30.0%] | **SLOWER** |" in text
    assert "base: abc ('main')" in text  # the revision's name as the user typed it, quoted
    assert "OMP_NUM_THREADS='1'" in text
    assert "sides differ: frameworks.torch.version: '2.12' → '2.13'" in text
    assert "b: one-sided: only on base" in text
    assert "1% family-wise false-alarm rate" in text


def test_the_json_carries_ratio_interval_and_verdict_per_variant():
    import json

    report = _report(PairedCase("a", "ok", ratios=(_ratio("SAME"),)))
    (row,) = json.loads(report.to_json())["cases"][0]["ratios"]
    assert (row["ratio"], row["ratio_ci"], row["verdict"]) == (1.0, [0.98, 1.02], Verdict.PASS.value)
    assert json.loads(dataclasses.replace(report, interrupted=True).to_json())["interrupted"] is True


def test_a_failing_gate_s_headline_counts_the_cases_without_a_verdict():
    """A trial read `❌ the gate fails (exit 1): 1 SAME` where the other case errored on head: the headline now counts
    the errored and one-sided cases beside the verdicts."""
    report = _report(
        PairedCase("a", "error", "head: died", lost=True),
        PairedCase("b", "ok", ratios=(_ratio("SAME"),)),
        PairedCase("c", "one-sided", "x"),
    )
    text = views.markdown(views.build(report, verdicts.judge(report)))
    assert "the gate fails (ab exits 1)**: 1 SAME, 1 on one side only, 1 lost on head (ok on base)" in text


def test_a_case_lost_on_head_is_not_counted_errored_which_exits_3():
    """A trial: head's step raising in its set-up read 'the gate fails (ab exits 1): 1 errored', base's 'the gate
    fails (ab exits 3): 1 errored': one word beside two exit codes. A case lost on head is counted as such."""
    lost = _report(PairedCase("a", "error", "head: setup raised", lost=True))
    assert views.build(lost, verdicts.judge(lost)).summary == "1 lost on head (ok on base)"
    errored = _report(PairedCase("a", "error", "base: setup raised"))
    built = views.build(errored, verdicts.judge(errored))
    assert built.summary == "1 errored"
    assert built.code == EXIT_ERRORS
