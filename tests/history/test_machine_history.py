"""The history finds a code's change with the machine's moves taken out, and says which runs it discounted and why."""

from __future__ import annotations

import dataclasses
import random

import pytest

from asyncbench.history import changes, discount, recorded, store, target
from asyncbench.history.model import Point
from asyncbench.results import stats
from asyncbench.results.model import OK, Result, Samples, VariantResult
from asyncbench.results.reference import Reference
from asyncbench.results.schema import Report
from tests.support.cli import invoke
from tests.support.helpers import report_of

WORK = "float32 256×256 product ×4 on numpy cpu"


def _case(case_id: str, time_s: float, machine_s: float, pressure: float, seed: int) -> Result:
    draw = random.Random(seed)
    done = tuple(time_s * (1 + draw.gauss(0, 0.01)) for _ in range(20))
    variant = VariantResult(Samples(done, done), stats.summarize(done), stats.summarize(done), None)
    samples = tuple(machine_s * (1 + draw.gauss(0, 0.01)) for _ in range(40))
    reference = Reference(WORK, samples, cpu_pressure=pressure, others_cpu=0.0)
    return Result(case_id, "e", "chain", "numpy", "cpu", {}, OK, variants={"chain": variant}, reference=reference)


def _history(tmp_path, seed: int, referenced: bool = True) -> list:
    """12 runs of two cases on a machine that runs 1.7× slower now and then (runs 2 and 10: the cases and the
    reference alike, as measured on the quiet 2-core machine), with a neighbour in run 4 only (the cases 2.5×
    slower, the reference not); `changed` grows 30% from run 7 on, `flat` never changes."""
    draw = random.Random(seed)
    opened = store.open_store(target.resolve(str(tmp_path / f"h{seed}.sqlite")), writing=True)
    for run in range(1, 13):
        speed = (1.7 if run in (2, 10) else 1.0) * draw.uniform(0.97, 1.03)
        neighbour = 2.5 if run == 4 else 1.0
        code = 1.3 if run >= 7 else 1.0
        pressure = 0.5 if run == 4 else draw.uniform(0.0, 0.04)
        rows = [
            _case("changed", 0.002 * code * speed * neighbour, 0.001 * speed, pressure, seed * 100 + run),
            _case("flat", 0.003 * speed * neighbour, 0.001 * speed, pressure, seed * 100 + run + 50),
        ]
        if not referenced:
            import dataclasses

            rows = [dataclasses.replace(row, reference=None) for row in rows]
        opened.record(report_of(rows), label=f"run-{run}")
    return [s for s in opened.series() if s.quantity == "done_s"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_step_is_found_where_it_starts_and_an_unchanged_case_shows_none_on_a_moving_machine(tmp_path, seed):
    found = {one.case: one for one in _history(tmp_path, seed)}
    changed, flat = found["changed"], found["flat"]
    assert changed.machine_seen
    assert flat.machine_seen
    first_run = changed.points[0].run
    assert [c.run - first_run + 1 for c in changed.change_points] == [7]
    (step,) = changed.change_points
    assert step.ratio == pytest.approx(1.3, rel=0.05)
    assert flat.change_points == ()
    assert [run - first_run + 1 for run, _ in changed.discounted] == [2, 4, 10]
    assert "a task waited for a CPU 50% of the time" in changed.discounted[1][1]
    assert "the machine's reference took 1." in changed.discounted[0][1]
    assert "outside ×0.8–×1.25" in changed.discounted[0][1]


def test_runs_without_a_reference_are_searched_as_recorded(tmp_path):
    found = {one.case: one for one in _history(tmp_path, 4, referenced=False)}
    assert not found["changed"].machine_seen
    assert found["changed"].discounted == ()


def test_runs_on_a_moved_machine_or_beside_a_neighbour_are_left_out_and_the_rest_scaled_to_its_usual_speed():
    points = [Point(run, "t", None, None, value, None, None) for run, value in ((1, 2.0), (2, 2.2), (3, 2.0), (4, 6.0), (5, 2.0))]
    machine_s = {1: 1.0, 2: 1.1, 3: 1.0, 4: 1.0, 5: 1.6}
    pressure = {1: 0.0, 2: 0.01, 3: 0.0, 4: 0.6, 5: 0.0}
    judged = discount.discounted(points, machine_s, pressure)
    assert judged is not None
    kept, discounted = judged
    assert [p.run for p in kept] == [1, 2, 3]
    assert [p.value for p in kept] == pytest.approx([2.0, 2.0, 2.0])  # run 2's machine was 10% slower: scaled
    assert [run for run, _ in discounted] == [4, 5]
    assert "neighbour" in discounted[0][1]
    assert "outside ×0.8–×1.25" in discounted[1][1]  # the reference 1.6× slower while the case was not: never scaled
    assert discount.discounted(points, {1: 1.0}, {}) is None  # a point without a reference: searched as recorded


def test_a_case_that_drifted_with_its_machine_shows_no_false_change():
    """A real history (benchmarks/history_machine.py, `flat`, unchanged work beside an intermittent CPU hog): its
    first two runs 14% slower with their reference, four runs discounted. Searched as recorded, Otava splits the kept
    runs at run 4 (a false change, two runs after the first); scaled to the machine's usual speed, it finds none."""
    measured = [  # (median ms, reference ms, CPU pressure) of runs 1-12
        (3.76, 1.10, 0.01), (3.85, 1.11, 0.02), (4.58, 1.58, 0.04), (3.22, 0.95, 0.00), (3.27, 0.97, 0.02), (3.18, 1.04, 0.01),
        (3.21, 0.96, 0.00), (3.21, 0.97, 0.02), (7.22, 0.99, 0.47), (3.19, 0.97, 0.00), (7.07, 0.98, 0.46), (4.56, 1.59, 0.01),
    ]  # fmt: skip
    points = [Point(run, "t", f"run-{run}", None, ms / 1e3, None, None) for run, (ms, _, _) in enumerate(measured, start=1)]
    machine_s = {run: ref / 1e3 for run, (_, ref, _) in enumerate(measured, start=1)}
    pressure = {run: share for run, (_, _, share) in enumerate(measured, start=1)}
    judged = discount.discounted(points, machine_s, pressure)
    assert judged is not None
    kept, left_out = judged
    assert [run for run, _ in left_out] == [3, 9, 11, 12]
    unscaled = [p for p in points if p.run not in dict(left_out)]
    from asyncbench.history.edivisive.analysis import compute_change_points

    # as recorded, Otava splits off its first two runs: a false change at run 4, which changes.change_points no
    # longer calls with two runs before it (history.model.MIN_SIDE_RUNS), but which scaling removes whatever a side
    raw = [p.value for p in unscaled]
    split, _ = compute_change_points(raw, changes.WINDOW, changes.MAX_P_VALUE, changes.MIN_MAGNITUDE)
    assert [unscaled[c.index].label for c in split] == ["run-4"]
    assert changes.change_points(unscaled) == ()
    scaled = [p.value for p in kept]
    assert compute_change_points(scaled, changes.WINDOW, changes.MAX_P_VALUE, changes.MIN_MAGNITUDE)[0] == []
    assert changes.change_points(kept) == ()


def test_a_case_records_its_machine_beside_its_times():
    rows = recorded.quantities(_case("c", 0.002, 0.001, 0.25, 1))
    machine = {row["quantity"]: row for row in rows if row["variant"] == ""}
    assert machine["machine_s"]["unit"] == "s"
    assert machine["machine_s"]["value"] == pytest.approx(0.001, rel=0.02)
    assert machine["machine_s"]["low"] <= machine["machine_s"]["value"] <= machine["machine_s"]["high"]
    assert machine["cpu_pressure"]["value"] == 0.25


def test_history_says_which_runs_it_discounted_and_why(tmp_path):
    import io

    from rich.console import Console

    from asyncbench.report import history as shown

    found = {one.case: one for one in _history(tmp_path, 5)}
    out = io.StringIO()
    shown.print_series([found["changed"]], Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert "changes looked for in the runs whose machine held still; 3 run(s) discounted" in text
    assert "discounted run-4: a task waited for a CPU 50% of the time" in text  # named by its label, as changes are


def test_a_case_that_does_not_follow_the_machine_is_searched_as_recorded():
    """A step in time slept (the store's planted test): the case does not feel the CPU reference's moves of up to 15%,
    so scaling would add them to a clean series; the scaled series moves more from run to run, so it is not used."""
    values = [4.1e-3] * 6 + [5.3e-3] * 6
    machine_ms = [1.0, 1.08, 0.95, 1.1, 0.97, 1.1, 0.96, 1.09, 0.95, 1.1, 0.97, 1.08]
    points = [Point(run, "t", f"run-{run}", None, value, None, None) for run, value in enumerate(values, start=1)]
    judged = discount.discounted(points, {run: ms / 1e3 for run, ms in enumerate(machine_ms, start=1)}, {})
    assert judged is not None
    kept, left_out = judged
    assert left_out == []
    assert kept == points
    assert [c.at for c in changes.change_points(kept)] == ["run-7"]


def test_a_run_beside_a_neighbour_is_discounted_as_compare_reads_one_whatever_the_series_usual():
    """Every run at 97% CPU pressure (all beside a neighbour): the series' usual (its lower quartile) was 97% too, so
    the relative rule alone discounted none and the series was searched as if quiet. A run whose pressure is above
    verdicts.machine.BUSY is beside a neighbour, as `compare` reads it, whatever the series' usual."""
    from asyncbench.history import model
    from asyncbench.verdicts import machine

    points = [Point(run, "t", None, None, 2.0, None, None) for run in range(1, 9)]
    judged = discount.discounted(points, {run: 1.0 for run in range(1, 9)}, {run: 0.97 for run in range(1, 9)})
    assert judged is not None
    kept, left_out = judged
    assert kept == []
    assert [run for run, _ in left_out] == list(range(1, 9))
    assert all(model.beside_neighbour(why) for _, why in left_out)
    assert f"97% of the time (more than {machine.BUSY * 100:.0f}%)" in left_out[0][1]
    # just above BUSY is a neighbour; at it, with the series at BUSY too, none
    just = discount.discounted(points, {run: 1.0 for run in range(1, 9)}, {run: machine.BUSY + 0.01 for run in range(1, 9)})
    assert just is not None
    assert len(just[1]) == 8
    at = discount.discounted(points, {run: 1.0 for run in range(1, 9)}, {run: machine.BUSY for run in range(1, 9)})
    assert at is not None
    assert at[1] == []


def test_the_relative_rule_still_discounts_a_lighter_neighbour_than_compare_calls_one():
    """A run at 12% where the series' usual is 0%: below BUSY, but 10% of the time above what its quiet runs read."""
    points = [Point(run, "t", None, None, 2.0, None, None) for run in range(1, 9)]
    pressure = {run: 0.12 if run == 5 else 0.0 for run in range(1, 9)}
    judged = discount.discounted(points, {run: 1.0 for run in range(1, 9)}, pressure)
    assert judged is not None
    assert [(run, "usually 0%" in why) for run, why in judged[1]] == [(5, True)]


def _busy_store(tmp_path) -> str:
    """A team lead's history: 8 runs, every one beside a neighbour (97% CPU pressure while the case sampled), the
    machine's reference steady; the code 1.6× slower from run 5."""
    path = str(tmp_path / "busy.sqlite")
    opened = store.open_store(target.resolve(path), writing=True)
    for run in range(1, 9):
        code = 1.6 if run >= 5 else 1.0
        opened.record(report_of([_case("train_step", 0.004 * code, 0.001, 0.97, run)]), label=f"run-{run}")
    return path


def test_a_series_whose_every_run_had_a_neighbour_is_not_searched_as_if_quiet(tmp_path):
    import io

    from rich.console import Console

    from asyncbench.report import history as shown

    (one,) = [s for s in store.open_store(target.resolve(_busy_store(tmp_path))).series() if s.quantity == "done_s"]
    assert len(one.discounted) == 8
    assert one.unsteady
    assert one.change_points == ()
    out = io.StringIO()
    shown.print_series([one], Console(file=out, width=300, color_system=None))
    text = out.getvalue()
    assert "changes looked for in the runs whose machine held still" not in text
    assert "changes not looked for: too few runs whose machine held still; 8 run(s) discounted" in text
    assert "discounted run-1: a task waited for a CPU 97% of the time (more than 15%): a neighbour shared the cores" in text


def test_the_gate_on_a_series_whose_every_run_had_a_neighbour_is_inconclusive_and_says_so(tmp_path):
    """It failed on ×1.6 as a regression, judged from runs every one of which `compare` gives no verdict on; it says
    in one line that a neighbour left too few runs to tell, and follows the rule for an unsteady series: it fails
    unless --allow-inconclusive."""

    path = _busy_store(tmp_path)
    failed = invoke("history", "train_step", "--history", path, "--fail-on-regression", "--max-regression", "10%")
    assert failed.exit_code == 1, failed.output
    assert "regression:" not in failed.stderr
    lines = failed.stderr.splitlines()
    assert [line.split(" on ")[0] for line in lines] == ["inconclusive: train_step chain done_s", "inconclusive: train_step chain issue_s"]
    for line in lines:  # one line a series: why, and what the gate does with it
        assert "a neighbour shared the cores in too many runs to tell: 8 of 8 runs discounted" in line
        assert "(8 beside a neighbour): 0 left" in line
        assert "unless --allow-inconclusive" in line
    allowed = invoke("history", "train_step", "--history", path, "--fail-on-regression", "--max-regression", "10%", "--allow-inconclusive")
    assert allowed.exit_code == 0, allowed.output
    assert "--allow-inconclusive: it does not fail the gate" in allowed.stderr


def _pools_store(tmp_path, old_runs: int, new_runs: int, new_reference_s: float, new_time_s: float) -> str:
    """A CPU case recorded `old_runs` times with OMP_NUM_THREADS=1 (reference 1 ms, the case 4 ms), then `new_runs`
    times with OMP_NUM_THREADS=2 (`run --threads 2`): the reference runs in the case's pools, so it moves with them."""
    path = str(tmp_path / "pools.sqlite")
    opened = store.open_store(target.resolve(path), writing=True)
    for run in range(1, old_runs + new_runs + 1):
        threads = "1" if run <= old_runs else "2"
        reference_s, time_s = (0.001, 0.004) if run <= old_runs else (new_reference_s, new_time_s)
        report = dataclasses.replace(
            Report.new({}, {"cpu": "x", "thread_variables": {"OMP_NUM_THREADS": threads}}),
            results=(_case("step_v1", time_s, reference_s, 0.0, run),),
        )
        opened.record(report, label=f"threads{threads}-{run}")
    return path


def test_runs_in_other_thread_pools_than_the_newest_are_discounted_as_compare_reads_them_not_as_a_moved_machine(tmp_path):
    """A pool change once read as the machine's: the runs before it were discounted as "the machine's reference took
    ×1.67 its usual time", and `history` named no thread change. Now each is discounted for its pools, in compare's
    words, said in one line for the series, and the machine's usual is read among the newest run's pools."""
    import io

    from rich.console import Console

    from asyncbench.report import history as shown

    path = _pools_store(tmp_path, old_runs=6, new_runs=6, new_reference_s=0.0006, new_time_s=0.003)
    (one,) = [s for s in store.open_store(target.resolve(path)).series() if s.quantity == "done_s"]
    first = one.points[0].run
    assert [run - first + 1 for run, _ in one.discounted] == [1, 2, 3, 4, 5, 6]
    for _, why in one.discounted:
        assert why.startswith("the runs' CPU thread pools differ (OMP_NUM_THREADS 1 → 2) from the newest run's")
        assert "the machine's reference took" not in why
    assert not one.unsteady
    assert one.change_points == ()
    out = io.StringIO()
    shown.print_series([one], Console(file=out, width=400, color_system=None))
    lines = [line for line in out.getvalue().splitlines() if line.strip().startswith("discounted")]
    assert len(lines) == 1, out.getvalue()  # one line for the series, not one a run
    assert "discounted 6 runs (threads1-1, threads1-2, threads1-3, …)" in lines[0]
    assert "changes looked for in the runs in the newest run's CPU thread pools whose machine held still" in out.getvalue()
    (reference,) = [s for s in store.open_store(target.resolve(path)).series() if s.quantity == "machine_s"]
    assert reference.change_points == ()  # the pools' step, not the machine's: searched in the newest run's pools only
    assert [run - first + 1 for run, _ in reference.discounted] == [1, 2, 3, 4, 5, 6]


def test_the_gate_does_not_pass_a_newest_run_in_new_thread_pools_by_discounting_it_as_a_moved_machine(tmp_path):
    """9 runs in one pool, then 3 in pools whose reference is 1.3× slower and the case 2× slower: the newest runs were
    discounted as a moved machine's and the gate passed on the old runs; now the old pools' runs are discounted,
    too few are left to tell, and the gate says so (inconclusive), naming the pools."""

    path = _pools_store(tmp_path, old_runs=9, new_runs=3, new_reference_s=0.0013, new_time_s=0.008)
    gated = invoke("history", "step_v1", "--history", path, "--fail-on-regression", "--max-regression", "10%")
    assert gated.exit_code == 1, gated.output
    done = [line for line in gated.stderr.splitlines() if " done_s " in line]
    assert len(done) == 1, gated.stderr
    assert done[0].startswith("inconclusive: step_v1 chain done_s")
    assert "CPU thread pools" in done[0]


def test_the_history_page_marks_the_runs_in_other_thread_pools_and_says_so_once_a_series(tmp_path):
    from asyncbench.report import html

    path = _pools_store(tmp_path, old_runs=6, new_runs=6, new_reference_s=0.0006, new_time_s=0.003)
    found = store.open_store(target.resolve(path)).series()
    page = html.render(found, None, [], path)
    assert "CPU thread pools changed: " in page
    said = "6 run(s) discounted, the runs&#x27; CPU thread pools differ (OMP_NUM_THREADS 1 → 2)"
    assert page.count(said) == 2  # done_s's chart (issue_s the same, drawn in it) and machine_s's, in one note


def test_a_run_whose_machine_ran_faster_is_discounted_in_words_that_say_both_bounds():
    """A reference at 0.78× its usual time is discounted as well as one at 1.6×: the line once read "took 0.78× its
    usual time, beyond ×1.25", a number its own label contradicted."""
    points = [Point(run, "t", None, None, 2.0, None, None) for run in range(1, 6)]
    machine_s = {1: 1.0, 2: 1.0, 3: 1.0, 4: 1.0, 5: 0.78}
    judged = discount.discounted(points, machine_s, {})
    assert judged is not None
    _, discounted = judged
    [(run, said)] = discounted
    assert run == 5
    assert "took 0.78× its usual time, outside ×0.8–×1.25: the machine itself changed speed" in said
    assert "beyond" not in said


def _moved_store(tmp_path, code_from: int) -> tuple[str, list]:
    """A trial's history: 14 runs, the runner ×1.5 slower for good from run 7 (its reference and the case alike),
    the code ×2 slower from run `code_from`; the case records a rate of its work (`gflops`) beside its time."""
    from asyncbench.results.model import MetricInfo

    path = str(tmp_path / f"moved{code_from}.sqlite")
    opened = store.open_store(target.resolve(path), writing=True)
    for run in range(1, 15):
        speed = 1.5 if run >= 7 else 1.0
        code = 2.0 if run >= code_from else 1.0
        row = _case("mm", 0.001 * code * speed, 0.001 * speed, 0.0, run)
        done = row.variants["chain"].done_s.median
        row = dataclasses.replace(row, metrics={"gflops": 1e-3 / done}, metric_info={"gflops": MetricInfo("GFLOP/s")})
        opened.record(report_of([row]), label=f"run-{run}")
    return path, [s for s in opened.series() if s.quantity in ("done_s", "gflops")]


def test_a_runner_that_moved_for_good_is_judged_on_its_new_speed_and_a_later_change_of_the_code_is_found(tmp_path):
    """Every run after the move was discounted against the old machine's usual: the ×2 of run 11 was never searched
    ("no change found", exit 0), where `compare` of runs 7 and 13 called it +101% SLOWER."""
    path, found = _moved_store(tmp_path, code_from=11)
    for series in found:
        assert [run for run, _ in series.discounted] == list(range(1, 7)), series.quantity
        assert "on the newest runs' machine" in series.discounted[0][1]
        (change,) = series.change_points
        assert change.at == "run-11", series.quantity
        assert change.ratio == pytest.approx(2.0 if series.quantity == "done_s" else 0.5, rel=0.05)
    gated = invoke("history", "--history", path, "--fail-on-regression", "--max-regression", "10%")
    assert gated.exit_code == 1, gated.output
    assert "regression: mm" in gated.stderr
    assert "a change of the code at the same run cannot be told from it" in gated.stderr  # the machine's own note


def test_a_rate_of_the_work_is_discounted_as_its_time_is_and_calls_no_change_on_a_moved_machine(tmp_path):
    """The runner ×1.5 slower for good, the code unchanged (a change of `code_from` past the runs): `gflops` called
    ×0.663 a regression beside its own note that the machine, not the code, had moved."""
    found = {s.quantity: s for s in _moved_store(tmp_path, code_from=99)[1]}
    assert discount.follows_machine("gflops", "GFLOP/s")
    assert not discount.follows_machine("illusion", "x")
    assert found["gflops"].machine_seen
    assert found["gflops"].discounted == found["done_s"].discounted
    assert found["gflops"].change_points == ()


def test_a_newest_run_or_two_on_a_slow_spell_is_discounted_against_the_series_usual():
    """A passing slow spell is not a new machine: the newest runs' machine is taken only when LASTING of them lie
    outside MOVED; two are discounted, the rest kept."""
    points = [Point(run, "t", None, None, 2.0, None, None) for run in range(1, 11)]
    machine_s = {run: 1.6 if run >= 9 else 1.0 for run in range(1, 11)}
    judged = discount.discounted(points, machine_s, {})
    assert judged is not None
    assert [run for run, _ in judged[1]] == [9, 10]
    assert "newest runs' machine" not in judged[1][0][1]
    assert discount.LASTING == 3


def test_a_discounted_run_without_a_label_is_named_apart_from_its_neighbours_of_the_same_revision(tmp_path):
    """A trial's PostgreSQL store, recorded without --label from one commit: its discounted runs read as the same
    40-digit revision, twice; a change is named `run 7 (4877da9…)` there, and so is a discounted run now."""
    import io

    from rich.console import Console

    from asyncbench.report import history as shown

    sha = "4877da9" + "0" * 33
    opened = store.open_store(target.resolve(str(tmp_path / "same.sqlite")), writing=True)
    for run in range(1, 9):
        report = report_of([_case("c", 0.002, 0.0016 if run in (3, 5) else 0.001, 0.0, run)])
        opened.record(dataclasses.replace(report, environment={**report.environment, "git_sha": sha}))
    (one,) = [s for s in opened.series() if s.quantity == "done_s"]
    out = io.StringIO()
    shown.print_series([one], Console(file=out, width=300, color_system=None))
    text = out.getvalue()
    assert "discounted run 3 (4877da9…): the machine's reference took" in text
    assert "discounted run 5 (4877da9…)" in text
    assert f"discounted {sha}" not in text
