"""The history at scale: `history` and `report` on a store of 10,000 runs of 50 cases × 3 variants, plus 4 machines
more; and with --record, `record` itself (seconds per recorded run) as the store grows.

Generates the store directly (the tables `record` fills, in bulk): one
machine with RUNS runs and OTHER_MACHINES machines with OTHER_RUNS runs each,
every run holding CASES cases of VARIANTS variants, each case with what
`record` keeps of a CPU case (per variant done_s and issue_s, and two
metrics): 8 series per case. Values are medians with a 3% spread and a step
now and then, so there are change points to find; the change points are
found as recording finds them. Then times, in a fresh interpreter each,
`asyncbench history` (every series) and `asyncbench report -o` (and the
page's size), against the goals: history ≤ 2 s, report ≤ 10 s and ≤ 20 MB.

With --record: for a store of 10, 1,000 and 10,000 runs on the recording machine, alone or beside 4 more machines
sharing its case ids (min(runs, 1,000) runs each), times real `Store.record` calls of new runs of that machine,
in this interpreter after the store is open and a first run recorded (imports, connection): seconds per recorded
run beyond start-up, against the goal of RECORD_GOAL_S.

    python benchmarks/history_scale.py [--postgres postgresql://...] [--runs 10000] [--cases 50] [--record]

SQLite always; PostgreSQL too with --postgres (its asyncbench tables are dropped first). Generation takes minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import tempfile
import time
from pathlib import Path

from common import timed_asyncbench  # benchmarks/ is sys.path[0] when this runs as a script

from asyncbench.history import clock, machine, store, tables, target
from asyncbench.results.model import OK, MetricInfo, Result, Samples, Stats, VariantResult
from asyncbench.results.schema import Report

RUNS, OTHER_MACHINES, OTHER_RUNS, CASES, VARIANTS = 10_000, 4, 1_000, 50, 3
GOALS = {"history": 2.0, "report": 10.0}
#: `record`, per run beyond start-up, at the largest store (10,000 runs, 5 machines sharing case ids)
RECORD_GOAL_S = 1.0
#: the recording machine's runs in the stores `--record` times `record` on, and how many machines share case ids
RECORD_SIZES, RECORD_MACHINES = (10, 1_000, 10_000), (1, 5)
#: runs recorded and timed per store, after one untimed (imports, the first connection)
RECORDED = 5
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


def generate(found: store.Store, seed: int = 0, machines: list[tuple[str, int]] | None = None) -> None:
    """Fill `found` in bulk: (machine fingerprint, runs) each, by default RUNS on one and OTHER_RUNS on the others."""
    import sqlalchemy as sa

    rng = random.Random(seed)
    machines = machines or [("m" + str(i) * 11, RUNS if i == 0 else OTHER_RUNS) for i in range(1 + OTHER_MACHINES)]
    runs_table, cases_table = found.table("runs"), found.table("cases")
    points_table, series_table = found.table("points"), found.table("series")
    with found.transaction() as connection:
        run_rows = []
        for index in range(max(r for _, r in machines)):
            created = (START + datetime.timedelta(hours=index)).isoformat(timespec="seconds")
            run_rows.append({"run_key": f"k{index}", "created": created,
                             "recorded": "2026-11-23T00:00:00+00:00", "label": f"v{index}" if index % 50 == 0 else None,
                             "revision": f"{index:040x}", "host": "bench", "environment": "{}", "version": "bench",
                             "kind": "run", "ordered_at": clock.ordered_at(created, "2026-11-23T00:00:00+00:00")})  # fmt: skip
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


def measure(history: str, folder: Path) -> None:
    opened = store.open_store(target.resolve(history), writing=True)
    started = time.perf_counter()
    generate(opened)
    print(f"  generated in {time.perf_counter() - started:.0f} s")
    history_s, _ = timed_asyncbench(["history", "--history", history])
    page = folder / "report.html"
    report_s, _ = timed_asyncbench(["report", "-o", str(page), "--history", history])
    size = page.stat().st_size
    print(f"  history: {history_s:.2f} s [goal ≤ {GOALS['history']:g} s] {'OK' if history_s <= GOALS['history'] else 'OVER'}")
    print(f"  report:  {report_s:.2f} s [goal ≤ {GOALS['report']:g} s] {'OK' if report_s <= GOALS['report'] else 'OVER'}")
    print(f"  page:    {size / 1024 / 1024:.1f} MiB, {size:,} bytes [goal ≤ 20 MiB] {'OK' if size <= PAGE_GOAL_BYTES else 'OVER'}")


def _environment(index: int) -> dict:
    """Machine `index`'s environment as a results file holds it: what its fingerprint is made of."""
    return {
        "cpu": f"Bench CPU {index}",
        "cpu_cores_logical": 2,
        "hostname": f"bench{index}",
        "frameworks": {"torch": {"version": "2.13.0"}},
    }


def _fingerprint(index: int) -> str:
    return machine.fingerprint(machine.describe(_environment(index), "torch", "cpu"))


def _report(run: int, rng: random.Random) -> Report:
    """Run number `run` of machine 0 as `run` makes it: CASES cases of VARIANTS variants (done_s, issue_s) and two
    metrics, the quantities, case ids and values (with their steps) of the generated series, going on."""

    def clock(value: float) -> Stats:
        return Stats(value, value * 0.02, value * 0.97, value * 1.03, value * 0.98, value * 1.02, 40)

    results = []
    for case in range(CASES):
        base = 1e-3 * (1 + case % 7) * (1.3 if (run // 2500 + case) % 4 == 0 else 1.0)
        variants = {
            f"v{v}": VariantResult(
                Samples((), ()), clock(base * rng.lognormvariate(0, 0.03)), clock(base * rng.lognormvariate(0, 0.03)), None
            )
            for v in range(VARIANTS)
        }
        metrics = {"speedup": 2.0 * rng.lognormvariate(0, 0.03), "gflops": 2.0 * rng.lognormvariate(0, 0.03)}
        results.append(
            Result(
                id=f"case{case}[torch,cpu]", experiment=f"case{case}", workload="matmul", backend="torch", device="cpu", params={},
                status=OK, variants=variants, metrics=metrics, bounds={name: (v * 0.98, v * 1.02) for name, v in metrics.items()},
                metric_info={"speedup": MetricInfo("x"), "gflops": MetricInfo("GFLOP/s")},
            )
        )  # fmt: skip
    environment = {**_environment(0), "git_sha": f"{run:040x}"}
    return Report.new({}, environment, tuple(results))


def measure_record(history: str, runs: int, machines: int) -> tuple[float, float]:
    """Median and longest seconds of RECORDED `Store.record` calls on a store of `runs` runs of machine 0 beside
    `machines - 1` more machines with the same case ids (min(runs, OTHER_RUNS) runs each)."""
    opened = store.open_store(target.resolve(history), writing=True)
    layout = [(_fingerprint(i), runs if i == 0 else min(runs, OTHER_RUNS)) for i in range(machines)]
    started = time.perf_counter()
    generate(opened, machines=layout)
    print(f"    generated in {time.perf_counter() - started:.0f} s", flush=True)
    rng = random.Random(1)
    opened.record(_report(runs, rng))  # start-up: Otava's and scipy's imports, the first connection
    seconds = []
    for index in range(1, RECORDED + 1):
        report = _report(runs + index, rng)
        started = time.perf_counter()
        done = opened.record(report)
        seconds.append(time.perf_counter() - started)
        if not done.new or done.points != CASES * (VARIANTS * 2 + 2):
            raise SystemExit(f"run {index} was not recorded as a new run of {CASES * (VARIANTS * 2 + 2)} points: {done}")
    return sorted(seconds)[len(seconds) // 2], max(seconds)


def _empty(history: str, folder: Path, name: str) -> str:
    """A new store's address: a fresh SQLite file in `folder`, or the PostgreSQL database with its tables dropped."""
    if not history.startswith("postgres"):
        return str(folder / f"{name}.sqlite")
    import sqlalchemy as sa

    engine = sa.create_engine(target.resolve(history).url)
    with engine.begin() as connection:
        for table in ("changes", "points", "series", "cases", "runs", "meta"):
            connection.execute(sa.text(f"DROP TABLE IF EXISTS {tables.PREFIX}{table} CASCADE"))
    engine.dispose()
    return history


def record_table(history: str, folder: Path) -> None:
    print("  | runs | machines | record, s per run (median) | longest |")
    print("  |--:|--:|--:|--:|")
    for runs in RECORD_SIZES:
        for machines in RECORD_MACHINES:
            median, longest = measure_record(_empty(history, folder, f"r{runs}x{machines}"), runs, machines)
            over = " OVER" if runs == max(RECORD_SIZES) and machines == max(RECORD_MACHINES) and median > RECORD_GOAL_S else ""
            print(f"  | {runs:,} | {machines} | {median:.3f} | {longest:.3f} |{over}", flush=True)


def main() -> None:
    global RUNS, OTHER_RUNS, RECORD_SIZES, CASES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="also a PostgreSQL database (its asyncbench tables are dropped first)")
    parser.add_argument("--runs", type=int, default=RUNS, help=f"runs of the first machine (default {RUNS})")
    parser.add_argument(
        "--cases", type=int, default=CASES, help=f"cases a run (default {CASES}; 8 series a case and machine, so 75 makes 3,000 series)"
    )
    parser.add_argument("--record", action="store_true", help=f"time `record` itself (goal ≤ {RECORD_GOAL_S:g} s per run) instead")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(RECORD_SIZES), help="with --record: the stores' runs")
    args = parser.parse_args()
    CASES = args.cases
    if args.record:
        RECORD_SIZES = tuple(args.sizes)
        with tempfile.TemporaryDirectory() as folder:
            print(f"record: {CASES} cases × {VARIANTS} variants a run ({CASES * (VARIANTS * 2 + 2)} series a machine)")
            print("SQLite")
            record_table(str(Path(folder) / "h.sqlite"), Path(folder))
            if args.postgres:
                print("PostgreSQL")
                record_table(args.postgres, Path(folder))
        return
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
