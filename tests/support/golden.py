"""The one fixed report the golden files (tests/report/golden/) are written from: one of each thing a writer must lay
out (see tests/report/test_golden.py), for every test that renders a known report."""

from __future__ import annotations

from asyncbench.results import stats
from asyncbench.results.model import (
    Check,
    HarnessCost,
    Memory,
    MetricInfo,
    Result,
    Samples,
    Sampling,
    Status,
    StopReason,
    VariantResult,
    Verdict,
)
from asyncbench.results.schema import Report
from asyncbench.results.syncs import Census, SyncKind, SyncPoint

#: the machine the golden report ran on
ENVIRONMENT = {
    "cpu": "Golden CPU",
    "cpu_affinity": 2,
    "python": "3.11.7",
    "git_sha": "0123456789abcdef0123",
    "frameworks": {"jax": {"version": "0.4.35"}, "cupy": {"version": None, "unavailable": "cupy not installed"}},
}


# what the harness's own sync costs between issue and done (a results file has it from schema 7 on)
HARNESS = HarnessCost(sync_s=0.68e-6, sync_high_s=0.7e-6, issue_s=0.1e-6, n=40)


#: what each metric of a case is, in its unit
INFO = {
    "illusion": MetricInfo("x", "done time / issue time"),
    "gflops": MetricInfo("GFLOP/s", "2·size³·n_iter / done time"),
    "verified": MetricInfo("bool", "results equal NumPy's"),
}


def _variant(issue: list[float], done: list[float], rss: int | None = None) -> VariantResult:
    return VariantResult(
        samples=Samples(issue_s=tuple(issue), done_s=tuple(done)),
        issue_s=stats.summarize(issue),
        done_s=stats.summarize(done),
        device_s=None,
        memory=Memory(host_rss_peak_delta_bytes=rss),
    )


def _ok(size: int, scale: float, checks: tuple[Check, ...] = (), **fields) -> Result:
    done = [scale * (1 + 0.01 * i) for i in range(8)]
    issue = [d / 16 for d in done]
    return Result(
        id=f"matmul[jax,cpu,size={size}]",
        experiment="matmul",
        workload="matmul",
        backend="jax",
        device="cpu",
        params={"size": size, "n_iter": 3},
        status=Status.OK,
        variants={"matmul": _variant(issue, done, rss=4 << 20)},
        metrics={"illusion": 16.0, "gflops": 2 * size**3 * 3 / done[3] / 1e9, "verified": 1.0},
        bounds={"illusion": (15.2, 16.4), "gflops": (2 * size**3 * 3 / done[5] / 1e9, 2 * size**3 * 3 / done[2] / 1e9)},
        metric_info=INFO,
        asynchronous=True,
        checks=checks,
        reading=f"asynchronous: issuing returns 16.0× [15.2–16.4] before the work is done (size {size})",
        harness=HARNESS,
        **fields,
    )


def golden_report() -> Report:
    passing = Check("illusion >= 3", Verdict.PASS, "illusion = 16.0× [15.2–16.4], expected >= 3.00×", 16.0, (15.2, 16.4))
    failing = Check("illusion >= 20", Verdict.FAIL, "illusion = 16.0× [15.2–16.4], expected >= 20.0× (short by 20%)", 16.0, (15.2, 16.4))
    straddling = Check(
        "gflops >= 1",
        Verdict.INCONCLUSIVE,
        "gflops = 1.0 GFLOP/s [0.9–1.1], expected >= 1: the 95% interval straddles the threshold",
        2 * 256**3 * 3 / (0.010 * (1 + 0.01 * 3)) / 1e9,  # the case's own gflops (a reader holds a check's value to its metric's)
        (0.9, 1.1),
    )
    census = Census(
        "matmul",
        6,
        (
            SyncPoint("train.py", 42, SyncKind.PRINT, "jax.Array.__str__", 10.0, 0.0098, (0.0085, 0.018), None, (10,) * 6, (0.0098,) * 6),
            SyncPoint("train.py", 57, SyncKind.CONVERSION, "jax.Array.item", 1.0, 5e-6, (0.0, 9e-6), None, (1,) * 6, (5e-6,) * 6),
        ),
        "jax's hooks and the frame fallback",
    )
    results = (
        _ok(128, 0.002, (passing,), syncs={"matmul": census}),
        _ok(
            256,
            0.010,
            (failing, straddling),
            warnings=("device time above done time in 1 sample",),
            sampling=Sampling(8, 1.0, StopReason.TIME, 0.12, 0.05, 1.0),
        ),
        Result(
            "matmul[jax,cpu,size=512]",
            "matmul",
            "matmul",
            "jax",
            "cpu",
            {"size": 512, "n_iter": 3},
            Status.ERROR,
            reason="out of memory: MemoryError",
            asynchronous=True,
        ),
        Result(
            "matmul[cupy,cuda,size=128]",
            "matmul",
            "matmul",
            "cupy",
            "cuda",
            {"size": 128, "n_iter": 3},
            Status.SKIPPED,
            reason="cupy not installed",
            unavailable=True,
        ),
    )
    return Report(3, "asyncbench", "0.1.0", "2026-11-23T12:00:00+00:00", ENVIRONMENT, {"name": "golden"}, results)
