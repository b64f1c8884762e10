"""The CLI as a user meets it: exit codes, messages, files, and what it imports."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from asyncbench import cli
from asyncbench.engine import runner
from asyncbench.workloads import WORKLOADS


@pytest.fixture
def invoke():
    def _invoke(*args: str):
        return CliRunner().invoke(cli.main, list(args), catch_exceptions=False)

    return _invoke


@pytest.mark.parametrize("argv", [["--help"], ["list"], ["list", "--format", "json"], ["validate", "configs/async-computation.yaml"]])
def test_light_commands_import_no_framework(argv):
    code = (
        "import sys\n"
        "from asyncbench.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print('FRAMEWORKS', sorted(m for m in ('torch', 'cupy', 'jax', 'mxnet') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "FRAMEWORKS []" in out


def test_show_and_compare_import_no_framework(tmp_path):
    from asyncbench.results import schema as results
    from asyncbench.results import stats
    from asyncbench.results.model import OK, Result, Samples, VariantResult

    samples = (1.0, 1.1, 0.9)
    variant = VariantResult(Samples(samples, samples), stats.summarize(samples), stats.summarize(samples), None)
    row = Result("m[torch,cpu]", "m", "matmul", "torch", "cpu", {}, OK, variants={"matmul": variant})
    path = tmp_path / "r.json"
    results.save(results.new_report({}, {}, (row,)), path)
    code = (
        "import sys\n"
        "from asyncbench.cli import main\n"
        f"for argv in (['show', {str(path)!r}], ['compare', {str(path)!r}, {str(path)!r}]):\n"
        "    try:\n        main(argv)\n    except SystemExit as e:\n        assert e.code == 0, e.code\n"
        "print('FRAMEWORKS', sorted(m for m in ('torch', 'cupy', 'jax', 'mxnet') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "SAME" in out
    assert "FRAMEWORKS []" in out


def test_version_and_help_with_examples(invoke):
    assert invoke("--version").output.startswith("asyncbench, version")
    help_text = invoke("run", "--help").output
    assert "Examples" in help_text
    assert "--quick" in help_text


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

    monkeypatch.setattr(WORKLOADS["matmul"], "setup", broken_setup)
    out = tmp_path / "r.json"
    result = invoke("run", "-w", "matmul", "-w", "sync_async", "-b", "numpy", "--quick", "--no-progress", "--in-process", "-o", str(out))
    assert result.exit_code == 3
    statuses = {r["workload"]: r["status"] for r in json.loads(out.read_text())["results"]}
    assert statuses == {"matmul": "error", "sync_async": "ok"}


def test_interrupt_saves_finished_cases_and_exits_130(invoke, tmp_path, monkeypatch):
    real_run_case = runner.run_case

    def interrupt_on_sync_async(case, workload, backend, on_progress=None):
        if case.workload == "sync_async":
            raise KeyboardInterrupt
        return real_run_case(case, workload, backend, on_progress)

    monkeypatch.setattr(runner, "run_case", interrupt_on_sync_async)
    out = tmp_path / "r.json"
    result = invoke("run", "-w", "matmul", "-w", "sync_async", "-b", "numpy", "--quick", "--no-progress", "--in-process", "-o", str(out))
    assert result.exit_code == 130
    data = json.loads(out.read_text())
    assert data["interrupted"] is True
    assert [r["workload"] for r in data["results"]] == ["matmul"]
