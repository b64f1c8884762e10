"""Workload registry: one line per workload. Importing these modules imports no framework."""

from __future__ import annotations

from asyncbench.workloads.base import Metric, Param, Prepared, Workload
from asyncbench.workloads.matmul import Matmul
from asyncbench.workloads.sync_async import SyncAsync

WORKLOADS: dict[str, Workload] = {w.name: w for w in (Matmul(), SyncAsync())}

__all__ = ["WORKLOADS", "Metric", "Param", "Prepared", "Workload"]
