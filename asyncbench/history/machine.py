"""A machine's fingerprint: what must be equal for two runs' numbers to share a series.

CPU model and core count, GPU models (from every framework's facts: JAX's
too), a GPU's compute mode or power cap where NVML recorded one that is not
the default, and the version of the framework the case ran on: results from different machines (or from one machine after an
upgrade of that framework) never mix in one series, while a run that adds
another backend does not split the series of the others. The hostname is
left out, so identical CI runners share their series.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

#: characters of the hash that name a machine (48 bits: no collision among the machines of any team)
FINGERPRINT_CHARS = 12


def describe(environment: Mapping[str, Any], backend: str, device: str) -> dict[str, Any]:
    """The facts of a results file's environment that make up the machine of a case on `backend` and `device`
    (GPU models only for a GPU case: a CPU case's numbers do not depend on them)."""
    frameworks = environment.get("frameworks") or {}
    gpus: set[str] = set()
    for facts in frameworks.values() if device.startswith("cuda") else ():
        if isinstance(facts, Mapping):
            for gpu in (facts.get("devices") or {}).values():
                gpus.add(str(gpu.get("name", gpu)) if isinstance(gpu, Mapping) else str(gpu))
    own = frameworks.get(backend)
    described = {
        "cpu": environment.get("cpu"),
        "cores": environment.get("cpu_cores_logical"),
        "gpus": sorted(gpus),
        "framework": f"{backend} {own.get('version') if isinstance(own, Mapping) else None}",
    }
    settings = _gpu_settings(environment) if device.startswith("cuda") else []
    if settings:  # only where one is not the default: a GPU as it comes keeps the series it had before NVML was read
        described["gpu_settings"] = settings
    return described


def _gpu_settings(environment: Mapping[str, Any]) -> list[str]:
    """The GPU settings NVML recorded (environment's `gpus`) that change a GPU's numbers: a compute mode other than
    DEFAULT (EXCLUSIVE_PROCESS: no other process shares the GPU) and a power limit below the GPU's default."""
    said: list[str] = []
    gpus = environment.get("gpus")
    for name, gpu in sorted(gpus.items()) if isinstance(gpus, Mapping) else ():
        if not isinstance(gpu, Mapping):
            continue
        if gpu.get("compute_mode") not in (None, "DEFAULT"):
            said.append(f"{name} compute mode {gpu['compute_mode']}")
        limit, default = gpu.get("power_limit_w"), gpu.get("default_power_limit_w")
        if isinstance(limit, (int, float)) and isinstance(default, (int, float)) and limit < default:
            said.append(f"{name} power limit {limit:g} W of {default:g} W")
    return said


def fingerprint(info: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:FINGERPRINT_CHARS]
