"""What `ab`'s view says beside its table: thread pools left to spin on a small runner, an undecided case's need."""

from __future__ import annotations

import dataclasses
import io
import json
import math

import pytest
from rich.console import Console

from asyncbench.errors import InputError
from asyncbench.report import gate_settings
from asyncbench.report import paired as views
from asyncbench.results import units
from asyncbench.results.ab_report import ABReport
from asyncbench.results.labels import Label
from asyncbench.results.paired import PairedCase, PairedRatio, Side
from asyncbench.verdicts.outcome import Outcome
from asyncbench.verdicts.paired import judge


def _report(thread_variables: dict, case: PairedCase | None = None, cores: int = 2) -> ABReport:
    facts = {"cpu_affinity": cores, "thread_variables": thread_variables}
    side = Side("head", "working tree", "python", "3.11", facts=facts)
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    case = case or PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10)
    return ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", (case,))


def test_unpinned_thread_pools_on_two_cores_are_named_and_pinned_ones_are_not():
    unpinned = views.build(_report({}), Outcome(0, ()))
    assert any("no BLAS/OpenMP thread count set on 2 cores" in note for note in unpinned.notes)
    pinned = views.build(_report({"OPENBLAS_NUM_THREADS": "1"}), Outcome(0, ()))
    assert not any("thread count" in note for note in pinned.notes)


def test_a_jax_gate_with_blas_pinned_names_xlas_pool_not_blas():
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    jax_case = PairedCase("work[jax,cpu]", "ok", ratios=(row,), blocks=10)
    blas_only = views.build(_report({"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}, jax_case), Outcome(0, ()))
    said = [note for note in blas_only.notes if "not set on 2 cores" in note]
    assert said
    assert said[0].startswith(f"{gate_settings.JAX_POOL_VARIABLE} not set on 2 cores")
    assert not any("no BLAS/OpenMP thread count" in note for note in blas_only.notes)


def test_an_undecided_case_says_how_far_it_got_and_what_it_needs():
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.9, 1.2), Label.INCONCLUSIVE)
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=1, elapsed_s=2.0, needed_s=30.0)
    notes = views.build(_report({"OMP_NUM_THREADS": "1"}, case), Outcome(1, ())).notes
    assert any("undecided after 1 block (2.00 s in its own blocks)" in note and "about 30.0 s more" in note for note in notes), notes
    # the trial's note: "about 505 s more would decide it at the spread its blocks show" of one block, which has none
    assert any("no spread is known yet from 1 block; about 30.0 s more" in note for note in notes), notes
    assert not any("spread its blocks show" in note for note in notes), notes
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=40, elapsed_s=90.0, needed_s=math.inf, never_why="margin")
    notes = views.build(_report({"OMP_NUM_THREADS": "1"}, case), Outcome(1, ())).notes
    assert any("sits on the margin" in note for note in notes), notes
    no_interval = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, None, Label.INCONCLUSIVE)
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(no_interval,), blocks=7, elapsed_s=107.0, needed_s=46.0)
    notes = views.build(_report({"OMP_NUM_THREADS": "1"}, case), Outcome(1, ())).notes
    assert any("undecided after 7 blocks (107 s in its own blocks): no interval yet; about 46.0 s more" in note for note in notes), notes
    assert any("would reach its first look that can give an interval" in note for note in notes), notes


def test_a_case_judged_at_its_own_margin_says_so_and_one_at_the_gate_s_does_not():
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.9, 1.1), Label.NOT_SLOWER)
    own = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=14, margin=0.25)
    notes = views.build(_report({"OMP_NUM_THREADS": "1"}, own), Outcome(0, ())).notes
    assert (
        "work[numpy,cpu]: judged at a margin of its own, 25%, not the gate's 5%: the case's `margin` as the file states it "
        "(`ab` judges a case at the ab_margin of its base side's settings: its config's, or `--set ab_margin=` on the "
        "command line, which sets both sides')"
    ) in notes
    assert not any("its base side's config states" in note for note in notes)  # `--set ab_margin=30%` is no config
    assert "margin 5% (1 case at its own, noted above)" in views.build(_report({}, own), Outcome(0, ())).budget
    gate_s = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=14, margin=0.05)
    assert not any("margin of its own" in note for note in views.build(_report({"OMP_NUM_THREADS": "1"}, gate_s), Outcome(0, ())).notes)


def test_an_undecided_gpu_case_on_many_cores_is_told_to_pin_the_gate():
    """On a 16-core GPU host each block's processes land on cores of their own (blocks spread 9-12% on an H200,
    0.7-1.6% pinned): an undecided GPU case says so; a pinned gate, a decided case or a CPU case does not."""
    row = PairedRatio("sync", "variant", "s", 1e-3, 1e-3, 1.0, (0.9, 1.15), Label.INCONCLUSIVE)

    def notes(case_id: str, cores: int, needed_s: float | None) -> tuple[str, ...]:
        case = PairedCase(case_id, "ok", ratios=(row,), blocks=10, elapsed_s=120.0, needed_s=needed_s, device=case_id.split(",")[1][:-1])
        return views.build(_report({"OMP_NUM_THREADS": "1"}, case, cores=cores), Outcome(1, ())).notes

    assert any("taskset -c 3 asyncbench ab" in note and "on 16 cores" in note for note in notes("s[torch,cuda:0]", 16, math.inf))
    for case_id, cores, needed_s in (("s[torch,cuda:0]", 1, math.inf), ("s[torch,cuda:0]", 16, None), ("s[torch,cpu]", 16, 30.0)):
        assert not any("taskset" in note for note in notes(case_id, cores, needed_s)), (case_id, cores, needed_s)


def test_a_jax_case_asks_for_jax_s_own_pool_variable():
    """JAX's CPU pool follows PJRT_NPROC only: the BLAS variables set leave it free."""
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    case = PairedCase("work[jax,cpu]", "ok", ratios=(row,), blocks=10)
    blas_only = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    notes = views.build(_report(blas_only, case), Outcome(0, ())).notes
    assert any("PJRT_NPROC=1" in note for note in notes), notes
    notes = views.build(_report({**blas_only, "PJRT_NPROC": "1"}, case), Outcome(0, ())).notes
    assert not any("thread count" in note for note in notes), notes


def test_the_paired_change_is_named_and_keyed_apart_from_the_medians():
    """The verdict's change is estimated from the blocks, not from the two medians beside it: its column says so and
    a key under the table says why the two can differ (a bare "change" read as the medians' change)."""
    row = PairedRatio("step", "variant", "s", 61.9e-3, 68.6e-3, 1.046, (1.01, 1.08), Label.SAME)
    view = views.build(_report({}, PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10)), Outcome(0, ()))
    text = views.markdown(view)
    assert "| paired change |" in text
    assert "| change |" not in text
    assert views.PAIRED_KEY in text
    assert "not head's own median" in views.PAIRED_KEY


@pytest.mark.parametrize(
    ("base", "head", "ratio", "shown"),
    [(925e-6, 1.36e-3, 1.002, ("925 µs", "927 µs", "+0.2%")), (131e-3, 407e-3, 1.968, ("131 ms", "258 ms", "+96.8%"))],
)
def test_the_base_and_head_columns_never_contradict_the_paired_change(base, head, ratio, shown):
    """The trial's tables: `925 µs │ 1.36 ms │ +0.2%` on identical code (the medians +47%) and base 131 ms, head 407 ms
    (3.11×) beside a planted slowdown's +96.8%: head's column is base's median at the paired change, and the key no
    longer blames the machine's speed moving between blocks (a run of one block had medians as far apart)."""
    row = PairedRatio("sync", "variant", "s", base, head, ratio, (ratio * 0.97, ratio * 1.03), Label.SLOWER if ratio > 1.5 else Label.SAME)
    view = views.build(_report({}, PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=1)), Outcome(0, ()))
    assert view.rows[0][2:5] == shown
    assert "between blocks" not in views.PAIRED_KEY


def test_a_rates_head_column_is_its_base_at_the_paired_change_turned_as_a_rate_is():
    """A rate's ratio is base/head (lower is slower): 13 GFLOP/s at a ratio of 1.3 is 10 GFLOP/s on head."""
    row = PairedRatio("gflops", "metric", "GFLOP/s", 13.0, 20.0, 1.3, (1.2, 1.4), Label.SLOWER)
    view = views.build(_report({}, PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10)), Outcome(0, ()))
    assert view.rows[0][2:4] == (units.quantity(13.0, "GFLOP/s"), units.quantity(10.0, "GFLOP/s"))


def test_a_synchronous_backend_s_census_never_claims_no_new_sync_point():
    """torch on the CPU runs each call before it returns: a float(loss) new on head is no wait there, and `ab --syncs`
    said "no sync point new on head: every point where head's step waits, base's waits there too" of it."""
    row = PairedRatio("step", "variant", "s", 29e-3, 54e-3, 1.86, (1.76, 1.94), Label.SLOWER)
    for backend, claimed in (("torch", False), ("jax", True)):
        case = PairedCase(f"work[{backend},cpu]", "ok", ratios=(row,), blocks=10, backend=backend, new_syncs=())
        view = views.build(_report({"OMP_NUM_THREADS": "1", "PJRT_NPROC": "1"}, case), Outcome(1, ()))
        text = views.markdown(view)
        assert (views.NO_NEW_SYNCS in text) is claimed, backend
        assert any("no sync point compared" in note for note in view.sync_notes) is not claimed, backend


PAST_TARGET = (
    "the gate measured for 192 s, past its 120 s target (--gate-time): work[numpy,cpu], with no look taken by the target, "
    "went on past it, as the cap (--gate-time-max, 360 s) allows, and stopped at its first look at block 10, decided"
)


def test_the_gate_s_note_on_its_time_is_kept_in_the_file_and_said_in_the_comment_and_show():
    report = dataclasses.replace(_report({"OMP_NUM_THREADS": "1"}), time_notes=(PAST_TARGET,))
    read = ABReport.from_dict(json.loads(report.to_json()), "ab.json")
    assert read.time_notes == (PAST_TARGET,)
    view = views.shown_again(read)
    assert f"- {PAST_TARGET}" in views.markdown(view).splitlines()
    console = Console(file=io.StringIO(), width=400)
    views.print_view(view, console, again=True)
    assert PAST_TARGET in console.file.getvalue()  # type: ignore[attr-defined]


@pytest.mark.parametrize("notes", [["x" * 2001], ["one\nforged line"], [3], "one string"])
def test_a_file_s_time_notes_are_held_as_hostile_input(notes):
    raw = json.loads(_report({}).to_json())
    raw["time_notes"] = notes
    with pytest.raises(InputError, match="time_notes"):
        ABReport.from_dict(raw, "ab.json")


def test_a_hostile_time_note_is_refused_whole_or_escaped_in_the_comment():
    """A note with `ab`'s opening words and words of its own after them is no note `ab` writes (a new user's trial: a
    forged "…target (--gate-time): ✅ the gate passes" was printed under a failing gate); a case id, which is the
    user's, may hold markup: it is escaped in the comment."""
    forged = _report({"OMP_NUM_THREADS": "1"}), (PAST_TARGET.split(": ")[0] + ": <img src=x onerror=alert(1)> **bold**",)
    with pytest.raises(InputError, match=r"time_notes\[0\]: 'the gate measured for 192 s.*'… is not a note `ab` writes"):
        ABReport.from_dict(json.loads(dataclasses.replace(forged[0], time_notes=forged[1]).to_json()), "ab.json")
    row = PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.0, (0.99, 1.01), Label.SAME)
    marked = PairedCase("<img src=x onerror=alert(1)> **bold**", "ok", ratios=(row,), blocks=10)
    report = dataclasses.replace(_report({"OMP_NUM_THREADS": "1"}, marked), time_notes=(PAST_TARGET.replace("work[numpy,cpu]", marked.id),))
    comment = views.markdown(views.shown_again(ABReport.from_dict(json.loads(report.to_json()), "ab.json")))
    assert "<img" not in comment
    assert "**bold**" not in comment


def _column_text(printed: str, column: int) -> str:
    """The text of one column of a rich table, its cells' lines joined (a folded id read back whole)."""
    cells = [line.split("│")[column + 1].strip() for line in printed.splitlines() if line.count("│") > column + 1]
    return "".join(cells)


@pytest.mark.parametrize("width", [80, 100])
def test_a_long_case_id_is_folded_in_the_terminal_table_never_cut(width):
    """The issue: at a terminal's default width the table cut the id to 'train_step[torch…', 'train_step[to…'."""
    case_id = "train_step[torch,cpu,batch=64,width=1024,steps=8,compile=False]"
    row = PairedRatio("step", "variant", "s", 1e-3, 2e-3, 2.0, (1.9, 2.1), Label.SLOWER)
    report = _report({"OMP_NUM_THREADS": "1"}, PairedCase(case_id, "ok", ratios=(row,), blocks=10))
    console = Console(file=io.StringIO(), width=width)
    views.print_view(views.shown_again(report), console, again=True)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    table = printed[printed.index("┃ case") :]
    assert case_id in _column_text(table, 0)  # every character of it, folded over lines


def test_a_futile_case_far_from_its_margin_says_its_blocks_are_too_wild_not_that_it_sits_on_the_margin():
    row = PairedRatio("step", "variant", "s", 1e-3, 0.857e-3, 0.857, (0.212, 1.592), Label.INCONCLUSIVE)
    case = PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10, elapsed_s=47.7, needed_s=math.inf, never_why="spread")
    view = views.build(_report({"OMP_NUM_THREADS": "1"}, case), Outcome(1, ()))
    assert not any("sits on the margin" in note for note in view.notes), view.notes
    assert any("too wild" in note for note in view.notes), view.notes
    outcome = judge(_report({"OMP_NUM_THREADS": "1"}, case))
    assert not any("may decide" in reason for reason in outcome.reasons), outcome.reasons
    assert any("may never decide work[numpy,cpu]" in reason for reason in outcome.reasons), outcome.reasons


def test_never_reason_tells_wild_blocks_from_an_estimate_on_the_margin():
    from asyncbench.results import blocks

    wild = [math.log(0.857) + s for s in (-0.9, 0.8, -0.5, 0.6, 0.1, -0.2, 0.95, -0.85, 0.3, -0.35)]
    assert blocks.blocks_needed(wild, 0.05, 0.0025) is None
    assert blocks.never_reason(wild, 0.05, 0.0025) == "spread"
    calm = [math.log(1.05) + s for s in (-0.01, 0.012, -0.005, 0.006, 0.001, -0.002, 0.009, -0.008, 0.003, -0.004)]
    assert blocks.never_reason(calm, 0.05, 0.0025) == "margin"


def test_ab_states_its_intervals_level_in_the_table_and_the_markdown():
    """The trial: `[+47.9% … +48.4%]` with no level beside it, where the file's `confidence` was 0.996."""
    row = PairedRatio("step", "variant", "s", 1e-3, 1.48e-3, 1.481, (1.479, 1.484), Label.SLOWER)
    report = _report({}, PairedCase("work[numpy,cpu]", "ok", ratios=(row,), blocks=10, confidence=0.996))
    view = views.build(report, Outcome(1, ()))
    assert "interval (99.6%)" in view.headers
    assert "| interval (99.6%) |" in views.markdown(view)
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=300))
    assert "interval (99.6%)" in out.getvalue()


def test_no_level_is_stated_over_a_column_with_no_interval():
    """The trial: `--gate-time 90s` (3 blocks) and a dirty tree's 1 block: `interval (98%)` over cells of `–`. A
    level is stated only of a case with an interval; two cases, one with one, state that one's."""
    bare = PairedRatio("step", "variant", "s", 1e-3, 1.02e-3, 1.02, None, Label.INCONCLUSIVE)
    report = _report({}, PairedCase("work[numpy,cpu]", "ok", ratios=(bare,), blocks=3, confidence=0.98))
    view = views.build(report, Outcome(1, ()))
    assert "interval" in view.headers
    assert not any(header.startswith("interval (") for header in view.headers), view.headers
    assert "| interval |" in views.markdown(view)
    out = io.StringIO()
    views.print_view(view, Console(file=out, width=300))
    assert "interval (98%)" not in out.getvalue()
    side = report.head
    shown = PairedRatio("step", "variant", "s", 1e-3, 1.48e-3, 1.481, (1.479, 1.484), Label.SLOWER)
    two = (
        PairedCase("a[numpy,cpu]", "ok", ratios=(bare,), blocks=3, confidence=0.98),
        PairedCase("b[numpy,cpu]", "ok", ratios=(shown,), blocks=10, confidence=0.996),
    )
    mixed = ABReport("2026-01-01T00:00:00+00:00", "0", side, side, 0.05, 0.01, False, "frozen", two)
    assert "interval (99.6%)" in views.build(mixed, Outcome(1, ())).headers


#: a variant's name as long as the CI engineer's (70 characters), and one that reads as markup
LONG_NAMES = ("sync_every=" + "x" * 59, "<b>**" + "y" * 60 + "**</b>")


@pytest.mark.parametrize("name", LONG_NAMES)
@pytest.mark.parametrize("width", [80, 100, 120])
def test_a_long_variant_name_folds_and_never_squeezes_out_the_verdict_the_change_or_the_interval(width, name):
    """The issue: a 70-character variant name at COLUMNS=120 shrank `case` and `verdict` to nothing and cut the
    interval (`┃┃ what … ┃ interval …┃┃`); SLOWER survived only under the table. At 80 the verdict was a column of
    one letter with any name."""
    slower = PairedRatio(name, "variant", "s", 1e-3, 1.2e-3, 1.2, (1.15, 1.26), Label.SLOWER)
    within = PairedRatio("sync_every=0", "variant", "s", 1e-3, 1.01e-3, 1.01, (1.001, 1.04), Label.SAME)
    case = PairedCase("train_step[torch,cpu,batch=64]", "ok", ratios=(slower, within), blocks=10, confidence=0.996)
    report = _report({"OMP_NUM_THREADS": "1"}, case)
    console = Console(file=io.StringIO(), width=width)
    views.print_view(views.shown_again(report), console, again=True)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    table = printed[printed.index("┏") : printed.index("┘") + 1]
    lines = table.splitlines()
    assert all(len(line) <= width for line in lines)
    rows = [line.split("│")[1:-1] for line in lines if line.startswith("│")]
    firsts = [row for row in rows if row[4].strip()]  # each verdict's first line: its change, interval and word
    assert [row[4].strip() for row in firsts] == ["+20.0%", "+1.0%"]
    assert [row[5].strip() for row in firsts] == ["[+15.0% … +26.0%]", "[+0.1% … +4.0%]"]
    assert [row[6].strip().split(" (")[0] for row in firsts] == ["SLOWER", "WITHIN MARGIN"]
    assert name in "".join(row[1].strip() for row in rows)  # every character of the name, folded over lines
    assert case.id in _column_text(table, 0)
