"""What `merge` and `record` cost per case: reading and checking N cases' results, and merging them.

A CI matrix's shards (`run --shard I/2`) of an N-case plan are made without
running N cases: one real run of a tiny numpy config gives a measured row
(`--samples` rounds, as a long case takes), and each case the plan's real cut
(engine.shards.select) gives a shard is that row under the case's own id and
params, so the files are what two shards of the plan would have written (the
plan's digest, each shard's planned cases and places). Then, each timed on
its own, in ms per case, CPU time (what it costs on a machine other work
shares; the figure to compare) beside wall time:

- load: `merge`'s reading of one shard's file, every field checked as
  `record` checks it (results.schema.Report.load);
- record: `record`'s reading and checking of one file before the store is
  opened (session.recorder's path: parsed once, checked as it is read);
- merge (in process): both shards' files read, proven to give only what each
  shard planned (results.shard_plan), and put together (results.shards);
- merge CLI: `asyncbench merge` of the two files to `-o`, start-up, judging
  and writing included.

The goal (issue 56): near 1 ms a case at 10,000 cases, every check kept. To
measure an older asyncbench, run this file from an export of its tree (`git
archive REV | tar -x -C DIR`, this file copied in): it measures the tree it
lies in.

    python benchmarks/merge_record_cost.py [--cases 10000] [--samples 200] [--keep DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from asyncbench.engine import shards as cut  # noqa: E402
from asyncbench.results import schema, shards  # noqa: E402
from asyncbench.results.schema import Report  # noqa: E402
from asyncbench.session import planning, recorder, requests  # noqa: E402

try:  # the proof that each shard gives only what it planned (issue 56); absent from an older asyncbench measured before it
    from asyncbench.results import shard_plan
except ImportError:
    shard_plan = None  # type: ignore[assignment]

GOAL_MS = 1.0
SHARDS = 2


def config(points: int, samples: int) -> str:
    """A sync_async sweep of `points` cases on numpy, each taking `samples` rounds (min = max samples)."""
    values = list(range(1, points + 1))
    return (
        "experiments:\n"
        "  - name: sync_async\n"
        "    workload: sync_async\n"
        "    backends: [numpy]\n"
        "    devices: [cpu]\n"
        f"    min_samples: {samples}\n"
        f"    max_samples: {samples}\n"
        "    max_time_s: 60\n"
        f"    sweep: {{n_ops: {values}}}\n"
    )


def template(folder: Path, samples: int) -> dict:
    """One real run of a one-case plan: its results file, whose row every made case copies."""
    (folder / "one.yaml").write_text(config(1, samples), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "asyncbench", "run", "one.yaml", "--no-progress", "--allow-inconclusive", "-o", "one.json"]
    done = subprocess.run(argv, cwd=folder, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        sys.exit(f"the template run exited {done.returncode}:\n{done.stderr[-2000:]}")
    return json.loads((folder / "one.json").read_text(encoding="utf-8"))


def shard_files(folder: Path, cases: int, samples: int) -> list[Path]:
    """The `SHARDS` shards' files of a `cases`-case plan, each row the template's under its planned case's name."""
    raw = template(folder, samples)
    [row] = raw["results"]
    (folder / "plan.yaml").write_text(config(cases, samples), encoding="utf-8")
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        plan = planning.plan(requests.Selection(configs=("plan.yaml",)))
    finally:
        os.chdir(cwd)
    paths = []
    for index in range(1, SHARDS + 1):
        selected = cut.select(plan, shards.Shard(index, SHARDS))
        rows = [{**row, **dataclasses.asdict(case), "params": dict(case.params)} for case in selected.shard.cases]
        header = {key: value for key, value in raw.items() if key != "results"}
        made = {**header, "config": plan.to_dict(), "shard": schema.shard_to_dict(selected.shard), "results": []}
        text = json.dumps(made, indent=1)
        lines = ",\n".join(json.dumps(one, separators=(",", ":")) for one in rows)
        path = folder / f"shard-{index}.json"
        head = text[: text.rindex('"results"')]
        path.write_text(f'{head}"results": [\n{lines}\n ]\n}}\n', encoding="utf-8")
        paths.append(path)
    return paths


def timed(step: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds `step` took: CPU time is what it costs on a machine other work shares."""
    wall, cpu = time.perf_counter(), time.process_time()
    step()
    return time.perf_counter() - wall, time.process_time() - cpu


def children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def merged(paths: list[Path]) -> object:
    """`merge`'s work before its report is judged and written: every file read and checked, then put together (in
    the working tree, proven first to give only what each shard planned, where this asyncbench proves it)."""
    loaded = [(str(path), Report.load(str(path))) for path in paths]
    if shard_plan is not None:
        shard_plan.proven(shards.ordered(loaded))
    return shards.merged(loaded)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000, help="cases in the plan (default 10000)")
    parser.add_argument("--samples", type=int, default=200, help="rounds of each case (default 200)")
    parser.add_argument("--keep", help="make the files in this folder and keep them")
    args = parser.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="merge-cost-"))
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    paths = shard_files(folder, args.cases, args.samples)
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.1f} MB" for p in paths)
    print(f"{args.cases} cases of {args.samples} rounds in {SHARDS} shards ({sizes}), made in {time.perf_counter() - started:.1f} s")
    first = str(paths[0])
    first_cases = len(json.loads(paths[0].read_text())["results"])
    quiet: Callable[[str], None] = lambda _: None  # noqa: E731
    figures = {
        "load (one shard, checked)": (timed(lambda: Report.load(first)), first_cases),
        "record (one file, checked)": (timed(lambda: recorder._recordable(first, quiet)), first_cases),
        "merge (in process, no output)": (timed(lambda: merged(paths)), args.cases),
    }
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = [sys.executable, "-m", "asyncbench", "merge", *map(str, paths), "-o", str(folder / "all.json"), "--allow-inconclusive"]
    start, cpu = time.perf_counter(), children_cpu_s()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    cli = (time.perf_counter() - start, children_cpu_s() - cpu)
    if done.returncode not in (0, 1):
        sys.exit(f"asyncbench merge exited {done.returncode}:\n{done.stderr[-2000:]}")
    figures["merge CLI (to -o, all in)"] = (cli, args.cases)
    print(f"{'':<32} {'CPU':>8} {'wall':>8}   ms a case")
    for label, ((wall_s, cpu_s), cases) in figures.items():
        cpu_ms, wall_ms = cpu_s * 1e3 / cases, wall_s * 1e3 / cases
        print(f"{label:<32} {cpu_ms:8.3f} {wall_ms:8.3f}   [goal ~{GOAL_MS:g} CPU] {'OK' if cpu_ms <= GOAL_MS * 1.5 else 'OVER'}")
    print(f"asyncbench merge of {args.cases} cases: {cli[0]:.1f} s ({cli[1]:.1f} s CPU)")
    if not args.keep:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
