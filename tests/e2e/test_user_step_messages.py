"""What a user of the step form meets when a name or a value is wrong (issue 53, items 11 and 12): each says the
working form, in one line, exit 2, before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from asyncbench.errors import EXIT_INPUT
from tests.support.cli import invoke as cli_invoke
from tests.support.helpers import forgetting_user_modules

STEPS = """\
import asyncbench


@asyncbench.step
def product(backend, device, params):
    x = backend.random((8, 8), "float32", device)()
    return lambda: x @ x


@asyncbench.step(sync_every=(0, 2))
def twice(backend, device, params):
    return lambda: None


def helper_step(backend, device, params):
    return lambda: None


def no_arguments():
    return 1
"""


@pytest.fixture(autouse=True)
def _user_modules():
    yield from forgetting_user_modules()


@pytest.fixture
def folder(tmp_path: Path, monkeypatch) -> Path:
    (tmp_path / "steps.py").write_text(STEPS)
    (tmp_path / "empty.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def invoke(*args: str):
    """`asyncbench ARGS` in this process, what it raises caught: a test reads the exit and the line said."""
    return cli_invoke(*args, catch_exceptions=True)


def one_line_error(result) -> str:
    assert result.exit_code == EXIT_INPUT, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    return lines[0]


def test_a_list_param_given_one_number_says_the_list_form(folder):
    line = one_line_error(invoke("run", "-w", "steps.py:product", "-b", "numpy", "-d", "cpu", "--set", "sync_every=0"))
    assert "sync_every=[0]" in line
    assert "sync_every=0,1" in line  # and what the plain numbers with commas do: a sweep


@pytest.mark.parametrize("written", ["steps.py", "steps.py:"])
def test_a_file_without_a_name_lists_its_steps(folder, written):
    line = one_line_error(invoke("run", "-w", written, "-b", "numpy", "-d", "cpu"))
    assert "steps.py:product" in line  # the form to write, with a name it has
    assert "product, twice, helper_step" in line


def test_a_file_with_no_workload_says_what_one_is(folder):
    line = one_line_error(invoke("run", "-w", "empty.py", "-b", "numpy", "-d", "cpu"))
    assert "empty.py defines no workload" in line
    assert "@asyncbench.step" in line


def test_run_help_shows_the_file_form_with_an_example():
    output = invoke("run", "--help").output
    assert "FILE.py:NAME" in output
    assert "run -w bench/steps.py:my_step" in output


CONFIG = """\
defaults: {backends: [numpy], devices: [cpu]}
experiments:
  - workload: steps.py:product
    expect:
      - done_s[sync_every=4] < 1s
      - done_s[sync_every=8] < 1s
      - syncs_per_step[variant=sync_every=2] == 0
  - workload: steps.py:twice
    sweep: {sync_every: [[0, 2], [0, 16]]}
    params_for: {numpy: {sync_every: [0, 32]}}
    expect:
      - done_s[sync_every=16] < 1s
      - done_s[sync_every=32] < 1s
      - done_s[sync_every=4] < 1s
"""


def test_validate_refuses_a_variant_the_step_does_not_have_with_its_variants(folder):
    (folder / "gate.yaml").write_text(CONFIG)
    result = invoke("validate", "gate.yaml")
    assert result.exit_code == EXIT_INPUT, result.output
    refused = [line for line in result.output.splitlines() if "has no variant" in line]
    # every mistake at once; the variants the experiment's params and sweep give are fine, and a params_for of a
    # swept param (sync_every=32) is not: the sweep replaces it at every point (engine.expansion.params_on)
    assert [line.split("has no variant ")[1].split("'")[1] for line in refused] == [
        "sync_every=8",
        "sync_every=2",
        "sync_every=32",
        "sync_every=4",
    ]
    assert "its variants: sync_every=0, sync_every=4, sync_every=1" in refused[0]
    assert "expect[1]" in refused[0]
    assert "gate.yaml:6" in refused[0]


def test_a_configs_list_param_given_one_number_says_the_list_form(folder):
    (folder / "one.yaml").write_text("experiments:\n  - workload: steps.py:product\n    params: {sync_every: 0}\n")
    line = one_line_error(invoke("validate", "one.yaml"))
    assert "one.yaml:3" in line
    assert "got 0: write [0]" in line


def test_a_function_that_cannot_take_a_step_s_arguments_is_neither_listed_nor_run(folder):
    """A trial's file listed its 0-argument helper among its steps, and naming it gave three error rows and exit 3."""
    listed = one_line_error(invoke("run", "-w", "steps.py", "-b", "numpy", "-d", "cpu"))
    assert "no_arguments" not in listed
    line = one_line_error(invoke("run", "-w", "steps.py:no_arguments", "-b", "numpy", "-d", "cpu"))
    assert "no_arguments() is not a step function" in line
    assert "(backend, device, params)" in line


NEVER_WAITS = """\
defaults: {backends: [numpy], devices: [cpu]}
experiments:
  - workload: steps.py:twice
    params: {sync_every: [0]}
    expect: ["slowdown_k1 <= 1.5", "step_s_k0 < 1s", "illusion >= 1"]
  - name: waits
    workload: steps.py:twice
    params: {sync_every: [2]}
    expect: ["bond == host", "slowdown_k4 <= 2", "slowdown_k2 <= 2", "epoch_s_k2 < 1s"]
"""


def test_validate_refuses_a_check_on_a_metric_whose_variant_the_case_lacks_every_one_at_once(folder):
    # a user's slowdown_k1 of a step with sync_every [0] passed validate, and the run ended "slowdown_k1 was not
    # measured", exit 1; a second mistake beside a first (bond == host) was not said at all
    (folder / "jb.yaml").write_text(NEVER_WAITS)
    result = invoke("validate", "jb.yaml")
    assert result.exit_code == EXIT_INPUT, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 5, result.output
    assert lines[0].startswith("asyncbench: error: jb.yaml:5: experiments[0].expect[0]: 'slowdown_k1 <= 1.5': "), lines[0]
    assert "slowdown_k1 needs sync_every 1, which this experiment's sync_every [0] lacks" in lines[0]
    assert "jb.yaml:9: experiments[1].expect[0]" in lines[1]
    assert "bond" in lines[1]
    assert "'slowdown_k4 <= 2': slowdown_k4 needs sync_every 0 and 4, which this experiment's sync_every [2] lacks" in lines[2]
    assert "'slowdown_k2 <= 2': slowdown_k2 needs sync_every 0, which this experiment's sync_every [2] lacks" in lines[3]
    assert "epoch_s_k2" in lines[4]  # no metric of the step form: refused as before


SWEPT_SYNC_EVERY = """\
defaults: {backends: [numpy], devices: [cpu]}
experiments:
  - workload: steps.py:twice
    params: {sync_every: [0, 1]}
    sweep: {sync_every: [[0, 4]]}
    expect: ["slowdown_k8 <= 2"]
"""


def test_validate_names_the_swept_sync_every_not_the_default_the_sweep_replaces(folder):
    # a sweep of sync_every [[0, 4]] was said to run "sync_every [0, 4, 1]": the default's 1 never runs there
    (folder / "swept.yaml").write_text(SWEPT_SYNC_EVERY)
    result = invoke("validate", "swept.yaml")
    assert result.exit_code == EXIT_INPUT, result.output
    assert "slowdown_k8 needs sync_every 0 and 8, which this experiment's sync_every [0, 4] lacks" in result.output or (
        "slowdown_k8 needs sync_every 8, which this experiment's sync_every [0, 4] lacks" in result.output
    ), result.output


@pytest.mark.parametrize(
    ("backend", "device", "how", "said"),
    [
        ("jax", "cpu", "graph", "--bound-verify graph: jax captures a step with jit only (product: jax on cpu)"),
        ("torch", "cpu", "graph", "--bound-verify graph: torch on cpu: CUDA graphs need a CUDA device (product: torch on cpu)"),
        ("jax", "cpu", "compile", "--bound-verify compile: jax captures a step with jit only"),
    ],
)
def test_a_capture_the_backend_cannot_make_is_refused_before_anything_is_measured(folder, backend, device, how, said):
    """`--bound-verify graph` on JAX measured for 68 s, then said 'not timed: jax captures a step with jit only',
    where --help promises a step that cannot be captured is refused in one line: known before anything runs."""
    result = invoke("run", "-w", "steps.py:product", "-b", backend, "-d", device, "--bound-verify", how, "-o", "out.json")
    assert said in one_line_error(result)
    assert not (folder / "out.json").exists()


def test_validate_refuses_a_configs_bound_verify_its_backends_cannot_capture(folder):
    (folder / "gate.yaml").write_text("bound_verify: graph\nexperiments:\n  - workload: steps.py:product\n    backends: [jax]\n")
    line = one_line_error(invoke("validate", "gate.yaml"))
    assert "bound_verify" in line, line
    assert "jax captures a step with jit only" in line, line
    (folder / "fine.yaml").write_text("bound_verify: jit\nexperiments:\n  - workload: steps.py:product\n    backends: [jax]\n")
    assert invoke("validate", "fine.yaml").exit_code == 0
