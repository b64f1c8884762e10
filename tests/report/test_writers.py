"""What a person reads: lines instead of rows for what is not here, tables that fit, numbers without e-notation,
a markdown headline, notes on sampling, and output that a reader may cut short."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

from rich.console import Console

from asyncbench.report import cells, escaping, markdown, terminal, view
from asyncbench.results import spreads, stats, units
from asyncbench.results.model import ERROR, SKIPPED, Result
from tests.support.cli import cli_env
from tests.support.helpers import ok_result, report_of


def _skipped(backend: str, reason: str, unavailable: bool) -> Result:
    return Result(f"m[{backend},cpu]", "m", "matmul", backend, "cpu", {}, SKIPPED, reason=reason, unavailable=unavailable)


def test_an_absent_backend_is_one_line_not_a_row_per_case():
    report = report_of([ok_result("m[torch,cpu]"), *(_skipped("cupy", "cupy not installed (pip install ...)", True) for _ in range(3))])
    console = Console(width=80, record=True)
    terminal.print_report(view.build(report), console)
    text = console.export_text()
    assert not [line for line in text.splitlines() if "cupy" in line and "│" in line]  # no table rows
    assert text.count("cupy: 3 cases skipped — cupy not installed") == 1


def test_a_cpu_table_fits_80_columns_without_columns_that_carry_nothing():
    console = Console(width=80, record=True)
    terminal.print_report(view.build(report_of([ok_result("m[torch,cpu]")])), console)
    text = console.export_text()
    header = next(line for line in text.splitlines() if "variant" in line)
    assert "device time" not in header
    assert "issue" not in header
    assert max(len(line) for line in text.splitlines() if "│" in line or "┃" in line) <= 80


def test_printed_numbers_never_use_e_notation():
    assert units.percent(49.0) == "4900%"
    assert units.number(3.76e5) == "376000"
    assert "e" not in cells.spread(stats.summarize([1e-9 * (1 + i) for i in range(10)])).split()[-1]


def test_markdown_starts_with_a_headline_and_the_environment(tmp_path):
    report = dataclasses.replace(
        report_of([ok_result("m[torch,cpu]"), _skipped("numpy", "numpy cannot", False)]),
        environment={
            "cpu": "Test CPU",
            "cpu_affinity": 2,
            "python": "3.11",
            "git_sha": "0123456789abcdef",
            "frameworks": {"torch": {"version": "2.13.0", "threads": 2}},
        },
    )
    lines = markdown.markdown(view.build(report)).splitlines()
    assert lines[0] == "## asyncbench: 2 cases: 1 ok, 1 skipped; none ran ahead (every call returned with its work done)"
    assert "Test CPU" in lines[2]
    assert "torch 2.13.0 (2 threads)" in lines[2]
    assert "git 0123456789ab" in lines[2]


def test_the_environment_line_counts_one_thread_in_the_singular():
    """'torch 2.13.0+cpu (1 threads)' was the markdown report's header."""
    line = cells.environment_line({"frameworks": {"torch": {"version": "2.13.0+cpu", "threads": 1}}})
    assert "torch 2.13.0+cpu (1 thread)" in line
    assert "threads" not in line


def test_output_cut_short_by_head_keeps_the_exit_code(tmp_path):
    """`asyncbench show big.json | head -1` must not turn into exit 1 from a broken pipe."""
    path = tmp_path / "big.json"
    report_of([ok_result(f"m{i}[torch,cpu]") for i in range(400)]).save(path)
    # its own Popen, not tests.support.cli's runner: the test closes the pipe while the command is still writing
    process = subprocess.Popen(
        [sys.executable, "-m", "asyncbench", "show", str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env()
    )
    process.stdout.readline()
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0
    assert b"Traceback" not in stderr
    assert b"BrokenPipe" not in stderr


def test_a_case_stopped_by_time_says_how_far_it_got():
    from asyncbench.results.model import Sampling

    result = dataclasses.replace(ok_result("m[torch,cpu]"), sampling=Sampling(5, 3.1, "max_time_s", 0.52, 0.03, 3.0))
    note = cells.sampling_note(result)
    assert "stopped by max_time_s (3 s) after 5 rounds at ±52%" in note
    assert "±3% target" in note
    assert cells.sampling_note(dataclasses.replace(result, sampling=Sampling(40, 1.0, "max_rel_noise", 0.02, 0.03, 3.0))) is None


def test_a_case_held_past_max_time_s_by_its_minimum_rounds_names_the_minimum():
    """6 rounds of 10.95 s under max_time_s=2 s: the limit had passed before the last round (its samples took 1.11 s),
    so the minimum rounds set the length; the line names them, never "stopped by max_time_s (2 s)" (nor does -v's
    progress line). A last round that itself crossed the limit is a stop by max_time_s."""
    from asyncbench.report import progress
    from asyncbench.results.model import Sampling

    result = dataclasses.replace(ok_result("m[torch,cpu]"), sampling=Sampling(6, 10.95, "max_time_s", 0.4, 0.03, 2.0))
    note = cells.sampling_note(result)
    assert "stopped by max_time_s" not in note
    assert "stopped at its minimum of 6 rounds" in note
    assert "which took 10.9 s, past max_time_s (2 s)" in note
    line = progress.case_line(1, 1, result, verbose=True)
    assert "stopped by its minimum rounds" in line
    assert "stopped by max_time_s" not in line
    crossed = dataclasses.replace(result, sampling=Sampling(36, 10.9, "max_time_s", 0.4, 0.03, 10.0))
    assert "stopped by max_time_s (10 s) after 36 rounds" in cells.sampling_note(crossed)
    assert "stopped by max_time_s" in progress.case_line(1, 1, crossed, verbose=True)


def test_a_case_that_met_its_noise_target_only_after_its_minimum_overran_max_time_s_says_so():
    """stopped_by max_rel_noise after 12 s under max_time_s=0.05 s (a 0.5 s step, 6 rounds): the minimum rounds, not
    the limit, set the length, and the case says so although it met its noise target; one that met the target
    within max_time_s says nothing."""
    from asyncbench.results.model import Sampling

    result = dataclasses.replace(ok_result("m[torch,cpu]"), sampling=Sampling(6, 12.03, "max_rel_noise", 0.01, 0.03, 0.05))
    note = cells.sampling_note(result)
    assert note is not None
    assert "ran its minimum of 6 rounds" in note
    assert "which took 12 s, past max_time_s (0.05 s)" in note
    assert "short of" not in note
    within = dataclasses.replace(result, sampling=Sampling(6, 0.04, "max_rel_noise", 0.01, 0.03, 0.05))
    assert cells.sampling_note(within) is None


def _sweep(cases: int) -> list[Result]:
    """`cases` ok points of one swept experiment (params n=0..), each with a metric."""
    return [
        dataclasses.replace(ok_result(f"m[torch,cpu,n={i}]"), params={"n": i}, metrics={"illusion": 1.0}, bounds={"illusion": (0.9, 1.1)})
        for i in range(cases)
    ]


def test_a_long_report_keeps_every_row_and_lines_only_for_the_cases_that_need_a_look():
    results = _sweep(view.CASE_LINES_MAX + 50)
    results[3] = dataclasses.replace(results[3], warnings=("device time above done time",))
    results[9] = dataclasses.replace(results[9], status=ERROR, reason="RuntimeError: boom", variants={})
    shown = view.build(report_of(results))
    (experiment,) = shown.experiments
    assert len(experiment.groups) == len(results)  # the table keeps every case
    assert [case.id for case in experiment.cases] == [results[3].id, results[9].id]
    assert experiment.left_out.startswith(f"{len(results) - 2} of {len(results)} cases have no lines here")
    assert "--csv" in experiment.left_out
    text = markdown.markdown(shown)
    assert "boom" in text
    assert "device time above done time" in text
    assert escaping.markdown(experiment.left_out) in text  # said in full, its own `--csv` shown as written
    short = view.build(report_of(_sweep(3))).experiments[0]
    assert len(short.cases) == 3
    assert short.left_out is None


def test_a_table_too_long_for_rich_is_printed_as_plain_aligned_columns():
    results = _sweep(terminal.RICH_TABLE_MAX_ROWS + 1)
    console = Console(width=200, record=True)
    terminal.print_report(view.build(report_of(results)), console)
    lines = console.export_text().splitlines()
    header = lines.index(next(line for line in lines if line.split()[:3] == ["n", "backend", "device"]))
    rows = lines[header + 2 : header + 2 + len(results)]
    assert [row.split()[0] for row in rows] == [str(i) for i in range(len(results))]  # every row, in order
    assert len({row.index("torch") for row in rows}) == 1  # aligned: each column starts at one place
    assert not any("│" in line for line in lines)
    few = Console(width=200, record=True)
    terminal.print_report(view.build(report_of(_sweep(3))), few)
    assert "│" in few.export_text()  # a short table is rich's


def test_a_metric_without_an_interval_says_whether_rounds_were_too_few_or_it_was_measured_once():
    result = dataclasses.replace(ok_result("m[torch,cpu]"), metrics={"speedup": 1.2, "pid": 7.0}, bounds={"speedup": None})
    assert cells.metric_line(result) == "speedup 1.2 [?] · pid 7"


def test_a_case_whose_rounds_drifted_together_says_so_and_a_short_run_does_not():
    from asyncbench.results.model import Sampling, StopReason

    def note(rho, rounds):
        sampling = Sampling(rounds, 1.0, StopReason.NOISE, 0.01, 0.03, 10.0, lag1_autocorrelation=rho)
        return cells.sampling_note(dataclasses.replace(ok_result("c"), sampling=sampling))

    assert "drifted together (lag-1 autocorrelation 0.45)" in note(0.45, 60)
    assert note(0.1, 60) is None
    assert note(0.45, 10) is None  # too few rounds to tell: not widened, not said


def test_the_key_to_the_tables_is_printed_only_under_a_table_with_a_figure():
    """An empty shard (or a run whose every case was skipped) printed the whole ± / [a–b] / ~0 key under its one line."""
    for results, keyed in (([_skipped("cupy", "cupy not installed", True)], False), ([], False), ([ok_result("m[torch,cpu]")], True)):
        built = view.build(report_of(results))
        console = Console(width=120, record=True)
        terminal.print_report(built, console)
        assert ("± is half the 95%" in console.export_text()) is keyed
        assert ("± is half the 95%" in markdown.markdown(built)) is keyed


def test_the_memory_column_shows_a_pool_in_use_before_a_peak_that_only_some_variants_have():
    """JAX on a GPU reports the pool in use for every variant and a peak only where the variant's run raised XLA's
    unresettable peak: a column preferring peaks mixed the two figures."""
    from asyncbench.results.model import Memory

    variant = ok_result("m[jax,cuda:0]").variants["matmul"]
    both = dataclasses.replace(variant, memory=Memory(device_peak_bytes=3 * 2**20, device_pool_used_bytes=2**20))
    peak_only = dataclasses.replace(variant, memory=Memory(device_peak_bytes=3 * 2**20))
    assert cells.memory_cell(both) == "1.00 MiB"
    assert cells.memory_cell(peak_only) == "3.00 MiB"


def test_markdown_renders_the_tool_s_own_code_spans_and_keeps_a_name_s_backticks_escaped():
    """A note the tool writes with a code span (`run --threads 1`) was escaped as if it were user data, showing
    literal backticks; a case name's backticks, in the same note, still read as the characters they are."""
    from markdown_it import MarkdownIt

    from asyncbench.engine import thread_pools

    name = "m `x` *y*[torch,cpu]"
    result = dataclasses.replace(ok_result(name), warnings=(f"{name}: its pools were shared; {thread_pools.fix()}",))
    written = markdown.markdown(view.build(report_of([result])))
    rendered = MarkdownIt("commonmark").render(written)
    assert "<code>run --threads 1</code>" in rendered, written
    assert "\\`run --threads 1\\`" not in written
    assert "<code>x</code>" not in rendered
    assert "<em>y</em>" not in rendered
    assert "m `x` *y*" in rendered


def test_a_stopping_note_says_a_lopsided_interval_as_the_table_does():
    """A row shown as '517 µs [449 µs–16.3 ms]' said '±1535%' in its stopping note: the note now says the bounds
    relative to the median, by the table cell's rule (spreads.shows_bounds), and a ± where the cell shows one."""
    from asyncbench.results.model import Sampling, Stats

    base = ok_result("m[numpy,cpu]")
    name, variant = next(iter(base.variants.items()))
    wide = dataclasses.replace(variant, done_s=Stats(517e-6, 1e-5, 449e-6, 16.3e-3, 449e-6, 16.3e-3, 10))
    result = dataclasses.replace(base, variants={name: wide}, sampling=Sampling(10, 12.0, "max_time_s", 15.35, 0.03, 2.0))
    table = cells.spread(wide.done_s)
    assert "[" in table
    assert "±" not in table
    note = cells.sampling_note(result)
    assert "±1535%" not in note, note
    assert "at [−13% … +3053%]" in note, note
    assert spreads.relative_spread(1.0, 0.99, 1.01) == "±1%"


def test_a_stopping_note_never_says_a_noise_that_reads_as_its_target_is_short_of_it():
    """'stopped by max_samples after 20 rounds at ±5%, short of the ±5% target': a stored rel_noise of 0.0500155
    against 0.05, both rounded to two figures. The noise reached takes the figures that tell it from the target."""
    from asyncbench.results.model import Sampling

    note = cells.stopping_note(Sampling(20, 1.2, "max_samples", 0.0500155, 0.05, 5.0))
    assert note == "stopped by max_samples after 20 rounds at ±5.002%, short of the ±5% target", note
    # the target to as many figures where it has them: '±1.261%, short of the ±1.26% target', never '±1.26% … ±1.3%'
    note = cells.stopping_note(Sampling(20, 1.2, "max_samples", 0.012612, 0.0126, 5.0))
    assert note == "stopped by max_samples after 20 rounds at ±1.261%, short of the ±1.26% target", note
    timed = cells.stopping_note(Sampling(20, 1.2, "max_time_s", 0.0500155, 0.05, 1.0))
    assert timed is not None
    assert "at ±5.002% on the done time, short of the ±5% target" in timed, timed
    # apart at two figures: as before
    apart = cells.stopping_note(Sampling(20, 1.2, "max_samples", 0.081, 0.05, 5.0))
    assert apart == "stopped by max_samples after 20 rounds at ±8.1%, short of the ±5% target", apart
