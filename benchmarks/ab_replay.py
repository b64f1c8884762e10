"""Re-judge the blocks of saved `ab` gates two ways: as shipped, and as `ab` judged them before wild blocks were
passed over (signed-rank intervals alone, the error split evenly over a schedule of looks plus one when the time
runs out, the case stopped at the first look that decided it).

Both ways see the same blocks, so the difference between them is the intervals' and the looks', not the machine's.
The gates' blocks come from `python benchmarks/ab_configs.py --json FILE` (every case there ran until the time ran
out, the shipped design's one look, so the old looks can be replayed on a prefix of its blocks). Printed: the
gates that fail each way, and every verdict that was undecided or wrong either way.

    python benchmarks/ab_configs.py --config configs/ci-gate.yaml --runs 30 --json gates.json
    python benchmarks/ab_replay.py gates.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from asyncbench.results import blocks  # noqa: E402
from asyncbench.results.labels import Label  # noqa: E402
from asyncbench.verdicts.margin import label_of  # noqa: E402


def old_schedule(family_error: float, verdicts: int, max_blocks: int) -> tuple[float, tuple[int, ...]]:
    """(each look's tail error, the block counts looked at) as `ab` planned them before: the error split evenly over
    the looks of the shared schedule (results.blocks.looks) from the first count with an interval, plus one look
    when the time runs out, whatever the room before the plan's end."""
    for planned in range(1, 64):
        tail = family_error / max(verdicts, 1) / (planned + 1)
        first = max(blocks.FIRST_LOOK_BLOCKS, blocks.min_blocks(tail))
        at = blocks.looks(first, max(max_blocks, first))
        if len(at) <= planned:
            return tail, at
    raise AssertionError("a schedule of looks grows with the logarithm of the blocks: 64 looks are never needed")


def old_labels(values: list[list[float]], family_error: float, margin: float) -> list[Label]:
    """The case's labels as the old design would have given them from these blocks."""
    n = len(values[0])
    tail, schedule = old_schedule(family_error, len(values), n)
    labels: list[Label] = []
    for count in [c for c in schedule if c < n] + [n]:
        labels = []
        for v in values:
            bounds = blocks._signed_rank_interval(v[:count], tail)
            labels.append(label_of(None if bounds is None else (math.exp(bounds[0]), math.exp(bounds[1])), margin))
        if Label.INCONCLUSIVE not in labels:
            break
    return labels


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("gates", type=Path, help="ab_configs.py --json output")
    parser.add_argument(
        "--margin",
        action="append",
        default=[],
        metavar="CASE=FRACTION",
        help="judge the case (its id up to '[') at this margin instead of its own, e.g. gate-two-threads=0.4",
    )
    args = parser.parse_args()
    margins = {name: float(value) for name, value in (m.split("=", 1) for m in args.margin)}
    for config, gates in json.loads(args.gates.read_text()).items():
        failed = {"shipped": 0, "old": 0}
        wrong = {"shipped": 0, "old": 0}
        for index, gate in enumerate(gates):
            family = gate["family_error"] / max(len(gate["cases"]), 1)
            gate_failed = {"shipped": False, "old": False}
            for case in gate["cases"]:
                if case["status"] != "ok":
                    continue
                margin = case["margin"] if case["margin"] is not None else gate["max_regression"]
                margin = margins.get(case["id"].split("[")[0], margin)
                values = [r["block_log_ratios"] for r in case["ratios"]]
                tail = (1 - case["confidence"]) / 2
                shipped = [label_of(blocks.interval(v, tail), margin) for v in values]
                for way, labels in (("shipped", shipped), ("old", old_labels(values, family, margin))):
                    for ratio, label in zip(case["ratios"], labels, strict=True):
                        bad = label in (Label.INCONCLUSIVE, Label.SLOWER, Label.FASTER)
                        gate_failed[way] |= label in (Label.INCONCLUSIVE, Label.SLOWER)
                        wrong[way] += label in (Label.SLOWER, Label.FASTER)
                        if bad:
                            spread = " ".join(f"{100 * x:+.1f}" for x in ratio["block_log_ratios"])
                            print(f"  gate {index} {way}: {case['id'].split('[')[0]} {ratio['name']} {label} ({spread})")
            for way in failed:
                failed[way] += gate_failed[way]
        print(f"{config}: {len(gates)} gates of identical sides")
        for way in failed:
            print(f"  {way}: {failed[way]} exit 1, {wrong[way]} wrong verdicts (FASTER or SLOWER)")


if __name__ == "__main__":
    main()
