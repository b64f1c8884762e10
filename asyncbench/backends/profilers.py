"""Framework profilers that record a Chrome-trace timeline of one run (for `--trace`).

Each is a context manager around the run; `annotate(name)` puts a named
range into the framework's own timeline (so the harness's issue, sync and
done ranges line up with the framework's lanes on its own clock), and
`trace()` returns the recorded trace as a Chrome-trace JSON object after the
block. Frameworks are imported only when a profiler is made.
- torch: `torch.profiler` (CPU ops; CUDA kernels, memcpys and streams on a
  GPU), ranges through `record_function`;
- JAX: `jax.profiler.trace(create_perfetto_trace=True)`, ranges through
  `TraceAnnotation`.
Backends without one (NumPy; MXNet, whose 1.9.1 wheel is built without its
profiler; CuPy, whose timeline comes from nsys) get the harness's ranges
alone (trace.py).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import tempfile
from pathlib import Path
from typing import Any, ContextManager, Iterator


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Kineto prints a line on fd 2 when profiling starts and stops; a run's terminal is no place for it."""
    saved = os.dup(2)
    with open(os.devnull, "w") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


class TorchProfiler:
    """torch.profiler over the block; CUDA activity too when the device is a GPU."""

    def __init__(self, device: str):
        self._device = device
        self._profile: Any = None

    def __enter__(self) -> TorchProfiler:
        from torch.profiler import ProfilerActivity, profile

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self._device.startswith("cuda") else [])
        self._profile = profile(activities=activities)
        with _quiet_stderr():
            self._profile.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        with _quiet_stderr():
            self._profile.__exit__(*exc)

    def annotate(self, name: str) -> ContextManager[Any]:
        from torch.profiler import record_function

        return record_function(name)

    def trace(self) -> dict[str, Any]:
        with tempfile.TemporaryDirectory(prefix="asyncbench-trace-") as folder:
            path = Path(folder) / "trace.json"
            self._profile.export_chrome_trace(str(path))
            return json.loads(path.read_text())


class JaxProfiler:
    """jax.profiler.trace into a temporary folder, read back from its Perfetto-compatible JSON."""

    def __init__(self) -> None:
        self._folder: tempfile.TemporaryDirectory | None = None
        self._session: Any = None

    def __enter__(self) -> JaxProfiler:
        import jax

        self._folder = tempfile.TemporaryDirectory(prefix="asyncbench-jax-trace-")
        try:
            self._session = jax.profiler.trace(self._folder.name, create_perfetto_trace=True)
            self._session.__enter__()
        except BaseException:
            self._folder.cleanup()  # no trace() will come to remove it
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._session.__exit__(*exc)
        except BaseException:
            self._cleanup()
            raise
        if exc[0] is not None:  # the traced run failed: no trace() will come to remove the folder
            self._cleanup()

    def _cleanup(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()

    def annotate(self, name: str) -> ContextManager[Any]:
        import jax

        return jax.profiler.TraceAnnotation(name)

    def trace(self) -> dict[str, Any]:
        assert self._folder is not None
        try:
            found = sorted(Path(self._folder.name).rglob("perfetto_trace.json.gz"))
            if not found:
                raise RuntimeError("jax.profiler wrote no perfetto_trace.json.gz")
            data = json.loads(gzip.decompress(found[-1].read_bytes()))
            data["traceEvents"] = [e for e in data.get("traceEvents", []) if e.get("ph")]  # jax ends the list with a {}
            return data
        finally:
            self._cleanup()
