"""Faults during a run, injected for real: each is an error row with its reason, the other cases run, nothing is left behind.

The faulty workloads below run on the real numpy backend in the real worker
process; they are module-level so the spawned worker can unpickle them. What
they inject is real (an exception, a sleep that outlasts timeout_s, SIGKILL,
a segfault, a refused allocation); only the reason it happens is staged.
"""

from __future__ import annotations

import ctypes
import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any, Mapping

import pytest

from asyncbench.engine import isolation, runner
from asyncbench.measure import timing
from asyncbench.results.model import ERROR, OK, Settings, StopReason
from asyncbench.spec import config
from asyncbench.workloads.base import STR, Metric, Param, Prepared, Workload
from tests.support.cli import invoke
from tests.support.helpers import no_children_left, report_of

pytestmark = pytest.mark.slow

# timeout_s must exceed max_time_s; 2 s keeps each hang short
FAST = Settings(warmup=0, min_samples=2, max_samples=3, max_time_s=0.5, timeout_s=2.0)
# CUDA start-up in a fresh worker (torch import, context creation) takes seconds
GPU = dataclasses.replace(FAST, timeout_s=120.0)
# Slower than the worker's progress interval (isolation.PROGRESS_INTERVAL_S): every round is reported.
SLOW_ROUND_S = 0.15
# A killed worker's grace (processes.TERMINATE_GRACE_S) plus a fresh worker's start, with room for a slow CI machine.
SLACK_S = 15.0


def _hang() -> None:
    time.sleep(3600)


def _hang_ignoring_sigterm() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    time.sleep(3600)


def _kill_like_the_oom_killer() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _segfault() -> None:
    ctypes.string_at(0)


def _allocate_too_much() -> None:
    import numpy

    numpy.ones(2**62, dtype="uint8")


def _raise() -> None:
    raise RuntimeError("injected failure")


FAULTS = {
    "none": lambda: None,
    "hang_after_slow_rounds": _hang,
    "raise": _raise,
    "hang": _hang,
    "hang_ignoring_sigterm": _hang_ignoring_sigterm,
    "sigkill": _kill_like_the_oom_killer,
    "segfault": _segfault,
    "allocate": _allocate_too_much,
}


class Faulty(Workload):
    """Runs a sum on numpy; injects `fault` in setup or in the timed variant from the `after`-th call on."""

    name = "faulty"
    summary = "injects a fault"
    params = (
        Param("fault", STR, "none", "what goes wrong", choices=tuple(FAULTS)),
        Param("where", STR, "setup", "setup or measure", choices=("setup", "measure")),
    )
    variants = ("sum",)
    metrics = (Metric("pid", "", "the process that measured"),)

    def setup(self, backend, device, params) -> Prepared:
        import numpy

        fault = FAULTS[params["fault"]]
        if params["where"] == "setup":
            fault()
        data = numpy.ones(1000)
        calls = []

        def run() -> Any:
            calls.append(1)
            if params["fault"] == "hang_after_slow_rounds":
                time.sleep(SLOW_ROUND_S)
            # after the first timed round has been told (call 1, then the untimed re-warm that follows the machine's
            # reference, then its progress): in the second round at the earliest. A slow round is re-warmed by one
            # call (it outlasts REWARM_S): calls 1, 3 and 5 are timed, the fault in the third; a fast one by
            # REWARM_ROUNDS calls
            after = 4 if params["fault"] == "hang_after_slow_rounds" else 1 + timing.REWARM_ROUNDS
            if params["where"] == "measure" and len(calls) > after:
                fault()
            return data.sum()

        return Prepared(variants={"sum": run}, sync=lambda: None)

    def run_metrics(self, params: Mapping[str, Any], variants) -> dict[str, float | None]:
        return {"pid": float(os.getpid())}

    def reading(self, result) -> str:
        return "measured in a worker" if result.metrics["pid"] != os.getpid() else "measured here"


#: the test workloads, handed to the runner as objects (the built-in registry is read-only)
FAULTY = {"faulty": Faulty()}


def _experiment(name: str, fault: str = "none", where: str = "setup", settings: Settings = FAST) -> config.Experiment:
    return config.Experiment(
        name=name, workload="faulty", backends=("numpy",), devices=("cpu",), params={"fault": fault, "where": where}, settings=settings
    )


def _run(*experiments: config.Experiment, isolate: bool = True) -> list:
    return runner.run(
        config.Config("faults", "<test>", experiments),
        runner.RunOptions(isolate=isolate),
        workloads={**FAULTY, "faulty_cuda": FaultyCuda()},
    )


@pytest.mark.parametrize(
    "fault, where, fragment",
    [
        ("raise", "setup", "RuntimeError: injected failure"),
        ("raise", "measure", "RuntimeError: injected failure"),
        ("allocate", "setup", "out of memory: MemoryError: Unable to allocate 4.00 EiB"),
        ("hang", "setup", "timed out after 2 s (timeout_s); the worker process was killed (setting up or in its first samples)"),
        ("hang", "measure", "timed out after 2 s (timeout_s); the worker process was killed (measuring, "),
        ("hang_ignoring_sigterm", "setup", "timed out after 2 s"),
        ("sigkill", "measure", "the worker process died (killed by SIGKILL; the kernel's out-of-memory killer sends SIGKILL"),
        ("segfault", "setup", "the worker process died (killed by SIGSEGV; a crash in native code)"),
    ],
)
def test_a_fault_is_an_error_row_and_the_next_case_runs_in_a_fresh_worker(fault, where, fragment):
    started = time.monotonic()
    healthy = dataclasses.replace(FAST, timeout_s=SLACK_S)  # a fresh worker's start counts: 2 s was once too few under load
    # only a hang is meant to meet the 2 s timeout: a fault in measuring comes after the case's wait for a calm CPU
    # and its machine reference, which beside the other test process outlasted 2 s (a SIGKILL read as a timeout)
    faulty = FAST if fault.startswith("hang") else healthy
    before, bad, after = _run(
        _experiment("before", settings=healthy), _experiment("bad", fault, where, faulty), _experiment("after", settings=healthy)
    )
    assert bad.status == ERROR, bad.reason
    assert fragment in bad.reason
    assert before.status == OK, before.reason
    assert after.status == OK, after.reason
    assert before.metrics["pid"] != after.metrics["pid"] != os.getpid()  # replaced, and never this process
    assert time.monotonic() - started < FAST.timeout_s + SLACK_S
    assert no_children_left()


def test_cases_share_one_worker_while_nothing_goes_wrong():
    healthy = dataclasses.replace(FAST, timeout_s=SLACK_S)  # the first case's 2 s once ran out in a fresh worker's start
    results = _run(*(_experiment(name, settings=healthy) for name in "abc"))
    assert [r.status for r in results] == [OK, OK, OK]
    assert len({r.metrics["pid"] for r in results}) == 1
    assert no_children_left()


def test_progress_reaches_the_parent_from_the_worker():
    seen = []
    # a timeout far past the work: this test is of progress, and under a CI run's load a fresh worker's start and its
    # 50 samples outlasted FAST's 2 s (the case then errored as timed out, never reporting its last rounds)
    settings = dataclasses.replace(FAST, min_samples=50, max_samples=50, timeout_s=60.0)
    (result,) = runner.run(
        config.Config("c", "<t>", (_experiment("a", settings=settings),)),
        runner.RunOptions(isolate=True),
        on_progress=seen.append,
        workloads=FAULTY,
    )
    assert result.status == OK
    assert result.metrics["pid"] != os.getpid()
    assert seen
    assert seen[0].rounds >= 1


def echo(value, on_progress=None):
    return value


def test_a_call_that_cannot_reach_the_worker_is_lost_and_the_next_call_works():
    worker = isolation.Worker(echo)
    try:
        with pytest.raises(isolation.WorkerLost, match="could not hand the call to the worker process"):
            worker.call((lambda: 0,), timeout_s=60)  # a lambda cannot be pickled
        assert worker.call((5,), timeout_s=60) == 5
    finally:
        worker.close()
    assert no_children_left()


def test_in_process_runs_here_and_an_exception_is_still_an_error_row():
    bad, good = _run(_experiment("bad", "raise"), _experiment("good"), isolate=False)
    assert bad.status == ERROR
    assert "injected failure" in bad.reason
    assert good.status == OK
    assert good.metrics["pid"] == os.getpid()


def test_faults_through_the_cli_give_complete_json_and_exit_3(tmp_path):
    path, out = tmp_path / "faults.yaml", tmp_path / "r.json"
    path.write_text(
        # the hang gets 2 s; the others the slack a fresh worker's start needs under load (each follows a fault)
        f"defaults: {{backends: [numpy], devices: [cpu], warmup: 0, min_samples: 2, max_time_s: 0.5, timeout_s: {SLACK_S:g}}}\n"
        "experiments:\n"
        + "".join(
            f"  - {{name: {name}, workload: 'tests.engine.test_faults:Faulty', params: {{fault: {fault}, where: measure}}"
            + (", timeout_s: 2" if fault == "hang" else "")
            + "}\n"
            for name, fault in [("hangs", "hang"), ("dies", "sigkill"), ("raises", "raise"), ("fine", "none")]
        )
    )
    result = invoke("run", str(path), "--no-progress", "-o", str(out))
    assert result.exit_code == 3, result.output
    rows = json.loads(out.read_text())["results"]
    assert [(r["experiment"], r["status"]) for r in rows] == [("hangs", ERROR), ("dies", ERROR), ("raises", ERROR), ("fine", OK)]
    assert "timed out after 2 s" in rows[0]["reason"]
    assert "SIGKILL" in rows[1]["reason"]
    assert "injected" in rows[2]["reason"]
    assert "4 cases: 1 ok, 3 error" in result.output
    assert no_children_left()


def test_a_real_allocation_failure_in_a_real_workload_is_an_error_row(tmp_path):
    """numpy's matmul under an address-space limit: a real MemoryError from the framework, and the next case still runs."""
    path, out = tmp_path / "oom.yaml", tmp_path / "r.json"
    path.write_text(
        "defaults: {backends: [numpy], devices: [cpu], warmup: 0, min_samples: 3, max_time_s: 0.5}\n"
        "experiments:\n"
        "  - {name: too-big, workload: matmul, params: {size: 20000, dtype: float64, n_iter: 1}}\n"  # 3 GiB a matrix
        "  - {name: fits, workload: matmul, params: {size: 64, dtype: float64, n_iter: 1}}\n"
    )
    limit = 2 * 2**30
    # the limit is set in the child itself: a preexec_fn would fork this test process, which may hold JAX's threads
    # (its own interpreter, not tests.support.cli's runner: `python -m asyncbench` cannot set a memory limit first)
    limited = (
        f"import resource, runpy; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit})); "
        "runpy.run_module('asyncbench', run_name='__main__', alter_sys=True)"
    )
    run = subprocess.run(
        [sys.executable, "-c", limited, "run", str(path), "--no-progress", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 3, run.stderr
    too_big, fits = json.loads(out.read_text())["results"]
    assert too_big["status"] == ERROR
    assert too_big["reason"].startswith("out of memory: MemoryError: Unable to allocate")
    assert fits["status"] == OK
    assert "Traceback" not in run.stderr


def test_timeout_s_must_exceed_max_time_s(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("defaults: {max_time_s: 20, timeout_s: 10}\nexperiments:\n  - workload: matmul\n")
    result = invoke("validate", str(path))
    assert result.exit_code == 2
    assert "timeout_s (10 s) must exceed max_time_s (20 s)" in result.output
    result = invoke("run", "-w", "matmul", "--set", "timeout_s=0.1", "--quick")
    assert result.exit_code == 2
    assert "after --set/--quick" in result.output


# --- GPU faults: need a CUDA device (pytest -m gpu) -------------------------------------------------------


def _poison_cuda() -> None:
    import torch

    data = torch.zeros(4, device="cuda")
    data[torch.tensor([1 << 20], device="cuda")] = 1.0  # out-of-bounds index: a device-side assert
    torch.cuda.synchronize()


def _allocate_too_much_cuda() -> None:
    import torch

    torch.empty(1 << 50, dtype=torch.uint8, device="cuda")  # 1 PiB


class FaultyCuda(Workload):
    """A sum on a torch CUDA tensor; `fault` poisons the context or over-allocates in setup."""

    name = "faulty_cuda"
    summary = "injects a CUDA fault"
    params = (Param("fault", STR, "none", "what goes wrong", choices=("none", "poison", "oom")),)
    variants = ("sum",)
    metrics = ()

    def setup(self, backend, device, params) -> Prepared:
        import torch

        if params["fault"] == "poison":
            _poison_cuda()
        elif params["fault"] == "oom":
            _allocate_too_much_cuda()
        data = torch.ones(1000, device=device)
        return Prepared(variants={"sum": lambda: data.sum()}, sync=torch.cuda.synchronize)


@pytest.mark.gpu
@pytest.mark.parametrize("fault, fragment", [("poison", "CUDA error"), ("oom", "out of memory: OutOfMemoryError")])
def test_a_cuda_fault_is_an_error_row_and_the_next_gpu_case_runs(fault, fragment):

    def gpu_case(name: str, fault: str) -> config.Experiment:
        return config.Experiment(
            name=name, workload="faulty_cuda", backends=("torch",), devices=("cuda:0",), params={"fault": fault}, settings=GPU
        )

    bad, after = _run(gpu_case("bad", fault), gpu_case("after", "none"))
    assert bad.status == ERROR, bad.reason
    assert fragment in bad.reason
    assert after.status == OK, after.reason
    assert no_children_left()


def test_a_workers_first_sigterm_ends_it_and_a_second_cannot_interrupt_its_exit():
    """A group-wide SIGTERM, then the parent's teardown, sends a worker two: the second must not land in the
    interpreter's shutdown (a traceback on stderr); the parent kills a worker that does not exit in time."""
    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, isolation._exit_on_sigterm)
        with pytest.raises(SystemExit) as ended:
            isolation._exit_on_sigterm(signal.SIGTERM, None)
        assert ended.value.code == 143
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_case_cut_short_by_its_timeout_keeps_the_rounds_it_measured():
    """Nothing measured is lost: two rounds, then a hang past timeout_s; the error row keeps both rounds, the clocks
    and figures with their intervals, marked cut short, and the run still says an error happened."""
    # 4 s, not FAST's 2: the two rounds come after a fresh worker's start, which took over 1.5 s beside another test
    # process on 2 cores (one round reported, not two)
    (cut,) = _run(_experiment("cut", "hang_after_slow_rounds", "measure", dataclasses.replace(FAST, timeout_s=4.0)))
    assert cut.status == ERROR
    assert "timed out after 4 s (timeout_s)" in cut.reason
    assert "the 2 round(s) it reported are kept" in cut.reason
    assert cut.variants["sum"].done_s.n == 2
    assert cut.variants["sum"].done_s.median >= SLOW_ROUND_S
    assert cut.sampling.stopped_by == StopReason.TIMEOUT
    assert cut.asynchronous is False  # numpy: what the worker said, not guessed here
    assert "pid" in cut.metrics
    from asyncbench.report import view

    (shown,) = view.build(report_of([cut])).experiments[0].cases
    assert shown.metrics.startswith("pid")  # its figures are shown under its error
    assert shown.sampling_note.startswith("cut short by timeout_s after 2 rounds")
    assert no_children_left()


def test_a_worker_that_dies_before_reading_its_call_is_lost_not_a_traceback(tmp_path, monkeypatch):
    """A worker under another Python that cannot import its target exits before it reads the call handed to it: the
    kernel then resets the connection (unread data), where a clean exit reads as end-of-file. Both are a lost worker
    (before: `ab` ended in a ConnectionResetError traceback when a side's worker died starting)."""
    (tmp_path / "only_here.py").write_text("def answer(value, on_progress=None):\n    return value\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # this process imports it; the worker's Python does not see it
    import only_here

    worker = isolation.Worker(only_here.answer, python=sys.executable)
    try:
        for _ in range(3):  # the reset comes when the call was sent before the worker died: not every time
            with pytest.raises(isolation.WorkerLost, match="the worker process died|could not hand the call"):
                worker.call((b"x" * 65536,), timeout_s=60)
    finally:
        worker.close()
    assert no_children_left()
