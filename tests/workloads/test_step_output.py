"""A step that prints does not flood the terminal with thousands of measured rounds' output (issue 53, item 12):
its first lines show, the rest go to a sink — written, so each print still runs and is timed — and the count is
said once when the case ends."""

from __future__ import annotations

import io
import sys

from asyncbench.backends import get_backend
from asyncbench.workloads import step_output
from asyncbench.workloads.step_form import step, variant_name
from tests.support.cli import asyncbench

LOUD = """\
import asyncbench


@asyncbench.step(sync_every=(0,))
def loud(backend, device, params):
    x = backend.random((8, 8), "float32", device)()

    def step():
        y = x @ x
        print("loss", float(y.sum()))
        return y

    return step
"""


def test_a_printing_step_shows_its_first_lines_and_sinks_the_rest_while_each_print_still_runs(monkeypatch):
    shown = io.StringIO()
    monkeypatch.setattr(sys, "stdout", shown)
    calls = []

    def printing(backend, device, params):
        def one():
            calls.append(1)
            print("step", len(calls))

        return one

    workload = step(printing, name="printing", steps=10)
    prepared = workload.setup(get_backend("numpy"), "cpu", workload.defaults())
    run = prepared.variants[variant_name(0)]
    for _ in range(10):
        run()
    assert prepared.close is not None
    prepared.close()
    assert sys.stdout is shown  # restored when the case ends
    lines = shown.getvalue().splitlines()
    assert len(calls) == 100  # every print ran
    assert lines[: step_output.SHOWN_LINES] == [f"step {n}" for n in range(1, step_output.SHOWN_LINES + 1)]
    (said,) = lines[step_output.SHOWN_LINES :]  # once, with what went to the sink
    assert f"{100 - step_output.SHOWN_LINES} more lines" in said
    assert "printing" in said
    assert "sink" in said


def test_the_steps_stdout_answers_what_user_code_asks_of_sys_stdout():
    real = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    output = step_output.StepOutput(real, "s")
    assert output.encoding == "utf-8"
    assert output.isatty() is False
    for _ in range(step_output.SHOWN_LINES + 2):
        assert output.write("a\n") == 2  # the sink's write answers as a stream's does
    output.flush()
    assert output.sunk == 2


def test_a_run_with_a_census_prints_the_steps_output_a_few_times_not_every_round(tmp_path):
    (tmp_path / "loud.py").write_text(LOUD)
    done = asyncbench(
        *["run", "-w", "loud.py:loud", "-b", "numpy", "-d", "cpu", "--quick", "--syncs"],
        *["--no-progress", "--set", "max_time_s=0.3"],
        cwd=tmp_path,
        env={"OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    printed = [line for line in done.stdout.splitlines() if line.startswith("loss")]
    assert len(printed) == step_output.SHOWN_LINES, done.stdout
    assert "loud printed" in done.stdout
    assert "into a sink" in done.stdout
