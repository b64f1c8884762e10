"""Which physical GPU each `cuda:N` of this process is: its UUID and PCI bus id, as CUDA itself numbers its devices.

CUDA numbers the GPUs it shows a process by CUDA_DEVICE_ORDER (FASTEST_FIRST by default, whose order among GPUs is
not promised) and CUDA_VISIBLE_DEVICES (indices in that order, GPU UUIDs or unique prefixes of them, MIG instances;
an invalid entry hides itself and every entry after it). NVML, nvidia-smi and the driver's tools number GPUs in PCI
bus order and know neither variable. So `cuda:N` is named by the driver's own answer for CUDA device N: its UUID
(cuDeviceGetUuid_v2, a MIG instance's own where it is one) and PCI bus id (cuDeviceGetPCIBusId), read from libcuda
with no context created (host.nvml looks the GPU up by them). The driver is asked in a child process, once, as
backends.cuda_devices asks compute modes: cuInit would leave the driver loaded in the run's own process. A case
worker, which uses CUDA anyway, asks it itself.

`nvml_gpus` looks each one up in NVML (pynvml, loaded by host.nvml) by that UUID, or by its PCI bus id where the
driver gave no UUID. Where the driver cannot be asked, CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER are read as CUDA
reads them: a GPU UUID or a unique prefix of one names its GPU; an index names NVML's GPU of that index only where
CUDA counts in PCI order too (CUDA_DEVICE_ORDER=PCI_BUS_ID, or one GPU); an invalid entry hides itself and every
later one. What cannot be told (a MIG instance, an index in CUDA's default order, an ambiguous prefix) is unknown,
with why: never another GPU.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Callable

from asyncbench.host import processes

# A child that loads libcuda and reads two attributes per device takes well under a second; a hung driver must not
# hang the run (the same bound as the device listing's child, backends.cuda_devices.QUERY_TIMEOUT_S).
QUERY_TIMEOUT_S = 60.0
#: what the child runs: the driver's answer, printed as JSON
_QUERY = "import json; from asyncbench.host.cuda_ids import _here; print(json.dumps(_here()))"
#: cuDeviceGetPCIBusId's buffer: "0000:00:00.0" and its NUL, with room for a longer domain
_BUS_ID_CHARS = 32


@dataclass(frozen=True)
class Identity:
    """One CUDA device as the driver names it (None: the driver did not say)."""

    #: "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6", as nvidia-smi -L writes it (a MIG instance's is not a GPU's)
    uuid: str | None
    #: "0000:3B:00.0"
    pci_bus_id: str | None


def _uuid_text(raw: bytes) -> str:
    """A CUuuid's 16 bytes as nvidia-smi writes a GPU's UUID."""
    hexed = raw.hex()
    return f"GPU-{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:32]}"


def driver_devices() -> tuple[Any, list[ctypes.c_int | None]]:
    """The CUDA driver (libcuda) and a handle of each device it lists, in CUDA's order (None where the driver would
    not give one; no devices where it would not start): what asks the driver about devices without a context."""
    cuda = ctypes.CDLL("libcuda.so.1")
    count = ctypes.c_int(0)
    if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return cuda, []
    devices: list[ctypes.c_int | None] = []
    for index in range(count.value):
        device = ctypes.c_int(0)
        devices.append(device if cuda.cuDeviceGet(ctypes.byref(device), index) == 0 else None)
    return cuda, devices


def _here() -> list[dict[str, str | None]]:
    """Each CUDA device's UUID and PCI bus id, in CUDA's order, from the driver (libcuda): no context is created."""
    cuda, devices = driver_devices()
    # _v2 (CUDA 11.4+) gives a MIG instance its own UUID; the first version gave its parent GPU's
    get_uuid = getattr(cuda, "cuDeviceGetUuid_v2", None) or getattr(cuda, "cuDeviceGetUuid", None)
    found: list[dict[str, str | None]] = []
    for device in devices:
        if device is None:
            found.append({"uuid": None, "pci_bus_id": None})
            continue
        raw = (ctypes.c_ubyte * 16)()
        uuid = _uuid_text(bytes(raw)) if get_uuid is not None and get_uuid(raw, device) == 0 else None
        bus = ctypes.create_string_buffer(_BUS_ID_CHARS)
        pci = bus.value.decode() if cuda.cuDeviceGetPCIBusId(bus, _BUS_ID_CHARS, device) == 0 else None
        found.append({"uuid": uuid, "pci_bus_id": pci or None})
    return found


@functools.cache
def driver_identities() -> tuple[Identity, ...] | None:
    """Each `cuda:N` of this process as the driver names it, in CUDA's order; None where the driver could not be asked
    (no libcuda, a failed or hung child): then which GPU is which is read from the variables, or unknown."""
    try:
        found = _here() if processes.in_worker else _ask_a_child()
    except (OSError, subprocess.SubprocessError, ValueError, IndexError, TypeError, KeyError):
        return None
    return tuple(Identity(str(d["uuid"]) if d.get("uuid") else None, str(d["pci_bus_id"]) if d.get("pci_bus_id") else None) for d in found)


def _ask_a_child() -> list[dict[str, str | None]]:
    done = subprocess.run([sys.executable, "-c", _QUERY], capture_output=True, text=True, timeout=QUERY_TIMEOUT_S, check=True)
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    if not isinstance(answer, list) or not all(isinstance(d, dict) for d in answer):
        raise ValueError("the driver's child printed no device list")
    return answer


def _visible_entries() -> tuple[str, ...] | None:
    """CUDA_VISIBLE_DEVICES's entries in order (None: unset, every GPU visible; (): set empty, none visible)."""
    said = os.environ.get("CUDA_VISIBLE_DEVICES")
    if said is None:
        return None
    return tuple(entry.strip() for entry in said.split(",")) if said.strip() else ()


def _pci_order() -> bool:
    """Whether CUDA numbers GPUs in PCI bus order here (CUDA_DEVICE_ORDER=PCI_BUS_ID), as NVML does."""
    return os.environ.get("CUDA_DEVICE_ORDER", "").strip().upper() == "PCI_BUS_ID"


#: why a MIG instance is not read
MIG_UNKNOWN = "a MIG instance: its clocks and limits are its parent GPU's, not asked here"
#: why an index in CUDA's default order cannot be matched to NVML's GPU
ORDER_UNKNOWN = (
    "CUDA numbers GPUs fastest first (CUDA_DEVICE_ORDER unset), NVML in PCI bus order, and the two need not agree; "
    "set CUDA_DEVICE_ORDER=PCI_BUS_ID"
)


@dataclass(frozen=True)
class Gpu:
    """One `cuda:N` of this process to NVML: its handle, or why which GPU it is could not be told (`unknown`)."""

    handle: Any | None
    unknown: str | None = None


def nvml_gpus(nvml: Any) -> list[Gpu]:
    """cuda:0, cuda:1, ... of this process, in CUDA's order, as NVML's GPUs (module docstring)."""
    identities = driver_identities()
    if identities is not None:
        return [_by_identity(nvml, identity) for identity in identities]
    return _by_variables(nvml)


def _found(lookup: Callable[[], Any]) -> Any | None:
    """An NVML lookup's answer, or None where it has none (NVMLError_NotFound, _InvalidArgument, _NotSupported)."""
    try:
        return lookup()
    except Exception:  # noqa: BLE001 - any NVMLError: nothing found
        return None


def _by_identity(nvml: Any, identity: Identity) -> Gpu:
    """The GPU with the UUID the driver gave (or, without one, its PCI bus id)."""
    if identity.uuid:
        handle = _found(lambda: nvml.nvmlDeviceGetHandleByUUID(identity.uuid))
        if handle is not None:
            return Gpu(handle)
        mig = "MIG-" + identity.uuid.removeprefix("GPU-")
        if _found(lambda: nvml.nvmlDeviceGetHandleByUUID(mig)) is not None:
            return Gpu(None, MIG_UNKNOWN)
        return Gpu(None, f"NVML lists no GPU with the UUID CUDA's driver gives it ({identity.uuid}; a MIG instance?)")
    if identity.pci_bus_id:
        handle = _found(lambda: nvml.nvmlDeviceGetHandleByPciBusId(identity.pci_bus_id))
        return Gpu(handle) if handle is not None else Gpu(None, f"NVML lists no GPU at PCI bus id {identity.pci_bus_id}")
    return Gpu(None, "CUDA's driver gave neither its UUID nor its PCI bus id")


def _uuid_of(nvml: Any, handle: Any) -> str:
    uuid = _found(lambda: nvml.nvmlDeviceGetUUID(handle))
    return (uuid.decode() if isinstance(uuid, bytes) else str(uuid or "")).lower()


def _by_variables(nvml: Any) -> list[Gpu]:
    """The GPUs CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER show, as CUDA reads them, where the driver was not asked."""
    count = _found(lambda: int(nvml.nvmlDeviceGetCount()))
    if not count:
        return []
    exact = _pci_order() or count == 1

    def by_index(index: int) -> Gpu:
        if not exact:
            return Gpu(None, ORDER_UNKNOWN)
        handle = _found(lambda: nvml.nvmlDeviceGetHandleByIndex(index))
        return Gpu(handle) if handle is not None else Gpu(None, f"NVML did not open its GPU {index}")

    entries = _visible_entries()
    if entries is None:
        return [by_index(index) for index in range(count)]
    handles = [_found(functools.partial(nvml.nvmlDeviceGetHandleByIndex, index)) for index in range(count)]
    uuids = [(_uuid_of(nvml, handle), handle) for handle in handles if handle is not None]
    gpus: list[Gpu] = []
    seen: set[int] = set()
    for entry in entries:
        if entry.isdigit():
            if int(entry) >= count or int(entry) in seen:
                break  # CUDA: an invalid index hides itself and every entry after it
            seen.add(int(entry))
            gpus.append(by_index(int(entry)))
        elif entry.startswith("GPU-"):
            starting = [handle for uuid, handle in uuids if uuid.startswith(entry.lower())]
            if not starting:
                break
            if len(starting) > 1:
                gpus.append(Gpu(None, f"CUDA_VISIBLE_DEVICES entry {entry} is the start of {len(starting)} GPUs' UUIDs"))
                break
            gpus.append(Gpu(starting[0]))
        elif entry.startswith("MIG-"):
            gpus.append(Gpu(None, MIG_UNKNOWN))
        else:
            break
    return gpus
