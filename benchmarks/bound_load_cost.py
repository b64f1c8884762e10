"""What holding a stored bound to its own numbers costs a reader (results.bound_rule.check_derived, issue 52), against
the whole load of the file and against a refit of every variant from its stored samples (what a full check would do).

The file: one result of VARIANTS variants, each a bound fitted (verdicts.bound.fit) from the tests' planted
host-bound step (tests/verdicts/test_bound.planted: 30 rounds of 11 samples), serialized as `run --bound` writes it.
Per figure, the median of REPEATS timings: the file's whole load (Report.from_dict: every shape check and the
derived one), the derived checks alone, and a refit of every variant.

    python benchmarks/bound_load_cost.py [--variants 20] [--repeats 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from asyncbench.results import bound_rule  # noqa: E402
from asyncbench.results.fields import At  # noqa: E402
from asyncbench.results.schema import Report  # noqa: E402
from asyncbench.verdicts import bound as fitting  # noqa: E402
from tests.support.bounds import result_with  # noqa: E402
from tests.support.helpers import report_of  # noqa: E402
from tests.verdicts.test_bound import STEPS, planted  # noqa: E402


def _median_s(work, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    fitted = [fitting.fit(f"v{i}", planted(1.0, 0.6, seed=i)[0], True, steps_per_call=STEPS) for i in range(args.variants)]
    raw = json.loads(report_of([result_with(*fitted)]).to_json())
    stored = raw["results"][0]["bound"]
    load = _median_s(lambda: Report.from_dict(raw), args.repeats)
    derived = _median_s(lambda: [bound_rule.check_derived(b, At("x")) for b in stored.values()], args.repeats)
    refit = _median_s(
        lambda: [fitting.fit(b.variant, b.observations, True, steps_per_call=STEPS) for b in fitted], max(1, args.repeats // 2)
    )
    n = args.variants
    print(
        f"{n} variants of 30 rounds: the file's load {load * 1e3:.1f} ms; the derived checks {derived * 1e3:.2f} ms "
        f"({derived / n * 1e3:.3f} ms a variant); a refit of every variant {refit * 1e3:.0f} ms ({refit / n * 1e3:.0f} ms a variant)"
    )


if __name__ == "__main__":
    main()
