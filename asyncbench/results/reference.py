"""The machine's own speed while a case ran: a fixed piece of work timed between the case's rounds, and what the OS said.

Two separate runs of the same code differ by the code's change *and* by the
machine's: another tenant on a shared runner, a clock that moved, a
neighbour that came and went. A case's own interval sees only the noise
inside its run. So each case also times a *reference*: the same fixed work
in every run of every version (`work` names it: a float32 product of a
fixed size, repeated, on the case's backend and device, with its threads),
sampled between the case's rounds all through its sampling, in the case's
own process. It feels what the case feels at the times the case feels it,
and since its work never changes, a change of its time between two runs is
the machine's (verdicts.machine turns two runs' references into the
machine's ratio with its interval).

Beside it, what the OS said over the same time: the load average, the share
of the time some task waited for a CPU (`cpu_pressure`, Linux's pressure
stall information: a neighbour on the same cores), the share of the
machine's CPU time that other processes used (`others_cpu`), and the share
the hypervisor stole (`steal`). verdicts.machine reads the pressure (or,
where the kernel does not report it, other processes' share) to see a
neighbour that was in one run only.

The type reads and writes its own part of a results file (`to_dict`,
`from_dict`) and checks a stored one before the history keeps it (`check`).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Mapping

from asyncbench.results import fields, recordable
from asyncbench.results.fields import At

# More reference samples than a case takes (measure.reference stops here): a case of fast rounds runs for minutes
# at most, and a few hundred samples already know the machine's ratio to a fraction of a percent.
MAX_SAMPLES = 2000
# The fields that are shares of the machine's time, 0-1.
SHARES = ("cpu_pressure", "others_cpu", "steal")
# No load average is above this per core: Linux's load counts tasks (running or waiting), and a kernel holds at most
# PID_MAX_LIMIT of them (2**22 on 64-bit), on one core at the least. A larger one (1e300) is an edit, not a reading.
MAX_LOAD_PER_CORE = 2**22
# The first results schema with a reference (results.schema's history): a reference in an older file was never
# written there (a file relabelled to an older schema), and a file of this schema or later stores one for each ok
# case of a workload that takes one (workloads.base.Workload.takes_reference), where the fixed work can be set up.
FIRST_SCHEMA = 10
# The built-in workloads that take no reference (workloads.base.Workload.takes_reference False): comm_overlap's ranks
# sample with their own Procedure. Named here, by the name a results file stores, so that a reader of a file decides
# without importing a workload (verdicts read results only); tests/verdicts/test_machine.py holds it to the classes.
WITHOUT_REFERENCE = frozenset({"comm_overlap"})
# No reference sample is shorter than a microsecond: the fixed work is four 256² float32 products (134 MFLOP) and a
# wait for them, and the wait alone (a device sync, a thread pool's join) costs more than that on any backend and
# device; the products take tens of microseconds on the fastest GPU and near a millisecond on a CPU. A shorter one is
# an edit (every sample set to 1e-9 s printed "the machine ran 577069× slower").
MIN_SAMPLE_S = 1e-6
# Stored to the nanosecond, as every sample is (results.nanoseconds.SAMPLE_DECIMALS).
SAMPLE_DECIMALS = 9


def takes_reference(workload: str) -> bool:
    """Whether a case of `workload` (its name in a results file) stores the machine's reference, where the fixed work
    can be set up: every workload measured through engine.measuring does; a built-in in WITHOUT_REFERENCE does not;
    a user's workload (a file, module or plugin, which a reader of the file may not have) is held to take one."""
    return workload not in WITHOUT_REFERENCE


@dataclass(frozen=True)
class Reference:
    """The reference's samples while one case ran, and the OS's account of the same time."""

    #: the fixed work, in words: what two runs must share for their references to compare
    work: str
    #: each sample's time (s), in the order taken
    samples_s: tuple[float, ...]
    #: the 1-minute load average at the end of the case, per core (None: not readable here)
    load_per_core: float | None = None
    #: the share of the time in which some task waited for a CPU while the case sampled, 0–1 (Linux's pressure stall
    #: information; None: not reported): a neighbour on the same cores, exactly, over any window
    cpu_pressure: float | None = None
    #: the share of all cores' time that other processes used while the case sampled, 0–1 (None: not readable)
    others_cpu: float | None = None
    #: the share of all cores' time the hypervisor stole while the case sampled, 0–1 (None: not readable)
    steal: float | None = None
    #: how long the case waited for a calm CPU before it sampled (measure.reference.Taker.settle; None: not waited)
    waited_s: float | None = None

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)

    def to_dict(self) -> dict[str, Any]:
        return {
            "work": self.work,
            "samples_s": [round(value, SAMPLE_DECIMALS) for value in self.samples_s],
            "load_per_core": self.load_per_core,
            "cpu_pressure": self.cpu_pressure,
            "others_cpu": self.others_cpu,
            "steal": self.steal,
            "waited_s": self.waited_s,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any] | None) -> Reference | None:
        """A stored reference; None in files before schema 10 and for cases that took none."""
        if not raw:
            return None
        return cls(
            work=str(raw["work"]),
            samples_s=tuple(float(value) for value in raw["samples_s"]),
            load_per_core=_optional(raw.get("load_per_core")),
            cpu_pressure=_optional(raw.get("cpu_pressure")),
            others_cpu=_optional(raw.get("others_cpu")),
            steal=_optional(raw.get("steal")),
            waited_s=_optional(raw.get("waited_s")),
        )

    @staticmethod
    def check(raw: Any, at: At, case_s: float | None = None) -> None:
        """A stored reference held to its shape (results.records.check): a name, times between MIN_SAMPLE_S and what
        the case ran, shares in 0–1, and samples that fit in the case they were taken in (`case_s`, its whole wall
        time; None: not stored).

        The reference keeps no summary of its own: every figure of it (its median, the machine's ratio between two
        runs, verdicts.machine) is computed from the samples, so samples that agree with each other give an honest
        ratio whatever they are. What bounds them is where they were taken: one after another, between the case's
        rounds, in its own process, all inside its wall time (engine.runner times the case around its sampling).
        Samples that add up to more than that (each set to 1e6 s: "the machine ran 645419458× slower") were never
        measured there: refused."""
        if raw is None:
            return
        stored = fields.mapping(raw, at)
        fields.name(stored.get("work"), at / "work", empty=False)
        samples = fields.listed(stored.get("samples_s"), at / "samples_s")
        if not samples or len(samples) > MAX_SAMPLES:
            (at / "samples_s").fail(f"expected 1 to {MAX_SAMPLES} reference samples, got {len(samples)}")
        if not fields.all_numbers(samples) or min(samples) <= 0:  # the whole list at once; else each value, to name the one
            for index, value in enumerate(samples):
                if fields.number(value, at / "samples_s" / index) <= 0:
                    (at / "samples_s" / index).fail(f"a reference sample takes time ({value:g})")
        if min(samples) < MIN_SAMPLE_S:  # each value, to name the one
            for index, value in enumerate(samples):
                if value < MIN_SAMPLE_S:
                    said = f"{value:g} s is shorter than the reference's fixed work takes on any device"
                    (at / "samples_s" / index).fail(f"{said} (four 256² products and a wait: {MIN_SAMPLE_S:g} s at the least)")
        taken = math.fsum(samples)
        if case_s is not None and taken > case_s + recordable.SAMPLE_ROUNDING_S * len(samples):
            said = f"{len(samples)} samples that add up to {taken:g} s, taken within a case that ran {case_s:g} s in all"
            (at / "samples_s").fail(f"{said}: {recordable.NOT_WRITTEN}")
        for key in ("load_per_core", "cpu_pressure", "others_cpu", "steal", "waited_s"):
            value = fields.optional_number(stored.get(key), at / key)
            if value is not None and value < 0:
                (at / key).fail(f"cannot be negative ({value:g})")
            if value is not None and value > 1 and key in SHARES:
                (at / key).fail(f"a share of the machine's time is at most 1 ({value:g})")
            if value is not None and value > MAX_LOAD_PER_CORE and key == "load_per_core":
                (at / key).fail(f"{value:g} is above any load a core has (the tasks a kernel holds, {MAX_LOAD_PER_CORE})")

    def describe_os(self) -> str:
        """'load 1.9 a core, others used 48% of the CPU, 0% stolen': what the OS said, in words ('' where nothing)."""
        said = []
        if self.load_per_core is not None:
            said.append(f"load {self.load_per_core:.2g} a core")
        if self.cpu_pressure is not None:
            said.append(f"a task waited for a CPU {self.cpu_pressure * 100:.0f}% of the time")
        if self.others_cpu is not None:
            said.append(f"other processes used {self.others_cpu * 100:.0f}% of the CPU")
        if self.steal is not None and self.steal > 0:
            said.append(f"{self.steal * 100:.0f}% stolen by the hypervisor")
        if self.waited_s is not None and self.waited_s >= 0.1:
            said.append(f"waited {self.waited_s:.1f} s for a calm CPU")
        return ", ".join(said)


def _optional(value: Any) -> float | None:
    return None if value is None else float(value)
