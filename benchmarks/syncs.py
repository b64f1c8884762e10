"""`run --syncs`, its evidence on JAX and MXNet on a CPU: recall, cost, overhead, and the frame fallback's threshold.

- recall: the planted corpus (tests/measure/sync_corpus.py) through runner.run with RunOptions(syncs=True), `--repeats` times per
  backend: the share of planted waits found at their line with their kind, call and waits per step (goal 100%),
  and the points found in the sync-free steps (goal 0).
- cost: per planted step, the time the census attributes to it per step against what its wait should cost: the
  done − issue of its twin without the wait (the corpus's `*_chain` step) in the timed round just before each census
  round, less the harness's own sync; the median of the rounds' ratios (goal: within 10%).
- overhead: conversion's timed rounds with and without the census rounds, measured alternately in one process
  (timing.measure, as the worker runs it): each pair's ratio of each variant's median done time, the median of
  those ratios and its 95% interval (goal: within 2%); then, closer in time, neighbouring timed rounds, one right
  after a census round and one not.
- fallback: on the sync-free steps, every call from the step's lines that slept, whatever its length (the
  threshold's false alarms), and on the planted steps at the cost's sizes (waits of milliseconds) with no hooks at
  all, what the fallback alone finds at the planted lines.

    python benchmarks/syncs.py recall [--repeats 3]
    python benchmarks/syncs.py cost
    python benchmarks/syncs.py overhead [--pairs 20]
    python benchmarks/syncs.py fallback [--rounds 200]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from asyncbench.backends import get_backend  # noqa: E402
from asyncbench.engine import runner  # noqa: E402
from asyncbench.results.model import OK, Result, Settings  # noqa: E402
from asyncbench.results.syncs import SyncKind  # noqa: E402
from asyncbench.spec import config  # noqa: E402
from asyncbench.workloads import plugins  # noqa: E402
from tests.measure import sync_corpus  # noqa: E402

BACKENDS = ("jax", "mxnet")
CORPUS = {"jax": "JaxCorpus", "mxnet": "MxnetCorpus"}
COST_GOAL, OVERHEAD_GOAL = 0.10, 0.02
# The overhead's case: conversion at a size whose variants take milliseconds, in short blocks of 6 timed rounds (each
# followed by a census round: the census's densest schedule) alternated 20 times, so that the drift of a shared
# 2-core machine cancels between neighbouring blocks (blocks of 20 rounds, 10 pairs, gave intervals of ±20-40%).
OVERHEAD_PARAMS = {"size": 256, "n_iter": 10}
OVERHEAD_ROUNDS = 6
# Then timed rounds in neighbouring pairs, one right after a census round, one not: what a census round does to the
# round after it, with the machine's drift cancelled between neighbours.
AFTER_PAIRS = 150
# The cost's steps: a chain of six 320² products (about 0.4 GFLOP: milliseconds of queue, well above the machine's
# jitter) in 30 timed rounds, so 12 census rounds.
COST_SIZE, COST_CHAIN, COST_ROUNDS = 320, 6, 30
#: planted steps whose wait is not the chain's alone: nonzero and masked indexing compute their result inside the
#: hooked call (jnp.nonzero runs a computation, reads its size, then runs another), the fallback's plant waits for a
#: chain of wider matrices
NOT_THE_CHAINS_WAIT = ("jax_nonzero", "jax_mask", "jax_dlpack")


def corpus_lines() -> dict[str, int]:
    lines = Path(sync_corpus.__file__).read_text().splitlines()
    return {text.rsplit("# planted: ", 1)[1].strip(): number for number, text in enumerate(lines, 1) if "# planted: " in text}


def run_one(workload: str, backend: str, params: dict[str, Any], settings: Settings, syncs: bool) -> Result:
    experiment = config.Experiment(
        name="syncs",
        workload=workload,
        backends=(backend,),
        devices=("cpu",),
        params={**plugins.find(workload).defaults(), **params},
        settings=settings,
    )
    (result,) = runner.run(config.Config("b", "<b>", (experiment,)), runner.RunOptions(isolate=True, syncs=syncs))
    if result.status != OK:
        raise SystemExit(f"{backend}: {result.reason}")
    return result


def corpus_run(backend: str, size: int, chain: int, settings: Settings) -> Result:
    return run_one(f"{sync_corpus.__file__}:{CORPUS[backend]}", backend, {"size": size, "chain": chain}, settings, syncs=True)


def recall(repeats: int) -> None:
    lines = corpus_lines()
    settings = Settings(warmup=1, min_samples=6, max_samples=6, max_time_s=60.0, max_rel_noise=1.0)
    for backend in BACKENDS:
        workload = getattr(sync_corpus, CORPUS[backend])
        found = total = free_hits = free_steps = 0
        missed: list[str] = []
        for _ in range(repeats):
            result = corpus_run(backend, 128, 3, settings)
            for name, planted in workload.planted.items():
                total += 1
                points = [(p.file, p.line, str(p.kind), p.call, p.calls_per_step) for p in result.syncs[name].points]
                if points == [(sync_corpus.__file__, lines[name], planted.kind, planted.call, planted.calls_per_step)]:
                    found += 1
                else:
                    missed.append(f"{name}: {points}")
            for name in workload.free:
                free_steps += 1
                free_hits += len(result.syncs[name].points)
        kinds = len({(p.kind, p.call) for p in workload.planted.values()})
        print(
            f"{backend}: recall {found}/{total} = {found / total:.0%} ({kinds} planted waits x {repeats} runs); "
            f"points in sync-free steps: {free_hits} over {free_steps} censuses"
        )
        for line in missed:
            print(f"   missed {line}")


def census_after(rounds: int) -> list[int]:
    """The timed rounds (from 1) that a census round followed, as timing.measure schedules them (census.SCHEDULE)."""
    from asyncbench.measure import census

    after, taken = [], 0
    for timed in range(1, rounds + 1):
        if census.SCHEDULE.due(timed, taken):
            after.append(timed)
            taken += 1
    return after


def cost() -> None:
    settings = Settings(warmup=1, min_samples=COST_ROUNDS, max_samples=COST_ROUNDS, max_time_s=120.0, max_rel_noise=1.0)
    after = census_after(COST_ROUNDS)
    for backend in BACKENDS:
        workload = getattr(sync_corpus, CORPUS[backend])
        result = corpus_run(backend, COST_SIZE, COST_CHAIN, settings)
        chain = result.variants[workload.free[0]].samples
        harness = result.harness.sync_s if result.harness is not None else 0.0
        # per census round, the chain's done - issue in the timed round just before it: neighbours in time, so that a
        # loaded machine's drift does not set an early census against a late median
        expected = [chain.done_s[timed - 1] - chain.issue_s[timed - 1] - harness for timed in after]
        print(
            f"{backend}: the chain's done - issue - harness sync, median {statistics.median(expected) * 1e3:.2f} ms (its wait, were "
            f"it planted); each census round's attributed wait over it in the timed round before, median over {len(after)} rounds:"
        )
        ratios = []
        for name in workload.planted:
            if workload.planted[name].calls_per_step != 1 or name in NOT_THE_CHAINS_WAIT:
                continue  # a loop waits for several chains; the others wait for more than the chain (NOT_THE_CHAINS_WAIT)
            census = result.syncs[name]
            _, waits = census.round_totals()
            ratio = statistics.median(wait / gap for wait, gap in zip(waits, expected, strict=True))
            ratios.append(ratio)
            flag = "" if abs(ratio - 1) <= COST_GOAL else "   <- beyond 10%"
            print(f"   {name:18} {census.wait_s * 1e3:7.2f} ms  ratio {ratio:5.2f}{flag}")
        within = sum(abs(r - 1) <= COST_GOAL for r in ratios)
        print(f"   {within}/{len(ratios)} within 10%; median ratio {statistics.median(ratios):.3f}")


def overhead_here(backend_name: str, pairs: int) -> dict[str, list[float]]:
    """In the backend's own interpreter: conversion measured by timing.measure with and without a census, in
    alternating order, `pairs` times in one process: per variant, each pair's ratio of median done times."""
    from asyncbench.measure import census
    from asyncbench.measure.extra_rounds import ExtraRounds
    from asyncbench.measure.procedure import Procedure
    from asyncbench.measure.timing import measure
    from asyncbench.workloads import BUILT_IN

    backend = get_backend(backend_name)
    prepared = BUILT_IN["conversion"].setup(backend, "cpu", {**BUILT_IN["conversion"].defaults(), **OVERHEAD_PARAMS})
    settings = Settings(warmup=1, min_samples=OVERHEAD_ROUNDS, max_samples=OVERHEAD_ROUNDS, max_time_s=1e9, max_rel_noise=1.0)
    ratios: dict[str, list[float]] = {}
    with backend.activate("cpu"):
        for index in range(pairs):
            done: dict[bool, dict[str, float]] = {}
            for syncs in (False, True) if index % 2 == 0 else (True, False):  # alternating: drift hits both
                taker = census.taker_for(backend, "cpu", True) if syncs else None
                sides = ExtraRounds(((taker, census.SCHEDULE),) if taker is not None else ())
                samples, _ = measure(prepared.variants, prepared.sync, lambda: None, Procedure(settings, extra_rounds=sides))
                done[syncs] = {name: statistics.median(s.done_s) for name, s in samples.items()}
            for name in done[True]:
                ratios.setdefault(name, []).append(done[True][name] / done[False][name])
    if prepared.close is not None:
        prepared.close()
    return ratios


def after_here(backend_name: str, pairs: int) -> dict[str, list[float]]:
    """In the backend's own interpreter: timed rounds of conversion, each right after a census round (as
    timing.measure takes one: the round, then an untimed sample of each variant) or right after none, in pairs of
    neighbours (their order alternating): per variant, each pair's ratio of done times, after one / after none."""
    from asyncbench.measure import census
    from asyncbench.measure.timing import take_sample
    from asyncbench.workloads import BUILT_IN

    backend = get_backend(backend_name)
    prepared = BUILT_IN["conversion"].setup(backend, "cpu", {**BUILT_IN["conversion"].defaults(), **OVERHEAD_PARAMS})
    taker = census.taker_for(backend, "cpu", True)
    assert taker is not None
    order = list(prepared.variants)
    ratios: dict[str, list[float]] = {}
    with backend.activate("cpu"):
        for name in order:  # warm-up
            take_sample(prepared.variants[name], prepared.sync, None)
        for index in range(pairs):
            done: dict[bool, dict[str, float]] = {}
            for after_census in (False, True) if index % 2 == 0 else (True, False):
                if after_census:
                    taker.round(prepared.variants, prepared.sync, order)
                    for name in order:
                        take_sample(prepared.variants[name], prepared.sync, None)
                done[after_census] = {name: take_sample(prepared.variants[name], prepared.sync, None)[1] for name in order}
            for name in order:
                ratios.setdefault(name, []).append(done[True][name] / done[False][name])
    if prepared.close is not None:
        prepared.close()
    return ratios


def overhead(pairs: int) -> None:
    for backend_name in BACKENDS:
        ratios = _in_backend("overhead-here", backend_name, pairs)
        print(
            f"{backend_name}: conversion size {OVERHEAD_PARAMS['size']}, n_iter {OVERHEAD_PARAMS['n_iter']}: {pairs} pairs of "
            f"measurements in one process, {OVERHEAD_ROUNDS} timed rounds each, with and without the census rounds"
        )
        _ratios(ratios)
        after = _in_backend("after-here", backend_name, AFTER_PAIRS)
        print(f"   and {AFTER_PAIRS} pairs of neighbouring timed rounds, one right after a census round, one right after none:")
        _ratios(after)


def _ratios(ratios: dict[str, list[float]]) -> None:
    """Each variant's median ratio with its 95% interval, against the goal."""
    from asyncbench.results import stats

    for name, values in ratios.items():
        median = statistics.median(values)
        interval = stats.median_ci(values, independent=True)
        within = interval is not None and abs(interval[0] - 1) <= OVERHEAD_GOAL and abs(interval[1] - 1) <= OVERHEAD_GOAL
        said = f"[{interval[0]:.3f}, {interval[1]:.3f}]" if interval is not None else "[no interval]"
        flag = "" if abs(median - 1) <= OVERHEAD_GOAL else "   <- beyond 2%"
        print(f"   {name:6} with/without the census: median {median:.3f}, 95% interval {said}{' within 2%' if within else ''}{flag}")


def _in_backend(part: str, backend_name: str, count: int) -> Any:
    """Run `part` of this file in the backend's own interpreter (MXNet's environment) with its worker's variables."""
    backend = get_backend(backend_name)
    done = subprocess.run(
        [backend.interpreter() or sys.executable, __file__, part, backend_name, str(count)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**_environment(), **backend.worker_environment()},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def fallback_here(backend_name: str, rounds: int) -> dict[str, Any]:
    """In the backend's own interpreter: every sleeping call on the sync-free steps, and the fallback alone on the
    planted steps."""
    from asyncbench.measure import census, frames

    backend = get_backend(backend_name)
    workload = getattr(sync_corpus, CORPUS[backend_name])()
    prepared = workload.setup(backend, "cpu", {"size": 128, "chain": 3})
    roots = backend.owned_modules()
    seen: dict[str, list[tuple[int, float]]] = {}
    for name in workload.free:
        step = prepared.variants[name]
        step()
        prepared.sync()
        for index in range(rounds):
            watch = frames.SleepWatch(
                frames.Frames(roots),
                lambda where, call, s, dispatched, i=index, n=name: seen.setdefault(f"{n} line {where.line} {call}", []).append((i, s)),
                lambda: 0,
                lambda: False,
                min_wait_s=0.0,
            )
            watch.start()
            try:
                result = step()
            finally:
                watch.stop()
            prepared.sync()
            del result
    sleeps = {site: {"rounds": len({i for i, _ in hits}), "off_cpu_s": sorted(s for _, s in hits)} for site, hits in seen.items()}
    alone: dict[str, Any] = {}
    lines = corpus_lines()
    prepared = workload.setup(backend, "cpu", {"size": COST_SIZE, "chain": COST_CHAIN})  # waits of milliseconds, as the cost's
    for name in workload.planted:
        found = census.take(prepared.variants[name], (), roots, rounds=6, sync=prepared.sync)
        alone[name] = [(p.line == lines[name], p.call, p.wait_s_per_step) for p in found.points if p.kind == SyncKind.UNKNOWN]
    return {"rounds": rounds, "free_steps": list(workload.free), "sleeps": sleeps, "fallback_alone": alone}


def fallback(rounds: int) -> None:
    from asyncbench.measure.frames import FALLBACK_MIN_WAIT_S

    for backend_name in BACKENDS:
        data = _in_backend("fallback-here", backend_name, rounds)
        print(f"{backend_name}: sync-free steps {', '.join(data['free_steps'])}, {rounds} rounds each, every call that slept:")
        if not data["sleeps"]:
            print("   none")
        for site, hits in sorted(data["sleeps"].items()):
            off = hits["off_cpu_s"]
            print(
                f"   {site}: in {hits['rounds']}/{rounds} rounds, {len(off)} calls, "
                f"off the CPU median {statistics.median(off) * 1e6:.0f} us, "
                f"max {off[-1] * 1e6:.0f} us"
            )
        found = {name: hits for name, hits in data["fallback_alone"].items() if any(at for at, _, _ in hits)}
        smallest = min((s for hits in found.values() for at, _, s in hits if at), default=None)
        print(
            f"   no hooks, fallback alone (threshold {FALLBACK_MIN_WAIT_S * 1e6:.0f} us): {len(found)}/{len(data['fallback_alone'])} "
            f"planted waits found at their line" + (f", the smallest {smallest * 1e6:.0f} us per step" if smallest is not None else "")
        )
        for name, hits in data["fallback_alone"].items():
            if name not in found:
                print(f"      not found: {name} {hits}")


def _environment() -> dict[str, str]:
    import os

    return {**os.environ, "PYTHONPATH": str(ROOT)}


#: the parts that run in the backend's own interpreter (_in_backend)
HERE: dict[str, Any] = {"fallback-here": fallback_here, "overhead-here": overhead_here, "after-here": after_here}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in HERE:
        here = HERE[sys.argv[1]]
        print(json.dumps(here(sys.argv[2], int(sys.argv[3]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("recall", "cost", "overhead", "fallback"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    if args.part == "recall":
        recall(args.repeats)
    elif args.part == "cost":
        cost()
    elif args.part == "overhead":
        overhead(args.pairs)
    else:
        fallback(args.rounds)


if __name__ == "__main__":
    main()
