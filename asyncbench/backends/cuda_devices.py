"""The CUDA devices torch sees, asked so that the parent process creates no CUDA context.

Planning (`devices`, resolving `-d cuda:N`) and the environment capture need
device names, memory and capability. Asked through torch in the parent, they
initialize CUDA there: a context on GPU 0 would hold about half a GiB for
the whole run and conflict with EXCLUSIVE_PROCESS mode, while the cases run
in workers anyway. So a child process answers, once per run, and only on a
machine where torch sees a CUDA device at all (`torch.cuda.is_available()`
counts devices without a context). A worker, or a process that has already
initialized CUDA, asks torch directly.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from dataclasses import dataclass

from asyncbench.host import processes

# A child that imports torch and reads device properties takes a few seconds at most; a hung driver must not hang the run.
QUERY_TIMEOUT_S = 60.0

#: what the child runs: the same query, printed as JSON
_QUERY = "import json; from asyncbench.backends.cuda_devices import _ask_here; print(json.dumps(_ask_here()))"


@dataclass(frozen=True)
class CudaDevice:
    name: str
    memory_bytes: int
    capability: str


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


def _ask_a_child() -> list[dict]:
    done = subprocess.run([sys.executable, "-c", _QUERY], capture_output=True, text=True, timeout=QUERY_TIMEOUT_S, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@functools.cache
def cuda_devices() -> tuple[CudaDevice, ...]:
    """Every CUDA device torch sees, in index order (empty without CUDA)."""
    import torch

    if torch.version.cuda is None or not torch.cuda.is_available():
        return ()
    here = processes.in_worker or torch.cuda.is_initialized()
    try:
        found = _ask_here() if here else _ask_a_child()
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        found = _ask_here()  # the child failed: a context here is better than no devices
    return tuple(CudaDevice(**device) for device in found)
