"""benchmarks/gpu_check.py's steps on a machine without a GPU: the step list with the GPU-only checks, --quick and
--resume, and each GPU-only check skipping with its reason (the checks themselves need a lent GPU)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"
#: the GPU-only checks issue 36 asks for, in the order they run (shortest first)
CHECKS = (
    "sweep-gpus",
    "sync-debug-threads",
    "tf32",
    "nvml-identity",
    "frozen-kernel",
    "pinned",
    "hold",
    "hold-rescaled",
    "max-connections",
    "queued-trace",
    "jax-device-memory",
    "queued-hot",
    "bound",
    "ab-identical",
    "contexts",
)
#: the checks added after issue 36's fixes (the rescaled hold, the queued variant hot and traced, JAX's pool, a sweep's
#: GPUs): each guards itself, so calling its function without a GPU answers a skip, not an exception
SELF_GUARDED = (
    "bound",
    "hold-rescaled",
    "queued-hot",
    "jax-device-memory",
    "queued-trace",
    "sweep-gpus",
    "sync-debug-threads",
    "nvml-identity",
)


def _script() -> Any:
    spec = importlib.util.spec_from_file_location("gpu_check_under_test", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_plan_runs_the_gpu_only_checks_after_the_cross_checks_and_before_the_suite(tmp_path):
    gpu_check = _script()
    labels = [label for label, _, _ in gpu_check.plan_steps(tmp_path, quick=False)]
    assert labels[:2] == ["pytest -m 'gpu or streams'", "cross-checks"]
    assert labels[2 : 2 + len(CHECKS)] == [f"check {name}" for name in CHECKS]
    assert labels[2 + len(CHECKS)] == "asyncbench run default"
    plan = {label: (command, log) for label, command, log in gpu_check.plan_steps(tmp_path, quick=True)}
    command, log = plan["check tf32"]
    assert command[1:] == ["--check", "tf32", "--check-to", str(tmp_path / "checks" / "tf32.json")]
    assert log == tmp_path / "checks" / "tf32.txt"
    assert "--quick" not in command  # a check's sizes are its own
    assert "--quick" in plan["asyncbench run default"][0]
    assert "--quick" not in dict((label, c) for label, c, _ in gpu_check.plan_steps(tmp_path, quick=False))["asyncbench run default"]


def test_resume_runs_what_is_missing_then_what_was_stopped(tmp_path):
    gpu_check = _script()
    plan = gpu_check.plan_steps(tmp_path, quick=False)
    recorded = {"pytest -m 'gpu or streams'": 0, "cross-checks": 0, "check sweep-gpus": 0}
    recorded |= {"check hold": gpu_check.TIMED_OUT, "check contexts": 1}
    pending = [label for label, _, _ in gpu_check.pending_steps(plan, recorded)]
    assert pending[0] == "check sync-debug-threads"  # the first after sweep-gpus
    assert pending[-1] == "check hold"  # stopped: again, last
    assert "check contexts" not in pending  # it ran (a failed check is a finding, not a step to repeat)
    assert len(pending) == len(plan) - 4


@pytest.mark.parametrize("name", CHECKS)
def test_each_gpu_only_check_skips_with_its_reason_without_a_gpu(name):
    torch = pytest.importorskip("torch")
    if torch.version.cuda is not None and torch.cuda.is_available():
        pytest.skip("a GPU is here: the check would run")
    answer = _script().gpu_checks().run(name)
    assert answer == {"skipped": f"no CUDA device for torch {torch.__version__}"}


@pytest.mark.parametrize("name", SELF_GUARDED)
def test_each_new_check_function_skips_with_a_reason_when_called_without_a_gpu(name):
    torch = pytest.importorskip("torch")
    if torch.version.cuda is not None and torch.cuda.is_available():
        pytest.skip("a GPU is here: the check would run")
    answer = _script().gpu_checks().CHECKS[name]()  # the function itself, not run()'s guard in front of it
    assert answer == {"skipped": f"no CUDA device for torch {torch.__version__}"}


def test_resume_picks_up_the_new_checks_where_a_check_stopped_before_them(tmp_path):
    gpu_check = _script()
    plan = gpu_check.plan_steps(tmp_path, quick=False)
    old = ("hold", "contexts", "pinned", "tf32", "max-connections", "ab-identical", "frozen-kernel", "sync-debug-threads", "nvml-identity")
    recorded = {"pytest -m 'gpu or streams'": 0, "cross-checks": 0, **{f"check {name}": 0 for name in old}}
    recorded["check queued-hot"] = gpu_check.TIMED_OUT
    pending = [label for label, _, _ in gpu_check.pending_steps(plan, recorded)]
    assert pending[:5] == ["check sweep-gpus", "check hold-rescaled", "check queued-trace", "check jax-device-memory", "check bound"]
    assert pending[5] == "asyncbench run default"
    assert pending[-1] == "check queued-hot"


def test_the_trace_reading_matches_kernels_loosely_and_in_order_of_start():
    gpu_checks = _script().gpu_checks()
    trace = {
        "traceEvents": [
            {"cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4, CUDAFunctorOnSelf_add<float>>", "ts": 900},
            {"cat": "kernel", "name": "spin_kernel(long)", "ts": 100, "dur": 700},
            {"cat": "cpu_op", "name": "aten::add", "ts": 50},
            {"cat": "Kernel", "name": "void at::native::vectorized_elementwise_kernel<4, CUDAFunctorOnSelf_add<float>>", "ts": 850},
        ]
    }
    holds = gpu_checks.holds.kernels(trace, gpu_checks.holds.HOLD_KERNEL)
    adds = gpu_checks.holds.kernels(trace, gpu_checks.holds.ADD_KERNEL)
    assert [e["name"] for e in holds] == ["spin_kernel(long)"]
    assert [e["ts"] for e in adds] == [850, 900]  # the profiler's op on the host is no kernel


def test_a_check_step_writes_its_answer_and_exits_0_without_a_gpu(tmp_path):
    torch = pytest.importorskip("torch")
    if torch.version.cuda is not None and torch.cuda.is_available():
        pytest.skip("a GPU is here: the check would run")
    answer = tmp_path / "checks" / "frozen-kernel.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--check", "frozen-kernel", "--check-to", str(answer)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(answer.read_text())["skipped"].startswith("no CUDA device for torch")


def test_the_readme_says_which_checks_were_verified_skipped_or_not_run(tmp_path):
    gpu_check = _script()
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "hold.json").write_text(json.dumps({"asked_s": 0.05, "verified": False}))
    (tmp_path / "checks" / "contexts.json").write_text(json.dumps({"skipped": "JAX has no GPU here: cuda plugin missing"}))
    (tmp_path / "checks" / "tf32.json").write_text(json.dumps({"torch_gflops": {"TF32": 400000.0}, "verified": True}))
    lines = gpu_check.check_lines(tmp_path)
    assert lines[1] == "## GPU-only checks"
    assert '- `hold`: NOT verified: `{"asked_s": 0.05}`' in lines
    assert "- `contexts`: skipped, JAX has no GPU here: cuda plugin missing" in lines
    assert '- `tf32`: verified: `{"torch_gflops": {"TF32": 400000.0}}`' in lines
    assert "- `pinned`: not run (see checks/pinned.txt)" in lines


def test_the_connections_check_reads_done_medians_from_a_real_gpus_results_file():
    """The one piece of a GPU-only check that reads asyncbench's own files, against the last real GPU run's file."""
    real = json.loads((SCRIPT.parents[1] / "results" / "nvidia-h100-80gb-hbm3" / "default.json").read_text())
    medians = _script().gpu_checks().probes.medians(real)
    assert medians
    assert all(isinstance(v, float) and v > 0 for v in medians.values())


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="no /proc here")
def test_the_sweep_check_tells_a_cpu_job_by_its_environment():
    gpu_checks = _script().gpu_checks()
    environment = {"PATH": "/usr/bin:/bin", "SUBMITIT_LOCAL_JOB_ID": "4242", "CUDA_VISIBLE_DEVICES": ""}
    ready = "import sys, time; print('ready', flush=True); time.sleep(30)"
    with subprocess.Popen([sys.executable, "-c", ready], env=environment, stdout=subprocess.PIPE, text=True) as job:
        try:
            assert job.stdout is not None
            assert job.stdout.readline() == "ready\n"  # exec'd: /proc shows its own environment, not its parent's
            assert gpu_checks.runs.job_of(str(job.pid)) == ("4242", "")
        finally:
            job.kill()
    assert gpu_checks.runs.job_of("0") == (None, None)  # no such process: no job


@pytest.mark.parametrize(
    ("labels", "verified"),
    [
        ({"SAME", "NOT SLOWER"}, True),
        ({"SAME", "INCONCLUSIVE"}, True),
        ({"INCONCLUSIVE"}, None),  # the first H100 check at 60 s: nothing decided, nothing verified
        ({"SAME", "FASTER"}, False),
        ({"SLOWER"}, False),
        (set(), False),  # ab gave no ratio at all
    ],
)
def test_ab_identical_verifies_only_decided_verdicts_and_fails_a_wrong_one(labels, verified):
    assert _script().gpu_checks().runs.identical_verdict(labels) is verified


def test_ab_identical_reports_its_blocks_spread_and_none_under_two_blocks():
    spread = _script().gpu_checks().runs._spread
    assert spread([0.01, -0.02, 0.03]) == pytest.approx(0.0251661, rel=1e-5)
    assert spread([0.1]) is None
