"""The one small interface every workload implements.

A workload declares its name, its parameters (with defaults and `--quick`
values), its variants and its metrics; `setup` allocates on a device and
returns plain callables to time; `compute_metrics` turns the measured
variants into the workload's numbers; `reading` says in one line what they
mean. Workload modules import no framework at module level.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from asyncbench.backends.base import Backend
from asyncbench.model import Memory, Samples, Settings, VariantResult

INT = "int"
FLOAT = "float"
BOOL = "bool"
STR = "str"
SHAPE = "shape"  # a list of positive ints
INTS = "ints"  # a non-empty list of ints within the param's bounds
PARAM_KINDS = (INT, FLOAT, BOOL, STR, SHAPE, INTS)


@dataclass(frozen=True)
class Param:
    """A workload parameter; `quick` is the value under --quick (None: same as default)."""

    name: str
    kind: str
    default: Any
    help: str
    quick: Any = None
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None  # a regular expression a STR value must match


DTYPES = ("float16", "bfloat16", "float32", "float64")
#: the element-type parameter most workloads share
DTYPE = Param("dtype", STR, "float32", "element type", choices=DTYPES)


@dataclass(frozen=True)
class Metric:
    """A number a workload derives from its variants, with its unit for rendering."""

    name: str
    unit: str  # "s", "x" (ratio), "GFLOP/s", "" (plain number), "bool"
    help: str


@dataclass
class Prepared:
    """What `setup` returns: the callables to time, and how to finish them.

    Each variant callable issues the variant's work and returns without a
    device-wide sync (so the harness can read the issue clock); `sync` then
    waits for every device and stream the case touched.
    """

    variants: dict[str, Callable[[], Any]]
    sync: Callable[[], None]
    #: after timing: None if the results are right, else what is wrong (an error row)
    verify: Callable[[], str | None] | None = None
    #: releases what setup took (thread pools, thread counts); always called
    close: Callable[[], None] | None = None
    #: what the case really ran on, when the device name alone does not say it
    note: str | None = None


@dataclass(frozen=True)
class Measured:
    """A case's raw measurement: what the runner summarizes into a result."""

    samples: Mapping[str, Samples]
    memory: Mapping[str, Memory]
    verifies: bool = False  # the workload checked its results: a `verified` metric is added
    problem: str | None = None  # what verification found wrong, if anything
    note: str | None = None


#: per-variant metrics are declared once with a K placeholder: epoch_s_k1, epoch_s_k2 -> epoch_s_kK
PER_VARIANT_SUFFIX = re.compile(r"_k\d+$")


class Workload(ABC):
    name: str = ""
    summary: str = ""
    params: tuple[Param, ...] = ()
    variants: tuple[str, ...] = ()
    metrics: tuple[Metric, ...] = ()

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)

    def metric(self, name: str) -> Metric | None:
        """The declaration of metric `name` (epoch_s_k2 finds epoch_s_kK), or None if undeclared."""
        declared = {m.name: m for m in self.metrics}
        return declared.get(name) or declared.get(PER_VARIANT_SUFFIX.sub("_kK", name))

    def defaults(self, quick: bool = False) -> dict[str, Any]:
        """Default parameter values (the textbook's sizes, or the quick ones)."""
        return {p.name: (p.quick if quick and p.quick is not None else p.default) for p in self.params}

    def skip_reason(self, backend: Backend, device: str, params: Mapping[str, Any]) -> str | None:
        """Why this case cannot mean anything on this backend/device, or None."""
        dtype = params.get("dtype")
        if dtype is not None and dtype not in backend.dtypes:
            return f"{backend.name} has no {dtype}"
        return None

    def measure_itself(self, backend: Backend, device: str, params: Mapping[str, Any], settings: Settings) -> Measured | None:
        """Measure the case outside this process (torch.distributed ranks), or None for the usual path:
        `setup` here, then the runner times the variants."""
        return None

    @abstractmethod
    def setup(self, backend: Backend, device: str, params: Mapping[str, Any]) -> Prepared:
        """Allocate inputs on `device` (outside the timed region) and build the variants."""

    @abstractmethod
    def compute_metrics(
        self, params: Mapping[str, Any], variants: Mapping[str, VariantResult]
    ) -> dict[str, float | None]:
        """The workload's metrics from its measured variants."""

    @abstractmethod
    def reading(self, metrics: Mapping[str, float | None], device: str) -> str:
        """One line saying what the metrics mean, for the table."""
