"""CPU thread pools: the variables that size them, `run --threads N` pinning them, and what a CPU row says of them.

torch, NumPy and JAX split a CPU product over a pool of threads, one per
core unless a variable sizes it: torch's intra-op pool reads
OMP_NUM_THREADS, then MKL_NUM_THREADS; NumPy's OpenBLAS reads
OPENBLAS_NUM_THREADS, then OMP_NUM_THREADS (MKL builds MKL_NUM_THREADS);
XLA's CPU client, JAX's, reads PJRT_NPROC and none of the others
(OMP_NUM_THREADS=1 left a jitted 1024² product running on both of 2 cores;
PJRT_NPROC=1 on one). Alone on its cores a free pool is the fastest, and
it is what the user's code does in production; beside another busy process
each product's threads wait for the one that lost its core, and the same
step swings several-fold from run to run under intervals that stay tight
(benchmarks/thread_pools.py; docs/guides/cpu-threads.md has the figures).

So asyncbench does not pin by default (a default that changed how the
user's code runs would measure something it never does) and instead says,
on each CPU row whose pool was free, when the cores were shared while it
sampled (its reference's CPU pressure, measure.reference). `run --threads
N` pins every pool to N threads: the variables set in this process before
a worker starts (each worker, MXNet's own Python too, inherits them
before it imports its framework) and, once the frameworks are imported in a
worker (and here, where the run's facts are read), torch's two pools, which
no variable sizes alone: torch.set_num_threads and torch's inter-op pool
(torch.set_num_interop_threads, allowed once, before any inter-op work:
`apply`). N above the usable cores is warned about (`oversubscribed`). The results' environment records
the variables, ASYNCBENCH_THREADS among them. A row of an experiment that
puts two backends side by side on the CPU says each one's pool, so that a
"5× faster" that is two pools, not two programs, shows where it is read.

MXNet's engine is sized by asyncbench already (its backend: engine workers
× OpenMP threads = the usable cores): its rows are left out of these notes.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from asyncbench.results.model import OK, Result
from asyncbench.verdicts import machine

if TYPE_CHECKING:
    from asyncbench.backends.base import Backend

#: `run --threads N` as the workers see it: the count every pool was pinned to
PINNED_VARIABLE = "ASYNCBENCH_THREADS"
#: what sizes each pooled backend's CPU pool, first found wins (see the module's docstring)
POOL_VARIABLES: Mapping[str, tuple[str, ...]] = {
    "torch": ("OMP_NUM_THREADS", "MKL_NUM_THREADS"),
    "numpy": ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS"),
    "jax": ("PJRT_NPROC",),
}
#: the variables `--threads N` sets: every one that sizes a pool above
PINNING = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PJRT_NPROC")


def pinning_variables(count: int) -> dict[str, str]:
    """The variables that pin every pool to `count` threads (and say so to the workers: PINNED_VARIABLE)."""
    return {**{name: str(count) for name in PINNING}, PINNED_VARIABLE: str(count)}


def pin(count: int) -> None:
    """`run --threads N`: set the pinning variables in this process, before any worker starts (they inherit them and
    read them when they import their frameworks), overriding any the user set; a framework already imported here
    is set too (`apply`)."""
    os.environ.update(pinning_variables(count))
    apply(name for name in POOL_VARIABLES if name in sys.modules)


def oversubscribed(count: int, cores: int | None = None) -> str | None:
    """The warning for `--threads N` above the usable cores (host.facts.usable_cores, this process's affinity): each
    pool's N threads then take turns on fewer cores, so a pinned row measures that wait, and no longer the code's
    cost; None where N fits."""
    from asyncbench.host.facts import usable_cores

    cores = usable_cores() if cores is None else cores
    if count <= cores:
        return None
    return (
        f"--threads {count} is more than the {cores} usable core(s) here: each pool's threads take turns on them, "
        f"so the rows measure that wait; --threads {cores} or fewer pins without it"
    )


def pinned(environ: Mapping[str, str] | None = None) -> int | None:
    """The count `--threads` pinned every pool to in this run (None: not pinned by asyncbench)."""
    value = (os.environ if environ is None else environ).get(PINNED_VARIABLE, "")
    return int(value) if value.isdigit() and int(value) > 0 else None


def apply(backends: Iterable[str]) -> None:
    """In a process whose frameworks are imported: each backend's own thread settings (Backend.pin_threads: torch's
    intra-op and inter-op pools) to the pinned count, where the run is pinned; nothing otherwise. The variables
    already sized the other pools at import."""
    count = pinned()
    if count is None:
        return
    from asyncbench.backends import get_backend

    for name in backends:
        try:
            get_backend(name).pin_threads(count)
        except Exception:  # noqa: BLE001,S112 - a framework that failed to import: its cases say why
            continue


def recorded(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The pool variables the results' `thread_variables` records beyond host.facts.THREAD_VARIABLES: JAX's
    (PJRT_NPROC) and PINNED_VARIABLE (`run --threads N`), where set."""
    environ = os.environ if environ is None else environ
    return {name: environ[name] for name in ("PJRT_NPROC", PINNED_VARIABLE) if name in environ}


@dataclass(frozen=True)
class Pools:
    """What one run's CPU pools were: the sizing variables in its environment, its usable cores, and, per
    experiment, the pooled backends it runs on the CPU (those compared side by side)."""

    variables: Mapping[str, str]
    cores: int
    compared: Mapping[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def of_run(cls, cases: Iterable[tuple[str, str, str]], environ: Mapping[str, str] | None = None) -> Pools:
        """This run's pools, from its cases that will run: (experiment, backend, device) each."""
        from asyncbench.host.facts import usable_cores

        environ = os.environ if environ is None else environ
        return cls(_sizing(environ), usable_cores(), compared_of(cases))

    @classmethod
    def of_environment(cls, environment: Mapping[str, Any], compared: Mapping[str, frozenset[str]]) -> Pools:
        """The pools a results file's run had, from its environment (the variables it recorded, its usable cores),
        with `compared` taken from the cases of the whole plan: `merge` of shards that each ran one backend says what
        the plan's run would have (each shard alone saw no other backend beside its own)."""
        variables = environment.get("thread_variables")
        cores = environment.get("cpu_affinity") or environment.get("cpu_cores_logical")
        return cls(
            _sizing(variables if isinstance(variables, Mapping) else {}),
            cores if isinstance(cores, int) and not isinstance(cores, bool) and cores > 0 else 1,
            compared,
        )

    def sized_by(self, backend: str) -> tuple[str, str] | None:
        """(variable, value) that sized `backend`'s pool; None: free (one thread per core), or not a pooled backend."""
        for name in POOL_VARIABLES.get(backend, ()):
            if self.variables.get(name, "").strip():
                return name, self.variables[name].strip()
        return None

    def free(self, backend: str) -> bool:
        return backend in POOL_VARIABLES and self.sized_by(backend) is None

    def describe(self, backend: str) -> str:
        """'torch free (OMP_NUM_THREADS, MKL_NUM_THREADS unset; 2 usable cores)' or 'jax PJRT_NPROC=1'."""
        sized = self.sized_by(backend)
        if sized is not None:
            return f"{backend} {sized[0]}={sized[1]}"
        return f"{backend} free ({', '.join(POOL_VARIABLES[backend])} unset; {self.cores} usable cores)"

    def size(self, backend: str) -> str:
        """`backend`'s pool size as compared across backends: the count a variable set, or 'free' (the framework's own
        choice: torch counts physical cores, OpenBLAS and XLA logical ones); on one usable core every pool is '1'."""
        sized = self.sized_by(backend)
        if sized is None:
            return "1" if self.cores == 1 else "free"
        return sized[1]


def shared(cpu_pressure: float | None, others_cpu: float | None) -> str | None:
    """How a row's sampling shared its cores, in words, where every reading there is says it did (None: one says it
    did not, or none was read): tasks waiting for a CPU (not only the case's own pool's), other processes busy."""
    if cpu_pressure is None and others_cpu is None:
        return None
    # the rule `compare` and the run's line read a neighbour by (verdicts.machine.neighbour); where no pressure was
    # read, other processes' share alone says so here
    if cpu_pressure is not None and not machine.neighbour(cpu_pressure, others_cpu):
        return None
    if cpu_pressure is None and others_cpu is not None and others_cpu < machine.OTHERS:
        return None
    said = []
    if cpu_pressure is not None:
        said.append(f"some task waited for a CPU {cpu_pressure:.0%} of the time it sampled")
    if others_cpu is not None:
        said.append(f"other processes used {others_cpu:.0%} of the CPU")
    return " and ".join(said)


def fix() -> str:
    """The fix, named: `run --threads 1`, or the variables for a command without it."""
    return f"`run --threads 1` pins every pool (or {'=1 '.join(PINNING)}=1)"


def shared_warning(backend: str, how: str, pools: Pools) -> str:
    """The warning of a free pool on shared cores."""
    return (
        f"thread pool free on shared cores: {pools.describe(backend)} while {how}: its time follows the other processes' "
        f"load, several-fold from one run to the next, and its interval, however tight, holds for this run only; {fix()}"
    )


def compared_line(backend: str, experiment: str, pools: Pools) -> tuple[str | None, str | None]:
    """(note, warning) of a CPU row in an experiment that runs other pooled backends on the CPU too: the note says
    how their pools ran where all ran the same thread count; the warning, instead, where their counts differ (one
    pinned, one free: a difference of pools, not of code). (None, None) where the experiment compares no backends."""
    others = sorted(pools.compared.get(experiment, frozenset()) - {backend})
    if backend not in POOL_VARIABLES or not others:
        return None, None
    every = [backend, *others]
    names = ", ".join(every)
    if len({pools.size(name) for name in every}) > 1:
        each = ", ".join(pools.describe(name) for name in every)
        return None, (
            f"compared with {', '.join(others)} on the CPU with thread pools of different sizes ({each}): a difference "
            f"between these rows may be their pools', not their code's; {fix()}"
        )
    count = pinned(pools.variables)
    if count is not None:
        return f"threads: {names} each pinned to {count} (--threads {count})", None
    if all(pools.free(name) for name in every):
        each = f"each free (each framework sizes its pool to the cores, {pools.cores} usable)"
        return f"threads: {names} {each}: a gap between them may be their pools'", None
    return "threads: " + ", ".join(pools.describe(name) for name in every), None


def _sizing(environ: Mapping[str, Any]) -> dict[str, str]:
    """The variables of `environ` that size a pool or say it was pinned."""
    wanted = {*PINNING, PINNED_VARIABLE}
    return {str(k): str(v) for k, v in environ.items() if k in wanted}


def compared_of(cases: Iterable[tuple[str, str, str]]) -> dict[str, frozenset[str]]:
    """Per experiment, the pooled backends its cases run on the CPU: (experiment, backend, device) each."""
    compared: dict[str, set[str]] = {}
    for experiment, backend, device in cases:
        if device.startswith("cpu") and backend in POOL_VARIABLES:
            compared.setdefault(experiment, set()).add(backend)
    return {name: frozenset(backends) for name, backends in compared.items()}


def beside(result: Result, pools: Pools) -> Result:
    """`result` with what a run of its whole experiment says of the pools beside it: the note (`noted`) and, for a
    measured row, the warning of pools of different sizes (compared_line; as sanity adds it at run time), each where
    the row does not say it already. For rows read back (a merged shard's) rather than measured here."""
    if result.status != OK or not result.variants or not result.device.startswith("cpu"):
        return result
    note, different = compared_line(result.backend, result.experiment, pools)
    if note is not None and note not in (result.note or ""):
        result = dataclasses.replace(result, note="; ".join(filter(None, (result.note, note))))
    if different is not None and different not in result.warnings:
        result = dataclasses.replace(result, warnings=(*result.warnings, different))
    return result


def noted(result: Result, pools: Pools) -> Result:
    """`result` with the note of its experiment's CPU comparison (compared_line), where it has one and measured."""
    if not result.variants or not result.device.startswith("cpu"):
        return result
    note, _ = compared_line(result.backend, result.experiment, pools)
    return result if note is None else dataclasses.replace(result, note="; ".join(filter(None, (result.note, note))))


#: how each pool a backend sizes in code (Backend.pool_sizes) is named where a row says it
POOL_NAMES: Mapping[str, str] = {"threads": "pool", "interop_threads": "inter-op pool"}


def set_by_step(backend: str, recorded: Mapping[str, int], set_up: Mapping[str, int], sampled: Mapping[str, int]) -> tuple[str, ...]:
    """The warnings of a case whose step sized its backend's pools in code (torch.set_num_threads in its set-up or its
    calls): each pool read after the case's set-up (`set_up`) and after its sampling (`sampled`) that is not the
    one read before it (`recorded`, the run's environment's: `run --threads N` pins both, a fresh worker starts where
    the run's facts were read), naming both counts. The environment describes the run's pools, so a row timed in
    another says so where it is read; one per pool, none where every count is the recorded one."""
    said = []
    for key, was in recorded.items():
        first, last = set_up.get(key, was), sampled.get(key, was)
        if first == was and last == was:
            continue
        pool, whence = POOL_NAMES.get(key, key), _whence(backend, key, was)
        if first == last:
            said.append(
                f"the step set {backend}'s {pool} to {first} threads (the run recorded {was}, {whence}): its timings are of {first}"
            )
        else:  # changed while it sampled: which rounds ran in which is not known
            said.append(
                f"the step set {backend}'s {pool} to {last} threads while it sampled, {first} after its set-up (the run "
                f"recorded {was}, {whence}): its timings are of {first} and {last}, in shares not known"
            )
    return tuple(said)


def _whence(backend: str, key: str, count: int) -> str:
    """Where the recorded count came from: `--threads N`, the variable that sized the pool, or the framework itself."""
    pinned_to = pinned()
    if pinned_to is not None:
        return f"from --threads {pinned_to}"
    if key == "threads":  # no variable sizes torch's inter-op pool
        for name in POOL_VARIABLES.get(backend, ()):
            if os.environ.get(name, "").strip():
                return f"from {name}={os.environ[name].strip()}"
    return f"{backend}'s own count"


def restore(backend: Backend, device: str, recorded: Mapping[str, int]) -> None:
    """After a case: its backend's intra-op pool back to the recorded count, so the next case in this process (a
    worker runs many) starts in the pool the run records, not in the one a step before it set. torch's inter-op
    pool cannot be resized once it has run work: a step that resized it left it so (its own warning says)."""
    count = recorded.get("threads")
    if count is not None and backend.pool_sizes(device).get("threads") != count:
        backend.set_threads(count)
