"""The history at scale: `history` and `report` on a store of 10,000 runs of 50 cases × 3 variants, plus 4 machines more.

Generates the store directly (the tables `record` fills, in bulk): one
machine with RUNS runs and OTHER_MACHINES machines with OTHER_RUNS runs each,
every run holding CASES cases of VARIANTS variants, each case with what
`record` keeps of a CPU case (per variant done_s and issue_s, and two
metrics): 8 series per case. Values are medians with a 3% spread and a step
now and then, so there are change points to find; the change points are
found as recording finds them. Then times, in a fresh interpreter each,
`asyncbench history` (every series) and `asyncbench report -o` (and the
page's size), against the goals: history ≤ 2 s, report ≤ 10 s and ≤ 20 MB.

    python benchmarks/history_scale.py [--postgres postgresql://...] [--runs 10000]

SQLite always; PostgreSQL too with --postgres (its asyncbench tables are dropped first). Generation takes minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from asyncbench.history import store, tables, target

RUNS, OTHER_MACHINES, OTHER_RUNS, CASES, VARIANTS = 10_000, 4, 1_000, 50, 3
GOALS = {"history": 2.0, "report": 10.0}
PAGE_GOAL_BYTES = 20 * 1024 * 1024
BATCH = 50_000
#: the first generated run's creation time; one run an hour after it
START = datetime.datetime(2025, 1, 1, tzinfo=datetime.timezone.utc)


def _rows(machine: str, runs: range, series_ids: dict, rng: random.Random) -> tuple[list, list]:
    """Cases and points for `runs` of one machine (case pk filled in later by position)."""
    cases, points = [], []
    for run in runs:
        for case in range(CASES):
            cases.append({"run_id": run, "case_id": f"case{case}[torch,cpu]", "machine": machine, "workload": "matmul",
                          "backend": "torch", "device": "cpu", "params": "{}", "status": "ok"})  # fmt: skip
            for variant in range(VARIANTS):
                for quantity in ("done_s", "issue_s"):
                    base = 1e-3 * (1 + case % 7) * (1.3 if (run // 2500 + case) % 4 == 0 else 1.0)
                    value = base * rng.lognormvariate(0, 0.03)
                    points.append((len(cases) - 1, series_ids[(machine, case, f"v{variant}", quantity)], run, value))
            for metric in ("speedup", "gflops"):
                points.append((len(cases) - 1, series_ids[(machine, case, "", metric)], run, 2.0 * rng.lognormvariate(0, 0.03)))
    return cases, points


def generate(found: store.Store, seed: int = 0) -> None:
    import sqlalchemy as sa

    rng = random.Random(seed)
    machines = [("m" + str(i) * 11, RUNS if i == 0 else OTHER_RUNS) for i in range(1 + OTHER_MACHINES)]
    runs_table, cases_table = found.table("runs"), found.table("cases")
    points_table, series_table = found.table("points"), found.table("series")
    with found.transaction() as connection:
        run_rows = []
        for index in range(max(r for _, r in machines)):
            created = (START + datetime.timedelta(hours=index)).isoformat(timespec="seconds")
            run_rows.append({"run_key": f"k{index}", "created": created,
                             "recorded": "2026-11-23T00:00:00+00:00", "label": f"v{index}" if index % 50 == 0 else None,
                             "revision": f"{index:040x}", "host": "bench", "environment": "{}", "version": "bench"})  # fmt: skip
        for start in range(0, len(run_rows), BATCH):
            connection.execute(runs_table.insert(), run_rows[start : start + BATCH])
        run_ids = [row.id for row in connection.execute(sa.select(runs_table.c.id).order_by(runs_table.c.id))]
        series_ids = {}
        for name, _ in machines:
            info = json.dumps({"cpu": f"CPU of {name}", "cores": 2, "gpus": [], "framework": "torch 2.13.0"})
            for case in range(CASES):
                keys = [(f"v{v}", q, "s") for v in range(VARIANTS) for q in ("done_s", "issue_s")] + [
                    ("", "speedup", "x"),
                    ("", "gflops", "GFLOP/s"),
                ]
                for variant, quantity, unit in keys:
                    series_ids[(name, case, variant, quantity)] = connection.execute(
                        series_table.insert().values(
                            machine=name,
                            machine_info=info,
                            case_id=f"case{case}[torch,cpu]",
                            variant=variant,
                            quantity=quantity,
                            unit=unit,
                            runs=0,
                        )  # fmt: skip
                    ).inserted_primary_key[0]
        for name, count in machines:
            for start in range(0, count, 200):
                cases, points = _rows(name, range(start, min(count, start + 200)), series_ids, rng)
                for row in cases:
                    row["run_id"] = run_ids[row["run_id"]]
                first = connection.execute(cases_table.insert().returning(cases_table.c.id), cases).scalars().all()
                rows = [
                    {"case_pk": first[c], "series_id": s, "run_id": run_ids[r], "value": v, "low": v * 0.98, "high": v * 1.02}
                    for c, s, r, v in points
                ]
                for at in range(0, len(rows), BATCH):
                    connection.execute(points_table.insert(), rows[at : at + BATCH])
            print(f"  {name}: {count} runs", flush=True)
        connection.execute(
            series_table.update().values(
                runs=sa.select(sa.func.count()).where(points_table.c.series_id == series_table.c.id).scalar_subquery()
            )
        )
        ids = sorted(series_ids.values())
        for start in range(0, len(ids), 100):
            found.refresh_changes(connection, ids[start : start + 100])


def timed(argv: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "asyncbench", *argv], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"asyncbench {' '.join(argv)} failed: {done.stderr.strip()[-400:]}")
    return seconds, done.returncode


def measure(history: str, folder: Path) -> None:
    opened = store.open_store(target.resolve(history))
    started = time.perf_counter()
    generate(opened)
    print(f"  generated in {time.perf_counter() - started:.0f} s")
    history_s, _ = timed(["history", "--history", history])
    page = folder / "report.html"
    report_s, _ = timed(["report", "-o", str(page), "--history", history])
    size = page.stat().st_size
    print(f"  history: {history_s:.2f} s [goal ≤ {GOALS['history']:g} s] {'OK' if history_s <= GOALS['history'] else 'OVER'}")
    print(f"  report:  {report_s:.2f} s [goal ≤ {GOALS['report']:g} s] {'OK' if report_s <= GOALS['report'] else 'OVER'}")
    print(f"  page:    {size / 1024 / 1024:.1f} MB [goal ≤ 20 MB] {'OK' if size <= PAGE_GOAL_BYTES else 'OVER'}")


def main() -> None:
    global RUNS, OTHER_RUNS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="also a PostgreSQL database (its asyncbench tables are dropped first)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs of the first machine (default {RUNS})")
    args = parser.parse_args()
    RUNS = args.runs
    OTHER_RUNS = min(OTHER_RUNS, RUNS)
    series = (1 + OTHER_MACHINES) * CASES * (VARIANTS * 2 + 2)
    points = (RUNS + OTHER_MACHINES * OTHER_RUNS) * CASES * (VARIANTS * 2 + 2)
    print(f"{RUNS} runs on one machine and {OTHER_RUNS} on each of {OTHER_MACHINES} more; {CASES} cases × {VARIANTS} variants")
    print(f"{series} series, {points:,} points")
    with tempfile.TemporaryDirectory() as folder:
        print("SQLite")
        measure(str(Path(folder) / "h.sqlite"), Path(folder))
        if args.postgres:
            import sqlalchemy as sa

            engine = sa.create_engine(target.resolve(args.postgres).url)
            with engine.begin() as connection:
                for name in ("changes", "points", "series", "cases", "runs", "meta"):
                    connection.execute(sa.text(f"DROP TABLE IF EXISTS {tables.PREFIX}{name} CASCADE"))
            print("PostgreSQL")
            measure(args.postgres, Path(folder))


if __name__ == "__main__":
    main()
