"""What many tests share: a real workload run through the runner, a small real results file, process checks,
and a fake backend that drives the runner's logic (it measures nothing real)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DeviceStatus
from asyncbench.engine import runner
from asyncbench.results import stats
from asyncbench.results.model import OK, Result, Samples, Settings, VariantResult
from asyncbench.results.schema import Report
from asyncbench.spec import config
from asyncbench.workloads import BUILT_IN
from tests.support import cli

#: few short samples: these tests check behaviour, not speed (six: the fewest with a 95% interval of the median)
QUICK = Settings(warmup=1, min_samples=6, max_samples=8, max_time_s=1.0, max_rel_noise=0.05)


def run_workload(workload: str, backend: str, device: str, isolate: bool = False, **params: Any) -> Result:
    """One case of a real workload through the runner, with quick sizes unless `params` say otherwise
    (in a worker process with `isolate`: JAX's threads then never enter the test process, whose later
    subprocess tests fork)."""
    return run_workloads({workload: params}, backend, device, isolate)[workload]


def run_workloads(params_of: Mapping[str, Mapping[str, Any]], backend: str, device: str, isolate: bool = False) -> dict[str, Result]:
    """A case of each workload named in `params_of` (quick sizes, its params over them), in one run: with `isolate`
    one worker runs them all, as in a run of several experiments, and its framework is imported once (MXNet's
    import alone takes 2 s), not once a case."""
    experiments = tuple(
        config.Experiment(
            name=workload,
            workload=workload,
            backends=(backend,),
            devices=(device,),
            params={**BUILT_IN[workload].defaults(quick=True), **params},
            settings=QUICK,
        )
        for workload, params in params_of.items()
    )
    return {result.experiment: result for result in runner.run(config.Config("t", "<t>", experiments), runner.RunOptions(isolate=isolate))}


def command_line(process: Any) -> str:
    """A psutil process's command line, or "" for one that has exited or is a zombie waiting to be reaped.

    Children come and go while a test looks at them (a `git` run by the environment capture, a rank that just ended),
    so asking for the command line of one seen a moment ago must not fail the test."""
    import psutil

    try:
        return " ".join(process.cmdline())
    except psutil.Error:  # NoSuchProcess, ZombieProcess (a subclass), AccessDenied
        return ""


def no_children_left() -> bool:
    """No worker or rank is left; multiprocessing's own resource tracker (one per parent, gone with it) does not count,
    nor does a process that has already exited."""
    import psutil

    children = psutil.Process().children(recursive=True)
    return not [c for c in children if (line := command_line(c)) and "resource_tracker" not in line]


class FakeBackend(Backend):
    """Drives the runner's logic in unit tests; it measures nothing real."""

    name = "fake"

    def __init__(self, devices: tuple[str, ...] = ("cpu",), missing: str | None = None):
        self._devices = devices
        self._missing = missing
        self.barriers = 0

    def unavailable_reason(self) -> str | None:
        return self._missing

    def version(self) -> str | None:
        return "0"

    def probe(self) -> tuple[DeviceStatus, ...]:
        statuses = [DeviceStatus(self.name, d, True, "fake") for d in self._devices]
        if not any(d.startswith("cuda") for d in self._devices):
            statuses.append(DeviceStatus(self.name, "cuda", False, "no fake GPU"))
        return tuple(statuses)

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        return lambda: 1.0

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        return 1.0

    def barrier(self, device: str) -> None:
        self.barriers += 1

    def wait(self, array: Any) -> None:
        pass

    def to_host(self, array: Any) -> Any:
        return array


def report_of(rows: list[Result]) -> Report:
    """A report holding these results (no config, a stand-in environment)."""
    return dataclasses.replace(Report.new({}, {"cpu": "x"}), results=tuple(rows))


def ok_result(case_id: str, n: int = 12) -> Result:
    """An ok matmul result on torch/cpu with `n` made-up samples (for what renders or judges results)."""
    values = tuple(1.0 + i / 100 for i in range(n))
    variant = VariantResult(Samples(values, values), stats.summarize(values), stats.summarize(values), None)
    # its experiment, backend, device and params the ones its id names, as a reader holds them (an id is the one
    # they make: results.case_held.identity_held)
    experiment, _, inside = case_id.partition("[")
    backend, _, device = inside.removesuffix("]").partition(",")
    device, _, named_params = device.partition(",")
    named = backend.isidentifier() and device.replace(":", "").isalnum()
    params = dict(part.partition("=")[::2] for part in named_params.split(",") if "=" in part) if named else {}
    return Result(
        case_id, experiment if named else "m", "matmul", backend if named else "torch", device if named else "cpu", params, OK,
        variants={"matmul": variant},
    )  # fmt: skip


#: the session's first quick run's results file as it was written, and the folders given such a file: some twenty
#: tests take one each, and each run costs a fresh interpreter 1-2 s (see quick_numpy_results)
_QUICK_RUN: list[bytes] = []
_QUICK_FOLDERS: set[Path] = set()


def quick_numpy_results(path: Path) -> Path:
    """A small real results file: `asyncbench run -w matmul -b numpy --quick -o PATH` in a fresh interpreter.

    Run once per test session: a folder's first such file is a byte-for-byte copy of that run (each test records
    it into a store of its own), and a second file in the same folder is a run of its own, for a test that wants
    several runs (each with its own run id and time) in one store."""
    if _QUICK_RUN and path.parent not in _QUICK_FOLDERS:
        path.write_bytes(_QUICK_RUN[0])
    else:
        done = cli.asyncbench("run", "-w", "matmul", "-b", "numpy", "--quick", "--no-progress", "-o", str(path))
        assert done.returncode == 0, done.stderr
        if not _QUICK_RUN:
            _QUICK_RUN.append(path.read_bytes())
    _QUICK_FOLDERS.add(path.parent)
    return path


def forgetting_user_modules(*prefixes: str) -> Any:
    """A fixture body: the user modules a test loads (`asyncbench_user_*`, and modules named by `prefixes`: a step
    file's neighbours) and the folders loading put on sys.path are gone after it."""
    modules, path = set(sys.modules), list(sys.path)
    yield
    sys.path[:] = path  # a user file's folder joins sys.path when it is loaded
    for name in set(sys.modules) - modules:
        if name.startswith(("asyncbench_user_", *prefixes)):
            del sys.modules[name]


def load_step(folder: Path, name: str) -> Any:
    """The step function `name` of `folder`/steps.py, loaded as `-w steps.py:NAME` loads it."""
    from asyncbench.workloads import plugins
    from asyncbench.workloads.step_form import StepWorkload

    workload = plugins.load(plugins.canonical(f"steps.py:{name}", folder))
    assert isinstance(workload, StepWorkload)
    return workload


def runs_on(workload: Any, backends: tuple[str, ...]) -> set[str]:
    """Those of `backends` a step's case on the CPU is not skipped on."""
    from asyncbench.backends import get_backend

    return {name for name in backends if workload.skip_reason(get_backend(name), "cpu", workload.defaults()) is None}
