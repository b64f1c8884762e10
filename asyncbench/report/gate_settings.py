"""What an `asyncbench ab` gate's own settings cost, said under its table (report.paired): thread pools left to
spin on a small runner, GPU cases left undecided by processes free to land on any of many cores.

Read from the head side's facts (its usable cores, the thread variables set) and the cases' devices: a note that
names the variable to set, and the guide that says why.
"""

from __future__ import annotations

from asyncbench.results.ab_report import ABReport
from asyncbench.results.paired import PairedCase
from asyncbench.results.plan import case_parts

# The variables that size the BLAS and OpenMP thread pools: unset on a runner of a few cores, the pools' spinning
# threads compete with the sample being measured (identical numpy code 57× slower and undecided, seen here).
# (A subset of the thread variables an environment records, host.facts.THREAD_VARIABLES: the ones that size a pool.)
POOL_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
# JAX's CPU pool follows none of those: only this variable sizes it (engine.thread_pools; docs/guides/cpu-threads.md).
JAX_POOL_VARIABLE = "PJRT_NPROC"
# At or below this many usable cores a spinning pool takes a measuring side's core.
FEW_CORES = 4


# Over this many usable cores, a GPU case's fresh process per block lands on cores of its own and carries their speed
# into its block: sync_async on an H200 host of 16 cores, identical sides, blocks spread 9.3% and 11.5% (SD of the
# block log-ratios) free, 1.6% and 0.7% with the gate pinned to one core (`taskset -c 3`), results/nvidia-h200/.
MANY_CORES = 4


def device(case: PairedCase) -> str:
    """The device a case ran on: stated in files since ab schema 4, read from the case's id in older ones."""
    return case.device or case_parts(case.id)[2]


def settings_notes(report: ABReport) -> list[str]:
    """What the gate's own settings cost: thread pools left to spin on a small machine; GPU cases left undecided by
    processes free to land on any of many cores."""
    facts = report.head.facts
    cores = facts.get("cpu_affinity") or facts.get("cpu_cores_logical")  # the cores the side may use
    set_here = facts.get("thread_variables") or {}
    cpu_cases = [case for case in report.cases if case.status == "ok" and device(case) == "cpu"]
    jax_cases = any((case.backend or case_parts(case.id)[1]) == "jax" for case in cpu_cases)
    free = not any(set_here.get(v) for v in POOL_VARIABLES) or (jax_cases and not set_here.get(JAX_POOL_VARIABLE))
    if cpu_cases and isinstance(cores, int) and cores <= FEW_CORES and free:
        wanted = (*POOL_VARIABLES, JAX_POOL_VARIABLE) if jax_cases else POOL_VARIABLES
        if any(set_here.get(v) for v in POOL_VARIABLES):  # BLAS/OpenMP pinned, JAX's own pool (XLA's threads) not
            unset = f"{JAX_POOL_VARIABLE} not set on {cores} cores: XLA's thread pool is free, its threads compete"
        else:
            unset = f"no BLAS/OpenMP thread count set on {cores} cores: their pools' spinning threads compete"
        return [f"{unset} with the sample measured; a CI gate sets {'=1, '.join(wanted)}=1 (the CI gates guide, docs/guides/ci.md)"]
    undecided_gpu = [c for c in report.cases if c.status == "ok" and c.needed_s is not None and device(c).startswith("cuda")]
    if undecided_gpu and isinstance(cores, int) and cores > MANY_CORES:
        return [
            f"{len(undecided_gpu)} GPU case{'' if len(undecided_gpu) == 1 else 's'} undecided with the sides free to run on "
            f"{cores} cores: each block's fresh processes land on cores of their own and carry their speed (identical "
            "sync_async on an H200 host: blocks spread 9–12% free, 0.7–1.6% pinned); pin the gate to one core, "
            "`taskset -c 3 asyncbench ab …` (docs/guides/ci.md)"
        ]
    return []
