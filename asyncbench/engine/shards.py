"""The part of a plan one job of a CI matrix runs (`run --shard I/N`), cut the same way on every machine.

The plan is cut where a Slurm submission cuts it per case (jobs.split): an
experiment on one backend, one device spec and one sweep point, before
anything is resolved on the machine (`cuda` stays `cuda`), so the cut and
the plan's digest are the same on a runner with two GPUs and on one with
none. Each case is expected to cost its sampling's time limit (max_time_s:
the only cost a plan states; a case usually stops sooner, when its
intervals are tight), and results.shards.assign balances those costs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from asyncbench.engine import jobs
from asyncbench.results import budget, shards
from asyncbench.results.model import PlannedCase, ShardOf
from asyncbench.results.plan import Config


@dataclass(frozen=True)
class Selected:
    """One shard of a plan: the plan it runs (its cases' experiments, in plan order), what its file says it is,
    and the share of the run's false-alarm rate its checks get (theirs of the whole plan's checks, so that each
    check is judged at the confidence it has in the unsharded run)."""

    config: Config
    shard: ShardOf
    family_error: float

    @property
    def empty(self) -> bool:
        return not self.shard.cases


def _identity(case: PlannedCase, config: Config) -> dict[str, object]:
    """What makes a case the case it is, for the plan's digest: its id, work, params, settings and checks."""
    [experiment] = config.experiments
    return shards.identity(case, dataclasses.asdict(experiment.settings), [check.text for check in experiment.expect])


def select(config: Config, shard: shards.Shard, family_error: float = budget.FAMILY_ERROR) -> Selected:
    """The `shard` of `config`'s plan (see the module's docstring)."""
    units = []
    for _, one in jobs.split(config, "case"):
        [case] = jobs.planned(one)
        units.append((case, one))
    costs = [shards.cost(one.experiments[0].settings.max_time_s) for _, one in units]
    chosen = shards.assign(costs, shard.count)
    mine = [(case, one) for (case, one), where in zip(units, chosen, strict=True) if where == shard.index]
    positions = tuple(place for place, where in enumerate(chosen) if where == shard.index)
    checks = [len(one.experiments[0].expect) for _, one in units]
    my_checks = sum(len(one.experiments[0].expect) for _, one in mine)
    stamp = ShardOf(
        index=shard.index,
        count=shard.count,
        plan=shards.digest([_identity(case, one) for case, one in units]),
        plan_cases=len(units),
        cases=tuple(case for case, _ in mine),
        positions=positions,
    )
    part = dataclasses.replace(config, experiments=tuple(one.experiments[0] for _, one in mine))
    share = family_error * my_checks / sum(checks) if sum(checks) else family_error
    return Selected(part, stamp, share)
