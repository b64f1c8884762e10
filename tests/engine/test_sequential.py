"""Sequential validity: sampling until the checks are decided must not raise their false-alarm rate.

A check whose truth sits exactly on its threshold is the worst case: every
verdict but INCONCLUSIVE is then wrong half the time it is reached. Judged
after every round at 95%, such a check failed in about 10% of runs of 200
rounds; judged only at the budget's looks, at the budget's confidence, it
fails at most at the budget's rate. Simulated samples (a lognormal clock),
the runner's own stopping rule and verdicts.
"""

from __future__ import annotations

import random

from asyncbench.engine import runner
from asyncbench.engine.measuring import CaseOptions
from asyncbench.measure.procedure import Procedure
from asyncbench.measure.timing import measure
from asyncbench.results import budget
from asyncbench.results.model import Case, Expectation, Settings, Verdict
from asyncbench.verdicts import checks
from asyncbench.workloads import BUILT_IN

WORKLOAD = BUILT_IN["sync_async"]
THRESHOLD_S = 1.0  # the true median of every sample: the check sits exactly on it
FAMILY_ERROR = 0.05


class SimulatedClock:
    """A clock that only moves when a variant runs: each sample lasts a lognormal time with median THRESHOLD_S."""

    def __init__(self, rng: random.Random):
        self.now = 0.0
        self.rng = rng

    def __call__(self) -> float:
        return self.now

    def run(self) -> None:
        self.now += THRESHOLD_S * self.rng.lognormvariate(0.0, 0.1)


def _one_gate(seed: int, settings: Settings) -> Verdict:
    clock = SimulatedClock(random.Random(seed))
    expectation = Expectation("done_s.median[sync] < 1s", "done_s", "<", THRESHOLD_S, stat="median", variant="sync")
    shared = budget.Budget(FAMILY_ERROR, 1, settings.min_samples, settings.max_samples)
    case = Case("c", "e", WORKLOAD.name, "numpy", "cpu", WORKLOAD.defaults(), settings, expect=(expectation,))
    decided = runner._checks_decided(case, CaseOptions(budget=shared), WORKLOAD, asynchronous=False)
    assert decided is not None
    looks = budget.schedule(settings.min_samples, settings.max_samples)
    samples, _ = measure(
        {"sync": clock.run, "async": clock.run}, lambda: None, lambda: None, Procedure(settings, decided=decided, looks=looks, clock=clock)
    )
    result = WORKLOAD.describe(runner._row(case, runner.OK, variants=runner.summarize(samples)), reading=False)
    (check,) = checks.evaluate(case.expect, result, shared)
    return check.verdict


def test_a_check_on_its_threshold_fails_no_more_often_than_the_budget_says():
    settings = Settings(warmup=0, min_samples=6, max_samples=200, max_time_s=1e9, max_rel_noise=1.0)
    trials = 300
    verdicts = [_one_gate(seed, settings) for seed in range(trials)]
    wrong = sum(v in (Verdict.FAIL, Verdict.PASS) for v in verdicts)
    assert wrong / trials <= FAMILY_ERROR  # plain 95% intervals looked at after every round: 26% of these gates
    assert Verdict.INCONCLUSIVE in verdicts


def test_the_looks_are_a_fixed_geometric_schedule_and_the_budget_adds_up():
    looks = budget.schedule(6, 1000)
    assert looks[:4] == (6, 9, 14, 21)
    assert looks[-1] == 1000
    shared = budget.Budget(0.01, 4, 6, 1000)
    assert abs(shared.per_look() * shared.looks * shared.verdicts - 0.01) < 1e-12  # Bonferroni: the shares sum to the rate
    assert "1% family-wise" in shared.describe()
    assert "4 verdicts" in shared.describe()
