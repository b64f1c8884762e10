"""`ab` files made as `ab` makes them, for the tests that read, show or record one: a gate's paired ratio over block
log ratios (recorded_gate), a whole file as `ab -o` writes it (ab_json) and read back as `record` reads it
(recorded_ab), and a one-case file's JSON with a ratio per label (ab_data)."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from typing import Any

from asyncbench.results import ab_file, ab_report, blocks, paired
from asyncbench.results.labels import Label
from asyncbench.verdicts import margin

#: the machine an `ab` file's sides ran on
FACTS = {"cpu": "Test CPU", "cpu_cores_logical": 2, "hostname": "runner", "frameworks": {"numpy": {"version": "2.0"}}}
#: each tail of a gate's interval: a case's share of a 1% family rate over a few looks, as `ab` spends it
TAIL = 0.0025
#: the blocks of a gate
BLOCKS = 16
#: the gate's margin: a ratio within 2% of 1 is the same
MARGIN = 0.02


def gate_blocks(seed: int, ratio: float, spread: float = 0.004) -> list[float]:
    """A gate's block log ratios about log(ratio), as a noisy machine gives them."""
    rng = random.Random(seed)
    return [math.log(ratio) + rng.gauss(0, spread) for _ in range(BLOCKS)]


def recorded_gate(seed: int, ratio: float) -> paired.PairedRatio:
    """One verdict as engine.paired makes it: estimate and interval from the blocks, labelled against the margin."""
    values = gate_blocks(seed, ratio)
    interval = blocks.interval(values, TAIL)
    estimate = blocks.estimate(values)
    return paired.PairedRatio(
        "changed", paired.VARIANT, "s", 0.004, 0.004 * estimate, estimate, interval, margin.label_of(interval, MARGIN), tuple(values)
    )


def recorded_ab(gate: paired.PairedRatio, day: int) -> ab_file.ABFile:
    """A one-case `ab` file of `gate`, made on the `day`th of January 2026, read back as `record` reads it."""
    return ab_file.from_dict(json.loads(ab_json(gate, day)), f"ab-{day}.json")


def ab_json(gate: paired.PairedRatio, day: int) -> str:
    """A one-case `ab` file of `gate`, made on the `day`th of January 2026, as `ab -o` writes it."""
    side = paired.Side("head", "a1b2c3d (HEAD)", "python3", "3.11", facts=FACTS)
    case = paired.PairedCase("changed[numpy,cpu]", "ok", ratios=(gate,), rounds=BLOCKS * 4, blocks=BLOCKS)
    report = ab_report.ABReport(
        f"2026-01-{day:02d}T12:00:00+00:00",
        "0.1.0",
        dataclasses.replace(side, name="base", revision="a1b2c3d (v1.0)"),
        side,
        MARGIN,
        0.01,
        False,
        "SIGSTOP",
        (case,),
        run_id=f"{day:032x}",
    )
    return report.to_json()


#: an interval of each label at ab_data's 5% margin (a reader holds a file's label to its interval: label_of)
INTERVALS = {
    Label.SAME: (0.99, 1.02),
    Label.FASTER: (0.80, 0.90),
    Label.SLOWER: (1.20, 1.30),
    Label.NOT_SLOWER: (0.90, 1.02),
    Label.INCONCLUSIVE: (0.99, 1.10),
}


def ab_data(*labels: Label, status: str = "ok") -> dict[str, Any]:
    """A real `ab` file's JSON (paired.dumps): one case with a ratio per label, each with an interval of its label."""
    side = paired.Side("head", "a1b2c3d4e5 (HEAD)", "python3", "3.11")
    ratios = tuple(
        paired.PairedRatio(f"v{index}", paired.VARIANT, "s", 0.010, 0.010 * _middle(label), _middle(label), INTERVALS[label], label)
        for index, label in enumerate(labels)
    )
    case = paired.PairedCase("matmul[numpy,cpu]", status, "it raised" if status == "error" else None, ratios=ratios, rounds=60, blocks=12)
    report = ab_report.ABReport(
        "2026-11-23T12:00:00+00:00", "0.1.0", dataclasses.replace(side, name="base"), side, 0.05, 0.01, False, "SIGSTOP", (case,)
    )
    return json.loads(report.to_json())


def _middle(label: Label) -> float:
    """A ratio within the label's interval."""
    low, high = INTERVALS[label]
    return (low + high) / 2
