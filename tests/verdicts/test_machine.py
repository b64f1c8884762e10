"""compare of two separate runs with the machine's own speed in each: a moved machine is never the code's change."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from asyncbench.report import compared
from asyncbench.results import reference, stats
from asyncbench.results.labels import Label
from asyncbench.results.model import OK, Result, Samples, VariantResult
from asyncbench.results.reference import Reference
from asyncbench.verdicts import compare, machine, undecided
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.base import Workload
from tests.support.helpers import report_of

WORK = "float32 256×256 product ×4 on numpy cpu"


def _times(scale: float, n: int, seed: int, spread: float = 0.01) -> tuple[float, ...]:
    draw = random.Random(seed)
    return tuple(scale * (1 + draw.gauss(0, spread)) for _ in range(n))


def _case(case_scale: float, machine_scale: float | None, seed: int, pressure: float | None = 0.0, others: float | None = 0.3) -> Result:
    """One case of 30 rounds around `case_scale` ms, with a reference of 60 samples around `machine_scale` ms, sampled
    while some task waited for a CPU `pressure` of the time and other processes used `others` of it (a neighbour's
    share, so that a pressure past BUSY is one's)."""
    done = _times(case_scale * 1e-3, 30, seed)
    variant = VariantResult(Samples(done, done), stats.summarize(done), stats.summarize(done), None)
    reference = (
        None
        if machine_scale is None
        else Reference(WORK, _times(machine_scale * 1e-3, 60, seed + 1000), cpu_pressure=pressure, others_cpu=others)
    )
    return Result("chain[numpy,cpu]", "chain", "chain", "numpy", "cpu", {}, OK, variants={"chain": variant}, reference=reference)


def _compared(baseline: Result, current: Result, baseline_schema: int | None = None) -> compare.VariantComparison:
    """The one row of two runs of one case; `baseline_schema`: the baseline's file's schema (None: this one's)."""
    old = report_of([baseline])
    if baseline_schema is not None:
        old = dataclasses.replace(old, schema_version=baseline_schema)
    (row,) = compare.compare(old, report_of([current]), names=("a.json", "b.json")).rows
    return row


def test_a_machine_that_ran_slower_with_the_case_is_not_the_codes_change():
    """Identical code on a machine 1.38× slower in the second run (the case and the reference alike): compare
    called it SLOWER; with the machine carried (a case may feel it from not at all to twice as much) the code's
    interval reaches from 0.67 to 1.38: INCONCLUSIVE, in either order, with the line that says what the machine did."""
    row = _compared(_case(2.0, 1.0, 1), _case(2.0 * 1.38, 1.38, 2))
    assert row.case_ratio == pytest.approx(1.38, rel=0.02)
    assert row.label == Label.INCONCLUSIVE
    assert row.machine_moved is False
    assert row.ratio_ci is not None
    assert row.ratio_ci[0] < 0.75
    assert row.ratio_ci[1] > 1.3
    assert "the machine ran 1.38× [" in row.machine
    assert "slower during b.json" in row.machine
    faster = _compared(_case(2.0 * 1.38, 1.38, 2), _case(2.0, 1.0, 1))  # the other order: FASTER before
    assert faster.label == Label.INCONCLUSIVE
    assert "slower during a.json" in faster.machine


def test_a_change_far_beyond_the_machines_is_still_called():
    """A step 4× slower on a machine that ran 1.3× slower: slower even if the case felt the machine twice over."""
    row = _compared(_case(2.0, 1.0, 3), _case(8.0 * 1.3, 1.3, 4))
    assert row.label == Label.SLOWER
    view = compared.comparison(compare.compare(report_of([_case(2.0, 1.0, 3)]), report_of([_case(8.0 * 1.3, 1.3, 4)])))
    assert any(note.startswith("machine during chain[numpy,cpu]: the machine ran 1.3") for note in view.notes)


def test_a_neighbour_the_os_saw_in_one_run_only_gives_no_verdict_whatever_the_reference_says():
    """A case 2.5× slower beside a CPU hog while the reference did not move (measured: they took the hog's time
    slices in turn): never SLOWER, INCONCLUSIVE with the line that says what the OS saw."""
    row = _compared(_case(2.0, 1.0, 5, pressure=0.02), _case(5.0, 1.0, 6, pressure=0.5))
    assert row.label == Label.INCONCLUSIVE
    assert row.machine_moved is True
    assert "a task waited for a CPU 50% of the time in b.json: a neighbour shared the cores" in row.note
    assert "no verdict" in row.note


def test_neighbours_in_both_runs_give_no_verdict_either():
    """Measured: a steady CPU hog in one run and a lighter job in the other read 71% and 65% pressure and slowed the
    case 2.6× and not at all: the pressure says a neighbour was there, not what it did."""
    row = _compared(_case(7.3, 0.87, 5, pressure=0.71), _case(2.8, 0.79, 6, pressure=0.65))
    assert row.label == Label.INCONCLUSIVE
    assert "71% of the time in a.json and 65% of the time in b.json" in row.note
    quiet = _compared(_case(2.0, 1.0, 5, pressure=0.1), _case(2.5, 1.0, 6, pressure=0.14))  # quiet runs read up to 0.14
    assert quiet.label == Label.SLOWER


def test_a_reference_that_moved_while_the_case_did_not_is_no_verdict_on_the_code_either_way():
    """Measured: a reference 1.6× slower in runs where the case beside it did not move. Dividing would call the
    unchanged code 1.6× faster; carried, it is a pass (its interval reaches 1) and never FASTER."""
    row = _compared(_case(2.0, 1.0, 7), _case(2.0, 1.6, 8))
    assert row.label not in (Label.FASTER, Label.SLOWER)
    assert row.ratio_ci is not None
    assert row.ratio_ci[1] >= 0.99


def test_a_machine_beyond_what_was_measured_gives_no_verdict():
    row = _compared(_case(2.0, 1.0, 9), _case(5.0, 2.5, 10))
    assert row.label == Label.INCONCLUSIVE
    assert "beyond ×2" in row.note


def test_a_real_slowdown_on_a_steady_machine_is_slower():
    row = _compared(_case(2.0, 1.0, 11), _case(2.5, 1.0, 12))
    assert row.label == Label.SLOWER
    assert row.machine_moved is False
    assert row.machine.startswith("the machine held its speed")
    assert machine.held(row.machine_ci)
    slightly = _compared(_case(2.0, 1.0, 13), _case(2.5 * 1.02, 1.02, 14))  # a steady machine's 2% is carried
    assert slightly.label == Label.SLOWER
    assert slightly.ratio_ci is not None
    assert slightly.case_ci is not None
    assert slightly.ratio_ci[0] < slightly.case_ci[0]
    assert slightly.ratio_ci[1] >= slightly.case_ci[1]


def test_the_codes_interval_carries_the_machines_change_felt_from_not_at_all_to_twice():
    change = machine.MachineChange(1.02, (1.01, 1.03), False, "")
    low, high = change.code_interval((1.2, 1.3))
    assert low == pytest.approx(1.2 / 1.03**machine.MAX_SENSITIVITY)
    assert high == pytest.approx(1.3)  # not felt at all
    faster = machine.MachineChange(0.98, (0.97, 0.99), False, "")
    assert faster.code_interval((1.2, 1.3)) == pytest.approx((1.2, 1.3 / 0.97**machine.MAX_SENSITIVITY))
    assert machine.MachineChange(1.3, (1.2, 1.4), True, "").code_interval((1.2, 1.3)) is None


def test_files_without_references_compare_as_before_and_say_the_machine_is_not_seen():
    row = _compared(_case(2.0, None, 11), _case(2.0 * 1.38, None, 12))
    assert row.label == Label.SLOWER  # what separate runs said before: the caveat is the note, not the verdict
    assert row.machine_moved is None
    view = compared.comparison(compare.compare(report_of([_case(2.0, None, 11)]), report_of([_case(2.0, None, 12)])))
    assert any("not seen for 1 case(s)" in note for note in view.notes)


def test_different_reference_work_is_not_compared():
    other = _case(2.0, 1.0, 14)
    assert other.reference is not None
    other = dataclasses.replace(other, reference=dataclasses.replace(other.reference, work="float32 64×64 product ×1 on numpy cpu"))
    row = _compared(_case(2.0, 1.0, 13), other)
    assert row.machine_moved is None


def test_the_json_comparison_carries_the_machine_and_the_cases_own_ratio():
    comparison = compare.compare(report_of([_case(2.0, 1.0, 15)]), report_of([_case(2.0 * 1.2, 1.2, 16)]))
    (row,) = json.loads(compare.dumps(comparison))["rows"]
    assert row["case_ratio"] == pytest.approx(1.2, rel=0.02)
    assert row["machine_ratio"] == pytest.approx(1.2, rel=0.02)
    assert row["machine_moved"] is False
    assert row["verdict"] == "inconclusive"  # 1.2 carried: the code's interval reaches from 0.83 to 1.2
    assert len(row["machine_ci"]) == 2
    assert row["machine"]


def test_the_view_counts_the_cases_during_which_the_machine_held_still():
    view = compared.comparison(compare.compare(report_of([_case(2.0, 1.0, 17)]), report_of([_case(2.0, 1.01, 18)])))
    assert any(note.startswith("the machine held its speed during 1 case(s) (reference within ±5%, farthest 1.01×") for note in view.notes)


def test_runs_whose_cpu_thread_pools_differ_do_not_read_the_reference_as_the_machine():
    """A free pool against a pinned one (`--threads 1`): the reference runs in the case's pools, and moved 42× in
    one case and 1.7× the other way in the next, between the same two runs. With the pools' variables apart, no
    machine change is read from it: the row compares code and pools together, and says so."""
    free, pinned = ({"cpu": "x", "thread_variables": pools} for pools in ({}, {"OMP_NUM_THREADS": "1"}))
    base, head = _case(2.0, 1.0, 5), _case(2.0 * 1.5, 1.5, 6)  # the pools made both the case and its reference slower
    (row,) = compare.compare(
        dataclasses.replace(report_of([base]), environment=free), dataclasses.replace(report_of([head]), environment=pinned)
    ).rows
    assert row.machine_ratio is None
    assert row.machine is not None
    assert "CPU thread pools differ (OMP_NUM_THREADS unset → 1)" in row.machine
    assert row.label == Label.SLOWER  # the code with its pools, 1.5× slower: no machine to carry
    assert not row.machine_neighbour
    (same,) = compare.compare(
        dataclasses.replace(report_of([base]), environment=pinned), dataclasses.replace(report_of([head]), environment=pinned)
    ).rows
    assert same.machine_ratio == pytest.approx(1.5, rel=0.02)  # same pools: the reference is the machine's again


def test_a_row_without_an_interval_quotes_the_level_of_the_table_and_says_why_its_samples_take_another():
    """A table headed '99% intervals' said 'no 99.5% interval from 20 vs 38 samples': with the machine's change seen,
    the samples' own interval is at half the row's error, and the line says so beside the row's own level."""

    def few(scale: float, n: int, seed: int) -> Result:
        done = _times(scale * 1e-3, n, seed)
        variant = VariantResult(Samples(done, done), stats.summarize(done), stats.summarize(done), None)
        reference = Reference(WORK, _times(1e-3, 60, seed + 1000), cpu_pressure=0.0, others_cpu=0.0)
        return Result("chain[numpy,cpu]", "chain", "chain", "numpy", "cpu", {}, OK, variants={"chain": variant}, reference=reference)

    comparison = compare.compare(report_of([few(2.0, 3, 1)]), report_of([few(2.0, 2, 2)]))
    (row,) = comparison.rows
    assert row.machine_moved is False  # the machine's change is seen, and held
    shown = compared.comparison(comparison)
    assert "98% intervals" in shown.budget
    assert row.note is not None
    assert row.note.startswith("no 98% interval from 2 vs 3 samples (their own interval is taken at 99%: half the row's error")
    assert row.note.endswith("current samples")


FREE, PINNED = ({"cpu": "x", "thread_variables": pools} for pools in ({}, {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}))


def _pooled(baseline: Result, current: Result) -> compare.Comparison:
    """The two cases compared as runs of a free pool (the baseline) and a pinned one (the current run)."""
    return compare.compare(
        dataclasses.replace(report_of([baseline]), environment=FREE),
        dataclasses.replace(report_of([current]), environment=PINNED),
        names=("a1.json", "t2.json"),
    )


def test_a_neighbour_in_either_run_gives_no_verdict_though_the_pools_differ():
    """The trial: `--threads 1` against `--threads 2`, CPU pressure 76% and 89%: the row read SLOWER (+225%) on the
    case's own interval, as if no neighbour had been there. The pools make the reference's speed unreadable, not the
    OS's account of a neighbour: INCONCLUSIVE, with the line that says so and why the speed is not read."""
    for pressures in ((0.76, 0.89), (0.02, 0.5), (0.5, 0.02)):
        (row,) = _pooled(_case(2.0, 1.0, 5, pressure=pressures[0]), _case(6.5, 1.0, 6, pressure=pressures[1])).rows
        assert row.label == Label.INCONCLUSIVE, pressures
        assert row.machine_moved is True
        assert row.machine_neighbour
        assert row.machine_ratio is None  # the reference's speed is not read: no ratio is claimed
        assert row.note is not None
        assert "a neighbour shared the cores" in row.machine
        assert "no verdict on this evidence" in row.note
        assert "CPU thread pools differ (MKL_NUM_THREADS, OMP_NUM_THREADS unset → 1)" in row.note
    payload = json.loads(compare.dumps(_pooled(_case(2.0, 1.0, 5, pressure=0.76), _case(6.5, 1.0, 6, pressure=0.89))))
    assert payload["rows"][0]["machine_ratio"] is None
    assert payload["rows"][0]["machine_neighbour"] is True


def test_runs_whose_pools_differ_say_so_where_the_machine_is_not_seen_not_that_a_file_has_no_reference():
    """Quiet runs in different pools: judged on the case's own interval, and the line under the table says the
    pools differ and what that means; it said 'a file without a reference (before schema 10)' of files with one."""
    view = compared.comparison(_pooled(_case(2.0, 1.0, 5), _case(6.5, 1.0, 6)))
    (line,) = [note for note in view.notes if "not seen" in note]
    assert line.startswith("the machine's change between the runs is not seen for 1 case(s): the runs' CPU thread pools differ")
    assert "schema 10" not in line
    assert "each row compares the code and its pools together" in line
    assert "a neighbour the OS saw in either run still gives no verdict" in line
    old = compared.comparison(compare.compare(report_of([_case(2.0, None, 11)]), report_of([_case(2.0, None, 12)])))
    (without,) = [note for note in old.notes if "not seen" in note]
    assert "no machine reference in either run (a file before schema 10, or a backend the fixed work cannot run on)" in without


def test_the_cpu_threads_guide_quotes_what_compare_prints_with_and_without_a_neighbour():
    """The guide quoted 'the machine's change between the runs is not seen for 1 case(s): the runs' CPU thread pools
    differ' as what compare prints, where a trial's compare printed '(the reference's speed is not read: the runs'
    CPU thread pools differ (...))': the first is the line under the table of quiet runs, the second the row's line
    where a neighbour was seen. The guide quotes each, as compare words it."""
    from pathlib import Path

    guide = " ".join((Path(__file__).parents[2] / "docs" / "guides" / "cpu-threads.md").read_text(encoding="utf-8").split())
    quiet = compared.comparison(_pooled(_case(2.0, 1.0, 5), _case(6.5, 1.0, 6)))
    (line,) = [note for note in quiet.notes if "not seen" in note]
    (row,) = _pooled(_case(2.0, 1.0, 5, pressure=0.76), _case(6.5, 1.0, 6, pressure=0.89)).rows
    assert row.note is not None
    beside = row.note[row.note.index("a neighbour shared the cores") :]
    for printed in (line, beside):
        quoted = printed[: printed.index("thread pools differ (") + len("thread pools differ (")]
        assert quoted in guide, quoted


def test_a_neighbour_gives_no_verdict_where_the_runs_timed_different_reference_work():
    base, other = _case(2.0, 1.0, 13, pressure=0.02), _case(6.5, 1.0, 14, pressure=0.6)
    assert other.reference is not None
    other = dataclasses.replace(other, reference=dataclasses.replace(other.reference, work="float32 64×64 product ×1 on numpy cpu"))
    row = _compared(base, other)
    assert row.label == Label.INCONCLUSIVE
    assert row.machine_neighbour
    assert row.note is not None
    assert "different reference work" in row.note


def test_a_file_against_itself_reads_the_machine_unchanged_though_its_reference_drifted():
    """`compare t1.json t1.json` printed `reference t1.json/t1.json 1.00× [?]`: 41 reference samples that drifted
    (too few independent for a rank interval of two runs), but the same samples on both sides: the ratio is exactly
    1, [1, 1], and the machine held its speed."""
    drifting = tuple(1e-3 * (1 + 0.01 * i) for i in range(41))
    reference = Reference(WORK, drifting, cpu_pressure=0.0, others_cpu=0.0)
    said = machine.change(reference, Reference(WORK, drifting, cpu_pressure=0.0, others_cpu=0.0), 0.95, ("t1.json", "t1.json"))
    assert isinstance(said, machine.MachineChange)
    assert (said.ratio, said.interval, said.moved) == (1.0, (1.0, 1.0), False)
    assert "1.00× [1.00–1.00]" in said.why
    assert "[?]" not in said.why


def test_a_file_against_itself_beside_a_neighbour_gives_no_verdict():
    """`compare a.json a.json` of a run whose case sampled with a task waiting for a CPU 100% of the time said SAME and
    "the machine held its speed": the identical references were read before the neighbour. The help promises
    INCONCLUSIVE: what the neighbour did to the case is unknown, whatever the reference says."""
    busy = _case(1.0, 1.0, seed=7, pressure=0.99)
    said = machine.change(busy.reference, busy.reference, 0.95, ("a.json", "a.json"))
    assert isinstance(said, machine.MachineChange)
    assert said.moved, said
    assert said.neighbour, said
    assert "a neighbour shared the cores" in said.why
    assert "no verdict" in said.why
    row = _compared(busy, busy)
    assert row.label is Label.INCONCLUSIVE, row


def test_a_machine_whose_interval_only_reaches_past_the_bound_is_not_said_to_be_beyond_it():
    """`reference b/a 1.00× [0.895–13.9]: beyond ×2` said the machine moved beyond ×2 where only its interval reached
    there: "reaching beyond", and plain "beyond" only where the whole interval is past."""
    base = Reference(WORK, tuple(1e-3 * (1 + 0.01 * i) for i in range(12)), cpu_pressure=0.0, others_cpu=0.0)
    wide = (0.9, 0.95, 1.0, 1.0, 1.02, 1.05, 1.1, 3, 6, 9, 12, 14)
    said = machine.change(base, Reference(WORK, tuple(1e-3 * x for x in wide), cpu_pressure=0.0, others_cpu=0.0), 0.95, ("a", "b"))
    assert isinstance(said, machine.MachineChange)
    assert said.moved
    assert said.interval is not None
    assert said.interval[0] < 2 < said.interval[1], said
    assert "reaching beyond ×2" in said.why, said.why
    far = machine.change(base, Reference(WORK, tuple(3 * t for t in base.samples_s), cpu_pressure=0.0, others_cpu=0.0), 0.95, ("a", "b"))
    assert isinstance(far, machine.MachineChange)
    assert ": beyond ×2" in far.why, far.why


def test_a_neighbour_in_the_run_with_a_reference_gives_no_verdict_when_the_other_run_has_none():
    """A trial: a baseline without a reference (an older file), the current run beside two CPU hogs (its pressure
    0.99): SLOWER +14326%, exit 1, blamed on the code. The OS's account of one run needs no other run: INCONCLUSIVE,
    with what it saw; where it saw nothing, the row is still judged on its own interval."""
    row = _compared(_case(2.0, None, 5), _case(300.0, 1.0, 6, pressure=0.99), baseline_schema=9)
    assert row.label == Label.INCONCLUSIVE
    assert row.machine_neighbour is True
    assert "a task waited for a CPU 99% of the time in b.json: a neighbour shared the cores" in row.note
    assert "no machine reference in a.json" in row.note
    quiet = _compared(_case(2.0, None, 5), _case(300.0, 1.0, 6, pressure=0.01), baseline_schema=9)
    assert quiet.label == Label.SLOWER
    assert quiet.machine is not None
    assert quiet.machine.startswith("no machine reference in a.json")


def test_references_that_drifted_together_are_said_so_not_called_too_few():
    """40 reference samples a side whose rounds drifted together (a slow ramp): no interval, and the line said 'too
    few reference samples' of 40, the minimum the docs promise."""
    ramp = tuple(1e-3 * (1 + i / 40) for i in range(40))
    base, now = _case(2.0, 1.0, 7), _case(2.0, 1.0, 8)
    base = dataclasses.replace(base, reference=dataclasses.replace(base.reference, samples_s=ramp))
    now = dataclasses.replace(now, reference=dataclasses.replace(now.reference, samples_s=tuple(t * 1.05 for t in ramp)))
    row = _compared(base, now)
    assert row.machine_moved is True
    assert "its rounds drifted together, too few independent ones" in row.machine
    assert "too few reference samples" not in row.machine


def test_a_row_the_machines_carried_change_keeps_undecided_says_more_rounds_cannot_decide_it():
    """A trial: unchanged code, the machine 1.15× slower during the baseline, the row INCONCLUSIVE and the summary
    'more rounds via max_time_s may decide it'; the carried change alone puts the upper end past +28% whatever the
    rounds. Said so, with the remedy that can work; a row whose own interval is what straddles keeps 'more rounds'."""
    base, now = _case(2.0 * 1.15, 1.15, 9), _case(2.0, 1.0, 10)
    comparison = compare.compare(report_of([base]), report_of([now]), names=("a.json", "b.json"))
    (row,) = comparison.rows
    assert row.label == Label.INCONCLUSIVE
    assert row.machine_carried is True
    summary = compared.comparison(comparison).summary
    assert "carried in the interval, reaches across 1 + margin by itself; more rounds cannot decide it" in summary
    assert "more rounds via max_time_s may decide it" not in summary
    steady = _compared(_case(2.0, 1.0, 11), _case(2.0 * 1.08, 1.0, 12))  # the machine held; +8% at a 10% margin
    assert steady.machine_carried is False


def _rendered(rows: list[Result]) -> str:
    from io import StringIO

    from rich.console import Console

    from asyncbench.report import terminal, view

    out = StringIO()
    terminal.print_report(view.build(report_of(rows)), Console(file=out, width=400, color_system=None))
    return out.getvalue()


def test_a_run_beside_a_neighbour_says_once_that_as_a_baseline_it_can_give_no_verdict():
    """`run gate.yaml -o base.json` beside another process's `pytest -n 2` said only each row's thread-pool warning,
    and every later row against it was INCONCLUSIVE: the run says so itself, in one line for the run, by the same rule
    (machine.busy_share) that makes compare give no verdict."""
    busy = [
        dataclasses.replace(_case(2.0, 1.0, seed, pressure=p), id=f"chain[numpy,cpu,n={seed}]", params={"n": seed})
        for seed, p in ((1, 0.74), (2, 0.52), (3, 0.9))
    ]
    quiet = dataclasses.replace(_case(2.0, 1.0, 4, pressure=0.15), id="chain[numpy,cpu,n=4]", params={"n": 4})  # BUSY itself: quiet
    text = _rendered([*busy, quiet])
    lines = [line for line in text.splitlines() if "ran beside a neighbour" in line]
    assert len(lines) == 1
    assert "3 of 4 cases ran beside a neighbour (some task waited for a CPU 52–90% of the time" in lines[0]
    assert "as a baseline, or against one, they can give no verdict" in lines[0]
    assert "rerun on a quiet machine" in lines[0]
    assert "`" not in lines[0]  # a markdown writer escapes backticks: a run-level line quotes no command in them
    # compare agrees, case by case: each busy one gives no verdict against a quiet run, the quiet one does
    for case in busy:
        assert _compared(case, dataclasses.replace(_case(2.0, 1.0, 9), id=case.id, params=case.params)).label == Label.INCONCLUSIVE
    assert "ran beside a neighbour" not in _rendered([quiet, _case(2.0, 1.0, 5, pressure=None), _case(2.0, None, 6)])


def test_a_reference_taken_out_of_a_file_of_schema_10_or_later_gives_no_verdict():
    """A trial: `results[1].reference` deleted from a schema-12 baseline turned `[−13.3% … +53.4%] INCONCLUSIVE`
    into `[−12.2% … +2.5%] NOT SLOWER`, the missing reference read as a file before schema 10's. A file of schema 10
    or later stores one for each ok case of a workload that takes one: missing there while the other run has one,
    the machine's change is unknown and the row gives no verdict, its line saying why, in either direction."""
    kept = _compared(_case(2.0, 1.0, 1), _case(2.0 * 1.38, 1.38, 2))
    assert kept.label == Label.INCONCLUSIVE  # the unedited files: the machine ran 1.38× slower, carried
    for baseline, current, absent in (
        (_case(2.0, None, 1), _case(2.0 * 1.38, 1.38, 2), "a.json"),
        (_case(2.0, 1.0, 1), _case(2.0 * 1.38, None, 2), "b.json"),
    ):
        row = _compared(baseline, current)
        assert row.label == Label.INCONCLUSIVE, row
        assert row.machine_missing is True
        assert row.machine_moved is True
        assert f"no machine reference in {absent}, though its schema stores one" in row.note
        assert "no verdict on this evidence" in row.note
        assert undecided.cause(row) is undecided.MISSING
    # a file before schema 10 never had one: judged on its own interval, as before
    older = _compared(_case(2.0, None, 1), _case(2.0 * 1.38, 1.38, 2), baseline_schema=9)
    assert older.label == Label.SLOWER
    assert older.machine is not None
    assert older.machine.startswith("no machine reference in a.json (a file before schema 10")
    # missing from both (a backend the fixed work cannot run on leaves none in either run): judged as before
    neither = _compared(_case(2.0, None, 1), _case(2.0 * 1.38, None, 2))
    assert neither.label == Label.SLOWER
    assert neither.machine_missing is False


def test_a_workload_that_measures_itself_owes_no_reference():
    """comm_overlap's ranks sample with their own Procedure and take no reference: its rows are judged as before
    where the other run has one; every other built-in is measured through engine.measuring, which takes one."""
    for name, workload in BUILT_IN.items():
        measures_itself = type(workload).measure_itself is not Workload.measure_itself
        assert workload.takes_reference is not measures_itself, name
        assert reference.takes_reference(name) is workload.takes_reference, name
    assert reference.takes_reference("my_bench.py:Mine")  # a user's workload, which a reader may not have: held to one
    base = dataclasses.replace(_case(2.0, None, 1), workload="comm_overlap")
    row = _compared(base, dataclasses.replace(_case(2.0 * 1.38, 1.38, 2), workload="comm_overlap"))
    assert row.machine_missing is False


def test_a_cases_own_threads_beyond_the_cores_are_no_neighbour_where_other_processes_used_next_to_nothing():
    """A trial: `run --threads 4` on 2 cores, nothing else running (cpu_pressure 0.264, others_cpu 0.000), printed
    "1 of 1 cases ran beside a neighbour", and the file compared with itself gave every row INCONCLUSIVE "a neighbour
    shared the cores". The wait was the case's own threads, which the reference (run in the same pools) feels as the
    case does: no run line, a verdict against itself (SAME), and the line says whose the wait was. Other processes at
    30% of the CPU, or not read, are still a neighbour."""
    own = _case(2.0, 1.0, 1, pressure=0.26, others=0.0)
    assert machine.busy_share(own.reference) is None
    assert machine.beside_neighbour([own.reference]) is None
    assert "ran beside a neighbour" not in _rendered([own])
    row = _compared(own, own)
    assert row.label == Label.SAME, row
    assert "a neighbour" not in row.machine
    assert "some task waited for a CPU 26% of the time, other processes 0%: the case's own threads beyond the cores" in row.machine
    for others in (0.3, None):
        beside = _case(2.0, 1.0, 1, pressure=0.26, others=others)
        assert machine.busy_share(beside.reference) == pytest.approx(0.26)
        assert "1 of 1 cases ran beside a neighbour" in (machine.beside_neighbour([beside.reference]) or "")
        row = _compared(beside, beside)
        assert row.label == Label.INCONCLUSIVE
        assert "a neighbour shared the cores" in row.machine
