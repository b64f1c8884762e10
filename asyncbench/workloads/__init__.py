"""Workload registry: one line per workload. Importing these modules imports no framework."""

from __future__ import annotations

from asyncbench.workloads.barrier import Barrier
from asyncbench.workloads.base import Metric, Param, Prepared, Workload
from asyncbench.workloads.comm_overlap import CommOverlap
from asyncbench.workloads.conversion import Conversion
from asyncbench.workloads.copy_overlap import CopyOverlap
from asyncbench.workloads.matmul import Matmul
from asyncbench.workloads.multi_device import MultiDevice
from asyncbench.workloads.small_ops import SmallOps
from asyncbench.workloads.sync_async import SyncAsync
from asyncbench.workloads.training_memory import TrainingMemory

WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (Matmul(), SyncAsync(), Barrier(), Conversion(), CopyOverlap(), MultiDevice(), TrainingMemory(), SmallOps(), CommOverlap())
}

__all__ = ["WORKLOADS", "Metric", "Param", "Prepared", "Workload"]
