"""One-command validation on a CUDA machine: `make gpu-check` (or `python benchmarks/gpu_check.py`).

Runs, and writes to results/<gpu-name>/ (results/<gpu-name>/quick/ with --quick):
1. the `gpu`- and `streams`-marked tests (pytest-gpu.txt);
2. the fidelity cross-checks, in a process of their own: asyncbench's matmul median
   against torch.utils.benchmark, triton.testing.do_bench and
   cupyx.profiler.benchmark (those installed), and copy_overlap's copy GB/s
   against a plain CUDA-event measurement of the same copies
   (fidelity.json);
3. the built-in suite and every config in configs/ on torch and cupy, on
   cuda (<name>.json and <name>.md, as `asyncbench run -o --markdown` writes
   them; the exit code of each is recorded, a failed gate is information);
4. the checks only a GPU can answer (gpu_checks/: the hold calibrated cold
   and hot, CUDA contexts per GPU during a torch + JAX run, pinned memory
   after copy_overlap, TF32 on/off GFLOP/s, CUDA_DEVICE_MAX_CONNECTIONS=1,
   `ab` on identical sides, a kernel finishing while its process is frozen,
   sync_async's re-scaled hold and queued variant on a hot GPU and in a trace,
   JAX's device pool, a local sweep's GPUs),
   each in a process of its own (checks/<name>.json; one that cannot run
   here says why);
5. README.md: the device, the reference figures (theoretical FP32 peak from
   SMs × FP32 lanes × max clock, the host link's nominal and measured
   GB/s), the cross-checks, the GPU-only checks and every step's exit code.
Every step runs in a process of its own (so the check itself never holds the
GPU while a step measures). README.md and fidelity.json are rewritten after
every step, so a check cut short (a lent GPU's time runs out) still leaves
what it measured, and --resume runs only what is missing; a step that runs
past --step-timeout is stopped and recorded as exit 124.
On a machine without CUDA it says so in one line and exits 0 having run nothing.

The cross-checks run inside the full-precision scope the cases run in (TF32 off on torch and CuPy).

    python benchmarks/gpu_check.py [--out results] [--quick] [--step-timeout 300] [--resume]
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


#: the exit code recorded for a step stopped at --step-timeout (coreutils' `timeout` uses the same)
TIMED_OUT = 124
#: seconds a stopped step gets after SIGTERM to save what it finished (asyncbench saves and exits 143) before SIGKILL
STOP_GRACE_S = 30.0


def run_step(label: str, command: list[str], log: Path, timeout_s: float) -> int:
    """One step's exit code, its output in `log`. A step past `timeout_s` gets SIGTERM, as `asyncbench run` expects
    from a scheduler (it saves the cases it finished, marked interrupted), then SIGKILL; it is recorded as TIMED_OUT."""
    print(f"gpu-check: {label}: {' '.join(command)}", flush=True)
    started = time.perf_counter()
    with log.open("w") as out, subprocess.Popen(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT) as step:
        try:
            code = step.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            step.terminate()
            try:
                step.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                step.kill()
                step.wait()
            out.write(f"\ngpu-check: stopped after {timeout_s:.0f} s (--step-timeout)\n")
            code = TIMED_OUT
    print(f"gpu-check: {label}: exit {code} after {time.perf_counter() - started:.1f} s", flush=True)
    return code


def set_aside_journal(results: Path) -> None:
    """A step killed outright (the lent machine's time ran out) leaves `<results>.journal`, and `asyncbench run` will not
    overwrite a journal it did not finish: keep it beside, renamed, and say so, rather than delete what it holds."""
    journal = results.with_name(results.name + ".journal")
    if journal.exists():
        kept = journal.with_name(f"{results.stem}.stopped-{time.strftime('%Y%m%dT%H%M%S')}.journal")
        journal.rename(kept)
        print(f"gpu-check: an earlier, stopped run left {journal.name}: kept as {kept.name}", flush=True)


def asyncbench_median_s(workload: str, params: dict[str, Any], metric: str | None = None) -> float:
    """asyncbench's figure for one torch case on cuda:0: the done-time median, or a metric."""
    from asyncbench.backends import get_backend
    from asyncbench.engine import runner
    from asyncbench.results.model import Case, Settings
    from asyncbench.workloads import BUILT_IN

    case = Case(
        id="gpu-check",
        experiment="gpu-check",
        workload=workload,
        backend="torch",
        device="cuda:0",
        params=params,
        settings=Settings(warmup=2, min_samples=20, max_time_s=5.0, max_rel_noise=0.01),
    )
    result = runner.run_case(case, BUILT_IN[workload], get_backend("torch"))
    if result.status != "ok":
        raise RuntimeError(f"asyncbench {workload} failed: {result.reason}")
    if metric is not None:
        return result.metrics[metric]
    return next(iter(result.variants.values())).done_s.median


def cross_checks() -> dict[str, Any]:
    """Each other tool's figure for the same work, next to asyncbench's."""
    import torch
    import torch.utils.benchmark as torch_benchmark

    from asyncbench.backends.torch_backend import TorchBackend

    size, n_iter = MATMUL["size"], MATMUL["n_iter"]
    a = torch.randn(size, size, device="cuda:0")

    def products() -> None:
        for _ in range(n_iter):
            a @ a

    checks: dict[str, Any] = {"matmul": {"asyncbench_s": asyncbench_median_s("matmul", MATMUL)}}
    with TorchBackend().full_precision():  # the precision asyncbench's built-in matmul ran in (TF32 off)
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

        from asyncbench.backends.cupy_backend import CupyBackend

        x = cupy.random.standard_normal((size, size), dtype="float32")
        with CupyBackend().full_precision():  # as a cupy case computes: CUBLAS_COMPUTE_32F whatever CUPY_TF32 says
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
    lines += [f"- `{name}`: " + ("stopped at --step-timeout" if code == TIMED_OUT else f"exit {code}") for name, code in steps.items()]
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


def gpu_checks() -> Any:
    """benchmarks/gpu_checks/, the GPU-only checks: a package loaded by path (benchmarks/ is no package), registered
    under its name first so that its modules' relative imports find it; loaded once per process."""
    import importlib.util

    if "gpu_checks" in sys.modules:
        return sys.modules["gpu_checks"]
    folder = Path(__file__).resolve().with_name("gpu_checks")
    spec = importlib.util.spec_from_file_location("gpu_checks", folder / "__init__.py", submodule_search_locations=[str(folder)])
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_checks"] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["gpu_checks"]
        raise
    return module


#: the label of a GPU-only check's step (gpu_checks.CHECKS names the checks)
CHECK_STEP = "check {}"


def plan_steps(out: Path, quick: bool) -> list[tuple[str, list[str], Path]]:
    """Every step, in order: (label, arguments after the Python executable, its log). Each runs in a process of its
    own, so the check itself never holds the GPU while a step measures on it. The GPU-only checks come before the
    suite and the configs: they are short, and what only a lent GPU can answer."""
    script = str(Path(__file__).resolve())
    plan: list[tuple[str, list[str], Path]] = [
        ("pytest -m 'gpu or streams'", ["-m", "pytest", "-m", "gpu or streams", "-q", "-p", "no:cacheprovider"], out / "pytest-gpu.txt"),
        ("cross-checks", [script, "--cross-checks-to", str(out / "cross-checks.json")], out / "cross-checks.txt"),
    ]
    for name in gpu_checks().CHECKS:
        answer = out / "checks" / f"{name}.json"
        plan.append((CHECK_STEP.format(name), [script, "--check", name, "--check-to", str(answer)], answer.with_suffix(".txt")))
    quick_flag = ["--quick"] if quick else []
    for name, config in [("default", [])] + [(p.stem, [str(p)]) for p in sorted((ROOT / "configs").glob("*.yaml"))]:
        command = ["-m", "asyncbench", "run", *config, "-b", "torch", "-b", "cupy", "-d", "cuda", *quick_flag, "--no-progress"]
        plan.append(
            (
                f"asyncbench run {name}",
                [*command, "-o", str(out / f"{name}.json"), "--markdown", str(out / f"{name}.md")],
                out / f"{name}.txt",
            )
        )
    return plan


def pending_steps(plan: list[tuple[str, list[str], Path]], steps: dict[str, int]) -> list[tuple[str, list[str], Path]]:
    """What --resume runs: the steps not recorded yet, then those stopped at --step-timeout."""
    return [step for step in plan if step[0] not in steps] + [step for step in plan if steps.get(step[0]) == TIMED_OUT]


def check_lines(out: Path) -> list[str]:
    """README.md's lines for the GPU-only checks, from checks/<name>.json."""
    lines = ["", "## GPU-only checks", ""]
    for name in gpu_checks().CHECKS:
        answer = out / "checks" / f"{name}.json"
        if not answer.exists():
            lines.append(f"- `{name}`: not run (see checks/{name}.txt)")
            continue
        found = json.loads(answer.read_text())
        if "skipped" in found:
            lines.append(f"- `{name}`: skipped, {found['skipped']}")
            continue
        verdict = {True: "verified", False: "NOT verified", None: "measured"}[found.pop("verified", None)]
        lines.append(f"- `{name}`: {verdict}: `{json.dumps(found, default=str)[:600]}`")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="results", help="folder under which results/<gpu-name>/ is written")
    parser.add_argument("--quick", action="store_true", help="the suite and configs with --quick sizes")
    parser.add_argument("--step-timeout", type=float, default=300.0, help="seconds after which one step is stopped (exit 124)")
    parser.add_argument("--resume", action="store_true", help="keep the steps an earlier check recorded; run the rest, stopped ones last")
    parser.add_argument("--cross-checks-to", type=Path, help=argparse.SUPPRESS)  # the cross-checks step, in a process of its own
    parser.add_argument("--check", help=argparse.SUPPRESS)  # one GPU-only check (gpu_checks.CHECKS), in a process of its own
    parser.add_argument("--check-to", type=Path, help=argparse.SUPPRESS)  # ... and where its answer goes
    args = parser.parse_args()
    if args.check is not None:  # without CUDA the answer says why it was skipped
        answer = gpu_checks().run(args.check)
        if args.check_to is not None:
            args.check_to.parent.mkdir(parents=True, exist_ok=True)
            args.check_to.write_text(json.dumps(answer, indent=2, default=str) + "\n")
        print(f"gpu-check: {args.check}: {answer}")
        return 0
    import torch

    if torch.version.cuda is None or not torch.cuda.is_available():
        why = "torch is built without CUDA" if torch.version.cuda is None else "no CUDA device visible"
        print(f"gpu-check: no CUDA here ({why}, torch {torch.__version__}): nothing run")
        return 0
    if args.cross_checks_to is not None:
        args.cross_checks_to.write_text(json.dumps(cross_checks(), indent=2) + "\n")
        return 0
    from asyncbench.backends.cuda_devices import cuda_devices

    device = cuda_devices()[0]
    # a quick check's sizes are not the suite's: its files never share a folder with a full check's
    out = ROOT / args.out / slug(device.name) / ("quick" if args.quick else "")
    (out / "checks").mkdir(parents=True, exist_ok=True)
    reference = reference_figures(device.capability)
    earlier = json.loads((out / "fidelity.json").read_text()) if args.resume and (out / "fidelity.json").exists() else {}
    steps: dict[str, int] = dict(earlier.get("steps", {}))
    checks: dict[str, Any] | str = earlier.get("checks", "not run")

    def write() -> None:
        record = {"device": device.__dict__, "reference": reference, "checks": checks, "steps": steps}
        (out / "fidelity.json").write_text(json.dumps(record, indent=2) + "\n")
        (out / "README.md").write_text(summary(device.name, steps, checks, reference) + "\n".join(check_lines(out)) + "\n")

    for label, command, log in pending_steps(plan_steps(out, args.quick), steps):
        set_aside_journal(log.with_suffix(".json"))
        steps[label] = run_step(label, [sys.executable, *command], log, args.step_timeout)
        if label == "cross-checks":
            checks = (
                json.loads((out / "cross-checks.json").read_text()) if steps[label] == 0 else f"exit {steps[label]}: see cross-checks.txt"
            )
        write()
    print(f"gpu-check: wrote {out.relative_to(ROOT)}/ (README.md first)")
    # a run exits 1 for a failed or inconclusive check, which is a finding to read in README.md, not a broken check
    broken = [label for label, code in steps.items() if code != 0 and not (label.startswith("asyncbench run") and code == 1)]
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
