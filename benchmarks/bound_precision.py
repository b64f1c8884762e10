"""`run --bound`'s stop rule on the stream test device: how many perturbation rounds a planted step takes before every
slack's interval is within ±5% of the step (measure.perturbation.PRECISION_SHARE), with the levels that adapt to the
knee and with the fixed levels alone, and whether the budget stopped it first.

The step: the tests' planted one (tests/measure/test_perturbation.planted: a host sleep of H, a hold kernel of D, a
sample of STEPS steps). Its rounds are taken as timing.measure takes them (after each of 6 timed rounds, then as
owed), with the engine's look (engine.measuring._spread: verdicts.bound.fit). Per rerun: rounds taken, seconds,
the widest half-width at the last look, and whether the budget stopped it.

    python benchmarks/bound_precision.py [--reruns 3] [--budget 20] [--host 0.0001] [--device 0.001]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncbench.engine import measuring  # noqa: E402
from asyncbench.measure import perturbation  # noqa: E402
from asyncbench.measure.extra_rounds import ExtraRounds  # noqa: E402
from asyncbench.verdicts import bound as bounds  # noqa: E402
from asyncbench.workloads.step_form import variant_name  # noqa: E402
from tests.measure.test_perturbation import STEPS, planted  # noqa: E402
from tests.support.stream_device import StreamSimBackend  # noqa: E402


def _ci(ci: tuple[float, float] | None, step_s: float) -> str:
    return "[-]" if ci is None else f"[{ci[0] / step_s:.0%}-{ci[1] / step_s:.0%}]"


def rerun(host_s: float, device_s: float, budget_s: float, adapt: bool) -> tuple[int, float, float, bool, str]:
    """One case's rounds: (rounds, seconds, widest half-width over the step at the last look, stopped by the budget,
    each side's slack and interval over the step at the end)."""
    backend = StreamSimBackend(gpus=1)
    workload = planted(host_s, device_s)
    prepared = workload.setup(backend, "cuda:0", workload.defaults())
    try:
        delay, _ = backend.device_delay("cuda:0")
        taker = perturbation.Taker(
            prepared.perturbable,  # type: ignore[arg-type]
            delay,
            steps_per_call=STEPS,
            budget_s=budget_s,
            schedule=perturbation.SCHEDULE,
            spread=measuring._spread(STEPS),
        )
        if not adapt:
            taker._adapt = lambda look: None  # type: ignore[method-assign]  # the fixed levels alone
        extra = ExtraRounds(((taker, taker),))
        prepared.variants[variant_name(0)]()
        prepared.sync()
        started = time.perf_counter()
        for timed in range(1, 7):
            for kind in extra.after(timed):
                kind.round(prepared.variants, prepared.sync)
        while owed := extra.owed():
            for kind, _ in owed:
                kind.round(prepared.variants, prepared.sync)
        took = time.perf_counter() - started
        fitted = bounds.fit("v", taker.observations()[variant_name(0)], True, steps_per_call=STEPS)
        sides = ", ".join(f"{side.side} {side.slack_s / fitted.step_s:.0%} {_ci(side.slack_ci_s, fitted.step_s)}" for side in fitted.sides)
        return taker.taken, took, taker.widest, taker.out_of_time(), sides
    finally:
        assert prepared.close is not None
        prepared.close()
        backend.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reruns", type=int, default=3)
    parser.add_argument("--budget", type=float, default=20.0, help="the rounds' budget (s): 5× a case's max_time_s")
    parser.add_argument("--host", type=float, default=0.0001, help="host time a step (s)")
    parser.add_argument("--device", type=float, default=0.001, help="device time a step (s)")
    args = parser.parse_args()
    print(f"planted H {args.host * 1e3:g} ms, D {args.device * 1e3:g} ms, {STEPS} steps a sample, budget {args.budget:g} s")
    print("| levels | rounds | seconds | widest ± (of step) | stopped by | slack [interval] of the step |")
    print("|---|--:|--:|--:|---|---|")
    for adapt in (True, False):
        for _ in range(args.reruns):
            rounds, seconds, widest, out, sides = rerun(args.host, args.device, args.budget, adapt)
            said = "budget" if out else "precision"
            print(f"| {'knee-adapted' if adapt else 'fixed'} | {rounds} | {seconds:.1f} | {widest:.1%} | {said} | {sides} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
