"""matmul's figures as a results file holds them, held to the samples and medians they were computed from.

The matmul workload (workloads.matmul) times one variant, `matmul`: a sample is `n_iter` products of a random
size×size matrix. Its `issue_s` and `done_s` restate that variant's clocks: the median of its samples, with the 95%
interval of that median. Its `illusion` is a round's done time over its issue time, its `gflops` the products' FLOP count
(2·size³·n_iter, `flops`) over a round's done time, in GFLOP/s; each is the median over the rounds, with the 95%
interval of that median (engine.rounds.figures). Schema 1 took neither from rounds: it divided the clocks' medians
(done_s.median / issue_s.median, flops / done_s.median) and stored no interval. The names are matmul's own, and this
module is where they are spelled (the workload reads them from here).

Every number the two are made from is in the file (the samples, the params, the medians), so a reader recomputes
them: an illusion edited to 5.00× [4.00–6.00] beside samples whose rounds give 1.0007×, or a gflops moved together
with its interval (8 [7.9–8.1] where the rounds give 8.35 [6.36–8.52]), passes the check that a metric lies within
its own interval (results.recordable.within_own_interval), yet is no measurement, and `show` printed it with a
reading ("nothing runs ahead") its own times contradict: `check` refuses it, naming the case and the figure. So
for the clocks: a `done_s` edited to 3.00 ms beside samples whose median is 5.80 ms (or to 1e300 s with its interval
moved along, or its interval narrowed onto it) was shown under the table's 5.80 ms and stored by `record`, a forged
series in `history`.

Only a result of the built-in workload is held to this (its `workload` is `matmul`: a user's workload is named by
a reference, never a built-in's name, workloads.plugins.find): another workload's `illusion` or `gflops` means what
that workload says (the step form's illusion is held by results.step_figures). A user's `gflops` is not held to a
FLOP count it never states, nor to `gflops × done_s` being one: its workload may divide by another clock (the
device's) or count its work per step, so that rule would refuse honest files.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, TypeGuard

from asyncbench.results import recordable, round_held, step_figures
from asyncbench.results.fields import At
from asyncbench.results.round_held import RELATIVE_ROOM, SAMPLE_ROUNDING_S

#: the built-in workload's name, as a result's `workload` states it
WORKLOAD = "matmul"
#: its one variant
VARIANT = "matmul"
#: the variant's clocks, restated as metrics: the median of its samples (schema 1: the clock's stored median)
ISSUE, DONE = CLOCK_METRICS = ("issue_s", "done_s")
#: done time over issue time (the step form's metric of the same name is variant 0's: results.step_figures)
ILLUSION = step_figures.ILLUSION
#: the products' FLOP count over the done time, in GFLOP/s
GFLOPS = "gflops"
#: FLOP/s in a GFLOP/s
GIGA = 1e9
#: the first schema version whose metrics are medians over the rounds, with an interval (results.schema's history:
#: 2 added `bounds`); version 1 divided the clocks' medians
PER_ROUND_SCHEMA = 2
#: how each metric is made from a round's clocks, as a refusal says it
_HOW = {ILLUSION: "done_s / issue_s", GFLOPS: "2·size³·n_iter / done_s", **{clock: clock for clock in CLOCK_METRICS}}


def flops(size: int, n_iter: int) -> int:
    """The floating-point operations of a sample: n_iter products of a size×size matrix, 2·size³ each (the random
    matrices made before each product are not counted)."""
    return 2 * size**3 * n_iter


def check(result: Mapping[str, Any], at: At, version: Any) -> None:
    """InputError naming the metric, or its `bounds`, where a matmul result's `illusion`, `gflops`, `issue_s` or
    `done_s` (the result checked field by field before, in a file of schema `version`) is not what its own samples
    give: the median over the rounds (version 1: the clocks' medians, divided for the ratios), and an interval of
    that median its rounds can give."""
    if result.get("workload") != WORKLOAD:
        return
    metrics, bounds = result.get("metrics") or {}, result.get("bounds") or {}
    case = result.get("id")
    if isinstance(version, int) and version < PER_ROUND_SCHEMA:
        for name, (found, room, how) in of_medians(result).items():
            value = metrics.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value - found) > room:
                (at / "metrics" / name).fail(
                    f"{value:g} is not what the clocks of case {case!r} give ({how}: {found:g}): {recordable.NOT_WRITTEN}"
                )
        return
    for name, per_round in metric_rounds(result).items():
        round_held.hold(at, case, name, metrics.get(name), bounds.get(name), per_round, _HOW[name])


def _work(result: Mapping[str, Any]) -> int | None:
    """The FLOP count of a sample, where the params state a size and a count of products; None else."""
    params = result.get("params") or {}
    size, n_iter = params.get("size"), params.get("n_iter")
    if not (_count(size) and _count(n_iter)):
        return None
    return flops(size, n_iter)


def _count(value: Any) -> TypeGuard[int]:
    """Whether a param is a count of at least one (a size, a number of products), as matmul's params are."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def metric_rounds(result: Mapping[str, Any]) -> dict[str, list[tuple[float, float]]]:
    """matmul's `illusion`, `gflops`, `issue_s` and `done_s`, one value a round as its variant's stored samples give
    it (Matmul.round_metrics: a clock's value in a round is its sample), with how far the samples' rounding can move
    it; a metric the file does not state, or whose rounds the samples do not give (none kept, a time that rounds to
    0), is left out."""
    metrics = result.get("metrics") or {}
    samples = ((result.get("variants") or {}).get(VARIANT) or {}).get("samples") or {}
    done: Sequence[float] = samples.get("done_s") or ()
    issue: Sequence[float] = samples.get("issue_s") or ()
    if not done:
        return {}
    found: dict[str, list[tuple[float, float]]] = {}
    for clock, times in ((ISSUE, issue), (DONE, done)):
        if clock in metrics and len(times) >= len(done):  # engine.rounds.per_round: the rounds done_s has
            found[clock] = [(time, SAMPLE_ROUNDING_S) for time in times[: len(done)]]
    if ILLUSION in metrics and len(issue) >= len(done):
        found[ILLUSION] = step_figures.round_ratios(done, issue, len(done))
    work = _work(result)
    if GFLOPS in metrics and work is not None and all(time > SAMPLE_ROUNDING_S for time in done):
        found[GFLOPS] = [(work / time / GIGA, work / GIGA * SAMPLE_ROUNDING_S / (time * (time - SAMPLE_ROUNDING_S))) for time in done]
    return {name: rounds for name, rounds in found.items() if rounds}


def of_medians(result: Mapping[str, Any]) -> dict[str, tuple[float, float, str]]:
    """Schema 1's `illusion`, `gflops`, `issue_s` and `done_s`: each (figure, room, how) as the variant's clocks'
    medians give it (the clocks' own: schema 1 stored each median as its metric)."""
    variant = (result.get("variants") or {}).get(VARIANT) or {}
    done = (variant.get("done_s") or {}).get("median")
    issue = (variant.get("issue_s") or {}).get("median")
    if not isinstance(done, (int, float)) or done <= 0:
        return {}
    found: dict[str, tuple[float, float, str]] = {DONE: (done, RELATIVE_ROOM * done, f"{DONE}.median")}
    if isinstance(issue, (int, float)) and not isinstance(issue, bool) and issue >= 0:
        found[ISSUE] = (issue, RELATIVE_ROOM * issue, f"{ISSUE}.median")
    if isinstance(issue, (int, float)) and issue > 0:
        ratio = done / issue
        found[ILLUSION] = (ratio, RELATIVE_ROOM * ratio, "done_s.median / issue_s.median")
    work = _work(result)
    if work is not None:
        figure = work / done / GIGA
        found[GFLOPS] = (figure, RELATIVE_ROOM * figure, "2·size³·n_iter / done_s.median")
    return found
