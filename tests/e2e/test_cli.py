"""The CLI as a user meets it: exit codes, messages and files (what it imports: tests/test_layers.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from asyncbench import cli
from asyncbench.engine import runner
from asyncbench.workloads import BUILT_IN
from tests.support.cli import invoke as cli_invoke
from tests.support.helpers import ok_result, report_of


@pytest.fixture
def invoke():
    return cli_invoke


def test_version_and_help_with_examples(invoke):
    assert invoke("--version").output.startswith("asyncbench, version")
    help_text = invoke("run", "--help").output
    assert "Examples" in help_text
    assert "--quick" in help_text
    # as docs/concepts/failures.md's exit 1: a case lost (errored or skipped now) fails; one the run did not plan is listed
    assert "ok in the baseline and errored or skipped now (a baseline case this run did not plan is listed, not failed)" in " ".join(
        help_text.split()
    )
    assert "Examples" in invoke("validate", "--help").output  # as every other command


def test_each_command_is_listed_with_its_whole_line(invoke):
    """The commands list (and the generated reference, which reads the same short help) never cuts a summary."""
    from asyncbench.cli.group import SUMMARIES

    assert set(SUMMARIES) == set(cli.main.commands)
    listed = invoke("--help").output
    for name, summary in SUMMARIES.items():
        assert f"{name} " in listed, name
        assert summary in " ".join(listed.split()), name
    assert "..." not in listed.split("Commands:")[1].split("Examples:")[0]


def test_run_writes_json_with_the_metrics_and_show_renders_it(invoke, tmp_path):
    out = tmp_path / "r.json"
    result = invoke("run", "-w", "sync_async", "-d", "cpu", "-b", "torch", "--quick", "--no-progress", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "sync_async" in result.output
    assert "speedup" in result.output
    data = json.loads(out.read_text())
    (row,) = data["results"]
    assert row["status"] == "ok"
    assert row["id"] == "sync_async[torch,cpu,n_ops=1000]"
    assert set(row["metrics"]) == {"speedup", "t1_s", "t2_s", "t3_s", "model_error"}
    assert set(row["variants"]) == {"sync", "async"}
    assert len(row["variants"]["async"]["samples"]["done_s"]) == row["variants"]["async"]["done_s"]["n"]
    assert data["environment"]["frameworks"]["torch"]["version"]
    shown = invoke("show", str(out))
    assert shown.exit_code == 0
    assert "speedup" in shown.output
    for fmt in ("markdown", "csv", "json"):
        assert invoke("show", str(out), "--format", fmt).exit_code == 0


def test_devices_tells_the_truth_without_cuda(invoke):
    import torch

    statuses = json.loads(invoke("devices", "--format", "json").output)
    torch_cuda = [s for s in statuses if s["backend"] == "torch" and s["device"].startswith("cuda")]
    assert any(s["available"] for s in torch_cuda) == torch.cuda.is_available()
    if not torch.cuda.is_available():
        assert torch_cuda[0]["detail"]


def test_misspelled_key_is_one_line_and_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("experiments:\n  - workload: sync_async\n    parms: {n_ops: 10}\n")
    proc = subprocess.run([sys.executable, "-m", "asyncbench", "run", str(bad)], capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    assert f"{bad}:3" in lines[0]
    assert "did you mean 'params'" in lines[0]
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["run", "-d", "cdua:0"],
        ["run", "-w", "nope"],
        ["run", "-w", "matmul", "-o", "/nonexistent-dir/r.json"],
        ["show", "/nonexistent.json"],
        ["validate", "/nonexistent.yaml"],
    ],
)
def test_bad_input_exits_2_before_running(invoke, args):
    result = CliRunner().invoke(cli.main, args)
    assert result.exit_code == 2
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_strict_turns_a_skip_into_exit_1(invoke):
    result = invoke("run", "-w", "matmul", "-b", "cupy", "-d", "cuda", "--no-progress", "--strict")
    assert result.exit_code == 1
    assert "skipped" in result.output


def test_erroring_case_gives_exit_3_and_keeps_the_others(invoke, tmp_path, monkeypatch):
    def broken_setup(backend, device, params):
        raise RuntimeError("CUDA error: an illegal memory access (simulated)")

    monkeypatch.setattr(BUILT_IN["matmul"], "setup", broken_setup)
    out = tmp_path / "r.json"
    result = invoke("run", "-w", "matmul", "-w", "sync_async", "-b", "numpy", "--quick", "--no-progress", "--in-process", "-o", str(out))
    assert result.exit_code == 3
    statuses = {r["workload"]: r["status"] for r in json.loads(out.read_text())["results"]}
    assert statuses == {"matmul": "error", "sync_async": "ok"}


def test_interrupt_saves_finished_cases_and_exits_130(invoke, tmp_path, monkeypatch):
    real_run_case = runner.run_case

    def interrupt_on_sync_async(case, workload, backend, *asked):
        if case.workload == "sync_async":
            raise KeyboardInterrupt
        return real_run_case(case, workload, backend, *asked)

    monkeypatch.setattr(runner, "run_case", interrupt_on_sync_async)
    out = tmp_path / "r.json"
    result = invoke("run", "-w", "matmul", "-w", "sync_async", "-b", "numpy", "--quick", "--no-progress", "--in-process", "-o", str(out))
    assert result.exit_code == 130
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    assert [r["workload"] for r in data["results"]] == ["matmul"]


def test_a_results_file_given_to_run_and_a_config_given_to_show_say_what_to_do(tmp_path):
    saved = tmp_path / "r.json"
    report_of([ok_result("m[torch,cpu]")]).save(saved)
    ran = CliRunner().invoke(cli.main, ["run", str(saved)])
    assert ran.exit_code == 2
    assert "this is a results file" in ran.output
    assert "asyncbench show" in ran.output
    shown = CliRunner().invoke(cli.main, ["show", "configs/ci-gate.yaml"])
    assert shown.exit_code == 2
    assert "this is a config, not a results file" in shown.output


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["run", "--threads", "0"],
            "asyncbench: error: run: invalid value for '--threads': 0 is not in the range x>=1 (asyncbench run --help)",
        ),
        (["run", "--bound-verify", "jti"], "asyncbench: error: run: invalid value for '--bound-verify': "),
        (["run", "--no-such-option"], "asyncbench: error: run: no such option '--no-such-option' (asyncbench run --help)"),
        (["--no-such-option"], "asyncbench: error: no such option '--no-such-option' (asyncbench --help)"),
        (["no-such-command"], "asyncbench: error: no such command 'no-such-command' (asyncbench --help)"),
    ],
)
def test_a_usage_error_is_one_line_in_the_tools_own_form_exit_2(args, line):
    # click's own was three lines (Usage, Try ... --help, Error: ...) where every other mistake is one line
    result = cli_invoke(*args, catch_exceptions=True)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    (said,) = result.stderr.strip().splitlines()
    assert said.startswith(line), said
