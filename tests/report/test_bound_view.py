"""What bounds a case's step (`--bound`): the bound's view under the case's lines, its reading in words, and how the
terminal and markdown writers lay it out, from bounds built by hand."""

from __future__ import annotations

import dataclasses
import io
import math

from rich.console import Console

from asyncbench.report import bound, markdown, terminal, view
from asyncbench.report.view import SPREAD_NOTE
from asyncbench.results.bound import Bound, BoundKind, Side, SideBound
from asyncbench.results.syncs import Census, SyncKind, SyncPoint
from tests.support.bounds import device_bound, host_bound, result_with, synchronous
from tests.support.cli import invoke
from tests.support.helpers import ok_result, report_of

#: where the reading's step comes from (the perturbation rounds' unperturbed samples, not the timed rounds)
ROUNDS = " in its perturbation rounds"
DEVICE_READING = (
    f"matmul (step 1.10 ms{ROUNDS}): device-bound: the host could take 420 µs [400–440] more per step (38% of it) before the step "
    "slows; no gain shown: cutting host work makes it at most 1.01× faster (1.00× [1.00–1.01])"
)


def _view(*bounds: Bound, censuses: dict[str, Census] | None = None) -> bound.BoundView:
    shown = bound.bound_view("torch cpu", {b.variant: b for b in bounds}, censuses=censuses)
    assert shown is not None
    return shown


def test_a_row_per_side_with_the_slack_its_share_the_cost_past_it_and_the_ceiling():
    shown = _view(device_bound("a"), host_bound("b"))
    assert shown.title == "what bounds the step (torch cpu)"
    assert shown.headers == bound.HEADERS
    assert shown.rows == (
        ("a", "DEVICE-BOUND", "host", "420 µs [400–440] (38%)", "0.98 [0.93–1.04]", "≤ 1.00× [1.00–1.01]"),
        ("", "", "device", "~0 [≤ 12.0 µs] (≤ 1.1%)", "1.01 [0.97–1.05]", ""),
        ("b", "HOST-BOUND", "host", "~0 [≤ 10.0 µs] (≤ 1%)", "1.00 [0.96–1.03]", "≤ 1.43× [1.39–1.47]"),
        ("", "", "device", "300 µs [280–320] (30%)", "0.60 [0.50–0.70]", ""),
    )


def test_the_reading_in_words_says_what_each_side_could_take_and_what_cutting_host_work_buys():
    shown = _view(device_bound(), host_bound("graphed"))
    assert shown.summary == (
        DEVICE_READING,
        f"graphed (step 1.00 ms{ROUNDS}): host-bound: the device could take 300 µs [280–320] more per step (30% of it) before the "
        "step slows; cutting host work makes it at most 1.43× [1.39–1.47] faster",
        "graphed: past the device's slack each second of delay costs the step 0.60 [0.50–0.70]: partial overlap",
    )
    assert shown.headers == bound.HEADERS  # two variants: the variant column
    assert _view(device_bound()).headers == bound.HEADERS[1:]  # one: its name is in the line under the table


def _with_device_cost(cost: float, ci: tuple[float, float]) -> Bound:
    made = host_bound("graphed")
    device = dataclasses.replace(made.sides[1], cost_past=cost, cost_past_ci=ci)
    return dataclasses.replace(made, sides=(made.sides[0], device))


def test_a_cost_past_interval_that_excludes_1_never_prints_an_end_as_1():
    # a trial printed '1.02 [1.00–1.03]: the delay hurts something else too' for a stored low end of 1.0027: true,
    # but it read as an interval that holds 1
    above = _view(_with_device_cost(1.02, (1.0027, 1.03)))
    assert above.rows[1][-2] == "1.02 [1.003–1.03]"
    assert (
        above.summary[-1]
        == "graphed: past the device's slack each second of delay costs the step 1.02 [1.003–1.03]: the delay hurts something else too"
    )
    below = _view(_with_device_cost(0.98, (0.95, 0.9968)))
    assert below.rows[1][-2] == "0.98 [0.95–0.997]"
    assert below.summary[-1].endswith("costs the step 0.98 [0.95–0.997]: partial overlap")
    # the estimate takes the ends' decimals where two would put it outside them; an end on 1 prints as 1, and one off it
    # shows its side whatever the interval (as a ratio's end does: units._bound)
    assert _view(_with_device_cost(1.004, (1.0015, 1.0061))).rows[1][-2] == "1.004 [1.002–1.01]"
    assert _view(_with_device_cost(1.0, (1.0, 1.03))).rows[1][-2] == "1.00 [1.00–1.03]"
    assert _view(_with_device_cost(1.0, (0.996, 1.03))).rows[1][-2] == "1.00 [0.996–1.03]"


def test_balanced_and_inconclusive_readings_say_why():
    balanced = dataclasses.replace(host_bound(), bound=BoundKind.BALANCED, ceiling=1.02, ceiling_ci=(1.0, 1.04))
    assert _view(balanced).summary[0] == (
        f"matmul (step 1.00 ms{ROUNDS}): balanced: host and device take about as long (within 7.5% of the step); no gain shown: "
        "cutting host work makes it at most 1.04× faster (1.02× [1.00–1.04])"
    )
    why = "5 perturbation rounds: too few for an interval (at least 5)"
    inconclusive = dataclasses.replace(host_bound(), bound=BoundKind.INCONCLUSIVE, note=why)
    shown = _view(inconclusive)
    assert shown.summary[0] == f"matmul (step 1.00 ms{ROUNDS}): inconclusive: the intervals do not tell host from device ({why})"
    assert shown.notes == ()  # said once, in the reading


def _ceiling(low: float, high: float) -> Bound:
    """device_bound with its ceiling's interval [low, high] (its device slack's image under the 1.1 ms step)."""
    made = device_bound()
    step = made.step_s
    device = dataclasses.replace(made.sides[1], slack_ci_s=(step - step / low, step - step / high))
    return dataclasses.replace(made, sides=(made.sides[0], device), ceiling=low, ceiling_ci=(low, high))


def test_a_ceiling_whose_interval_allows_a_gain_states_its_high_end_and_never_cannot():
    """`ceiling ≤ 1.00× [1.00–1.06]` beside a device slack of `~0 [≤ 224 µs]` read "cutting host work cannot make it
    faster", while [1.00–1.15] read "makes it at most 1.00× [1.00–1.15] faster": a cut-off at a high end of 1.075."""
    for high, shown in ((1.06, "1.06×"), (1.15, "1.15×"), (1.004, "1.004×")):
        said = bound.reading(_ceiling(1.0, high))
        assert "cannot" not in said
        assert said.endswith(f"no gain shown: cutting host work makes it at most {shown} faster (1.00× [1.00–{shown.removesuffix('×')}])")
    # only a device slack of [0, 0] (a ceiling of [1, 1]) says that cutting host work cannot make it faster
    assert bound.reading(_ceiling(1.0, 1.0)).endswith("; cutting host work cannot make it faster")
    assert bound.reading(_ceiling(1.2, 1.3)).endswith("; cutting host work makes it at most 1.20× [1.20–1.30] faster")


def test_a_synchronous_variant_is_one_line_never_a_row():
    shown = _view(synchronous("numpy_step"))
    assert shown.rows == ()
    assert shown.summary == ("numpy_step: synchronous: the host is the device",)
    mixed = _view(synchronous("numpy_step"), device_bound())
    assert [row[0] for row in mixed.rows] == ["matmul", ""]


def test_a_slack_beyond_every_level_is_at_least_the_largest_and_has_no_cost_past_it():
    side = SideBound(Side.HOST, 0.00079, (0.00079, 0.00081), 0.0, (0.0, 0.4), (0.0002, 0.0008))
    shown = _view(dataclasses.replace(device_bound(), sides=(side,), ceiling=None, ceiling_ci=None, note="no device delay"))
    assert shown.rows == (("DEVICE-BOUND", "host", "≥ 800 µs (≥ 73%)", "–", "–"),)
    assert shown.summary[0].startswith(f"matmul (step 1.10 ms{ROUNDS}): device-bound: the host could take ≥ 800 µs more per step")
    assert shown.summary[0].endswith("what cutting host work could buy was not measured (no device delay here)")
    assert shown.notes == ("no device delay",)


def test_a_slack_held_at_the_step_shows_no_cost_past_it_in_any_writer():
    """The trial's `-b jax -d cpu --bound-verify jit`: a device slack held at the 324 µs step (its knee fit at
    5.63 ms) printed a cost past of "0.05 [0.05–0.34]" (1/steps: no slope, the always-showing share added back) and
    "partial overlap". No level past the knee was measured: the cell is '–', the line says not measured."""
    step_s = 0.000324
    device = SideBound(Side.DEVICE, step_s, (0.0, step_s), 0.05, (0.05, 0.34), (0.0003, 0.001, 0.003, 0.00563))
    held = dataclasses.replace(device_bound(), step_s=step_s, sides=(device,), ceiling=None, ceiling_ci=None, note=None)
    shown = _view(held)
    (row,) = shown.rows
    assert row[3] == "–"
    said = f"matmul: the cost past the device's slack: {bound.fitting.NOT_PAST}"
    assert said in shown.summary
    assert not any("partial overlap" in line or "0.05" in line for line in shown.summary)
    assert "not measured: no level past the knee" in bound.fitting.NOT_PAST
    lines = "\n".join(markdown.bound_lines(shown))
    assert bound.fitting.NOT_PAST in lines
    assert "0.05" not in lines
    console = Console(file=io.StringIO(), width=200)
    terminal.print_bound(console, shown)
    printed = console.file.getvalue()
    assert "not measured: no level past the knee" in printed
    assert "partial overlap" not in printed


def test_a_slack_at_the_top_whose_interval_reaches_lower_is_not_said_to_be_at_least_the_top():
    """JAX on a 2-core CPU: '≥ 5.53 ms (≥ 69%)' beside a stored interval of [0, 8.02 ms]: the estimate reached the
    largest delay injected, its interval reached 0, so "at least" anything above 0 is not what the data say."""
    step_s = 0.00802
    side = SideBound(Side.HOST, 0.00802, (0.0, 0.00802), 0.0, (0.0, 0.4), (0.0009, 0.0028, 0.00553))
    shown = _view(dataclasses.replace(device_bound(), step_s=step_s, sides=(side,), ceiling=None, ceiling_ci=None))
    (row,) = shown.rows
    assert row[2] == "~0 [≤ 8.02 ms] (≤ 100%)"
    assert "≥" not in shown.summary[0]
    # an interval off 0 whose low end stays under the top: the estimate with its interval, its share the estimate's
    lower = dataclasses.replace(side, slack_s=0.0055, slack_ci_s=(0.003, 0.006))
    assert (bound.slack(lower), bound.share(lower, step_s)) == ("5.50 ms [3.00–6.00]", "69%")
    # its low end at the top: at least the top, slack and share alike
    surely = dataclasses.replace(side, slack_s=0.0055, slack_ci_s=(0.0055, 0.006))
    assert (bound.slack(surely), bound.share(surely, step_s)) == ("≥ 5.53 ms", "≥ 69%")


def test_with_a_census_it_says_removing_the_waits_saves_at_most_the_devices_slack():
    point = SyncPoint("/src/train.py", 42, SyncKind.CONVERSION, "jax.Array.item", 1.0, 0.00242, (0.0024, 0.0025))
    census = Census("matmul", 6, (point,), "jax's hooks")
    shown = _view(host_bound(), censuses={"matmul": census})
    assert shown.summary[-1] == (
        "matmul: removing the waits would save at most the device's slack, 300 µs [280–320] per step; the 2.42 ms "
        "blocked per step is not a saving (the work waited for still runs)"
    )
    assert not any("removing the waits" in line for line in _view(host_bound(), censuses={"matmul": Census("matmul", 6)}).summary)


def test_the_terminal_prints_the_table_and_the_reading_under_the_case():
    built = view.build(report_of([result_with(device_bound(), host_bound("graphed"))]))
    (case,) = built.experiments[0].cases
    assert case.bound is not None
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=200))
    text = out.getvalue()
    assert "what bounds the step (torch cpu)" in text
    assert "DEVICE-BOUND" in text
    assert "420 µs [400–440] (38%)" in text
    assert DEVICE_READING in text
    assert bound.BOUND_NOTE in text  # the legend says what slack and cost past are
    narrow = io.StringIO()
    terminal.print_report(built, Console(file=narrow, width=80))
    table = [line for line in narrow.getvalue().splitlines() if line.startswith("    ┃") or line.startswith("    │")]
    assert table
    assert all(len(line) <= 80 for line in table)  # the table fits an 80-column terminal, no figure cut short
    assert "…" not in narrow.getvalue()


def test_a_case_of_synchronous_variants_only_is_one_line_in_the_terminal_and_in_markdown():
    built = view.build(report_of([result_with(synchronous())]))
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=200))
    assert "what bounds the step (torch cpu): matmul: synchronous: the host is the device" in out.getvalue()
    assert "┃ reading" not in out.getvalue()
    assert "- what bounds the step (torch cpu): matmul: synchronous: the host is the device" in markdown.markdown(built)
    assert bound.BOUND_NOTE not in out.getvalue()


def test_markdown_writes_the_table_and_a_bullet_per_line_of_reading():
    written = markdown.markdown(view.build(report_of([result_with(device_bound(), host_bound("graphed"))])))
    assert "  **what bounds the step (torch cpu)**" in written
    assert "  | variant | reading | side | slack (of step) | cost past | ceiling |" in written
    assert "  | matmul | DEVICE-BOUND | host | 420 µs [400–440] (38%) | 0.98 [0.93–1.04] | ≤ 1.00× [1.00–1.01] |" in written
    assert f"  - {DEVICE_READING}" in written


def test_a_result_without_a_bound_shows_none_and_its_legend_is_as_before():
    built = view.build(report_of([ok_result("m[torch,cpu]")]))
    assert built.experiments[0].cases[0].bound is None
    assert built.spread_note == SPREAD_NOTE
    assert "what bounds the step" not in markdown.markdown(built)


def test_show_prints_a_files_bound_and_its_json_is_the_results_file(tmp_path):
    path = tmp_path / "r.json"
    # its figures chosen, not fitted: without the observations a reader would fit again (and refuse it by)
    chosen = dataclasses.replace(device_bound(), observations=())
    report_of([result_with(chosen, synchronous("numpy_step"))]).save(path)
    shown = invoke("show", str(path))
    assert shown.exit_code == 0
    assert "what bounds the step (torch cpu)" in shown.output
    assert "numpy_step: synchronous: the host is the device" in shown.output
    as_json = invoke("show", str(path), "--format", "json")
    assert as_json.exit_code == 0
    assert '"bound":{"matmul":{"bound":"device"' in as_json.output.replace(" ", "")


def test_a_slack_whose_interval_reaches_zero_says_its_share_as_an_upper_end_not_its_point():
    """'~0 [≤ 2.05 ms] (20%)' said two things at once: a slack not told from 0 has a share of at most its upper end."""
    wide = dataclasses.replace(device_bound("a"), step_s=5e-3)
    host = wide.side(Side.HOST)
    assert host is not None
    unsure = dataclasses.replace(host, slack_s=1e-3, slack_ci_s=(0.0, 2e-3), levels_s=(1e-3, 2e-3, 4e-3, 6e-3))
    assert bound.slack(unsure) == "~0 [≤ 2.00 ms]"
    assert bound.share(unsure, wide.step_s) == "≤ 40%"
    assert bound.share(host, wide.step_s) == "8.4%"


def test_a_verified_ceiling_is_a_line_under_the_reading_in_the_terminal_and_in_markdown():
    from asyncbench.results.bound import Verified, VerifyHow
    from tests.support.bounds import verified_host_bound

    line = "matmul: jit: 760 µs [758–762] a step, reached 80% [74%–87%] of the ceiling"
    assert line in _view(verified_host_bound()).summary
    built = view.build(report_of([result_with(verified_host_bound())]))
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=200))
    assert line in out.getvalue()
    assert f"  - {line}" in markdown.markdown(built)
    refused = dataclasses.replace(
        host_bound(), verified=Verified(VerifyHow.JIT, note="not jitted: the step reads a value on the host at t.py:3")
    )
    assert "matmul: jit: not timed: not jitted: the step reads a value on the host at t.py:3" in _view(refused).summary
    past = Verified(
        VerifyHow.COMPILE,
        0.0005,
        (0.0004, 0.0006),
        1.66,
        (1.5, 1.8),
        "faster than the floor (step − the device's slack): it changed the device's work too",
    )
    said = bound.verified(past)
    assert said.startswith("compile: 500 µs [400–600] a step, reached 166% [150%–180%] of the ceiling; faster than the floor")


def test_a_synchronous_variant_with_a_verified_capture_says_both_lines():
    from asyncbench.results.bound import Verified, VerifyHow

    timed = Verified(
        VerifyHow.COMPILE,
        0.0015,
        (0.0014, 0.0016),
        note="synchronous: no ceiling to compare with (captured 1.50 ms vs plain 2.00 ms a step)",
    )
    built = view.build(report_of([result_with(dataclasses.replace(synchronous(), verified=timed))]))
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=200))
    assert "matmul: synchronous: the host is the device" in out.getvalue()
    assert "matmul: compile: 1.50 ms [1.40–1.60] a step; synchronous: no ceiling to compare with" in out.getvalue()


def test_what_several_variants_say_alike_is_said_once_naming_them():
    """A trial: a synchronous step's three `sync_every` variants each said "synchronous: …" and the same refused
    compile's sentence, three times over, on one line."""
    from asyncbench.results.bound import Verified, VerifyHow

    refused = Verified(VerifyHow.COMPILE, None, None, note="not compiled: torch.compile recompiled the step 8 times")
    alike = [dataclasses.replace(synchronous(name), verified=refused) for name in ("sync_every=0", "sync_every=4")]
    assert _view(*alike).summary == (
        "every variant: synchronous: the host is the device",
        "every variant: compile: not timed: not compiled: torch.compile recompiled the step 8 times",
    )
    apart = _view(*alike, device_bound("sync_every=1"))  # two of three alike: named; the third's own lines its own
    assert apart.summary[:2] == (
        "sync_every=0, sync_every=4: synchronous: the host is the device",
        "sync_every=0, sync_every=4: compile: not timed: not compiled: torch.compile recompiled the step 8 times",
    )
    assert apart.summary[2].startswith("sync_every=1 (step 1.10 ms in its perturbation rounds): device-bound: ")


def test_a_bound_of_no_rounds_says_what_was_not_measured_never_a_step_of_0_ns():
    """`--set steps=1` gave '(step 0 ns): inconclusive: the intervals do not tell…': nothing was measured."""
    why = "--bound needs several steps a sample (steps >= 2): with one, every delay shows in full, slack or not"
    empty = Bound("matmul", BoundKind.INCONCLUSIVE, 0.0, 0, note=why)
    assert _view(empty).summary == (f"matmul: not measured: {why}",)


def test_on_a_device_that_shares_the_hosts_cores_no_ceiling_is_shown_and_a_line_says_why():
    """JAX on a loaded 2-core CPU printed a ceiling of '≤ 1.00× [1.00–1.00]' ("cutting host work cannot make it
    faster") of a step that ran 3.5-7× faster with the host's work removed: on shared cores a device delay takes a
    core the host needs too, and cutting host work frees cores for the device's work."""
    for fitted in (device_bound("a"), host_bound("a")):
        shared = dataclasses.replace(fitted, shares_cores=True)
        assert bound.ceiling(shared) == "–"
        shown = _view(shared)
        assert shown.rows[0][-1] == "–"
        said = bound.reading(shared)
        assert "at most" not in said
        assert "cannot make it faster" not in said
        assert bound.fitting.NO_SHARED_CEILING in said
        assert bound.ceiling(fitted) != "–"  # the same bound on a device of its own keeps its ceiling
    inconclusive = dataclasses.replace(device_bound("a"), bound=BoundKind.INCONCLUSIVE, shares_cores=True)
    summary = _view(inconclusive).summary
    assert any(bound.fitting.NO_SHARED_CEILING in line for line in summary)
    out = io.StringIO()
    built = view.build(report_of([result_with(inconclusive)]))
    terminal.print_report(built, Console(file=out, width=200))
    for text in (out.getvalue(), markdown.markdown(built)):
        assert bound.fitting.NO_SHARED_CEILING in text
        assert "1.00×" not in text


def test_the_csv_leaves_the_ceiling_empty_on_a_device_that_shares_the_hosts_cores():
    import csv

    from asyncbench.report.csv_file import csv_text

    shared = dataclasses.replace(host_bound("graphed"), shares_cores=True)
    rows = list(csv.DictReader(io.StringIO(csv_text(view.build(report_of([result_with(shared)]))))))
    row = next(r for r in rows if r["variant"] == "graphed")
    assert row["bound"] == "host"
    assert (row["ceiling"], row["ceiling_ci_low"], row["ceiling_ci_high"]) == ("", "", "")
    assert row["device_slack_s"] != ""


def test_the_csv_has_each_variants_reading_slacks_and_ceiling_and_none_without_a_bound():
    import csv

    from asyncbench.report.csv_file import BOUND_COLUMNS, csv_text

    bounded = device_bound()
    rows = list(csv.DictReader(io.StringIO(csv_text(view.build(report_of([result_with(bounded)]))))))
    row = next(r for r in rows if r["variant"] == "matmul")
    host = bounded.side(Side.HOST)
    assert host is not None
    assert host.slack_ci_s is not None
    assert row["bound"] == "device"
    assert float(row["host_slack_s"]) == host.slack_s
    assert (float(row["host_slack_ci_low_s"]), float(row["host_slack_ci_high_s"])) == host.slack_ci_s
    assert float(row["ceiling"]) == bounded.ceiling
    plain = csv_text(view.build(report_of([ok_result("m[torch,cpu]")])))
    assert not set(BOUND_COLUMNS) & set(plain.splitlines()[0].split(","))


def test_a_slack_whose_interval_is_zero_reads_plainly_zero():
    """'~0 [≤ 0 ns] (≤ 0%)' was printed for a slack of interval [0, 0]: it is plainly 0, of 0% of the step."""
    found = device_bound()
    host, device = found.sides
    exact = dataclasses.replace(found, sides=(host, dataclasses.replace(device, slack_s=0.0, slack_ci_s=(0.0, 0.0))))
    (_, second) = _view(exact).rows
    assert second[2] == "0 (0%)"


def test_a_ceiling_without_an_interval_says_so_as_the_slack_it_is_read_from_does():
    """The trial's `--quick --bound`: one perturbation round, slacks 'x ±?' beside a bare ceiling '≤ 1.44×'."""
    host, device = host_bound().sides
    one_round = dataclasses.replace(
        host_bound(),
        bound=BoundKind.INCONCLUSIVE,
        rounds=1,
        sides=(
            dataclasses.replace(host, slack_ci_s=None, cost_past_ci=None),
            dataclasses.replace(device, slack_ci_s=None, cost_past_ci=None),
        ),
        ceiling_ci=None,
    )
    shown = _view(one_round)
    assert shown.rows[0][-1] == "≤ 1.43× ±?"
    assert shown.rows[1][2] == "300 µs ±? (30%)"
    assert bound.ceiling(one_round) == "1.43× ±?"


def test_no_ceiling_is_said_one_way_whether_the_device_slacks_estimate_or_its_interval_reaches_the_step():
    """A trial: '~0 [≤ 919 µs] (≤ 100%)' beside '≤ 1.00× [1.00×–no upper bound]' in one run, '~0 [≤ 1.56 ms] (≤
    100%)' beside '–' and a note in another: the same situation (the device's slack may reach the whole step)."""
    step = 0.001
    host = SideBound(Side.HOST, 0.0, (0.0, 0.00001), 1.0, (0.96, 1.03), (0.0001, 0.0005))
    device = SideBound(Side.DEVICE, 0.0, (0.0, step), 0.6, (0.5, 0.7), (0.0001, 0.0005, 0.0015))
    base = Bound("a", BoundKind.INCONCLUSIVE, step, 30, sides=(host, device))
    interval_reaches = dataclasses.replace(base, ceiling=1.0, ceiling_ci=(1.0, math.inf))
    estimate_reaches = dataclasses.replace(base, sides=(host, dataclasses.replace(device, slack_s=step)))  # no ceiling
    shown = [_view(interval_reaches), _view(estimate_reaches)]
    for one in shown:
        assert one.rows[0][-1] == "–", one.rows
        assert one.rows[1][2] == "~0 [≤ 1.00 ms] (≤ 100%)", one.rows
        assert f"a: {bound.NO_CEILING} (~0 [≤ 1.00 ms] of the 1.00 ms step)" in one.summary, one.summary
        assert not any("no upper bound" in line for line in (*one.summary, *one.notes))
    # the same but for the cost past: an estimate at the step is a slack held there, whose cost past is not measured
    assert [row[:3] + row[4:] for row in shown[0].rows] == [row[:3] + row[4:] for row in shown[1].rows]
    assert shown[1].rows[1][3] == "–"
    cost_lines = ["a: past the device's slack each second of delay costs the step 0.60 [0.50–0.70]: partial overlap"]
    assert [line for line in shown[0].summary if line not in cost_lines] == [
        line for line in shown[1].summary if line != f"a: the cost past the device's slack: {bound.fitting.NOT_PAST}"
    ]
    host_read = dataclasses.replace(interval_reaches, bound=BoundKind.HOST)
    assert bound.NO_CEILING in _view(host_read).summary[0]
    built = view.build(report_of([result_with(interval_reaches)]))
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=200))
    for text in (out.getvalue(), markdown.markdown(built)):
        assert "no upper bound" not in text
        assert bound.NO_CEILING in text


def _without_a_ceiling(slack_s: float, slack_ci_s: tuple[float, float], ceiling: float | None, ceiling_ci: tuple[float, float]) -> Bound:
    """host_bound with the device's slack `slack_s` [slack_ci_s] and the ceiling the table shows as '–'."""
    fitted = host_bound("a")
    sides = tuple(
        dataclasses.replace(side, slack_s=slack_s, slack_ci_s=slack_ci_s) if side.side == Side.DEVICE else side for side in fitted.sides
    )
    bounded = dataclasses.replace(fitted, sides=sides, ceiling=ceiling, ceiling_ci=ceiling_ci)
    assert bound.ceiling(bounded) == "–"
    assert math.isfinite(ceiling_ci[1]) or bound.unbounded(bounded)
    return bounded


def test_a_checked_capture_claims_no_share_of_a_ceiling_the_table_says_was_not_measured():
    from asyncbench.verdicts import verified

    unbounded = _without_a_ceiling(0.0003, (0.0002, 0.001), 0.001 / 0.0007, (1.25, float("inf")))  # the slack may reach the step
    pairs = [(0.001 + 1e-6 * (r % 3), 0.0002 + 1e-6 * ((r + 1) % 3)) for r in range(12)]
    checked = dataclasses.replace(unbounded, verified=verified.verified("jit", pairs, unbounded))
    said = next(line for line in _view(checked).summary if line.startswith("a: jit:"))
    assert "of the ceiling" not in said
    assert "of the device's slack (no ceiling measured here)" in said


def test_a_checked_capture_quotes_no_ceiling_the_table_shows_as_unmeasured():
    from asyncbench.verdicts import verified

    none_stored = _without_a_ceiling(0.0, (0.0, 0.0002), None, (1.0, 1.26))
    pairs = [(0.001 + 1e-6 * (r % 3), 0.00097 + 1e-6 * ((r + 1) % 3)) for r in range(12)]
    found = verified.verified("jit", pairs, none_stored)
    assert found.note is not None
    assert "the device's slack is ~0" in found.note
    assert "ceiling ≤" not in found.note


def _timed_at(result, step_s: float):
    """`result` with its matmul variant's timed samples about `step_s` a step (12 samples, 1% apart)."""
    from asyncbench.results import stats
    from asyncbench.results.model import Samples, VariantResult

    values = tuple(step_s * (1 + i / 100) for i in range(12))
    timed = VariantResult(Samples(values, values), stats.summarize(values), stats.summarize(values), None)
    return dataclasses.replace(result, variants={**result.variants, "matmul": timed})


APART = (
    "matmul: its perturbation rounds' step, 1.10 ms, lies outside the timed rounds' 549 µs [530–567]: the slacks' shares, "
    "the levels and the ceiling are of the perturbation rounds' step, which differed from the timed one (e.g. a neighbour, "
    "or the delays' own cost)"
)


def test_a_bound_step_outside_the_timed_steps_interval_is_said_in_the_terminal_and_in_markdown():
    """A trial's table said 'step 934 µs in its perturbation rounds' beside a timed step_s_k0 of 542 µs [531–563]:
    the shares are of the perturbation rounds' step, and a line says that it differed from the timed one."""
    built = view.build(report_of([_timed_at(result_with(device_bound()), 0.00052)]))
    out = io.StringIO()
    terminal.print_report(built, Console(file=out, width=400))
    assert APART in out.getvalue()
    assert f"  - {APART}" in markdown.markdown(built)
    within = view.build(report_of([_timed_at(result_with(device_bound()), 0.00104)]))
    assert not any("lies outside the timed rounds'" in line for line in within.experiments[0].cases[0].bound.summary)


def test_a_share_of_the_ceiling_whose_interval_holds_zero_is_not_said_reached():
    """A captured step whose paired saving may be 0 or a loss (its share's interval [−10%, 68%]) did not show that it
    reached any of the ceiling: '~0' with the interval and the median, as the saving in time beside it."""
    from asyncbench.results.bound import Verified, VerifyHow

    straddling = Verified(VerifyHow.JIT, 0.0009, (0.0008, 0.0011), 0.3, (-0.1, 0.68))
    said = bound.verified(straddling)
    assert "reached 30%" not in said
    assert said == "jit: 900 µs [800 µs–1.10 ms] a step, reached ~0 of the ceiling [from -10% to 68%; median 30%]"
    from_zero = bound.verified(dataclasses.replace(straddling, reached_ci=(0.0, 0.68)))
    assert from_zero.endswith("reached ~0 of the ceiling [≤ 68%; median 30%]"), from_zero
    clear = bound.verified(dataclasses.replace(straddling, reached_ci=(0.1, 0.68)))
    assert clear.endswith("reached 30% [10%–68%] of the ceiling"), clear
