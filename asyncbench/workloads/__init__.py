"""Workload registry: one line per built-in workload. Importing these modules imports no framework.

`BUILT_IN` is read-only: a user's workload (a file, a module, a plugin) never
joins it; `plugins.load` keeps those apart, and `plugins.is_built_in` says
which is which by where a workload came from.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

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

#: the workloads that ship with asyncbench, by name, frozen: loading a config cannot add to it or change it
BUILT_IN: Mapping[str, Workload] = MappingProxyType(
    {
        w.name: w
        for w in (Matmul(), SyncAsync(), Barrier(), Conversion(), CopyOverlap(), MultiDevice(), TrainingMemory(), SmallOps(), CommOverlap())
    }
)

__all__ = ["BUILT_IN", "Metric", "Param", "Prepared", "Workload"]
