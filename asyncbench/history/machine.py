"""A machine's fingerprint: what must be equal for two runs' numbers to share a series.

CPU model and core count, GPU models, and the version of the framework the
case ran on: results from different machines (or from one machine after an
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
            for device in (facts.get("devices") or {}).values():
                gpus.add(str(device.get("name", device)) if isinstance(device, Mapping) else str(device))
    own = frameworks.get(backend)
    return {
        "cpu": environment.get("cpu"),
        "cores": environment.get("cpu_cores_logical"),
        "gpus": sorted(gpus),
        "framework": f"{backend} {own.get('version') if isinstance(own, Mapping) else None}",
    }


def fingerprint(info: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:FINGERPRINT_CHARS]
