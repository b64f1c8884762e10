"""What asyncbench reads beside a case on a real GPU (issue 53, item 10): which GPU NVML reads for `cuda:0` under
reordered and UUID CUDA_VISIBLE_DEVICES, whether its throttle reasons are answered, and that torch's sync debug
warnings from another thread are not credited to the measured one.

Tested on the CPU against models (tests/host/test_nvml_gpu_identity.py, tests/backends/test_torch_syncs_threads.py);
these checks are what only a real driver and torch can answer. Their times are estimates until a lent GPU runs them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from .probes import ROOT, no_cuda

#: what each probe process prints: the driver's names for its CUDA devices, the GPU NVML reads for cuda:0 (its UUID)
#: against torch's UUID of cuda:0, the guard's state text, and the throttle reasons as asyncbench and pynvml read them
_PROBE = """
import json
from asyncbench.host import cuda_ids, nvml
pynvml, why = nvml._library()
found = {"nvml": why}
if pynvml is not None:
    driver = cuda_ids.driver_identities()
    found["driver"] = [vars(d) for d in driver] if driver is not None else None
    gpus = cuda_ids.nvml_gpus(pynvml)
    first = gpus[0] if gpus else None
    found["unknown"] = first.unknown if first is not None else "no cuda:0"
    if first is not None and first.handle is not None:
        uuid = pynvml.nvmlDeviceGetUUID(first.handle)
        found["nvml_uuid"] = uuid.decode() if isinstance(uuid, bytes) else uuid
        try:
            read = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None) or pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
            found["raw_reasons"] = int(read(first.handle))
        except Exception as exc:
            found["raw_reasons"] = f"{type(exc).__name__}: {exc}"
    state = nvml.state("cuda:0")
    found["state"] = state.text() if state is not None else None
    found["reasons"] = list(state.throttle_reasons) if state is not None and state.throttle_reasons is not None else None
import torch
found["torch_uuid"] = str(getattr(torch.cuda.get_device_properties(0), "uuid", "") or "") or None
print(json.dumps(found))
"""


def _plain(uuid: str | None) -> str | None:
    """A UUID as one string whatever its writer: lower case, without the "GPU-" nvidia-smi writes (torch's may lack it)."""
    return uuid.lower().removeprefix("gpu-") if uuid else None


def _probe(environment: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, env={**os.environ, **environment}, capture_output=True, text=True)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]}
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def nvml_identity() -> dict[str, Any]:  # about 15 s on an H100 (estimated): three to five probes, each starting CUDA
    """NVML's GPU for cuda:0 is torch's cuda:0 (by UUID) with CUDA_VISIBLE_DEVICES unset, a GPU's UUID, a prefix of
    it, and (2+ GPUs) reordered by index under PCI order and by UUIDs; the throttle reasons are said unknown exactly
    where pynvml's own read fails."""
    why = no_cuda()
    if why:
        return {"skipped": why}
    try:
        import pynvml
    except ImportError:
        return {"skipped": "nvidia-ml-py is not installed (pip install 'asyncbench[gpu]')"}
    pynvml.nvmlInit()
    uuids = []
    for index in range(pynvml.nvmlDeviceGetCount()):
        uuid = pynvml.nvmlDeviceGetUUID(pynvml.nvmlDeviceGetHandleByIndex(index))
        uuids.append(uuid.decode() if isinstance(uuid, bytes) else uuid)
    # each setting, and the NVML GPU (its UUID) cuda:0 must be under it
    settings: dict[str, tuple[dict[str, str], str]] = {
        "default": ({}, ""),  # CUDA's own order: torch's cuda:0, whichever GPU that is
        "uuid": ({"CUDA_VISIBLE_DEVICES": uuids[0]}, uuids[0]),
        "uuid-prefix": ({"CUDA_VISIBLE_DEVICES": uuids[0][:12]}, uuids[0]),
    }
    if len(uuids) > 1:
        settings["reordered-pci"] = ({"CUDA_VISIBLE_DEVICES": "1,0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}, uuids[1])
        settings["reordered-uuids"] = ({"CUDA_VISIBLE_DEVICES": f"{uuids[1]},{uuids[0]}"}, uuids[1])
    found: dict[str, Any] = {"gpus": len(uuids)}
    verified = True
    for name, (environment, expected) in settings.items():
        answer = _probe(environment)
        nvml_uuid = _plain(answer.get("nvml_uuid"))
        same = nvml_uuid is not None and nvml_uuid == _plain(answer.get("torch_uuid")) and (not expected or nvml_uuid == _plain(expected))
        # unknown exactly where pynvml's own read failed, never "not throttled" for an unanswered read
        reasons_said = isinstance(answer.get("raw_reasons"), int) == (answer.get("reasons") is not None)
        answer["verified"] = same and reasons_said and answer.get("state") is not None
        verified = verified and answer["verified"]
        found[name] = answer
    found["verified"] = verified
    return found


def sync_debug_threads() -> dict[str, Any]:  # about 5 s on an H100 (estimated): CUDA start-up and four .item() calls
    """torch's sync debug warnings from a second thread's `.item()` reach no witness; the measured thread's do."""
    why = no_cuda()
    if why:
        return {"skipped": why}
    import threading

    import torch

    from asyncbench.backends.torch_syncs import debug_mode_available, debug_warnings

    if not debug_mode_available(torch):
        return {"skipped": f"torch {torch.__version__} has no sync debug mode"}
    x = torch.ones(256, device="cuda:0")
    (x + 1).sum().item()  # CUDA started, the kernels loaded, before the mode is on
    seen: list[tuple[int, str]] = []

    def other() -> None:
        for _ in range(3):
            (x + 1).sum().item()

    with debug_warnings(torch, lambda frame, where: seen.append((threading.get_ident(), where))):
        thread = threading.Thread(target=other, name="asyncbench-check-other")
        thread.start()
        thread.join()
        from_other = len(seen)
        (x + 1).sum().item()  # this thread's: credited
    own = [where for ident, where in seen if ident == threading.get_ident()]
    return {
        "other_thread_credited": from_other,
        "own_credited": len(own),
        "own_where": own[0] if own else None,
        "verified": from_other == 0 and len(own) == 1 and len(seen) == 1,
    }
