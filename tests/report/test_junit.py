"""`--junit`: each `expect:` check and each `ab` verdict a test, failing as the gate fails it (INCONCLUSIVE included,
unless allowed: then skipped with why), an errored case an <error>; a hostile name still gives a well-formed file."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

from asyncbench.report import junit, view
from asyncbench.report.writers import WRITERS
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.model import Check, Status, Verdict
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.verdicts import outcome
from tests.support.cli import invoke
from tests.support.golden import golden_report
from tests.support.helpers import ok_result, report_of


def _parsed(text: str) -> ET.Element:
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>')
    return ET.fromstring(text.encode("utf-8"))


def _counts(element: ET.Element) -> tuple[int, int, int, int]:
    return tuple(int(element.get(key)) for key in ("tests", "failures", "errors", "skipped"))  # type: ignore[return-value]


def _run_junit(report, allow_inconclusive: bool | None) -> ET.Element:
    """The writer on a view as `run` builds it (judged with the gate's setting), or as `show` does (None: not judged)."""
    verdict = None if allow_inconclusive is None else outcome.judge(report, allow_inconclusive=allow_inconclusive)
    return _parsed(WRITERS["junit"].render(view.build(report, None, verdict), "junit.xml"))


def test_each_check_is_a_test_and_inconclusive_fails_as_the_gate_fails_it():
    for allow in (False, None):  # the gate's default, and `show` of a file (judged as the gate judges by default)
        root = _run_junit(golden_report(), allow)
        assert _counts(root) == (4, 2, 1, 0)  # three checks (pass, fail, inconclusive) and the errored case
        tests = {(t.get("classname"), t.get("name")): t for t in root.iter("testcase")}
        passed = tests[("matmul[jax,cpu,size=128]", "illusion >= 3")]
        assert list(passed) == []
        assert passed.get("time") is None
        failed = tests[("matmul[jax,cpu,size=256]", "illusion >= 20")].find("failure")
        assert failed.get("message") == "illusion = 16.0× [15.2–16.4], expected >= 20.0× (short by 20%)"
        assert failed.get("type") == "fail"
        assert tests[("matmul[jax,cpu,size=256]", "gflops >= 1")].find("failure").get("type") == "inconclusive"
        errored = tests[("matmul[jax,cpu,size=512]", junit.RAN)]
        assert errored.find("error").get("message") == "out of memory: MemoryError"


def test_allow_inconclusive_makes_an_inconclusive_check_skipped_with_its_reading():
    root = _run_junit(golden_report(), True)
    assert _counts(root) == (4, 1, 1, 1)
    skipped = next(t for t in root.iter("testcase") if t.get("name") == "gflops >= 1").find("skipped")
    assert "--allow-inconclusive" in skipped.get("message")
    assert "straddles the threshold" in skipped.get("message")
    suite = root.find("testsuite")
    assert suite.get("name") == "matmul"
    assert _counts(suite) == (4, 1, 1, 1)


def test_an_errored_case_has_its_own_time_and_a_passing_run_counts_no_failure():
    errored = dataclasses.replace(ok_result("e[torch,cpu]"), status=Status.ERROR, reason="boom", variants={}, case_s=2.5)
    fine = dataclasses.replace(ok_result("m[torch,cpu]"), checks=(Check("done_s < 1s", Verdict.PASS, "done_s = 1.05 s"),))
    root = _run_junit(report_of([fine, errored]), False)
    assert _counts(root) == (2, 0, 1, 0)
    assert next(t for t in root.iter("testcase") if t.get("classname") == "e[torch,cpu]").get("time") == "2.500000"


def test_a_hostile_name_gives_a_well_formed_file():
    hostile = 'bad\x00\x1b[31m<tag> & "q" \ud800\ufffe\u202e'
    check = Check(f"done_s < 1s {hostile}", Verdict.FAIL, f"reading\n{hostile}\x07]]>")
    result = dataclasses.replace(ok_result(f"m[{hostile}]"), experiment=hostile, checks=(check,))
    errored = dataclasses.replace(ok_result("e"), experiment=hostile, status=Status.ERROR, reason=hostile, variants={})
    text = WRITERS["junit"].render(view.build(report_of([result, errored])), "junit.xml")
    root = _parsed(text)  # parses: every character XML 1.0 forbids is gone, every markup character escaped
    assert _counts(root) == (2, 1, 1, 0)
    test = root.find("testsuite/testcase")
    assert test.get("classname") == 'm[bad\\x00\\x1b[31m<tag> & "q" \\u202e]'  # controls shown, never passed through
    assert "\x1b" not in text
    assert "\x00" not in text
    assert test.find("failure").text.startswith("reading\nbad\\x00")


def _ab(*cases: PairedCase, allow_inconclusive: bool = False) -> ABReport:
    base, head = Side("base", "a1b2c3d4e5 (main)", "/usr/bin/python3", "3.11.7"), Side("head", "working tree", "/usr/bin/python3", "3.11.7")
    return ABReport("2026-11-23T00:00:00+00:00", "0", base, head, 0.05, 0.01, allow_inconclusive, "frozen", cases)


def _ratio(name: str, label: Label, ratio: float, interval=(0.98, 1.02)) -> PairedRatio:
    return PairedRatio(name, "variant", "s", 1e-3, 1e-3 * ratio, ratio, interval, label)


def test_each_ab_verdict_is_a_test_slower_fails_and_inconclusive_as_the_file_gate_treated_it():
    ratios = (
        _ratio("same", Label.SAME, 1.0),
        _ratio("faster", Label.FASTER, 0.5, (0.45, 0.55)),
        _ratio("slower", Label.SLOWER, 1.2, (1.1, 1.3)),
        _ratio("unsure", Label.INCONCLUSIVE, 1.04, (0.99, 1.09)),
    )
    cases = (
        PairedCase("a[numpy,cpu]", "ok", ratios=ratios, elapsed_s=30.0),
        PairedCase("b[numpy,cpu]", "error", "base: died", elapsed_s=1.0),
    )
    root = _parsed(junit.ab_junit(_ab(*cases)))
    assert _counts(root) == (5, 2, 1, 0)
    tests = {t.get("name"): t for t in root.iter("testcase")}
    slower = tests["slower"].find("failure")
    assert slower.get("type") == "SLOWER"
    assert "+20.0% [+10.0% … +30.0%]" in slower.get("message")
    assert "margin 5%" in slower.get("message")
    assert tests["unsure"].find("failure").get("type") == "INCONCLUSIVE"
    assert list(tests["same"]) == []
    assert list(tests["faster"]) == []
    assert tests[junit.RAN].find("error").get("message") == "base: died"
    allowed = _parsed(junit.ab_junit(_ab(*cases, allow_inconclusive=True)))
    assert _counts(allowed) == (5, 1, 1, 1)


def test_an_undecided_ab_verdict_without_an_interval_says_so_not_a_bare_dash():
    unsure = _ratio("unsure", Label.INCONCLUSIVE, 1.686, None)
    root = _parsed(junit.ab_junit(_ab(PairedCase("a[numpy,cpu]", "ok", ratios=(unsure,)))))
    message = next(root.iter("testcase")).find("failure").get("message")
    assert "head against base +68.6% [no interval] (head/base 1.69)" in message


def test_an_ab_ratio_near_1_says_it_is_not_1():
    """A trial's JUnit file wrote a ratio of 1.00017 as `(head/base 1)`: it has the decimals that show it is not 1."""
    unsure = _ratio("unsure", Label.INCONCLUSIVE, 1.00017, (0.9998, 1.0006))
    root = _parsed(junit.ab_junit(_ab(PairedCase("a[numpy,cpu]", "ok", ratios=(unsure,)))))
    message = next(root.iter("testcase")).find("failure").get("message")
    assert "(head/base 1.0002)" in message
    assert "(head/base 1)" not in message


def test_an_ab_case_lost_on_head_or_failing_verification_fails():
    lost = PairedCase("a", "error", "head: died", lost=True)
    wrong = PairedCase("b", "ok", ratios=(_ratio("v", Label.SAME, 1.0),), problems=("head: results differ from NumPy's",))
    root = _parsed(junit.ab_junit(_ab(lost, wrong)))
    assert _counts(root) == (3, 2, 0, 0)
    assert [t.get("name") for t in root.iter("testcase") if t.find("failure") is not None] == [junit.RAN, junit.VERIFIED]


def test_an_ab_gate_that_compared_nothing_writes_its_failing_test_not_an_empty_green_file():
    # a trial's `ab -b torch` of a numpy-only step skipped its one case: ab exited 1 ("nothing compared") while its
    # JUnit file held tests="0" failures="0", which a CI test view shows green
    skipped = PairedCase("a[torch,cpu]", "skipped", "the step runs on numpy only")
    root = _parsed(junit.ab_junit(_ab(skipped)))
    assert _counts(root) == (1, 1, 0, 0)
    [test] = root.iter("testcase")
    assert (test.get("classname"), test.get("name")) == (junit.GATE_SUITE, junit.GATE_TEST)
    assert "nothing was compared" in test.find("failure").get("message")
    # a passing gate still writes no such test
    same = PairedCase("b[numpy,cpu]", "ok", ratios=(_ratio("v", Label.SAME, 1.0),))
    assert [t.get("name") for t in _parsed(junit.ab_junit(_ab(same))).iter("testcase")] == ["v"]


def test_ab_and_show_write_them_and_an_unwritable_path_is_refused_before_anything_runs(tmp_path):
    """The wiring: `ab` writes both after judging, `show AB.json --format` prints the same, `--allow-inconclusive`
    skips on show, and `ab --junit` / `run --bmf` into a missing folder is one line, exit 2, nothing run."""
    from asyncbench.errors import EXIT_INPUT
    from asyncbench.report import bmf
    from asyncbench.session import paired, spine
    from asyncbench.session.requests import ABRequest, Outputs
    from asyncbench.session.saver import Saver

    report = _ab(PairedCase("a[numpy,cpu]", "ok", ratios=(_ratio("unsure", Label.INCONCLUSIVE, 1.04, (0.99, 1.09)),)))
    files = {name: tmp_path / name for name in ("ab.json", "junit.xml", "bmf.json")}
    files["ab.json"].write_text(report.to_json(), encoding="utf-8")
    request = ABRequest(base_env={"X": "1"}, outputs=Outputs(files={"junit": str(files["junit.xml"]), "bmf": str(files["bmf.json"])}))
    said: list[str] = []
    assert spine.conclude(paired.PairedConclusion(request), report, Saver(None, said.append), None, (), said.append).code == 1
    assert said == [f"written: {files['bmf.json']}, {files['junit.xml']}"]
    for fmt, written in (("junit", "junit.xml"), ("bmf", "bmf.json")):
        shown = invoke("show", str(files["ab.json"]), "--format", fmt)
        assert shown.exit_code == 0
        assert shown.output == files[written].read_text(encoding="utf-8")
    assert shown.output == bmf.ab_bmf(report)
    allowed = invoke("show", str(files["ab.json"]), "--format", "junit", "--allow-inconclusive")
    assert _counts(_parsed(allowed.output)) == (1, 0, 0, 1)
    for args in (["ab", "-w", "matmul", "-b", "numpy", "--base-env", "X=1", "--junit"], ["run", "-w", "matmul", "-b", "numpy", "--bmf"]):
        refused = invoke(*args, str(tmp_path / "missing" / "out"))
        assert refused.exit_code == EXIT_INPUT, refused.output
        assert "does not exist" in refused.output
        assert len(refused.output.strip().splitlines()) == 1


def test_a_gate_that_failed_on_nothing_listed_is_one_failing_test_and_a_passing_one_adds_none():
    """A run that fails only on its --baseline comparison had no failing test: the file read as a pass beside exit 1.
    The gate's own test fails then, with its reasons; a passing run, and `show` of a file (no outcome), add none."""
    fine = dataclasses.replace(ok_result("m[torch,cpu]"), checks=(Check("done_s < 1s", Verdict.PASS, "done_s = 1.05 s"),))
    report = report_of([fine])
    slower = outcome.Outcome(1, ("1 case slower than the baseline beyond 10%: m[torch,cpu] sync",))
    root = _parsed(WRITERS["junit"].render(view.build(report, None, slower), "junit.xml"))
    assert _counts(root) == (2, 1, 0, 0)
    failed = next(t for t in root.iter("testcase") if t.get("name") == junit.GATE_TEST).find("failure")
    assert failed.get("message") == "1 case slower than the baseline beyond 10%: m[torch,cpu] sync"
    assert failed.get("type") == "exit 1"
    assert _counts(_run_junit(report, False)) == (1, 0, 0, 0)  # passing: the check alone
    assert _counts(_run_junit(report, None)) == (1, 0, 0, 0)  # show: no outcome, nothing added


def _compared(allow_inconclusive: bool):
    """A run compared with its baseline: one row SAME, one INCONCLUSIVE, as `run --baseline` judges them."""
    from asyncbench.verdicts import compare

    rows = (
        compare.VariantComparison("m[torch,cpu]", "sync", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME),
        compare.VariantComparison("m[torch,cpu]", "async", 1e-3, 1.05e-3, 1.05, (0.97, 1.14), Label.INCONCLUSIVE),
    )
    return compare.Comparison("done", 0.10, rows, (), (), (), (), allow_inconclusive=allow_inconclusive)


def test_every_row_compared_with_a_baseline_is_a_test_and_an_allowed_inconclusive_one_is_skipped():
    """The issue: `run --baseline old.json --allow-inconclusive --junit` wrote tests="0" where the INCONCLUSIVE row
    passed: the row was in no test. Each judged row is one; allowed, the INCONCLUSIVE one is skipped with its reading."""
    report = report_of([ok_result("m[torch,cpu]")])
    for allow, counts in ((True, (2, 0, 0, 1)), (False, (2, 1, 0, 0))):
        comparison = _compared(allow)
        judged = outcome.judge(report, allow_inconclusive=allow, comparison=comparison)
        assert (judged.code == 0) == allow
        root = _parsed(WRITERS["junit"].render(view.build(report, comparison, judged), "junit.xml"))
        assert _counts(root) == counts
        tests = {(t.get("classname"), t.get("name")): t for t in root.iter("testcase")}
        assert list(tests[("m[torch,cpu]", "sync against the baseline")]) == []
        undecided = tests[("m[torch,cpu]", "async against the baseline")]
        said = undecided.find("skipped" if allow else "failure")
        assert said.get("message").startswith("INCONCLUSIVE: +5.0% [−3.0% … +14.0%] against the baseline, margin 10%")
        assert ("--allow-inconclusive" in said.get("message")) == allow


def test_a_case_lost_since_the_baseline_is_a_failing_test_even_beside_a_failing_row():
    """A case ok in the baseline and skipped now failed the gate but was in no test where another row failed too (the
    gate's catch-all test is written only where nothing else fails): it is a failing test of its own."""
    from asyncbench.verdicts import compare

    rows = (compare.VariantComparison("m[torch,cpu]", "async", 1e-3, 1.05e-3, 1.05, (0.97, 1.14), Label.INCONCLUSIVE),)
    lost = (("gone[torch,cpu]", "ok in the baseline, skipped now: torch not installed"),)
    comparison = compare.Comparison("done", 0.10, rows, (), (), (), (), lost=lost)
    report = report_of([ok_result("m[torch,cpu]")])
    judged = outcome.judge(report, comparison=comparison)
    root = _parsed(WRITERS["junit"].render(view.build(report, comparison, judged), "junit.xml"))
    tests = {(t.get("classname"), t.get("name")): t for t in root.iter("testcase")}
    failure = tests[("gone[torch,cpu]", "runs as in the baseline")].find("failure")
    assert failure.get("message") == "ok in the baseline, skipped now: torch not installed"


def test_an_ab_verdicts_message_states_its_intervals_level():
    """The trial: `[+47.9% … +48.4%]` with no level beside it, where the file's `confidence` was 0.996."""
    slower = _ratio("slower", Label.SLOWER, 1.481, (1.479, 1.484))
    root = _parsed(junit.ab_junit(_ab(PairedCase("a[numpy,cpu]", "ok", ratios=(slower,), confidence=0.996))))
    message = next(root.iter("testcase")).find("failure").get("message")
    assert "99.6% interval" in message, message
