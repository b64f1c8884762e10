"""What a run concludes: exit codes that cannot pass by accident, through the CLI."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET

import pytest
from click.testing import CliRunner

from asyncbench import cli
from asyncbench.report import junit, view
from asyncbench.results import stats
from asyncbench.results.labels import Label
from asyncbench.results.model import Result, Samples, Status, VariantResult
from asyncbench.verdicts import outcome
from tests.support.cli import invoke
from tests.support.helpers import ok_result, report_of

UNDECIDABLE = """\
name: undecidable
defaults: {backends: [torch], devices: [cpu], min_samples: 3, max_samples: 3}
experiments:
  - workload: sync_async
    params: {n_ops: 100}
    expect: ["speedup >= 0.5"]
"""


def test_a_run_that_measured_nothing_exits_1_and_says_why():
    result = invoke("run", "-w", "matmul", "-d", "cuda", "-b", "torch", "--no-progress")
    assert result.exit_code == 1
    assert "nothing was measured: the only case was skipped" in result.output


def test_a_check_on_a_case_that_did_not_run_is_not_measured_and_fails():
    """configs/ci-gate.yaml on numpy: multi_device cannot run there, so its speedup check is not measured."""
    result = invoke("run", "configs/ci-gate.yaml", "-b", "numpy", "-w", "multi_device", "--no-progress")
    assert result.exit_code == 1
    assert "parallel_speedup >= 1.3" in result.output
    assert "could not be evaluated" in result.output


def test_an_inconclusive_check_fails_the_gate_unless_allowed(tmp_path):
    path = tmp_path / "u.yaml"
    path.write_text(UNDECIDABLE)
    failing = invoke("run", str(path), "--no-progress")
    assert failing.exit_code == 1
    assert "? speedup >= 0.5" in failing.output
    assert "1 check inconclusive" in failing.output
    assert "✓" not in failing.output
    allowed = invoke("run", str(path), "--no-progress", "--allow-inconclusive")
    assert allowed.exit_code == 0
    assert "1 inconclusive" in allowed.output
    assert "sharing a 1% false-alarm rate, split over the checks and their looks" in allowed.output.replace("\n", " ")


def test_compare_fails_for_a_case_lost_since_the_baseline_and_refuses_unrelated_files(tmp_path):
    baseline, now, other = tmp_path / "b.json", tmp_path / "n.json", tmp_path / "o.json"
    report_of([ok_result("m[torch,cpu]")]).save(baseline)
    report_of([dataclasses.replace(ok_result("m[torch,cpu]"), status=Status.ERROR, reason="boom", variants={})]).save(now)
    report_of([ok_result("m[numpy,cpu]")]).save(other)
    lost = invoke("compare", str(baseline), str(now))
    assert lost.exit_code == 1
    assert "not run now: m[torch,cpu]" in lost.output
    unrelated = CliRunner().invoke(cli.main, ["compare", str(baseline), str(other)])
    assert unrelated.exit_code == 2
    assert "no case in common" in unrelated.output
    same = invoke("compare", str(baseline), str(baseline))
    assert same.exit_code == 0
    assert "the machine's change between the runs is judged from a fixed reference work" in same.output


def test_compare_of_a_file_that_holds_no_case_is_refused_as_files_with_no_case_in_common(tmp_path):
    """The trial: the current run stopped by SIGTERM before its first case (`"interrupted": true`, no results)
    printed an empty table, 'only in the baseline (1)', 'nothing compared', exit 1, while two files of other cases
    are one line and exit 2. No case in common either way: one line, exit 2, naming the file that has none."""
    baseline, empty = tmp_path / "base.json", tmp_path / "int.json"
    report_of([ok_result("m[torch,cpu]")]).save(baseline)
    dataclasses.replace(report_of([]), interrupted=True).save(empty)
    done = CliRunner().invoke(cli.main, ["compare", str(baseline), str(empty)])
    assert done.exit_code == 2, done.output
    assert done.output.strip().splitlines() == [
        f"asyncbench: error: nothing to compare: the current run {empty} holds no case "
        "(its run was interrupted before its first case finished)"
    ]
    backwards = CliRunner().invoke(cli.main, ["compare", str(empty), str(baseline), "--format", "json"])
    assert backwards.exit_code == 2
    assert f"the baseline {empty} holds no case" in backwards.output


@pytest.mark.parametrize("interrupted", [True, False])
def test_show_of_a_file_that_holds_no_case_exits_1_and_its_junit_fails(tmp_path, interrupted):
    """The trial: `show` of a run stopped before its first case (`"interrupted": true`, no results) printed
    '0 cases: none (interrupted)' and exited 0, and its JUnit read tests="0" failures="0", a green CI view, while
    `compare` and `record` refuse the file. A file that measured nothing is no pass: one line on stderr, exit 1,
    as `run` exits when nothing was measured, and the JUnit holds the gate's failing test, as `ab --junit` does."""
    empty = tmp_path / "int.json"
    dataclasses.replace(report_of([]), interrupted=interrupted).save(empty)
    why = "its run was interrupted before its first case finished" if interrupted else "its run finished no case"
    said = f"nothing was measured: {empty} holds no case ({why})"
    for fmt in ("table", "markdown", "json", "junit"):
        shown = invoke("show", str(empty), "--format", fmt)
        assert shown.exit_code == 1, (fmt, shown.output)
        assert shown.stderr.strip().splitlines() == [said], fmt
    xml = ET.fromstring(invoke("show", str(empty), "--format", "junit").stdout)
    assert (xml.get("tests"), xml.get("failures")) == ("1", "1")
    [test] = xml.iter("testcase")
    assert (test.get("classname"), test.get("name")) == (junit.GATE_SUITE, junit.GATE_TEST)
    assert test.find("failure").get("message") == said
    table = invoke("show", str(empty)).output
    assert table.count(said) == 1  # said once on a terminal: its line on stderr
    # not 'a gate on these checks exits 1' (a file's checks read back): `show` exits 1 itself
    assert f"**exit 1** because:\n- {said}" in invoke("show", str(empty), "--format", "markdown").stdout


def test_show_of_an_ab_file_that_holds_no_case_exits_1_as_its_gate_failed(tmp_path):
    """An `ab` file of no case (an `ab` stopped before its first case finished) was shown as a failed gate, 'nothing
    compared', and its JUnit failed, yet `show` exited 0: one line on stderr and exit 1, as for a run's file."""
    from tests.support import ab_files

    raw = json.loads(ab_files.ab_json(ab_files.recorded_gate(1, 1.0), 1))
    raw.update(cases=[], time_notes=[], interrupted=True)
    empty = tmp_path / "ab.json"
    empty.write_text(json.dumps(raw), encoding="utf-8")
    said = f"nothing was compared: {empty} holds no case (its run was interrupted before its first case finished)"
    for fmt in ("table", "markdown", "json", "junit"):
        shown = invoke("show", str(empty), "--format", fmt)
        assert shown.exit_code == 1, (fmt, shown.output)
        assert shown.stderr.strip().splitlines() == [said], fmt
    assert 'failures="1"' in invoke("show", str(empty), "--format", "junit").stdout


def ahead_result(case_id: str) -> Result:
    """An ok row whose call returned (1 ms) long before its work was done (100 ms), with intervals to say so."""
    issue = tuple(0.001 + i * 1e-5 for i in range(12))
    done = tuple(0.1 + i * 1e-3 for i in range(12))
    variant = VariantResult(Samples(issue, done), stats.summarize(issue), stats.summarize(done), None)
    return dataclasses.replace(ok_result(case_id), backend="jax", variants={"matmul": variant}, reading="the loop returns early")


def test_the_headline_counts_the_rows_that_ran_ahead_by_their_intervals():
    assert outcome.ran_ahead(ahead_result("a"))
    assert not outcome.ran_ahead(ok_result("b"))  # issue and done are one clock
    headline = outcome.headline(report_of([ahead_result("a"), ok_result("b")]))
    assert "2 ok; 1 ran ahead" in headline
    assert "none ran ahead" in outcome.headline(report_of([ok_result("b")]))


def test_a_report_leads_with_the_rows_that_ran_ahead():
    built = view.build(report_of([ok_result("b"), ahead_result("a")]))
    figure = "done / issue 100× [100–100], the harness's own sync not measured"
    assert built.highlights == (f"m jax cpu (ran ahead: {figure}): the loop returns early",)


def test_an_inconclusive_row_against_a_baseline_fails_the_run_unless_allowed():
    """`run --baseline` follows the one rule for INCONCLUSIVE that checks and `ab` follow (before: it passed)."""
    from asyncbench.verdicts import compare

    few = dataclasses.replace(ok_result("m[torch,cpu]", n=3))  # three samples a side: no interval at the row's level
    comparison = compare.compare(report_of([few]), report_of([few]))
    assert [r.label for r in comparison.rows] == [Label.INCONCLUSIVE]
    judged = outcome.judge(report_of([few]), comparison=comparison)
    assert judged.code == 1
    assert "1 variant INCONCLUSIVE against the baseline" in judged.reasons[0]
    assert "--allow-inconclusive lets it pass" in judged.reasons[0]
    assert outcome.judge(report_of([few]), comparison=comparison, allow_inconclusive=True).code == 0


def test_a_baseline_that_shares_no_case_with_the_plan_is_refused_before_anything_runs(tmp_path, monkeypatch):
    """The whole suite used to run first, then exit 2 with 'no case in common': the plan's ids say it at once."""
    from asyncbench.engine import runner

    baseline = tmp_path / "b.json"
    report_of([ok_result("train_step[torch,cpu]")]).save(baseline)
    monkeypatch.setattr(runner, "start_workers", lambda *a, **k: (_ for _ in ()).throw(AssertionError("a case ran")))
    out = tmp_path / "out.json"
    refused = CliRunner().invoke(
        cli.main, ["run", "-w", "sync_async", "-b", "numpy", "-d", "cpu", "--baseline", str(baseline), "-o", str(out)]
    )
    assert refused.exit_code == 2, refused.output
    said = refused.output.strip().splitlines()
    assert len(said) == 1
    assert "--baseline has no case in common with this run's plan" in said[0]
    assert "planned: sync_async[numpy,cpu]" in said[0]
    assert not out.exists()


def test_a_baseline_that_holds_no_case_is_refused_before_anything_runs(tmp_path, monkeypatch):
    """A baseline whose run was interrupted before its first case: `compare` refuses it (exit 2), and `run
    --baseline` ran the whole plan first, then compared nothing. Now one line and exit 2 before any case runs."""
    from asyncbench.engine import runner

    empty = tmp_path / "int.json"
    dataclasses.replace(report_of([]), interrupted=True).save(empty)
    monkeypatch.setattr(runner, "start_workers", lambda *a, **k: (_ for _ in ()).throw(AssertionError("a case ran")))
    out = tmp_path / "out.json"
    refused = CliRunner().invoke(
        cli.main, ["run", "-w", "sync_async", "-b", "numpy", "-d", "cpu", "--baseline", str(empty), "-o", str(out)]
    )
    assert refused.exit_code == 2, refused.output
    assert refused.output.strip().splitlines() == [
        f"asyncbench: error: --baseline {empty} holds no case (its run was interrupted before its first case finished): "
        "nothing to compare this run with"
    ]
    assert not out.exists()


def test_a_planned_case_on_a_device_resolved_where_it_runs_may_match_its_experiment_s_baseline_case():
    from asyncbench.results.model import PlannedCase
    from asyncbench.verdicts import compare

    baseline = report_of([ok_result("m[torch,cuda:0]")])
    on_cuda = PlannedCase("m[torch,cuda]", "m", "matmul", "torch", "cuda", {})
    assert compare.planned_problem(baseline, [on_cuda]) is None  # `cuda` runs as cuda:0: it may be the same case
    on_cpu = PlannedCase("m[torch,cpu]", "m", "matmul", "torch", "cpu", {})
    assert "no case in common" in (compare.planned_problem(baseline, [on_cpu]) or "")


def test_a_file_compared_with_itself_says_both_are_the_same_run_and_keeps_its_verdicts(tmp_path):
    baseline, copy, later = tmp_path / "b.json", tmp_path / "copy.json", tmp_path / "later.json"
    report_of([ok_result("m[torch,cpu]")]).save(baseline)
    copy.write_bytes(baseline.read_bytes())
    report_of([ok_result("m[torch,cpu]")]).save(later)  # the same samples, another run
    itself = CliRunner().invoke(cli.main, ["compare", str(baseline), str(copy)])
    other = CliRunner().invoke(cli.main, ["compare", str(baseline), str(later)])
    assert "both files are the same run" in " ".join(itself.output.split())
    assert "same run" not in other.output
    assert itself.exit_code == other.exit_code  # a note only: the verdicts are the method's, as judged
    assert itself.output.strip().splitlines()[-1] == other.output.strip().splitlines()[-1]
    as_json = CliRunner().invoke(cli.main, ["compare", str(baseline), str(copy), "--format", "json"])
    assert '"same_run": true' in as_json.output
