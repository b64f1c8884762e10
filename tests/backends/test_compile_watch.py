"""torch.compile's step watched for its whole life (backends.compile_watch): a step that changes a value dynamo
guards on each call recompiles until dynamo's limit and runs eagerly past it, so its time is not a compiled step's:
refused in one line, and dynamo's "hit config.recompile_limit" warnings kept off the terminal. Real torch, on dynamo's
eager backend (no inductor compile of some 15 s)."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from typing import Any

import pytest

from asyncbench.backends import compile_watch, step_capture
from tests.support.cli import asyncbench

#: a user's step that appends a host read to a list it closes over each call: dynamo guards on the list's length,
#: so each call compiles again (the workload file of the report); torch.compile on dynamo's eager backend here
GROWING_STEP = """
    import functools

    import torch

    import asyncbench

    torch.compile = functools.partial(torch.compile, backend="eager")  # the test's speed: no inductor compile
    config = torch._dynamo.config  # and a limit of 2, not 8: each recompile of the three variants' steps is ~1 s
    setattr(config, "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit", 2)


    @asyncbench.step(backends=("torch",))
    def titem(backend, device, params):
        x = torch.ones(64)
        losses = []

        def step():
            y = (x * 2).sum()
            losses.append(y.item())
            return y

        return step
"""
#: how the refusal begins, at dynamo's limit: its default (8), and the limit GROWING_STEP sets (2)
REFUSED = "not compiled: torch.compile recompiled the step 8 times (its limit): it runs eagerly past it"
REFUSED_AT_2 = REFUSED.replace("8 times", "2 times")


def test_a_step_past_the_recompile_limit_is_refused_and_its_warnings_kept_off_the_terminal(capfd: pytest.CaptureFixture[str]) -> None:
    """The report: 8 lines of `torch._dynamo hit config.recompile_limit (8)` on stderr, and a "compile" figure that
    timed the eager fallback, noted only as graph breaks."""
    torch = pytest.importorskip("torch")
    dynamo = pytest.importorskip("torch._dynamo")
    dynamo.reset()  # every test compiles afresh
    logger = logging.getLogger(compile_watch.DYNAMO_LOGGER)
    handlers, propagate = list(logger.handlers), logger.propagate
    x = torch.ones(8)
    losses: list[float] = []

    def step() -> Any:
        y = (x * 2).sum()
        losses.append(y.item())
        return y

    captured, said = step_capture.torch_compile(step, "cpu", compile_=lambda f: torch.compile(f, backend="eager"))
    assert isinstance(captured, compile_watch.CompiledStep)
    assert said is not None
    assert "graph break(s)" in said  # the first call's caveat, as before
    for _ in range(12):  # the rounds: past the limit (8) it runs eagerly
        assert float(captured()) == 16.0
    refused = captured.finish()
    assert refused is not None
    assert refused.startswith(REFUSED), refused
    assert "the step changes a guarded value each call: " in refused
    assert "losses" in refused  # the guard that failed last, in dynamo's words
    assert "\n" not in refused
    assert (logger.handlers, logger.propagate) == (handlers, propagate)  # the user's logging as it was
    err = capfd.readouterr().err
    assert "recompile_limit" not in err, err
    assert "Graph break" not in err, err


def test_a_step_that_compiles_once_is_not_refused_and_the_logger_is_put_back() -> None:
    logger = logging.getLogger(compile_watch.DYNAMO_LOGGER)
    handlers, propagate = list(logger.handlers), logger.propagate
    captured, said = step_capture.torch_compile(lambda: 3, "cpu", compile_=lambda f: f)
    assert said is None
    assert isinstance(captured, compile_watch.CompiledStep)
    assert logger.handlers != handlers  # caught for the step's whole life: its rounds too
    assert [captured() for _ in range(10)] == [3] * 10
    assert captured.finish() is None
    assert (logger.handlers, logger.propagate) == (handlers, propagate)
    assert captured.finish() is None  # a second finish changes nothing


@pytest.mark.slow
def test_run_bound_verify_compile_refuses_a_step_past_the_recompile_limit_with_nothing_from_torch_on_stderr(
    tmp_path: Path,
) -> None:
    """`asyncbench run -w tsteps.py:titem -b torch -d cpu --bound-verify compile`, as the user ran it."""
    pytest.importorskip("torch")
    if step_capture.c_compiler() is None:
        pytest.skip("the CLI refuses torch.compile on a CPU without a C++ compiler")
    (tmp_path / "tsteps.py").write_text(textwrap.dedent(GROWING_STEP))
    done = asyncbench(
        "run", "-w", "tsteps.py:titem", "-b", "torch", "-d", "cpu", "--bound-verify", "compile",
        "--set", "max_time_s=0.3", "-o", "out.json", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "recompile_limit" not in done.stderr, done.stderr
    assert "torch._dynamo" not in done.stderr, done.stderr
    (result,) = json.loads((tmp_path / "out.json").read_text())["results"]
    for bound in result["bound"].values():  # each variant's rounds ran the one compiled step
        verified = bound["verified"]
        assert verified["note"].startswith(REFUSED_AT_2), verified["note"]  # the limit read as the file set it
        assert verified["step_s"] is None  # refused: no figure labelled compiled
