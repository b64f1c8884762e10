"""Every row of two separate runs says which interval it prints and why its verdict is what it is: a row the machine
gives no verdict (a neighbour) prints the case's own interval, the machine's change not taken out, and says so in its
line; the header describes only intervals some row prints (verdicts.row_interval)."""

from __future__ import annotations

import random

from asyncbench.report import compared
from asyncbench.results import stats
from asyncbench.results.labels import Label
from asyncbench.results.model import OK, Result, Samples, VariantResult
from asyncbench.results.reference import Reference
from asyncbench.verdicts import compare, row_interval
from tests.support.helpers import report_of

WORK = "float32 256×256 product ×4 on numpy cpu"


def _case(case_id: str, scale_ms: float, seed: int, pressure: float, machine: float = 1.0, reference: bool = True) -> Result:
    """A case of 30 rounds around `scale_ms`, its reference `machine` ms read at CPU `pressure`
    (others_cpu the same: a neighbour past BUSY; none: no reference)."""
    draw = random.Random(seed)
    done = tuple(scale_ms * 1e-3 * (1 + draw.gauss(0, 0.03)) for _ in range(30))
    samples = tuple(machine * 1e-3 * (1 + draw.gauss(0, 0.02)) for _ in range(60))
    read = Reference(WORK, samples, cpu_pressure=pressure, others_cpu=pressure) if reference else None
    variant = VariantResult(Samples(done, done), stats.summarize(done), stats.summarize(done), None)
    return Result(case_id, "tstep", "tstep", "numpy", "cpu", {}, OK, variants={"sync_every=0": variant}, reference=read)


def test_a_neighbours_row_far_past_the_margin_says_its_interval_is_the_cases_own_and_why_it_gives_no_verdict():
    """The report: `+778.2% [+573.0% … +975.5%] INCONCLUSIVE` under a header that said a row whose machine's change
    was read prints the code's interval, the machine's taken out; and identical code `−30.5% [−32.7% … −25.9%]`."""
    base = report_of([_case("step", 1.0, 1, pressure=0.02), _case("same", 1.0, 3, pressure=0.02)])
    now = report_of([_case("step", 8.8, 2, pressure=0.6, machine=1.39), _case("same", 0.7, 4, pressure=0.6, machine=1.39)])
    comparison = compare.compare(base, now)
    step, same = comparison.rows
    assert step.ratio_ci is not None
    assert step.ratio_ci[0] > 1 + comparison.max_regression
    for row in (step, same):
        assert row.label == Label.INCONCLUSIVE  # no measured bound on a neighbour: kept INCONCLUSIVE
        assert row.interval_is == row_interval.CASE_BESIDE_MACHINE
        assert row.ratio_ci == row.case_ci  # what it prints is the case's own interval
        assert row.note is not None
        assert "a neighbour shared the cores" in row.note
        assert "its interval is the case's own (99.5%), not the code's: the machine's change is not taken out" in row.note
        assert "however far past the margin" in row.note
        assert row_interval.NEIGHBOUR_UNBOUNDED in row.note
    view = compared.comparison(comparison)
    assert "prints the code's interval" not in view.budget  # no row prints one
    assert "prints the case's own 99.5% interval, the machine's change not taken out" in view.budget
    assert any(note.startswith("INCONCLUSIVE step sync_every=0: ") and "the case's own" in note for note in view.notes)
    assert '"interval_is": "case, machine not taken out"' in compare.dumps(comparison)


def test_the_header_describes_the_code_interval_only_above_rows_that_print_it():
    base = report_of([_case("quiet", 1.0, 5, pressure=0.02), _case("neigh", 1.0, 7, pressure=0.02)])
    now = report_of([_case("quiet", 8.8, 6, pressure=0.02, machine=1.39), _case("neigh", 8.8, 8, pressure=0.6, machine=1.39)])
    quiet, neigh = compare.compare(base, now).rows
    assert (quiet.interval_is, quiet.label) == (row_interval.CODE, Label.SLOWER)
    assert quiet.ratio_ci != quiet.case_ci  # the code's: wider, the machine's change carried
    assert neigh.interval_is == row_interval.CASE_BESIDE_MACHINE
    budget = compared.comparison(compare.compare(base, now)).budget
    assert "a row whose machine's change was carried prints the code's interval" in budget
    assert "prints the case's own 99.5% interval" in budget
    unseen = compare.compare(report_of([_case("a", 1.0, 9, 0.0, reference=False)]), report_of([_case("a", 2.0, 10, 0.0, reference=False)]))
    (row,) = unseen.rows
    assert row.interval_is == row_interval.CASE
    assert "prints" not in compared.comparison(unseen).budget  # every row prints one interval at the header's level


def test_three_neighbours_rows_name_their_own_level_rounded_down_as_a_checks_detail_does():
    """The trial: `compare all.json all.json` of three rows, each the case's own at half a third of 2%: 1 − 1%/3 is
    99.6667%, printed as 99.666% (rounded down, as every printed level is: never overstating it) in the header and in
    each row's line."""
    base = report_of([_case(f"c{i}", 1.0, 20 + i, pressure=0.02) for i in range(3)])
    now = report_of([_case(f"c{i}", 1.5, 30 + i, pressure=0.6, machine=1.39) for i in range(3)])
    comparison = compare.compare(base, now)
    assert [row.interval_is for row in comparison.rows] == [row_interval.CASE_BESIDE_MACHINE] * 3
    budget = compared.comparison(comparison).budget
    assert "prints the case's own 99.666% interval" in budget, budget
    assert "99.333% intervals" in budget
    for row in comparison.rows:
        assert row.note is not None
        assert "its interval is the case's own (99.666%)" in row.note, row.note
