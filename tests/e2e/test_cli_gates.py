"""Gates and sweeps as a user meets them: exit codes, what is named, and the files written."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from asyncbench.results import stats
from asyncbench.results.model import Samples
from asyncbench.results.reference import FIRST_SCHEMA as REFERENCE_SCHEMA
from asyncbench.results.schema import Report
from asyncbench.verdicts import machine
from tests.support.cli import invoke
from tests.support.restated import restated

GATED = """\
name: gated
defaults: {backends: [torch], devices: [cpu], min_samples: 6, max_time_s: 5}  # stops once its checks are decided
experiments:
  - workload: sync_async
    params: {n_ops: 200}
    expect: ["speedup >= 0.5", "t1_s < 1s", "speedup >= 1000"]
"""


@pytest.fixture(scope="module")
def measured(tmp_path_factory) -> str:
    """One real run of two cases with enough samples for intervals at the comparison's share of its 1% rate."""
    path = tmp_path_factory.mktemp("runs") / "current.json"
    result = invoke(
        "run",
        "-w",
        "sync_async",
        "-b",
        "torch",
        "-d",
        "cpu",
        "--quick",
        "--no-progress",
        "--set",
        "n_ops=50,100",
        "--set",
        "min_samples=60",
        "--set",
        "max_samples=60",
        "-o",
        str(path),
    )
    assert result.exit_code == 0, result.output
    return str(path)


def _scaled(source: str, target, factor: float, shuffled: bool = False) -> str:
    """The same results with every sample scaled: a baseline made `1/factor` times faster, without the machine's
    reference (as a file before schema 10: judged on the cases alone, the machine's rules are tests/verdicts'),
    so the verdict on a planted change does not depend on how busy the test machine was."""
    report = Report.load(source)
    rows = []
    for row in report.results:
        variants = {}
        for name, v in row.variants.items():
            order = list(range(len(v.samples.done_s)))
            if shuffled:  # rounds that drifted together give no interval: in another order, the same samples do not drift
                random.Random(0).shuffle(order)
            issue, done = (tuple(values[i] * factor for i in order) for values in (v.samples.issue_s, v.samples.done_s))
            # the summaries with them: a reader refuses a summary that is not its samples'
            summaries = {"issue_s": stats.summarize(issue), "done_s": stats.summarize(done)}
            variants[name] = dataclasses.replace(v, samples=Samples(issue, done), **summaries)
        rows.append(dataclasses.replace(row, variants=variants, reference=None))
    dataclasses.replace(report, results=tuple(rows)).save(target)
    # a file of schema 10 or later without its reference gives no verdict against a run with one (a deletion must
    # not turn a row into a pass: verdicts.machine); a file before schema 10 has none to lose
    raw = json.loads(target.read_text())
    for row in raw["results"]:  # its per-op figures those of the scaled samples (a reader holds them to the samples)
        restated(row)
    target.write_text(json.dumps({**raw, "schema_version": REFERENCE_SCHEMA - 1}))
    return str(target)


def test_a_run_compared_with_itself_is_all_same_and_exits_0(measured):
    result = invoke("compare", measured, measured)
    data = json.loads(invoke("compare", measured, measured, "--format", "json").output)
    assert len(data["rows"]) == 4
    for row in data["rows"]:  # SAME where the intervals are narrow enough to show it, else INCONCLUSIVE: never a change
        assert row["ratio"] == 1.0
        assert row["ratio_ci"] is None or row["ratio_ci"][0] <= 1.0 <= row["ratio_ci"][1]  # None: rounds drifted too much
        assert row["label"] in ("SAME", "INCONCLUSIVE")
    assert result.exit_code == (1 if data["inconclusive"] else 0)  # INCONCLUSIVE fails the gate, as everywhere


def test_against_a_baseline_four_times_as_fast_exits_1_and_names_the_slower_cases(measured, tmp_path):
    # both files' samples in another order: under a CI run's load the measured run's rounds drifted together, which
    # left no row an interval (this tests compare's verdict on a planted ×4, not the measured run's drift)
    baseline = _scaled(measured, tmp_path / "fast.json", 0.25, shuffled=True)
    # the run itself without its reference too: a neighbour in either run makes a row INCONCLUSIVE (the machine's
    # rules are tests/verdicts'), and under a CI run's load the measured one had one
    measured = _scaled(measured, tmp_path / "same.json", 1.0, shuffled=True)
    result = invoke("compare", baseline, measured)
    assert result.exit_code == 1
    data = json.loads(invoke("compare", baseline, measured, "--format", "json").output)
    slower = [r for r in data["rows"] if r["label"] == "SLOWER"]
    assert slower
    for row in data["rows"]:  # SLOWER wherever the run's intervals allow a verdict (an interval may vanish when rounds drift)
        assert row["ratio"] == pytest.approx(4.0, rel=1e-4)  # samples are stored to 9 decimals
        assert row["label"] == ("SLOWER" if row["ratio_ci"] is not None else "INCONCLUSIVE")
    assert {r["verdict"] for r in slower} == {"fail"}  # one vocabulary: a SLOWER is a fail
    assert len(data["regressions"]) == len(slower)
    first = slower[0]
    assert f"slower: {first['id']} {first['variant']} (shift +300.0%)" in result.output.replace("\n", "")
    # a threshold above the change lets it through
    assert invoke("compare", baseline, measured, "--max-regression", "500%", "--allow-inconclusive").exit_code == 0


def test_run_with_a_baseline_gates_the_new_run(measured, tmp_path):
    baseline = _scaled(measured, tmp_path / "fast.json", 0.01)
    summary = tmp_path / "summary.md"
    result = invoke(
        "run",
        "-w",
        "sync_async",
        "-b",
        "torch",
        "-d",
        "cpu",
        "--quick",
        "--no-progress",
        "--set",
        "n_ops=50,100",
        "--set",
        "min_samples=12",
        "--set",
        "max_samples=12",
        "--baseline",
        baseline,
        "--markdown",
        str(summary),
        "-o",
        str(tmp_path / "now.json"),
    )
    assert result.exit_code == 1
    assert "Compared with the baseline" in summary.read_text()
    # the run's own CPU pressure is read without a reference on the other side: beside a neighbour (another test
    # process on 2 cores) a row gives no verdict, however slow (verdicts.machine); on a quiet machine it is SLOWER
    busy = [machine.busy_share(r.reference) is not None for r in Report.load(tmp_path / "now.json").results]
    if all(busy):
        assert "a neighbour shared the cores" in result.output.replace("\n", " ")
        assert "SLOWER" not in result.output
    else:  # a case that sampled on a quiet machine: its rows are SLOWER
        assert "SLOWER" in result.output
        assert "**SLOWER**" in summary.read_text()


def test_a_failing_expect_exits_1_and_says_which_check_and_by_how_much(tmp_path):
    path = tmp_path / "gated.yaml"
    path.write_text(GATED)
    out = tmp_path / "r.json"
    result = invoke("run", str(path), "--no-progress", "-o", str(out))
    assert result.exit_code == 1
    assert "✗ speedup >= 1000" in result.output
    assert "short by" in result.output
    assert "3 checks: 2 passed, 1 failed" in result.output
    checks = json.loads(out.read_text())["results"][0]["checks"]
    assert [c["verdict"] for c in checks] == ["pass", "pass", "fail"]
    assert len(Report.load(out).results[0].checks) == 3  # a real run's checks read back


def test_exporters_write_markdown_csv_and_benchmark_json(measured, tmp_path):
    for fmt, check in (
        ("markdown", lambda text: "| n_ops | backend |" in text),
        ("csv", lambda text: text.splitlines()[0].startswith("id,") and len(text.splitlines()) == 5),
        ("github-benchmark", lambda text: all({"name", "unit", "value", "range", "extra"} <= set(e) for e in json.loads(text))),
    ):
        result = invoke("show", measured, "--format", fmt)
        assert result.exit_code == 0, fmt
        assert check(result.output), fmt
    entries = json.loads(invoke("show", measured, "--format", "github-benchmark").output)
    assert [e["name"] for e in entries][:2] == ["sync_async[torch,cpu,n_ops=50] sync", "sync_async[torch,cpu,n_ops=50] async"]
    assert all(e["unit"] == "ms" and e["value"] > 0 for e in entries)


def test_a_sweep_is_one_table_with_the_swept_param_leading_and_a_plot(measured, tmp_path):
    pytest.importorskip("matplotlib")
    shown = invoke("show", measured, "--plot", str(tmp_path / "p.png"))
    assert shown.exit_code == 0
    header = next(line for line in shown.output.splitlines() if "backend" in line)
    assert header.index("n_ops") < header.index("backend")
    assert shown.output.count("┏") == 1  # one table for the whole sweep
    assert "n_ops=50 torch cpu: speedup" in shown.output
    assert "n_ops=100 torch cpu: speedup" in shown.output
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_without_a_sweep_or_matplotlib_is_bad_input_before_running(tmp_path, monkeypatch):
    result = invoke("run", "-w", "matmul", "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 2
    assert "no selected experiment has one" in result.output
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    result = invoke("run", "-w", "sync_async", "--set", "n_ops=1,2", "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 2
    assert "pip install 'asyncbench[plot]'" in result.output


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["compare", "absent.json", "absent.json"], "no such file"),
        (["run", "-w", "matmul", "--baseline", "absent.json"], "no such file"),
        (["run", "-w", "matmul", "--max-regression", "lots"], "--max-regression"),
        (["run", "-w", "matmul", "-o", "same.json", "--csv", "same.json"], "the same file"),
        (["run", "-w", "matmul", "--markdown", "no/such/dir/s.md"], "does not exist"),
    ],
)
def test_bad_gate_input_is_exit_2_before_running(args, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke(*args)
    assert result.exit_code == 2
    assert fragment in result.output


def _one_case(path, samples: list[float]) -> str:
    """A results file of one numpy matmul case whose done times are `samples`."""
    from asyncbench.results import stats
    from asyncbench.results.model import VariantResult
    from tests.support.helpers import ok_result, report_of

    values = tuple(samples)
    variant = VariantResult(Samples(values, values), stats.summarize(values), stats.summarize(values), None)
    report_of([dataclasses.replace(ok_result("matmul[numpy,cpu]"), backend="numpy", variants={"matmul": variant})]).save(path)
    return str(path)


def test_compare_calls_a_3x_slowdown_from_6_samples_against_20_slower_and_exits_1(tmp_path):
    """Before: `+211.5%`, no interval (each median's needed 9 samples a side at the row's level), INCONCLUSIVE, exit 0."""
    base = _one_case(tmp_path / "base.json", [2.42e-3 * (1 + 0.01 * ((-1) ** i) * (i % 5)) for i in range(20)])
    slow = _one_case(tmp_path / "slow.json", [7.53e-3 * (1 + 0.05 * ((-1) ** i) * (i % 3)) for i in range(6)])
    result = invoke("compare", base, slow)
    assert result.exit_code == 1
    assert "SLOWER" in result.output
    (row,) = json.loads(invoke("compare", base, slow, "--format", "json").output)["rows"]
    assert row["label"] == "SLOWER"
    assert row["ratio_ci"][0] > 2.5


def test_compare_fails_on_inconclusive_unless_allowed(tmp_path):
    """One rule for INCONCLUSIVE (before: compare passed it, exit 0)."""
    base = _one_case(tmp_path / "base.json", [1.0, 1.1, 0.9])
    now = _one_case(tmp_path / "now.json", [1.05, 0.95])
    failing = invoke("compare", base, now)
    assert failing.exit_code == 1
    assert "INCONCLUSIVE" in failing.output
    assert "it needs at least 7 current samples" in failing.output.replace("\n", " ")
    assert invoke("compare", base, now, "--allow-inconclusive").exit_code == 0


TINY_CHECKED = """\
name: tiny
defaults: {backends: [numpy], devices: [cpu], max_time_s: 0.001}
experiments:
  - workload: matmul
    params: {size: 128, n_iter: 1, include_rng: false}
    expect: ["done_s.median > 0"]
"""


def test_quick_takes_the_rounds_a_check_needs_so_a_plain_truth_passes(tmp_path):
    """A ~50 µs case, its time cut to 1 ms (as a loaded machine cuts --quick's): before, sampling stopped after
    min_samples (6) rounds, 4 short of the check's 99.8% interval, and `done_s.median > 0` was INCONCLUSIVE (exit 1).
    Now the case takes the 10 rounds the check needs however slow the machine is. (A 3 µs case's 20 rounds drifted
    together in half its runs, the pool's spin after the machine's reference in its first rounds: no interval.)"""
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY_CHECKED)
    out = tmp_path / "r.json"
    result = invoke("run", str(path), "--quick", "--in-process", "--no-progress", "-o", str(out))
    assert result.exit_code == 0, result.output
    (row,) = json.loads(out.read_text())["results"]
    assert [c["verdict"] for c in row["checks"]] == ["pass"]
    assert row["sampling"]["rounds"] >= 10
    # read back: the check's interval is the one its stored samples give at its confidence (results.case_held)
    assert [c.bounds for c in Report.load(out).results[0].checks] == [tuple(row["checks"][0]["bounds"])]


def test_a_run_with_a_baseline_takes_the_samples_its_rows_need(tmp_path):
    """A baseline of 3 samples: a row needs 7 now for an interval at 98% (before: 6, min_samples, and INCONCLUSIVE)."""
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY_CHECKED.replace('    expect: ["done_s.median > 0"]\n', ""))
    first = tmp_path / "first.json"
    assert invoke("run", str(path), "--quick", "--in-process", "--no-progress", "-o", str(first)).exit_code == 0
    report = Report.load(first)
    (row,) = report.results
    kept = {
        name: dataclasses.replace(
            v,
            samples=Samples(v.samples.issue_s[:3], v.samples.done_s[:3]),
            issue_s=stats.summarize(v.samples.issue_s[:3]),
            done_s=stats.summarize(v.samples.done_s[:3]),
        )
        for name, v in row.variants.items()
    }
    assert row.sampling is not None
    sampled = dataclasses.replace(row.sampling, rounds=3)  # the rounds the kept samples came from (a reader holds it so)
    # the rounds' own figures (the clocks restated, illusion, gflops) left out: a reader holds each to the samples, and
    # these are fewer now
    rounds_own = ("issue_s", "done_s", "illusion", "gflops")
    figures = {name: value for name, value in row.metrics.items() if name not in rounds_own}
    bounds = {name: value for name, value in row.bounds.items() if name not in rounds_own}
    cut = dataclasses.replace(row, variants=kept, sampling=sampled, metrics=figures, bounds=bounds)
    dataclasses.replace(report, results=(cut,)).save(tmp_path / "base.json")
    out = tmp_path / "now.json"
    invoke("run", str(path), "--quick", "--in-process", "--no-progress", "--baseline", str(tmp_path / "base.json"), "-o", str(out))
    (now,) = json.loads(out.read_text())["results"]
    assert now["sampling"]["rounds"] >= 7


def test_quick_sizes_are_no_bigger_than_the_suites():
    """--quick ran training_memory with 10 minibatches where the suite runs 5: quick was no quicker than the suite."""
    from asyncbench.spec import config
    from asyncbench.workloads import BUILT_IN

    for experiment in config.default_suite().experiments:
        workload = BUILT_IN[experiment.workload]
        for param in workload.params:
            suite = experiment.params.get(param.name, param.default)
            if param.quick is not None and isinstance(param.quick, (int, float)) and not isinstance(param.quick, bool):
                assert param.quick <= suite, f"{experiment.workload}.{param.name}: quick {param.quick} > suite {suite}"


def test_show_plot_of_a_run_without_a_sweep_is_refused_before_its_table_is_printed(tmp_path):
    """A trial's `show cfg2.json --plot p.png` printed the whole table, then 'nothing to plot', exit 2: bad input is
    refused before anything is printed (docs/concepts/failures.md)."""
    pytest.importorskip("matplotlib")
    from tests.support.helpers import ok_result, report_of

    path = tmp_path / "r.json"
    report_of([ok_result("matmul[torch,cpu]")]).save(path)
    result = invoke("show", str(path), "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 2
    assert "nothing to plot" in result.output
    assert "matmul" not in result.output.split("nothing to plot")[0]
    assert not (tmp_path / "p.png").exists()
