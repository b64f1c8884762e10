"""Progress off a terminal (a CI log, a pipe): one plain line per finished case, and per `ab` block, live on stderr.

On a terminal the rich bar is kept. -q (or --no-progress) silences progress and nothing else; -v says more: a
line as a case starts and every few seconds while it samples, its rounds and why it stopped, each block's own
change. The lines are data-safe (report.escaping): a case name shows its control characters, never obeys them.
"""

from __future__ import annotations

import dataclasses
import io
import math
import subprocess
import sys
from typing import Any

import pytest
from rich.console import Console

from asyncbench.report import progress
from asyncbench.report.progress import Block, ProgressDisplay
from asyncbench.results import stats
from asyncbench.results.labels import Label
from asyncbench.results.model import (
    ERROR,
    OK,
    SKIPPED,
    Case,
    Check,
    Result,
    Samples,
    Sampling,
    Settings,
    StopReason,
    VariantResult,
    Verdict,
)
from asyncbench.results.model import Progress as Measured
from asyncbench.results.paired import PairedRatio
from tests.support.cli import cli_env, invoke
from tests.support.streams import Flushes

HOSTILE = "evil\x1b[31m[/x]\nforged line"


def _variant(median_s: float, half: float) -> VariantResult:
    values = tuple(median_s * (1 + half * (i - 10) / 10) for i in range(21))
    summary = dataclasses.replace(stats.summarize(values), median=median_s, ci_low=median_s * (1 - half), ci_high=median_s * (1 + half))
    return VariantResult(Samples(values, values), summary, summary, None)


def _ok(case_id: str = "sync_async[numpy,cpu,n_ops=100]", **changes: Any) -> Result:
    sampling = Sampling(48, 3.9, StopReason.NOISE, 0.021, 0.03, 10.0)
    variants = {"sync": _variant(1.23e-3, 0.021), "async": _variant(0.98e-3, 0.015)}
    result = Result(case_id, "e", "sync_async", "numpy", "cpu", {}, OK, variants=variants, sampling=sampling, case_s=4.1)
    return dataclasses.replace(result, **changes)


def _case(case_id: str = "sync_async[numpy,cpu,n_ops=100]") -> Case:
    return Case(case_id, "e", "sync_async", "numpy", "cpu", {}, Settings())


def _plain() -> Console:
    return Console(file=io.StringIO(), force_terminal=False, width=80)


def _written(console: Console) -> str:
    return console.file.getvalue()  # type: ignore[attr-defined]


# --- the lines -------------------------------------------------------------------------------------------------


def test_a_finished_case_is_one_line_with_its_position_each_done_time_and_its_time():
    line = progress.case_line(2, 12, _ok())
    assert line == "[3/12] sync_async[numpy,cpu,n_ops=100]  ok  done sync 1.23 ms ±2.1%, async 980 µs ±1.5%  4.10 s"


def test_verbose_adds_the_rounds_and_why_sampling_stopped():
    line = progress.case_line(0, 1, _ok(), verbose=True)
    assert line == (
        "[1/1] sync_async[numpy,cpu,n_ops=100]  ok  done sync 1.23 ms ±2.1%, async 980 µs ±1.5%  "
        "48 rounds, stopped by max_rel_noise at ±2.1%  4.10 s"
    )


def test_an_errored_or_skipped_case_says_so_with_its_reason_on_its_line():
    errored = progress.case_line(4, 5, _ok(status=ERROR, reason="timed out after 300 s (timeout_s)", variants={}))
    assert errored == "[5/5] sync_async[numpy,cpu,n_ops=100]  error: timed out after 300 s (timeout_s)  4.10 s"
    skipped = progress.case_line(0, 5, _ok(status=SKIPPED, reason="cupy is not installed", variants={}, case_s=None, sampling=None))
    assert skipped == "[1/5] sync_async[numpy,cpu,n_ops=100]  skipped: cupy is not installed"


def test_checks_and_warnings_are_counted_not_spelled_out():
    checks = (Check("speedup >= 2", Verdict.PASS, ""), Check("t1_s < 1ms", Verdict.FAIL, ""), Check("x < 1", Verdict.PASS, ""))
    line = progress.case_line(0, 1, _ok(checks=checks, warnings=("device time above done time",)))
    assert "  checks 2 pass, 1 fail  1 warning  4.10 s" in line


def test_many_variants_are_cut_to_a_few_unless_verbose():
    many = {f"v{i}": _variant(1e-3, 0.01) for i in range(7)}
    line = progress.case_line(0, 1, _ok(variants=many))
    assert f"v{progress.VARIANTS_SHOWN - 1} " in line
    assert f"v{progress.VARIANTS_SHOWN} " not in line
    assert f"+{7 - progress.VARIANTS_SHOWN} more" in line
    assert "v6 " in progress.case_line(0, 1, _ok(variants=many), verbose=True)


def test_a_hostile_case_name_or_reason_is_shown_on_one_line_and_never_acts():
    for line in (
        progress.case_line(0, 1, _ok(HOSTILE, variants={HOSTILE: _variant(1e-3, 0.01)})),
        progress.case_line(0, 1, _ok(HOSTILE, status=ERROR, reason=HOSTILE, variants={})),
        progress.started_line(0, 1, _case(HOSTILE)),
        progress.running_line(0, 1, _case(HOSTILE), Measured(3, 1.0, 0.2)),
        progress.block_line(Block(HOSTILE, 0, 1, 1, None, ((HOSTILE, 1.02),), (), None, False, 1.0)),
    ):
        assert "\x1b" not in line
        assert "\n" not in line
        assert "\r" not in line
        assert "evil\\x1b[31m[/x]\\nforged line" in line  # as the report's own tables show it, markup as text


def test_a_long_reason_is_cut_on_the_line_the_report_has_it_whole():
    line = progress.case_line(0, 1, _ok(status=ERROR, reason="x" * 1000, variants={}))
    assert len(line) < progress.REASON_CHARS + 80
    assert "…" in line


def test_an_ab_block_between_looks_says_the_change_so_far_and_where_the_next_look_is():
    block = Block("m[numpy,cpu]", 1, 5, 4, 14, (("step", 1.021),), (), 10, False, 8.2)
    assert progress.block_line(block) == "[2/5] m[numpy,cpu]  block 4 of 14 planned  change: step +2.1%  next look at block 10  8.20 s"
    first = dataclasses.replace(block, blocks=1, scheduled=None, next_look=None)
    assert progress.block_line(first) == "[2/5] m[numpy,cpu]  block 1  change: step +2.1%  8.20 s"


def test_a_change_that_rounds_to_nothing_has_no_sign_of_its_own_never_minus_zero():
    block = Block("m[numpy,cpu]", 3, 26, 3, 26, (("sync_every=0", 0.9996),), (), None, False, 8.2)
    line = progress.block_line(block)
    assert "change: sync_every=0 +0.0%" in line
    assert "−0.0%" not in line
    assert "-0.0%" not in line


def test_an_ab_block_at_a_look_gives_the_interval_and_label_and_says_when_the_case_stops():
    judged = (PairedRatio("step", "variant", "s", 1e-3, 1.021e-3, 1.021, (0.987, 1.056), Label.SAME),)
    block = Block("m[numpy,cpu]", 1, 5, 10, 14, (("step", 1.021),), judged, 14, True, 25.3)
    assert progress.block_line(block) == (
        "[2/5] m[numpy,cpu]  block 10 of 14 planned  look: step +2.1% [−1.3% … +5.6%] SAME  decided: stops  25.3 s"
    )
    undecided = dataclasses.replace(block, judged=(dataclasses.replace(judged[0], label=Label.INCONCLUSIVE),), decided=False)
    assert progress.block_line(undecided).endswith("INCONCLUSIVE  next look at block 14  25.3 s")
    none = dataclasses.replace(undecided, judged=(dataclasses.replace(judged[0], ratio_ci=None, label=Label.INCONCLUSIVE),))
    assert "look: step +2.1% [no interval] INCONCLUSIVE  next look" in progress.block_line(none)


def test_an_ab_look_whose_same_interval_excludes_no_change_says_which_way_within_the_case_s_margin():
    """The trial's `+19.2% [+14.0% … +25.9%]` at `--set ab_margin=30%`: a bare SAME beside it read as no change."""
    judged = (PairedRatio("step", "variant", "s", 1e-3, 1.192e-3, 1.192, (1.14, 1.259), Label.SAME),)
    block = Block("m[numpy,cpu]", 1, 5, 10, 14, (("step", 1.192),), judged, 14, True, 25.3, margin=0.3)
    assert "[+14.0% … +25.9%] WITHIN MARGIN (slower, by less than the 30% margin)  decided" in progress.block_line(block)


def test_an_ab_case_that_stops_undecided_gives_its_last_look_and_blocks_past_the_plan_say_so():
    judged = (PairedRatio("step", "variant", "s", 1e-3, 1e-3, 0.994, (0.988, 1.003), Label.NOT_SLOWER),)
    block = Block("m[numpy,cpu]", 0, 1, 11, 7, (("step", 0.994),), judged, None, False, 22.6, stopped=True)
    assert progress.block_line(block) == (
        "[1/1] m[numpy,cpu]  block 11: 7 planned, 4 more taken  last look: step −0.6% [−1.2% … +0.3%] NOT SLOWER  stopped  22.6 s"
    )
    one_look = Block("m[numpy,cpu]", 0, 1, 3, 7, (("step", 0.994),), (), None, False, 6.0)
    assert progress.block_line(one_look) == "[1/1] m[numpy,cpu]  block 3 of 7 planned  change: step −0.6%  look when it stops  6.00 s"


def test_an_ab_case_decided_at_the_look_taken_as_it_stops_says_decided_not_stopped():
    judged = (PairedRatio("step", "variant", "s", 1e-3, 1e-3, 1.01, (0.986, 1.044), Label.SAME),)
    block = Block("m[numpy,cpu]", 0, 1, 12, 10, (("step", 1.01),), judged, None, True, 22.6, stopped=True, margin=0.05)
    line = progress.block_line(block)
    assert "SAME  decided at its last look  22.6 s" in line
    assert "stopped" not in line


def test_an_ab_case_that_errors_says_so_on_its_block_line():
    block = Block("m[numpy,cpu]", 0, 2, 0, None, (), (), None, True, 1.5, status="error", reason="head: the worker process died")
    assert progress.block_line(block) == "[1/2] m[numpy,cpu]  error: head: the worker process died  1.50 s"


# --- the display -----------------------------------------------------------------------------------------------


def test_off_a_terminal_each_case_is_a_line_flushed_before_the_next_case_starts():
    stream = Flushes()
    console = Console(file=stream, force_terminal=False)
    with ProgressDisplay(True, console) as display:
        display.start(0, 2, _case("a[numpy,cpu]"))
        display.update(Measured(3, 0.5, 0.1))
        display.finish(_ok("a[numpy,cpu]"))
        shown_before_b = stream.shown[-1] if stream.shown else ""
        display.start(1, 2, _case("b[numpy,cpu]"))
        display.finish(_ok("b[numpy,cpu]", status=SKIPPED, reason="no GPU", variants={}))
    assert shown_before_b.startswith("[1/2] a[numpy,cpu]  ok  done sync")
    lines = stream.getvalue().splitlines()
    assert [line[:19] for line in lines] == ["[1/2] a[numpy,cpu] ", "[2/2] b[numpy,cpu] "]
    assert lines[1] == "[2/2] b[numpy,cpu]  skipped: no GPU  4.10 s"
    assert "\x1b" not in stream.getvalue()
    assert "\r" not in stream.getvalue()


def test_quiet_writes_nothing_on_a_terminal_or_off_one():
    for console in (_plain(), Console(file=io.StringIO(), force_terminal=True, width=80)):
        with ProgressDisplay(False, console, verbose=True) as display:
            display.start(0, 1, _case())
            display.update(Measured(3, 9.0, 0.1))
            display.finish(_ok())
            display.block(Block("m", 0, 1, 1, None, (("step", 1.0),), (), None, False, 1.0))
        assert _written(console) == ""


def test_verbose_off_a_terminal_says_when_a_case_starts_and_how_it_goes_while_it_samples(monkeypatch):
    monkeypatch.setattr(progress, "VERBOSE_EVERY_S", 0.0)
    console = _plain()
    with ProgressDisplay(True, console, verbose=True) as display:
        display.start(0, 1, _case())
        display.update(Measured(12, 5.0, 0.041))
        display.update(Measured(13, 5.1, math.inf))
        display.finish(_ok())
    assert _written(console).splitlines() == [
        "[1/1] sync_async[numpy,cpu,n_ops=100]  starts",
        "[1/1] sync_async[numpy,cpu,n_ops=100]  12 rounds, ±4.1% so far  5.00 s",
        "[1/1] sync_async[numpy,cpu,n_ops=100]  13 rounds, ±? so far  5.10 s",
        progress.case_line(0, 1, _ok(), verbose=True),
    ]


def test_verbose_says_how_a_case_goes_at_most_every_few_seconds():
    console = _plain()
    with ProgressDisplay(True, console, verbose=True) as display:
        display.start(0, 1, _case())
        for rounds in range(50):  # a worker reports ten times a second
            display.update(Measured(rounds, rounds / 10, 0.1))
    assert len(_written(console).splitlines()) == 1  # the start: no progress line inside VERBOSE_EVERY_S


def test_without_verbose_off_a_terminal_progress_while_sampling_is_not_written():
    console = _plain()
    with ProgressDisplay(True, console) as display:
        display.start(0, 1, _case())
        display.update(Measured(12, 50.0, 0.041))
    assert _written(console) == ""


def test_a_terminal_keeps_the_rich_bar_and_gets_no_plain_lines():
    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    with ProgressDisplay(True, console) as display:
        display.start(0, 2, _case())
        display.update(Measured(12, 1.0, 0.041))
        display.finish(_ok())
    written = _written(console)
    assert "\x1b[?25l" in written  # rich's live display hid the cursor: the bar, not lines
    assert "[1/2]" not in written
    assert "ok  done" not in written


def test_verbose_on_a_terminal_prints_each_finished_case_above_the_bar():
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    with ProgressDisplay(True, console, verbose=True) as display:
        display.start(0, 2, _case())
        display.finish(_ok())
    assert "[1/2] sync_async[numpy,cpu,n_ops=100]  ok  done" in _written(console)


# --- the command line ------------------------------------------------------------------------------------------


@pytest.fixture
def faked_run(monkeypatch):
    """`run` with the engine's measuring replaced: two made-up cases through the same callbacks, instantly."""
    from asyncbench.engine import runner

    def fake(config, *, on_start=None, on_progress=None, on_result=None, workers=None, **_: Any):
        if workers is not None:
            workers.close()
        results = []
        for index, case_id in enumerate(("matmul[numpy,cpu,size=8]", "matmul[numpy,cpu,size=16]")):
            on_start(index, 2, _case(case_id))
            result = _ok(case_id, workload="matmul", experiment="matmul", variants={"matmul": _variant(1e-3, 0.01)})
            on_result(result)
            results.append(result)
        return results

    monkeypatch.setattr(runner, "run", fake)
    monkeypatch.setattr(runner, "start_workers", lambda *_: None)


def _invoke(*args: str) -> Any:
    return invoke("run", "-w", "matmul", "-b", "numpy", "-d", "cpu", "--set", "size=8,16", *args)


def test_run_off_a_terminal_prints_a_line_per_case_on_stderr_and_not_on_stdout(faked_run):
    done = _invoke()
    assert done.exit_code == 0, done.output
    lines = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert [line.split("  ")[:2] for line in lines] == [["[1/2] matmul[numpy,cpu,size=8]", "ok"], ["[2/2] matmul[numpy,cpu,size=16]", "ok"]]
    assert "[1/2]" not in done.stdout


@pytest.mark.parametrize("quiet", ["-q", "--quiet", "--no-progress"])
def test_quiet_silences_progress_and_nothing_else(faked_run, quiet):
    loud, silent = _invoke(), _invoke(quiet)
    assert silent.exit_code == loud.exit_code == 0
    assert "[1/2]" not in silent.stderr
    assert silent.stderr.splitlines() == [line for line in loud.stderr.splitlines() if not line.startswith("[")]
    assert silent.stdout == loud.stdout  # the results, as ever
    assert "2 cases" in silent.stdout


def test_verbose_on_the_command_line_says_when_each_case_starts(faked_run):
    done = _invoke("-v")
    assert done.exit_code == 0, done.output
    assert "[1/2] matmul[numpy,cpu,size=8]  starts" in done.stderr
    assert "48 rounds, stopped by max_rel_noise" in done.stderr


@pytest.mark.parametrize("command", [["run", "-w", "matmul"], ["ab", "-w", "matmul", "--base", "HEAD"]])
def test_quiet_and_verbose_together_are_one_line_and_exit_2(command):
    done = invoke(*command, "-q", "-v")
    assert done.exit_code == 2
    assert done.stderr.strip().splitlines() == ["asyncbench: error: -q/--quiet (or --no-progress) and -v/--verbose: choose one"]


@pytest.mark.parametrize("command", ["run", "gather", "ab"])
def test_help_names_quiet_verbose_and_no_progress_as_quiet(command):
    shown = " ".join(invoke(command, "--help", terminal_width=200).output.split())
    assert "-q, --quiet" in shown
    assert "-v, --verbose" in shown
    assert "--no-progress The same as -q" in shown


# --- end to end: a live CI log ----------------------------------------------------------------------------------


def test_a_ci_log_shows_each_case_while_the_run_goes_on(tmp_path):
    """The real CLI with stderr a pipe: case 1's line arrives while case 2 is still running. (Its own Popen, not
    tests.support.cli's runner, which returns only when the command has ended: the test reads stderr mid-run.)"""
    command = [sys.executable, "-m", "asyncbench", "run", "-w", "matmul", "-b", "numpy", "-d", "cpu", "--quick", "--in-process"]
    command += ["--set", "size=8,16", "--set", "max_time_s=0.3", "--set", "max_rel_noise=0.0001"]
    env = {**cli_env(), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    process = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        first = ""
        while not first.startswith("[1/2]"):
            first = process.stderr.readline()
            assert first, "stderr ended before case 1's line"
        still_running = process.poll() is None
        out, err = process.communicate(timeout=120)
    finally:
        process.kill()
    assert first.startswith("[1/2] matmul[numpy,cpu,size=8,n_iter=3]  ok  done matmul "), first
    assert still_running, "case 1's line came only when the run ended"
    assert "[2/2] matmul[numpy,cpu,size=16,n_iter=3]  ok  done matmul " in err
    assert process.returncode == 0, err
    assert "[1/2]" not in out
    assert "matmul" in out  # the table, on stdout as ever


def test_a_reader_that_left_stops_the_lines_not_the_run():
    class _Gone(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            type(self).writes += 1
            raise BrokenPipeError

    with ProgressDisplay(True, Console(file=_Gone(), force_terminal=False)) as display:
        for index in range(3):
            display.start(index, 3, _case())
            display.finish(_ok())
    assert _Gone.writes == 1
