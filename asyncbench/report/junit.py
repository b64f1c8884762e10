"""The JUnit XML writer: every `expect:` check and every `ab` verdict as a test, for CI test views.

GitHub test-report actions, GitLab (`artifacts:reports:junit`) and Jenkins
read <testsuites>, one <testsuite> per group with its counts, and a
<testcase classname name> per test holding <failure>, <error> or <skipped>
(or nothing: passed). Here:

- A run's results: a suite per experiment; a test per `expect:` check
  (classname: the case id, name: the check as written). PASS passes; FAIL
  and NOT MEASURED are failures with the check's reading as the message;
  INCONCLUSIVE is treated as the gate treated it: a failure, or, where the
  run was given --allow-inconclusive (`show --allow-inconclusive`), skipped
  with its reading. An errored case is one more test, RAN, with <error>.
  A run with --baseline: one suite more, a test per compared row (name:
  `VARIANT against the baseline`), a regression failing and INCONCLUSIVE as
  the gate treated it (a failure, or skipped under --allow-inconclusive).
- An `ab` file: one suite; a test per verdict (classname: the case id,
  name: the variant, or `NAME (metric)`): SLOWER fails, INCONCLUSIVE as the
  file's gate treated it (its allow_inconclusive), SAME, FASTER and NOT
  SLOWER pass; an errored case is RAN with <error>, a case ok on base and
  not on head RAN with <failure>, and a side whose results failed their
  verification VERIFIED with <failure>, as the gate fails them.

`time` is written only where it is the test's own: an errored case's wall
time (its set-up and sampling), a suite's sum of its cases'. A check is
judged from its case's samples, shared with the case's other checks, so it
has none of its own. Text from data (case ids, check words, readings,
reasons) may hold anything: control characters are shown, never passed
through (report.escaping.visible), then whatever else XML 1.0 cannot hold
(lone surrogates, U+FFFE, U+FFFF) is dropped, and ElementTree escapes the
markup; the file is always well-formed.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Sequence

from asyncbench.report import escaping
from asyncbench.report.case_labels import by_experiment
from asyncbench.report.compared import ComparisonView, change_text, said_interval_text
from asyncbench.report.view import ReportView
from asyncbench.results import units
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.model import Check, Status, Verdict
from asyncbench.results.paired import METRIC, PairedCase, PairedRatio
from asyncbench.verdicts import checks, paired

#: what a test's outcome element is (None: passed)
FAILURE, ERROR, SKIPPED = "failure", "error", "skipped"
#: the test a case is when it did not run as it should: errored (a run, an `ab` case) or lost on head (`ab`)
RAN = "runs without error"
#: the test of a side's results against the workload's own verification (`ab`: a wrong result fails the gate)
VERIFIED = "results pass verification"
#: the suite of an `ab` file's verdicts
AB_SUITE = "asyncbench ab"
#: the suite of a run's comparison with its baseline (--baseline): a test per judged row
COMPARE_SUITE = "asyncbench compare"
#: the suite and test of a run's gate where it failed on something no other test is (a --baseline comparison)
GATE_SUITE, GATE_TEST = "asyncbench gate", "the gate passes"
#: what XML 1.0 cannot hold after report.escaping.visible has shown the control characters (its Char production)
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Test:
    """One <testcase>: who it is, how it ended (None: passed), why, and its own time where it has one."""

    classname: str
    name: str
    outcome: str | None = None
    #: the <failure>/<error>/<skipped> message: the check's reading, the error's reason
    message: str = ""
    #: the failure's type: the verdict or label ("fail", "SLOWER", ...)
    kind: str = ""
    time_s: float | None = None


@dataclass(frozen=True)
class Suite:
    name: str
    tests: tuple[Test, ...]
    #: the sum of its cases' own times where any is known
    time_s: float | None = None


def _allows_inconclusive(view: ReportView) -> bool:
    """Whether the gate let an inconclusive check pass: the run's outcome lists every check that fails it, so an
    inconclusive one absent from it was allowed (and where none is inconclusive, the answer changes nothing). A
    view without an outcome (`show` without --allow-inconclusive) is judged as the gate judges by default."""
    if view.outcome is None:
        return False
    return not any(check.verdict == Verdict.INCONCLUSIVE for _, check in view.outcome.failing)


def check_test(case_id: str, check: Check, allow_inconclusive: bool) -> Test:
    """An `expect:` check as a test, judged as the gate judges it (verdicts.checks.failed)."""
    if check.verdict == Verdict.PASS:
        return Test(case_id, check.expect)
    if not checks.failed(check, allow_inconclusive):
        return Test(case_id, check.expect, SKIPPED, f"inconclusive, let pass by --allow-inconclusive: {check.detail}", str(check.verdict))
    return Test(case_id, check.expect, FAILURE, check.detail, str(check.verdict))


def _time(times: Sequence[float | None]) -> float | None:
    known = [t for t in times if t is not None]
    return sum(known) if known else None


def _gate_suite(view: ReportView, suites: Sequence[Suite]) -> list[Suite]:
    """Where the run's gate failed and no test above fails (a comparison with --baseline, a skipped case under
    --strict: neither is a test of its own), one test that fails with the gate's reasons, so that a file with no
    failing test always means a passing gate. None where the view has no outcome (`show` of a file)."""
    if view.outcome is None:
        return []
    return _failing_gate(view.outcome.code, view.outcome.reasons, suites)


def _failing_gate(code: int, reasons: Sequence[str], suites: Sequence[Suite]) -> list[Suite]:
    """The gate's own failing test where it failed (`code` not 0) and no test in `suites` fails or errors."""
    if code == 0 or any(test.outcome in (FAILURE, ERROR) for suite in suites for test in suite.tests):
        return []
    said = "; ".join(reasons) or f"exit {code}"
    return [Suite(GATE_SUITE, (Test(GATE_SUITE, GATE_TEST, FAILURE, said, f"exit {code}"),))]


def comparison_suite(comparison: ComparisonView) -> Suite:
    """A run's comparison with its baseline (--baseline): a test per judged row, judged as the gate judged it. A
    regression fails; an INCONCLUSIVE row fails, or, under --allow-inconclusive, is skipped with its reading:
    skipped, not passed, because nothing was decided (a pass would say the row was shown not slower), and the gate
    let it through, which a skip is in every JUnit view. Before, the comparison's rows were no tests at all: a gate
    that passed on an allowed INCONCLUSIVE row wrote tests="0"."""
    tests = []
    for row in comparison.judged:
        what = f"{row.variant} against the baseline"
        reading = f"{row.label}: {row.change} {row.interval} against the baseline, margin {comparison.max_regression}"
        if row.fails:
            tests.append(Test(row.id, what, FAILURE, reading, str(row.label)))
        elif row.label == Label.INCONCLUSIVE and comparison.allow_inconclusive:
            tests.append(Test(row.id, what, SKIPPED, f"{reading}; let pass by --allow-inconclusive", str(row.label)))
        elif row.label == Label.INCONCLUSIVE:
            tests.append(Test(row.id, what, FAILURE, reading, str(row.label)))
        else:
            tests.append(Test(row.id, what))
    # a case ok in the baseline and skipped now is no test of its run's suite (an errored one is, as an error): here
    # it fails as the gate fails on it, whatever else failed beside it
    tests += [Test(case_id, "runs as in the baseline", FAILURE, why, "lost") for case_id, why in comparison.lost]
    return Suite(COMPARE_SUITE, tuple(tests))


def run_suites(view: ReportView) -> list[Suite]:
    """A suite per experiment: a test per check of each case, and one per errored case; a suite of the comparison's
    rows where the run had a baseline; the gate's own test where it failed on nothing listed (`_gate_suite`)."""
    allowed = _allows_inconclusive(view)
    suites = []
    for name, results in by_experiment(view.report.results):
        tests: list[Test] = []
        for result in results:
            if result.status == Status.ERROR:
                tests.append(Test(result.id, RAN, ERROR, result.reason or "errored", str(Status.ERROR), result.case_s))
            tests += [check_test(result.id, check, allowed) for check in result.checks]
        if tests:
            suites.append(Suite(name, tuple(tests), _time([r.case_s for r in results])))
    if view.comparison is not None and (view.comparison.judged or view.comparison.lost):
        suites.append(comparison_suite(view.comparison))
    return suites + _gate_suite(view, suites)


def _head_over_base(ratio: float) -> str:
    """The ratio head/base to the decimals that show it is not 1 where it is not ('1.0002', never '1' for 1.00017:
    units.off_boundary), three figures from 100 up."""
    return units.off_boundary(ratio, 1.0) if math.isfinite(ratio) and abs(ratio) < 100 else units.number(ratio)


def _ratio_test(report: ABReport, case: PairedCase, ratio: PairedRatio) -> Test:
    """A verdict of `ab` as a test, judged as the gate judges it (verdicts.paired.judge)."""
    what = f"{ratio.name} (metric)" if ratio.kind == METRIC else ratio.name
    margin = report.max_regression if case.margin is None else case.margin
    reading = (
        f"{ratio.label}: head against base {change_text(ratio.ratio)} {said_interval_text(ratio.ratio_ci)} "
        f"(head/base {_head_over_base(ratio.ratio)}), margin {units.margin(margin)}"
    )
    if case.confidence is not None and ratio.ratio_ci is not None:  # the interval's level, as a check's detail says it
        reading += f", {units.exact_confidence(case.confidence)} interval"
    if ratio.label == Label.SLOWER:
        return Test(case.id, what, FAILURE, reading, str(ratio.label))
    if ratio.label == Label.INCONCLUSIVE:
        if report.allow_inconclusive:
            return Test(case.id, what, SKIPPED, f"{reading}; let pass by --allow-inconclusive", str(ratio.label))
        return Test(case.id, what, FAILURE, reading, str(ratio.label))
    return Test(case.id, what)


def _elapsed(case: PairedCase) -> float | None:
    """A compared case's own time (0: none was kept, as for a case on one side only)."""
    return case.elapsed_s if case.elapsed_s > 0 else None


def ab_suite(report: ABReport) -> Suite:
    """One suite: a test per verdict, and one per case that errored, was lost on head or failed verification."""
    tests: list[Test] = []
    for case in report.cases:
        if case.lost:
            tests.append(Test(case.id, RAN, FAILURE, f"ok on base, not on head: {case.reason or case.status}", "lost", _elapsed(case)))
        elif case.status == "error":
            tests.append(Test(case.id, RAN, ERROR, case.reason or "errored", "error", _elapsed(case)))
        if case.problems:
            tests.append(Test(case.id, VERIFIED, FAILURE, "; ".join(case.problems), "verification"))
        tests += [_ratio_test(report, case, ratio) for ratio in case.ratios]
    return Suite(AB_SUITE, tuple(tests), _time([_elapsed(case) for case in report.cases]))


def _clean(text: str, lines: bool = False) -> str:
    """Text from data as XML can hold it: controls shown (report.escaping), what XML 1.0 forbids dropped."""
    return NOT_XML.sub("", escaping.visible_lines(text) if lines else escaping.visible(text))


def _seconds(value: float) -> str:
    return f"{value:.6f}"


def _counts(tests: Sequence[Test]) -> dict[str, str]:
    return {
        "tests": str(len(tests)),
        "failures": str(sum(t.outcome == FAILURE for t in tests)),
        "errors": str(sum(t.outcome == ERROR for t in tests)),
        "skipped": str(sum(t.outcome == SKIPPED for t in tests)),
    }


def xml_text(suites: Sequence[Suite], name: str = "asyncbench") -> str:
    """The suites as a JUnit XML document."""
    every = [test for suite in suites for test in suite.tests]
    root = ET.Element("testsuites", {"name": name, **_counts(every)})
    for suite in suites:
        attributes = {"name": _clean(suite.name), **_counts(suite.tests)}
        if suite.time_s is not None:
            attributes["time"] = _seconds(suite.time_s)
        element = ET.SubElement(root, "testsuite", attributes)
        for test in suite.tests:
            case = ET.SubElement(element, "testcase", {"classname": _clean(test.classname), "name": _clean(test.name)})
            if test.time_s is not None:
                case.set("time", _seconds(test.time_s))
            if test.outcome is not None:
                said = ET.SubElement(case, test.outcome, {"message": _clean(test.message)})
                if test.outcome != SKIPPED:
                    said.set("type", _clean(test.kind))
                    said.text = _clean(test.message, lines=True)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def junit(view: ReportView, path: str = "-") -> str:
    """The writer (report.writers): the view's checks and errored cases as JUnit XML."""
    return xml_text(run_suites(view))


def ab_junit(report: ABReport) -> str:
    """An `ab` report's verdicts as JUnit XML (`ab --junit`, `show AB.json --format junit`), and the gate's own
    failing test where it failed on nothing that is a test (`nothing was compared`: a file of tests="0" read as a
    green gate in a CI view, beside `ab`'s exit 1)."""
    suites = [ab_suite(report)]
    outcome = paired.judge(report)
    return xml_text(suites + _failing_gate(outcome.code, outcome.reasons, suites))
