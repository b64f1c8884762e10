"""MXNet 1.9.1, the textbook's framework: a threaded engine that queues every op and returns.

MXNet is retired upstream and its last wheel needs numpy < 1.24 (numpy 1.24
removed `np.bool`, which `import mxnet` uses), while the rest of a modern
environment (JAX, current scipy) needs numpy 2. So MXNet lives in its own
environment, `.venv-mxnet/` (`make mxnet`), and its cases run in a worker
started with that environment's Python (`interpreter`); this process never
imports mxnet, which also keeps MXNet's libgomp from lowering torch's thread
count here. One run still puts mxnet rows beside torch, jax and numpy ones.
`ASYNCBENCH_MXNET_PYTHON` names another Python that has mxnet 1.9.1.

The engine's settings are environment variables read when mxnet is
imported, so the worker starts with them (`worker_environment`):
`MXNET_CPU_WORKER_NTHREADS=2` engine threads per CPU device — with one, a
`wait_to_read` can queue behind unrelated work and the barrier shows
nothing — and OpenMP threads = usable cores / 2, so two engine threads do
not oversubscribe the cores (with 2 workers × 2 OpenMP threads on 2 cores,
even with OMP_WAIT_POLICY=PASSIVE, twenty 1000² products had not finished
after 60 s; with 2 × 1 they take about 0.5 s). A variable already set by the
user wins.

Devices: `cpu` is `mx.cpu(0)`; `cpu:1` (multi_device's partner) is
`mx.cpu(1)`, a separate engine device with its own worker threads. The
barrier is `npx.waitall()`, waiting for one result `wait_to_read()`, host
conversion `asnumpy()` (a copy). No streams, events or memory API on a CPU:
memory is the host's.

`run --syncs` hooks the legacy NDArray's `wait_to_read`, `asnumpy`,
`asscalar`, `bool()` and printing, the numpy interface's ndarray's own
conversions and printing (`item`, `tolist`, `float()`, `int()`, `str`,
`format`), and `waitall` under both its names (mx.nd, mx.npx). The engine
says nothing of its queue: how much a wait drained is not known.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

from asyncbench.backends.base import Backend
from asyncbench.backends.handles import DeviceStatus, SyncHook

#: engine threads per CPU device: two, so a wait for one result need not queue behind other work
ENGINE_THREADS = 2
#: why run --bound perturbs only the host on MXNet (MxnetBackend.device_delay)
NO_DEVICE_DELAY = (
    "no device delay on mxnet: a queued op's length beside the step (0.36-0.93x its length alone) is not known, so "
    "only the host side is perturbed"
)
PYTHON_VARIABLE = "ASYNCBENCH_MXNET_PYTHON"
#: where `make mxnet` puts the environment: beside the asyncbench package, in the source checkout
VENV = Path(__file__).resolve().parents[2] / ".venv-mxnet"
SETUP_HINT = (
    "mxnet runs in its own environment (it needs numpy < 1.24: `import mxnet` uses np.bool, removed in 1.24): "
    "set ASYNCBENCH_MXNET_PYTHON to the Python of an "
    "environment with mxnet 1.9.1 and asyncbench installed (in a clone of asyncbench, `make mxnet` makes one)"
)


def _python() -> Path:
    return Path(os.environ.get(PYTHON_VARIABLE) or VENV / "bin" / "python")


def _installed_version(python: Path) -> str | None:
    """mxnet's version in the environment of `python`, read from its package metadata (nothing is run)."""
    root = python.parent.parent
    for info in root.glob("lib/python*/site-packages/mxnet-*.dist-info"):
        return info.name.removeprefix("mxnet-").removesuffix(".dist-info")
    return None


@functools.lru_cache(maxsize=1)
def _mxnet() -> Any:
    """mxnet with the numpy interface on; only ever called in the mxnet worker."""
    import mxnet

    mxnet.npx.set_np()
    return mxnet


class MxnetBackend(Backend):
    name = "mxnet"
    module = "mxnet"
    distributions = ("mxnet",)
    dtypes = ("float16", "float32", "float64")
    device_kinds = ("cpu",)

    def _here(self) -> bool:
        """Whether this interpreter is the one that has mxnet (the worker, or a user's own mxnet environment).

        Compared by environment (sys.prefix), not by binary: a venv's python is a link to the base interpreter."""
        return Path(sys.prefix).resolve() == _python().parent.parent.resolve()

    def unavailable_reason(self) -> str | None:
        python = _python()
        if not python.exists():
            return SETUP_HINT
        if _installed_version(python) is None and not self._here():
            return f"{python} has no mxnet: run `make mxnet` again"
        return None

    def version(self) -> str | None:
        return _installed_version(_python())

    def interpreter(self) -> str | None:
        return None if self._here() else str(_python())

    def worker_environment(self) -> dict[str, str]:
        from asyncbench.host.facts import usable_cores

        wanted = {
            "MXNET_CPU_WORKER_NTHREADS": str(ENGINE_THREADS),
            "OMP_NUM_THREADS": str(max(1, usable_cores() // ENGINE_THREADS)),
        }
        return {name: os.environ.get(name, value) for name, value in wanted.items()}

    def probe(self) -> tuple[DeviceStatus, ...]:
        engine = self.worker_environment()
        return (
            DeviceStatus(
                self.name,
                "cpu",
                True,
                f"mxnet {self.version()} in {_python()}, threaded engine: "
                f"{engine['MXNET_CPU_WORKER_NTHREADS']} workers × {engine['OMP_NUM_THREADS']} OpenMP thread(s) per device",
            ),
            DeviceStatus(self.name, "cuda", False, "the mxnet 1.9.1 wheel asyncbench installs is CPU-only"),
        )

    def second_cpu(self) -> str | None:
        return "cpu:1"

    def describe(self, device: str) -> str | None:
        engine = {k: os.environ.get(k, "?") for k in ("MXNET_CPU_WORKER_NTHREADS", "OMP_NUM_THREADS")}
        return f"threaded engine, {engine['MXNET_CPU_WORKER_NTHREADS']} workers × {engine['OMP_NUM_THREADS']} OpenMP thread(s)"

    def _context(self, device: str) -> Any:
        return _mxnet().cpu(int(device.partition(":")[2] or 0))

    def random(self, shape: tuple[int, ...], dtype: str, device: str) -> Callable[[], Any]:
        mx = _mxnet()
        return functools.partial(mx.np.random.normal, size=shape, dtype=dtype, ctx=self._context(device))

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> Any:
        return _mxnet().np.ones(shape, dtype=dtype, ctx=self._context(device))

    def namespace(self) -> Any:
        return _mxnet().np

    def barrier(self, device: str) -> None:
        _mxnet().npx.waitall()

    def wait(self, array: Any) -> None:
        array.wait_to_read()

    def to_host(self, array: Any) -> Any:
        return array.asnumpy()

    def is_asynchronous(self, device: str) -> bool:
        return os.environ.get("MXNET_ENGINE_TYPE") != "NaiveEngine"

    def device_delay(self, device: str) -> tuple[Any, str | None]:
        """None, with why: MXNet's engine has no delay whose length in place is known. A queued op per engine worker
        (one `sin` each, calibrated alone) did run before the work issued after it, but beside a step it cost
        0.36-0.93x its length alone (its workers and the step's ops share the cores and the FIFO queue), so the
        device's slack would read long: only the host side is perturbed on MXNet (docs/measured.md)."""
        if not self.is_asynchronous(device):
            return None, "mxnet runs synchronously here (NaiveEngine)"
        return None, NO_DEVICE_DELAY

    def sync_hooks(self, device: str) -> tuple[SyncHook, ...]:
        mx = _mxnet()
        legacy, array = mx.nd.NDArray, mx.np.ndarray  # mx.np.ndarray derives from NDArray and overrides some methods
        both = ((legacy, "mxnet.NDArray"), (array, "mxnet.np.ndarray"))
        return (
            SyncHook(legacy, "wait_to_read", "explicit wait", "mxnet.NDArray.wait_to_read"),
            SyncHook(mx.nd, "waitall", "explicit wait", "mxnet.nd.waitall"),
            SyncHook(mx.npx, "waitall", "explicit wait", "mxnet.npx.waitall"),
            SyncHook(legacy, "asnumpy", "conversion", "mxnet.NDArray.asnumpy"),
            *(SyncHook(owner, "asscalar", "conversion", f"{name}.asscalar") for owner, name in both),
            *(SyncHook(array, name, "conversion", f"mxnet.np.ndarray.{name}") for name in ("item", "tolist", "__float__", "__int__")),
            *(SyncHook(owner, "__bool__", "control flow", f"{name}.__bool__") for owner, name in both),
            *(SyncHook(owner, "__repr__", "print", f"{name}.__repr__") for owner, name in both),
            *(SyncHook(array, name, "print", f"mxnet.np.ndarray.{name}") for name in ("__str__", "__format__")),
        )

    no_profiler = "the mxnet 1.9.1 wheel is built without its profiler (feature PROFILER off)"
