"""One-command validation on a CUDA machine: `make gpu-check` (or `python benchmarks/gpu_check.py`).

Runs, and writes to results/<gpu-name>/:
1. the `gpu`- and `streams`-marked tests (pytest-gpu.txt);
2. the built-in suite and every config in configs/ on torch and cupy, on
   cuda (<name>.json and <name>.md, as `asyncbench run -o --markdown` writes
   them; the exit code of each is recorded, a failed gate is information);
3. the fidelity cross-checks, in this process: asyncbench's matmul median
   against torch.utils.benchmark, triton.testing.do_bench and
   cupyx.profiler.benchmark (those installed), and copy_overlap's copy GB/s
   against a plain CUDA-event measurement of the same copies
   (fidelity.json);
4. README.md: the device, the reference figures (theoretical FP32 peak from
   SMs × FP32 lanes × max clock, the host link's nominal and measured
   GB/s), the cross-checks and every step's exit code.
On a machine without CUDA it says so in one line and exits 0 having run nothing.

    python benchmarks/gpu_check.py [--out results] [--quick]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: FP32 (non-tensor) lanes per SM by compute capability major.minor, from NVIDIA's CUDA C programming guide
FP32_LANES_PER_SM = {"7.0": 64, "7.5": 64, "8.0": 64, "8.6": 128, "8.7": 128, "8.9": 128, "9.0": 128, "10.0": 128, "12.0": 128}
#: GB/s per lane of a PCIe link after encoding, by generation (x16 gen4: 31.5 GB/s)
PCIE_GBPS_PER_LANE = {3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
#: the cross-checks agree when asyncbench's median is within this ratio of the other tool's
AGREE = (0.9, 1.1)
MATMUL = {"size": 4096, "n_iter": 10, "dtype": "float32", "include_rng": False}
COPIES = {"size": 4096, "n_matrices": 16, "dtype": "float32"}


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def nvidia_smi(query: str) -> list[str] | None:
    """One row of `nvidia-smi --query-gpu` for GPU 0, or None where nvidia-smi is missing."""
    if shutil.which("nvidia-smi") is None:
        return None
    done = subprocess.run(
        ["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits", "-i", "0"], capture_output=True, text=True
    )
    return [v.strip() for v in done.stdout.strip().split(",")] if done.returncode == 0 else None


def run_step(label: str, command: list[str], log: Path | None = None) -> int:
    print(f"gpu-check: {label}: {' '.join(command)}", flush=True)
    if log is None:
        return subprocess.run(command, cwd=ROOT).returncode
    with log.open("w") as out:
        return subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT).returncode


def asyncbench_median_s(workload: str, params: dict[str, Any], metric: str | None = None) -> float:
    """asyncbench's figure for one torch case on cuda:0: the done-time median, or a metric."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import runner
    from asyncbench.results.model import Case, Settings
    from asyncbench.workloads import WORKLOADS

    case = Case(
        id="gpu-check",
        experiment="gpu-check",
        workload=workload,
        backend="torch",
        device="cuda:0",
        params=params,
        settings=Settings(warmup=2, min_samples=20, max_time_s=5.0, max_rel_noise=0.01),
    )
    result = runner.run_case(case, WORKLOADS[workload], get_backend("torch"))
    if result.status != "ok":
        raise RuntimeError(f"asyncbench {workload} failed: {result.reason}")
    if metric is not None:
        return result.metrics[metric]
    return next(iter(result.variants.values())).done_s.median


def cross_checks() -> dict[str, Any]:
    """Each other tool's figure for the same work, next to asyncbench's."""
    import torch
    import torch.utils.benchmark as torch_benchmark

    size, n_iter = MATMUL["size"], MATMUL["n_iter"]
    a = torch.randn(size, size, device="cuda:0")

    def products() -> None:
        for _ in range(n_iter):
            a @ a

    checks: dict[str, Any] = {"matmul": {"asyncbench_s": asyncbench_median_s("matmul", MATMUL)}}
    timer = torch_benchmark.Timer(stmt="products()", globals={"products": products})
    checks["matmul"]["torch.utils.benchmark_s"] = timer.blocked_autorange(min_run_time=2.0).median
    try:
        import triton.testing

        checks["matmul"]["triton.do_bench_s"] = triton.testing.do_bench(products, return_mode="median") / 1e3
    except ImportError:
        checks["matmul"]["triton.do_bench_s"] = None
    try:
        import cupy
        import cupyx.profiler

        x = cupy.random.standard_normal((size, size), dtype="float32")
        timing = cupyx.profiler.benchmark(lambda: [x @ x for _ in range(n_iter)], n_repeat=50, n_warmup=5)
        checks["matmul"]["cupyx.profiler.benchmark_s"] = float(statistics.median(timing.gpu_times[0]))
    except ImportError:
        checks["matmul"]["cupyx.profiler.benchmark_s"] = None
    checks["copy"] = {"asyncbench_gbps": asyncbench_median_s("copy_overlap", COPIES, "copy_gbps"), "events_gbps": copy_gbps_by_events()}
    checks["host_link"] = {"measured_d2h_gbps": copy_gbps_by_events(size=8192, count=4)}
    return checks


def copy_gbps_by_events(size: int = COPIES["size"], count: int = COPIES["n_matrices"], rounds: int = 20) -> float:
    """Device-to-host GB/s of `count` size² float32 copies into pinned buffers, timed by two CUDA events."""
    import torch

    sources = [torch.randn(size, size, device="cuda:0") for _ in range(count)]
    hosts = [torch.empty(size, size, pin_memory=True) for _ in range(count)]
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        start.record()
        for source, host in zip(sources, hosts, strict=True):
            host.copy_(source, non_blocking=True)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return count * size * size * 4 / statistics.median(times) / 1e9


def reference_figures(capability: str) -> dict[str, Any]:
    """Theoretical FP32 peak and the host link's nominal bandwidth (None where not known)."""
    import torch

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    clock = nvidia_smi("clocks.max.sm")
    lanes = FP32_LANES_PER_SM.get(capability)
    peak = 2 * sms * lanes * float(clock[0]) * 1e6 if clock and lanes else None
    link = nvidia_smi("pcie.link.gen.max,pcie.link.width.max")
    nominal = None
    if link and all(v.isdigit() for v in link):
        nominal = PCIE_GBPS_PER_LANE.get(int(link[0]), 0) * int(link[1]) or None
    return {
        "sms": sms,
        "fp32_lanes_per_sm": lanes,
        "max_sm_clock_mhz": clock[0] if clock else None,
        "fp32_peak_flops": peak,
        "pcie": link,
        "pcie_nominal_gbps": nominal,
    }


def ratio_line(name: str, ours: float, theirs: float | None) -> str:
    if theirs is None:
        return f"| {name} | — | not installed |"
    ratio = ours / theirs
    agrees = "agrees" if AGREE[0] <= ratio <= AGREE[1] else f"differs (outside {AGREE[0]}–{AGREE[1]})"
    return f"| {name} | {theirs * 1e3:.3f} ms | {ratio:.3f} ({agrees}) |"


def summary(gpu: str, steps: dict[str, int], checks: dict[str, Any] | str, reference: dict[str, Any]) -> str:
    lines = [f"# asyncbench gpu-check: {gpu}", "", f"{time.strftime('%Y-%m-%d %H:%M %Z')}, `make gpu-check`.", "", "## Steps", ""]
    lines += [f"- `{name}`: exit {code}" for name, code in steps.items()]
    lines += ["", "## Reference figures", ""]
    peak = reference.get("fp32_peak_flops")
    lines.append(f"- theoretical FP32 (non-tensor) peak: {peak / 1e12:.1f} TFLOP/s" if peak else "- theoretical FP32 peak: unknown")
    lines.append(
        f"  ({reference.get('sms')} SMs × {reference.get('fp32_lanes_per_sm')} lanes × 2 × {reference.get('max_sm_clock_mhz')} MHz)"
    )
    nominal = reference.get("pcie_nominal_gbps")
    lines.append(
        f"- host link: PCIe {reference.get('pcie')}, nominal {nominal:.1f} GB/s per direction" if nominal else "- host link: unknown"
    )
    lines += ["", "## Cross-checks", ""]
    if isinstance(checks, str):
        lines.append(f"not run: {checks}")
        return "\n".join(lines) + "\n"
    ours = checks["matmul"]["asyncbench_s"]
    flops = 2 * MATMUL["size"] ** 3 * MATMUL["n_iter"]
    lines += [
        f"matmul, {MATMUL['n_iter']} products of {MATMUL['size']}² float32: asyncbench median {ours * 1e3:.3f} ms "
        f"({flops / ours / 1e12:.1f} TFLOP/s"
        + (f", {flops / ours / peak:.0%} of the FP32 peak; TF32 tensor cores may exceed it)" if peak else ")"),
        "",
        "| tool | its median | asyncbench / it |",
        "|---|--:|--:|",
    ]
    for tool in ("torch.utils.benchmark", "triton.do_bench", "cupyx.profiler.benchmark"):
        lines.append(ratio_line(tool, ours, checks["matmul"].get(f"{tool}_s")))
    copy = checks["copy"]
    lines += [
        "",
        f"copy, {COPIES['n_matrices']} device-to-host copies of {COPIES['size']}² float32 into pinned memory: asyncbench "
        f"{copy['asyncbench_gbps']:.1f} GB/s, CUDA events {copy['events_gbps']:.1f} GB/s "
        f"(ratio {copy['asyncbench_gbps'] / copy['events_gbps']:.3f}); "
        f"a 256 MiB copy: {checks['host_link']['measured_d2h_gbps']:.1f} GB/s",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results", help="folder under which results/<gpu-name>/ is written")
    parser.add_argument("--quick", action="store_true", help="the suite and configs with --quick sizes")
    args = parser.parse_args()
    import torch

    if torch.version.cuda is None or not torch.cuda.is_available():
        why = "torch is built without CUDA" if torch.version.cuda is None else "no CUDA device visible"
        print(f"gpu-check: no CUDA here ({why}, torch {torch.__version__}): nothing run")
        return 0
    from asyncbench.backends.cuda_devices import cuda_devices

    device = cuda_devices()[0]
    out = ROOT / args.out / slug(device.name)
    out.mkdir(parents=True, exist_ok=True)
    quick = ["--quick"] if args.quick else []
    steps: dict[str, int] = {}
    steps["pytest -m 'gpu or streams'"] = run_step(
        "tests", [sys.executable, "-m", "pytest", "-m", "gpu or streams", "-q"], out / "pytest-gpu.txt"
    )
    runs: list[tuple[str, list[str]]] = [("default", [])] + [(p.stem, [str(p)]) for p in sorted((ROOT / "configs").glob("*.yaml"))]
    for name, config in runs:
        command = [
            sys.executable,
            "-m",
            "asyncbench",
            "run",
            *config,
            "-b",
            "torch",
            "-b",
            "cupy",
            "-d",
            "cuda",
            *quick,
            "--no-progress",
            "-o",
            str(out / f"{name}.json"),
            "--markdown",
            str(out / f"{name}.md"),
        ]
        steps[f"asyncbench run {name}"] = run_step(name, command, out / f"{name}.txt")
    reference = reference_figures(device.capability)
    checks: dict[str, Any] | str
    try:
        checks = cross_checks()
    except Exception as exc:  # noqa: BLE001 - a failing cross-check is reported in the summary; the runs above stand
        checks = f"{type(exc).__name__}: {exc}"
    (out / "fidelity.json").write_text(json.dumps({"device": device.__dict__, "reference": reference, "checks": checks}, indent=2) + "\n")
    (out / "README.md").write_text(summary(device.name, steps, checks, reference))
    print(f"gpu-check: wrote {out.relative_to(ROOT)}/ (README.md first)")
    tests_failed = steps["pytest -m 'gpu or streams'"] != 0
    # a run exits 1 for a failed or inconclusive check, which is a finding to read in README.md, not a broken check
    return 1 if tests_failed or any(code not in (0, 1) for code in steps.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
