"""Whole asyncbench runs watched from outside on a real GPU: one CUDA context per GPU (nvidia-smi), a sweep's jobs
on their own GPUs, CUDA_DEVICE_MAX_CONNECTIONS recorded, and `ab` on identical sides."""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .probes import ROOT, medians, no_cuda, no_jax_gpu, run_json

#: how often nvidia-smi is asked for the compute processes during the torch + JAX run
POLL_S = 0.5

#: sweep-gpus: how often nvidia-smi is asked for the compute processes while the local sweep runs
SWEEP_POLL_S = 0.2


def _compute_processes() -> dict[str, list[str]]:
    """GPU bus id -> the pids with a context on it (nvidia-smi --query-compute-apps)."""
    done = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=gpu_bus_id,pid", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
    )
    found: dict[str, list[str]] = {}
    for line in done.stdout.strip().splitlines():
        if "," in line:
            bus, pid = (v.strip() for v in line.split(",", 1))
            found.setdefault(bus, []).append(pid)
    return found


def contexts() -> dict[str, Any]:  # 95 s on an H100: the quick suite on torch and JAX
    if shutil.which("nvidia-smi") is None:
        return {"skipped": "nvidia-smi is not installed"}
    no_jax = no_jax_gpu()
    if no_jax:
        return {"skipped": no_jax}
    most: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "asyncbench", "run", "-b", "torch", "-b", "jax", "-d", "cuda", "--quick", "--no-progress"]
        with subprocess.Popen([*command, "-o", str(Path(folder) / "r.json")], cwd=ROOT, stdout=subprocess.DEVNULL) as run:
            while run.poll() is None:
                for bus, pids in _compute_processes().items():
                    most[bus] = max(most.get(bus, 0), len(pids))
                time.sleep(POLL_S)
    return {"run_exit": run.returncode, "most_contexts_per_gpu": most, "verified": bool(most) and max(most.values()) == 1}


def max_connections() -> dict[str, Any]:  # 15 s on an H100: two quick runs of two workloads
    arguments = ["run", "-w", "multi_device", "-w", "small_ops", "-b", "torch", "-d", "cuda", "--quick"]
    with tempfile.TemporaryDirectory() as folder:
        default = run_json(arguments, Path(folder) / "default.json", {})
        one = run_json(arguments, Path(folder) / "one.json", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"})
    recorded = (one.get("environment") or {}).get("gpu_variables", {}).get("CUDA_DEVICE_MAX_CONNECTIONS")
    return {
        "exits": [default["exit"], one["exit"]],
        "done_median_s": {"default": medians(default), "CUDA_DEVICE_MAX_CONNECTIONS=1": medians(one)},
        "recorded": recorded,
        "verified": recorded == "1",
    }


def ab_identical() -> dict[str, Any]:  # 91 s on an H100 gated at 60 s; about 150 s at ab's default 2 minutes
    """Identical sides: every ratio SAME or NOT SLOWER (a gate that passes), none SLOWER or FASTER. Gated at ab's
    default time: at 60 s the first H100 check left all three ratios INCONCLUSIVE, which verifies nothing."""
    with tempfile.TemporaryDirectory() as folder:
        arguments = ["ab", "-w", "matmul", "-w", "sync_async", "-b", "torch", "-d", "cuda", "--allow-inconclusive"]
        sides = ["--base-env", "GPU_CHECK_SIDE=base", "--head-env", "GPU_CHECK_SIDE=head"]
        found = run_json([*arguments, *sides], Path(folder) / "ab.json", {})
    ratios = {f"{case.get('id')} {r.get('name')}": r for case in found.get("cases", ()) for r in case.get("ratios") or ()}
    labels = {name: r.get("label") for name, r in ratios.items()}
    return {
        "exit": found["exit"],
        "labels": labels,
        # why a label is what it is: the interval against the margin, and the blocks it came from
        "ratio_ci": {name: r.get("ratio_ci") for name, r in ratios.items()},
        "blocks": {name: len(r.get("block_log_ratios") or ()) for name, r in ratios.items()},
        # the blocks' spread (SD of their log-ratios): an H200 host's unpinned sync_async blocks spread 9-12%, pinned
        # to one core 0.7-1.6% (results/nvidia-h200/README.md); None under two blocks
        "block_sd": {name: _spread(r.get("block_log_ratios") or ()) for name, r in ratios.items()},
        "verified": identical_verdict(set(labels.values())),
    }


def _spread(log_ratios: Any) -> float | None:
    """The sample SD of a verdict's block log-ratios (about the relative spread), None under two blocks."""
    values = [float(x) for x in log_ratios]
    return statistics.stdev(values) if len(values) >= 2 else None


def identical_verdict(labels: set[str]) -> bool | None:
    """Identical sides verified: no label at all, or a wrong one (SLOWER, FASTER), fails; none decided (every label
    INCONCLUSIVE) is a figure, not a pass (README.md: "measured")."""
    if not labels or labels & {"SLOWER", "FASTER"}:
        return False
    return None if labels == {"INCONCLUSIVE"} else True


def job_of(pid: str) -> tuple[str | None, str | None]:
    """A compute process's local-executor job (its SUBMITIT_LOCAL_JOB_ID, which a job's workers inherit; None for a
    process of no job) and its CUDA_VISIBLE_DEVICES (None where unset or unreadable)."""
    try:
        pairs = (entry.split("=", 1) for entry in Path(f"/proc/{pid}/environ").read_bytes().decode(errors="replace").split("\0"))
        environment = dict(pair for pair in pairs if len(pair) == 2)
    except OSError:
        return None, None
    return environment.get("SUBMITIT_LOCAL_JOB_ID"), environment.get("CUDA_VISIBLE_DEVICES")


def sweep_gpus() -> dict[str, Any]:  # 3 s to skip on one GPU: a local sweep of two quick jobs, one after the other on the GPU
    """A local sweep of a cuda:0 torch job and a CPU job: the CPU job's processes never open a GPU, and at most one
    job has processes on a GPU at a time (nvidia-smi polled every SWEEP_POLL_S)."""
    why = no_cuda()
    if why:
        return {"skipped": why}
    import torch

    if torch.cuda.device_count() < 2:
        return {"skipped": f"one GPU here ({torch.cuda.device_count()}): the sweep's GPU isolation needs 2 or more"}
    if shutil.which("nvidia-smi") is None:
        return {"skipped": "nvidia-smi is not installed"}
    query = ["nvidia-smi", "--query-compute-apps=pid,gpu_uuid", "--format=csv,noheader"]
    cpu_job_on_gpu: set[str] = set()
    most_jobs, seen_jobs, others = 0, set[str](), set[str]()
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, "-m", "asyncbench", "run", "-w", "sync_async", "-b", "torch", "-d", "cuda:0", "-d", "cpu"]
        command += ["--quick", "--per", "case", "--executor", "local", "--gpus-per-node", "1", "--no-progress"]
        command += ["--job-dir", str(Path(folder) / "sweep"), "-o", str(Path(folder) / "r.json")]
        with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) as run:
            while run.poll() is None:
                rows = subprocess.run(query, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
                jobs: set[str] = set()
                for pid in {row.split(",", 1)[0].strip() for row in rows if "," in row} - {str(os.getpid())}:
                    job, visible = job_of(pid)
                    if job is None:  # the sweep's own process, or another user's: not a job's
                        others.add(pid)
                        continue
                    jobs.add(job)
                    if visible == "":  # the local executor hides every GPU from a CPU job
                        cpu_job_on_gpu.add(job)
                most_jobs, seen_jobs = max(most_jobs, len(jobs)), seen_jobs | jobs
                time.sleep(SWEEP_POLL_S)
    return {
        "run_exit": run.returncode,
        "jobs_seen_on_a_gpu": sorted(seen_jobs),
        "cpu_jobs_on_a_gpu": sorted(cpu_job_on_gpu),
        "most_jobs_on_gpus_at_once": most_jobs,
        "other_pids_on_a_gpu": sorted(others),
        "verified": bool(seen_jobs) and not cpu_job_on_gpu and most_jobs <= 1,
    }
