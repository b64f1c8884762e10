"""How `asyncbench ab` spends its time, simulated: when a decided case stops, and what a cap buys on a noisy day.

A gate shaped as configs/ci-gate.yaml under `ab` (five torch cases of 1, 2, 4,
3 and 2 verdicts at their margins, sharing each block's pair of fresh
processes) runs through the engine's own time rule, looks and intervals
(engine.gate_time.gate, engine.paired.Pairing) on fake sides and a simulated
clock, so hundreds of gates take minutes of one core and none of the machine's
noise. What is faked, from docs/measured.md (2-core runner, 2026-11-27/28):

- a block: a pair's start of 2.3 s, each case's set-up (0.2-0.8 s) and its
  sampling (at least 0.5 s, 5 rounds, half its share of the start), about
  8-9 s for all five cases; on a noisy day everything takes NOISY_SLOWDOWN
  times longer;
- each fresh process's bias per verdict: normal, with the robust SD of the
  blocks measured on a quiet day (matmul 0.6%, frontend 2.4%, conversion 1.7%,
  two threads 7.5%, training 6.6%) times --noise, and now and then a wild one
  (WILD_SHARE of processes, WILD_SCALE times the SD on average): every verdict
  had blocks 10-60 SDs out over ~500 blocks.

A noisy day is either a factor on every case's spread or `issue`: the day
the shipped gate failed 4 of 4 on unchanged code, its blocks spread ±5-13%
(taken here as matmul 5%, frontend 10%, conversion 8%, two threads and
training 13%).

For each gate time (TARGET/CAP in seconds, CAP omitted: no cap) and noise
factor, --runs gates of unchanged code (and with --planted, gates whose
matmul case is that much slower): gates that exit 1, wrong verdicts (FASTER
or SLOWER on unchanged code), INCONCLUSIVE verdicts, and the gate's simulated
time (median, 90th percentile, most).

    python benchmarks/ab_stopping.py --runs 200                                  # ~10 minutes of one core
    python benchmarks/ab_stopping.py --runs 100 --noise 1,issue --times 120,120/240,120/360
    python benchmarks/ab_stopping.py --runs 100 --noise 1 --planted 0.10 --times 120,120/360

A simulation, not a measurement: it answers what the rule does with blocks
of this spread; benchmarks/ab_configs.py measures the real gate.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from asyncbench.engine import gate_time, paired  # noqa: E402
from asyncbench.results.labels import Label  # noqa: E402
from asyncbench.results.model import Case, Settings  # noqa: E402
from asyncbench.workloads.base import Prepared, Workload  # noqa: E402

START_S = 2.3  # a pair of fresh torch processes, both at once (benchmarks/ab_block_time.py)
FAMILY_ERROR = 0.01  # `ab`'s default, split over the cases as session.paired splits it
WILD_SHARE = 0.01  # of fresh processes, a bias far out
WILD_SCALE = 15.0  # a wild bias: this many SDs on average (exponential), either way
NOISY_SLOWDOWN = 1.5  # on a noisy day a block takes this much longer (docs/measured.md: 9 s became 13 s)
# The noisy day of issue 53 (blocks spread ±5-13% where ±0.6-2.4% is usual), per case: the block SD it is given.
ISSUE_DAY = {"gate-matmul": 0.05, "gate-frontend": 0.10, "gate-blockers": 0.08, "gate-two-threads": 0.13, "gate-memory": 0.13}


@dataclass(frozen=True)
class FakeCase:
    """A case of the gate: its verdicts, the robust SD of its blocks on a quiet day, its margin, set-up and sample."""

    name: str
    verdicts: int
    block_sd: float
    margin: float
    setup_s: float
    sample_s: float


CI_GATE = (
    FakeCase("gate-matmul", 1, 0.006, 0.05, 0.2, 0.005),
    FakeCase("gate-frontend", 2, 0.024, 0.10, 0.2, 0.01),
    FakeCase("gate-blockers", 4, 0.017, 0.10, 0.4, 0.01),
    FakeCase("gate-two-threads", 3, 0.075, 0.40, 0.3, 0.03),
    FakeCase("gate-memory", 2, 0.066, 0.25, 0.8, 0.07),
)


class Clock:
    """perf_counter for the engine: moves only when a fake side starts, sets up or samples."""

    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


class FakeSide:
    """One side's worker: every fresh process draws a bias per (case, variant); samples move the clock."""

    def __init__(self, name: str, rng: random.Random, clock: Clock, cases: dict[str, FakeCase], noise: str, planted: dict[str, float]):
        self.name, self.tree = name, None
        self.rng, self.clock, self.cases, self.planted = rng, clock, cases, planted
        self.sd = {c.name: ISSUE_DAY[c.name] if noise == "issue" else c.block_sd * float(noise) for c in cases.values()}
        self.slow = NOISY_SLOWDOWN if noise == "issue" or float(noise) > 1 else 1.0
        self.biases: dict[tuple[str, str], float] = {}
        self.current: FakeCase | None = None
        self.pending: tuple[str, Any] = ("", None)

    def renew(self, backends: Sequence[str]) -> None:
        self.biases = {}
        if self.name == "base":  # both sides start at once: the pair's start once
            self.clock.now_s += START_S * self.slow

    def ready(self, timeout_s: float) -> None:
        pass

    def send(self, command: str, payload: Any) -> None:
        self.pending = (command, payload)

    def receive(self, timeout_s: float) -> Any:
        return self.call(*self.pending, timeout_s)

    def _bias(self, case: FakeCase, variant: str) -> float:
        key = (case.name, variant)
        if key not in self.biases:
            sd = self.sd[case.name] / math.sqrt(2)  # a block's ratio is the difference of two processes' biases
            bias = self.rng.gauss(0, sd)
            if self.rng.random() < WILD_SHARE:
                bias += self.rng.choice((-1, 1)) * self.rng.expovariate(1 / (WILD_SCALE * sd))
            self.biases[key] = bias
        return self.biases[key]

    def call(self, command: str, payload: Any, timeout_s: float) -> Any:
        if command == "setup":
            self.current = self.cases[payload[0].experiment]
            if self.name == "base":  # both sides set up at once
                self.clock.now_s += self.current.setup_s * self.slow
            return {"variants": [f"v{i}" for i in range(self.current.verdicts)], "asynchronous": False}
        if command == "sample":
            case = self.current
            assert case is not None
            self.clock.now_s += case.sample_s * self.slow
            change = self.planted.get(case.name, 0.0) if self.name == "head" else 0.0
            done = case.sample_s * (1 + change) * math.exp(self._bias(case, payload) + self.rng.gauss(0, 0.002))
            return done, done, None
        return None

    def close(self) -> None:
        pass


def _workload(verdicts: int) -> Workload:
    class Fake(Workload):
        name = f"fake-{verdicts}"
        variants = tuple(f"v{i}" for i in range(verdicts))

        def setup(self, backend: Any, device: str, params: Any) -> Prepared:  # pragma: no cover - never set up here
            raise NotImplementedError

    return Fake()


def one_gate(seed: int, clock: Clock, noise: str, target_s: float, cap_s: float | None, planted: dict[str, float]) -> dict[str, Any]:
    """One simulated gate: its exit, time and each verdict's label."""
    rng = random.Random(seed)
    cases = {case.name: case for case in CI_GATE}
    base = FakeSide("base", rng, clock, cases, noise, planted)
    head = FakeSide("head", rng, clock, cases, noise, planted)
    pairings = []
    for fake in CI_GATE:
        case = Case(f"{fake.name}[torch,cpu]", fake.name, f"fake-{fake.verdicts}", "torch", "cpu", {}, Settings(warmup=0, timeout_s=10))
        pairing = paired.Pairing(case, case, (base, head), _workload(fake.verdicts), FAMILY_ERROR / len(CI_GATE), fake.margin)  # type: ignore[arg-type]
        pairing.rng = random.Random(rng.random())
        pairings.append(pairing)
    clock.now_s = 0.0
    rows = gate_time.gate(pairings, target_s, cap_s=cap_s)
    labels = {(row.id, r.name): r.label for row in rows for r in row.ratios}
    code = int(any(label in (Label.SLOWER, Label.INCONCLUSIVE) for label in labels.values()))
    return {"code": code, "seconds": clock.now_s, "labels": labels, "blocks": {row.id: row.blocks for row in rows}}


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def condition(runs: int, noise: str, times: str, planted: dict[str, float], clock: Clock) -> None:
    target, _, cap = times.partition("/")
    target_s, cap_s = float(target), float(cap) if cap else None
    gates = [one_gate(seed, clock, noise, target_s, cap_s, planted) for seed in range(runs)]
    labels = [(key, label) for g in gates for key, label in g["labels"].items()]
    wrong = sum(
        1 for (case_id, _), label in labels if label == Label.FASTER or (label == Label.SLOWER and not planted.get(case_id.split("[")[0]))
    )
    undecided = sum(label == Label.INCONCLUSIVE for _, label in labels)
    seconds = [g["seconds"] for g in gates]
    what = f"planted {', '.join(f'{k} {v:+.0%}' for k, v in planted.items())}" if planted else "unchanged code"
    times_given = f"--gate-time {target_s:g}s" + (f" --gate-time-max {cap_s:g}s" if cap_s else "")
    print(
        f"noise {noise if noise == 'issue' else f'×{noise}'}, {times_given}, {what}: "
        f"exit 1 in {sum(g['code'] for g in gates)} of {runs}; wrong verdicts {wrong} of {len(labels)}; "
        f"INCONCLUSIVE {undecided}; time median {statistics.median(seconds):.0f} s, p90 {_percentile(seconds, 0.9):.0f} s, "
        f"most {max(seconds):.0f} s"
    )
    for name in dict.fromkeys(case_id for (case_id, _), _ in labels):
        mine = [label for (case_id, _), label in labels if case_id == name]
        counts = ", ".join(f"{label} {mine.count(label)}" for label in Label if mine.count(label))
        blocks = [g["blocks"][name] for g in gates]
        print(f"  {name}: {counts}; blocks median {statistics.median(blocks):g} ({min(blocks)}-{max(blocks)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="gates per condition")
    parser.add_argument("--noise", default="1,3,issue", help="factors on the quiet day's block spread, or issue, comma-separated")
    parser.add_argument("--times", default="120,120/240,120/360", help="TARGET[/CAP] seconds, comma-separated")
    parser.add_argument("--planted", type=float, default=None, help="also gate a head whose matmul case is this much slower")
    args = parser.parse_args()
    clock = Clock()
    time.perf_counter = clock  # the engine's clock, for this process only
    plants = [{}] + ([{"gate-matmul": args.planted}] if args.planted is not None else [])
    for noise in args.noise.split(","):
        for planted in plants:
            for times in args.times.split(","):
                condition(args.runs, noise, times, planted, clock)


if __name__ == "__main__":
    main()
