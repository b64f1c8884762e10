"""The CUDA devices torch sees, and each one's compute mode, asked so that the parent process creates no CUDA context.

Planning (`devices`, resolving `-d cuda:N`) and the environment capture need
device names, memory and capability. Asked through torch in the parent, they
initialize CUDA there: a context on GPU 0 would hold about half a GiB for
the whole run and conflict with EXCLUSIVE_PROCESS mode, while the cases run
in workers anyway. So a child process answers, once per run, and only on a
machine where torch sees a CUDA device at all (`torch.cuda.is_available()`
counts devices without a context). A worker, or a process that has already
initialized CUDA, asks torch directly. A child that fails is not replaced by
asking here: the GPUs are then listed as unusable, with the child's reason
(`problem`), and the parent still holds no context.

The compute mode (`compute_modes`) is the driver's own attribute of each
device, read through libcuda in a child too (cuInit and an attribute query
create no context, but they leave the driver loaded in the parent, which a
forked child then could not use): EXCLUSIVE_PROCESS admits one process per
GPU at a time, which is what the run's case workers keep to
(engine.case_workers) and what `ab`, two processes measuring at once,
cannot.
"""

from __future__ import annotations

import ctypes
import functools
import json
import subprocess
import sys
from dataclasses import dataclass

from asyncbench.host import cuda_ids, processes

# A child that imports torch and reads device properties takes a few seconds at most; a hung driver must not hang the run.
QUERY_TIMEOUT_S = 60.0
#: what the child runs: the same query, printed as JSON
_QUERY = "import json; from asyncbench.backends.cuda_devices import _ask_here; print(json.dumps(_ask_here()))"
#: what the compute modes' child runs
_MODES = "import json; from asyncbench.backends.cuda_devices import _modes_here; print(json.dumps(_modes_here()))"
# cuda.h: CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, and CUcomputemode's values (1, EXCLUSIVE_THREAD, is gone since CUDA 8)
COMPUTE_MODE_ATTRIBUTE = 20
DEFAULT, PROHIBITED, EXCLUSIVE_PROCESS = "default", "prohibited", "exclusive_process"
COMPUTE_MODES = {0: DEFAULT, 2: PROHIBITED, 3: EXCLUSIVE_PROCESS}
#: the modes in which a GPU admits one process at a time
ONE_PROCESS = frozenset({EXCLUSIVE_PROCESS})


@dataclass(frozen=True)
class CudaDevice:
    """One CUDA device as torch lists it: its name, its total memory and its compute capability ('9.0')."""

    name: str
    memory_bytes: int
    capability: str


@dataclass(frozen=True)
class Listing:
    """The devices, or why they could not be listed (`problem`, one line; then `devices` is empty)."""

    devices: tuple[CudaDevice, ...] = ()
    problem: str | None = None


def _ask_here() -> list[dict]:
    import torch

    return [
        {
            "name": torch.cuda.get_device_name(i),
            "memory_bytes": torch.cuda.get_device_properties(i).total_memory,
            "capability": ".".join(map(str, torch.cuda.get_device_capability(i))),
        }
        for i in range(torch.cuda.device_count())
    ]


def _ask_a_child(code: str) -> list:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=QUERY_TIMEOUT_S, check=True)
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def _why_not(exc: Exception) -> str:
    """One line on why a child's answer is missing."""
    if isinstance(exc, subprocess.CalledProcessError):
        last = (exc.stderr or "").strip().splitlines()
        return f"the probe process failed ({last[-1] if last else f'exit status {exc.returncode}'})"
    if isinstance(exc, subprocess.TimeoutExpired):
        return f"the probe process did not answer within {QUERY_TIMEOUT_S:g} s (a hung driver?)"
    if isinstance(exc, OSError):
        return f"the probe process could not start ({exc.strerror or exc})"
    return "the probe process printed no device list"


@functools.cache
def listing() -> Listing:
    """Every CUDA device torch sees, in index order (none without CUDA), or why they could not be listed."""
    import torch

    if torch.version.cuda is None or not torch.cuda.is_available():
        return Listing()
    if processes.in_worker or torch.cuda.is_initialized():
        return Listing(tuple(CudaDevice(**device) for device in _ask_here()))
    try:
        found = _ask_a_child(_QUERY)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        return Listing(problem=_why_not(exc))  # asking here would leave a context in this process for the whole run
    return Listing(tuple(CudaDevice(**device) for device in found))


def cuda_devices() -> tuple[CudaDevice, ...]:
    """Every CUDA device torch sees, in index order (empty without CUDA, or when `listing` says why not)."""
    return listing().devices


def _modes_here() -> list[str]:
    """Each visible device's compute mode, from the driver (libcuda): no context is created."""
    cuda, devices = cuda_ids.driver_devices()
    modes = []
    for device in devices:
        value = ctypes.c_int(0)
        found = device is not None and cuda.cuDeviceGetAttribute(ctypes.byref(value), COMPUTE_MODE_ATTRIBUTE, device) == 0
        modes.append(COMPUTE_MODES.get(value.value, f"mode {value.value}") if found else "unknown")
    return modes


@functools.cache
def compute_modes() -> dict[int, str]:
    """Each visible CUDA device's compute mode by index (`default`, `exclusive_process`, `prohibited`); empty where
    there is no CUDA driver or it could not be asked (then nothing is known, and nothing is refused for it)."""
    try:
        modes = _modes_here() if processes.in_worker else _ask_a_child(_MODES)
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return {}
    return dict(enumerate(str(mode) for mode in modes))
