"""Every conclusion follows from the measured uncertainty: exit codes that cannot pass by accident, and output a person reads."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

from click.testing import CliRunner
from rich.console import Console

from asyncbench import cli
from asyncbench.report import markdown, terminal, view
from asyncbench.results import schema as results
from asyncbench.results import stats, units
from asyncbench.results.model import OK, SKIPPED, Result, Samples, VariantResult

UNDECIDABLE = """\
name: undecidable
defaults: {backends: [torch], devices: [cpu], min_samples: 3, max_samples: 3}
experiments:
  - workload: sync_async
    params: {n_ops: 100}
    expect: ["speedup >= 0.5"]
"""


def invoke(*args: str):
    return CliRunner().invoke(cli.main, list(args), catch_exceptions=False)


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


def _report(rows):
    return dataclasses.replace(results.new_report({}, {"cpu": "x"}), results=tuple(rows))


def _ok(case_id: str, n: int = 12) -> Result:
    values = tuple(1.0 + i / 100 for i in range(n))
    variant = VariantResult(Samples(values, values), stats.summarize(values), stats.summarize(values), None)
    return Result(case_id, "m", "matmul", "torch", "cpu", {}, OK, variants={"matmul": variant})


def test_compare_fails_for_a_case_lost_since_the_baseline_and_refuses_unrelated_files(tmp_path):
    baseline, now, other = tmp_path / "b.json", tmp_path / "n.json", tmp_path / "o.json"
    results.save(_report([_ok("m[torch,cpu]")]), baseline)
    results.save(_report([dataclasses.replace(_ok("m[torch,cpu]"), status="error", reason="boom", variants={})]), now)
    results.save(_report([_ok("m[numpy,cpu]")]), other)
    lost = invoke("compare", str(baseline), str(now))
    assert lost.exit_code == 1
    assert "not run now: m[torch,cpu]" in lost.output
    unrelated = CliRunner().invoke(cli.main, ["compare", str(baseline), str(other)])
    assert unrelated.exit_code == 2
    assert "no case in common" in unrelated.output
    same = invoke("compare", str(baseline), str(baseline))
    assert same.exit_code == 0
    assert "cannot see the machine changing speed" in same.output


def test_a_results_file_given_to_run_and_a_config_given_to_show_say_what_to_do(tmp_path):
    saved = tmp_path / "r.json"
    results.save(_report([_ok("m[torch,cpu]")]), saved)
    ran = CliRunner().invoke(cli.main, ["run", str(saved)])
    assert ran.exit_code == 2
    assert "this is a results file" in ran.output
    assert "asyncbench show" in ran.output
    shown = CliRunner().invoke(cli.main, ["show", "configs/ci-gate.yaml"])
    assert shown.exit_code == 2
    assert "this is a config, not a results file" in shown.output


def test_results_files_get_the_permissions_the_umask_gives(tmp_path):
    path = tmp_path / "r.json"
    previous = os.umask(0o022)
    try:
        results.save(_report([_ok("m[torch,cpu]")]), path)
    finally:
        os.umask(previous)
    assert path.stat().st_mode & 0o777 == 0o644


def _skipped(backend: str, reason: str, unavailable: bool) -> Result:
    return Result(f"m[{backend},cpu]", "m", "matmul", backend, "cpu", {}, SKIPPED, reason=reason, unavailable=unavailable)


def test_an_absent_backend_is_one_line_not_a_row_per_case():
    report = _report([_ok("m[torch,cpu]"), *(_skipped("cupy", "cupy not installed (pip install ...)", True) for _ in range(3))])
    console = Console(width=80, record=True)
    terminal.print_report(view.build(report), console)
    text = console.export_text()
    assert not [line for line in text.splitlines() if "cupy" in line and "│" in line]  # no table rows
    assert text.count("cupy: 3 cases skipped — cupy not installed") == 1


def test_a_cpu_table_fits_80_columns_without_columns_that_carry_nothing():
    console = Console(width=80, record=True)
    terminal.print_report(view.build(_report([_ok("m[torch,cpu]")])), console)
    text = console.export_text()
    header = next(line for line in text.splitlines() if "variant" in line)
    assert "device time" not in header
    assert "issue" not in header
    assert max(len(line) for line in text.splitlines() if "│" in line or "┃" in line) <= 80


def test_printed_numbers_never_use_e_notation():
    assert units.percent(49.0) == "4900%"
    assert units.number(3.76e5) == "376000"
    assert "e" not in view.spread(stats.summarize([1e-9 * (1 + i) for i in range(10)])).split()[-1]


def test_markdown_starts_with_a_headline_and_the_environment(tmp_path):
    report = dataclasses.replace(
        _report([_ok("m[torch,cpu]"), _skipped("numpy", "numpy cannot", False)]),
        environment={
            "cpu": "Test CPU",
            "cpu_affinity": 2,
            "python": "3.11",
            "git_sha": "0123456789abcdef",
            "frameworks": {"torch": {"version": "2.13.0", "threads": 2}},
        },
    )
    lines = markdown.markdown(view.build(report)).splitlines()
    assert lines[0] == "## asyncbench: 2 cases: 1 ok, 1 skipped"
    assert "Test CPU" in lines[2]
    assert "torch 2.13.0 (2 threads)" in lines[2]
    assert "git 0123456789ab" in lines[2]


def test_output_cut_short_by_head_keeps_the_exit_code(tmp_path):
    """`asyncbench show big.json | head -1` must not turn into exit 1 from a broken pipe."""
    path = tmp_path / "big.json"
    results.save(_report([_ok(f"m{i}[torch,cpu]") for i in range(400)]), path)
    process = subprocess.Popen([sys.executable, "-m", "asyncbench", "show", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    process.stdout.readline()
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0
    assert b"Traceback" not in stderr
    assert b"BrokenPipe" not in stderr


def test_show_reads_version_1_files_whose_intervals_were_min_max():
    raw = json.loads(results.dumps(_report([_ok("m[torch,cpu]")])))
    raw["schema_version"] = 1
    for row in raw["results"]:
        for key in ("bounds", "sampling", "unavailable", "asynchronous"):
            row.pop(key)
    report = results.from_dict(raw)
    assert report.results[0].bounds == {}
    assert report.results[0].sampling is None


def _metrics_result(workload: str, metrics, bounds, asynchronous=False) -> Result:
    return Result("c", "c", workload, "torch", "cpu", {}, OK, metrics=metrics, bounds=bounds, asynchronous=asynchronous)


def test_a_wide_interval_is_no_saving_however_large_the_median():
    """The issue's example: 15% of the wait saved, from data at ±93%."""
    from asyncbench.workloads import WORKLOADS

    wide = _metrics_result("barrier", {"waitall_s": 0.139, "wait_one_s": 0.118, "saved_fraction": 0.15}, {"saved_fraction": (-0.6, 0.8)})
    reading = WORKLOADS["barrier"].reading(wide)
    assert reading.startswith("no difference shown")
    assert "of the wait saved" not in reading
    clear = _metrics_result("barrier", {"waitall_s": 0.3, "wait_one_s": 0.1, "saved_fraction": 0.66}, {"saved_fraction": (0.6, 0.7)}, True)
    assert "of the wait saved" in WORKLOADS["barrier"].reading(clear)


def test_a_negative_conversion_cost_is_never_stated_as_a_cost():
    from asyncbench.workloads import WORKLOADS

    metrics = {
        "slowdown_item": 0.8,
        "slowdown_numpy": 0.9,
        "slowdown_print": 1.04,
        "item_cost_s": -0.016,
        "numpy_cost_s": -0.0162,
        "print_cost_s": 0.0003,
    }
    bounds = {
        "slowdown_item": (0.4, 2.3),
        "slowdown_numpy": (0.5, 2.0),
        "slowdown_print": (0.7, 1.5),
        "item_cost_s": (-0.05, 0.02),
        "numpy_cost_s": (-0.05, 0.02),
        "print_cost_s": (-0.01, 0.01),
    }
    reading = WORKLOADS["conversion"].reading(_metrics_result("conversion", metrics, bounds))
    assert reading.startswith("no conversion cost shown")
    assert "-16" not in reading


def test_a_case_stopped_by_time_says_how_far_it_got():
    from asyncbench.results.model import Sampling

    result = dataclasses.replace(_ok("m[torch,cpu]"), sampling=Sampling(5, 3.1, "max_time_s", 0.52, 0.03, 3.0))
    note = view.sampling_note(result)
    assert "stopped by max_time_s (3 s) after 5 rounds at ±52%" in note
    assert "±3% target" in note
    assert view.sampling_note(dataclasses.replace(result, sampling=Sampling(40, 1.0, "max_rel_noise", 0.02, 0.03, 3.0))) is None


def test_a_cpu_only_selection_never_plans_a_cupy_case():
    from asyncbench.backends import get_backend
    from asyncbench.engine import runner
    from asyncbench.spec import config, overrides

    plan = overrides.apply_overrides(config.default_suite(), devices=["cpu"], workloads=["matmul"])
    cases = list(runner.plan(plan, {name: get_backend(name) for name in plan.experiments[0].backends}))
    assert "cupy" not in {case.backend for case, _ in cases}
    assert {"numpy", "torch"} <= {case.backend for case, _ in cases}
