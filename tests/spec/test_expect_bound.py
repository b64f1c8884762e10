"""`expect:` checks on what bounds the step: `bound == device`, `slack_s[host] >= 1ms`, `slack_share[host] >= 20%`,
`ceiling[host] <= 1.10`, parsed into the side (or reading) and variant they are on; bad forms are clear errors."""

from __future__ import annotations

import re

import pytest

from asyncbench.results.model import Expectation
from asyncbench.spec import expect
from asyncbench.workloads import BUILT_IN
from tests.support.cli import invoke

WORKLOAD = BUILT_IN["sync_async"]  # its variants: sync, async, queued


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("bound == device", ("bound", "==", 0.0, None, "device")),
        ("bound[async]==host", ("bound", "==", 0.0, "async", "host")),
        ("bound[variant=sync] == balanced", ("bound", "==", 0.0, "sync", "balanced")),
        ("slack_s[host] >= 1ms", ("slack_s", ">=", 0.001, None, "host")),
        ("slack_s[device, variant=async] < 250us", ("slack_s", "<", 0.00025, "async", "device")),
        ("slack_s[queued, side=host] > 0.002", ("slack_s", ">", 0.002, "queued", "host")),
        ("slack_share[host] >= 20%", ("slack_share", ">=", 0.2, None, "host")),
        ("ceiling[host] <= 1.10", ("ceiling", "<=", 1.1, None, "host")),
        ("ceiling <= 1.5x", ("ceiling", "<=", 1.5, None, "host")),
    ],
)
def test_bound_checks_parse_into_their_side_or_reading(text, parsed):
    check = expect.parse(text, WORKLOAD)
    assert isinstance(check, Expectation)
    assert (check.quantity, check.op, check.threshold, check.variant, check.at) == pytest.approx(parsed)
    assert check.stat is None


@pytest.mark.parametrize(
    "text, said",
    [
        ("bound == gpu", "unknown reading 'gpu': bound == one of host, device, balanced"),
        ("bound == inconclusive", "unknown reading 'inconclusive'"),
        ("bound >= device", "the reading is compared with =="),
        ("bound[fast] == host", "sync_async has no variant 'fast'"),
        ("slack_s[gpu] >= 1ms", "unknown side 'gpu'"),
        ("slack_s[side=gpu] >= 1ms", "unknown side 'gpu'"),
        ("slack_s >= 1ms", "slack_s needs its side: slack_s[host] or slack_s[device]"),
        ("slack_s[host, device] >= 1ms", "names more than one side"),
        ("slack_s[host] >= 1x", "unit 'x' does not fit slack_s"),
        ("slack_s[host] >= -1ms", "a slack is at least 0"),
        ("slack_s[host] == 1ms", "== is for the reading"),
        ("slack_s.median[host] >= 1ms", "slack_s has no statistics"),
        ("slack_share[host] >= 0.2", "write it with its % (slack_share[host] >= 20%)"),
        ("slack_share[host] >= 20ms", "write it with its %"),
        ("slack_share[device] <= 120%", "at most the step (100%)"),
        ("ceiling[host] <= 0.9", "at least 1"),
        ("ceiling[device] <= 1.2", "the ceiling is of cutting host work (ceiling[host])"),
        ("ceiling[host] <= 1.1ms", "unit 'ms' does not fit ceiling"),
        ("slack_s[host, kind=print] >= 1ms", "unknown 'kind'="),
    ],
)
def test_bad_bound_checks_are_clear_errors(text, said):
    with pytest.raises(ValueError, match=re.escape(said)):
        expect.parse(text, WORKLOAD)


@pytest.mark.parametrize(
    "text, said",
    [
        ("bond == device", "unknown quantity 'bond' (did you mean 'bound'?)"),
        ("slack_shar[host] >= 20%", "unknown quantity 'slack_shar' (did you mean 'slack_share'?)"),
        ("slak_s[host] >= 1ms", "unknown quantity 'slak_s' (did you mean 'slack_s'?)"),
        ("ceilng[host] <= 1.1", "unknown quantity 'ceilng' (did you mean 'ceiling'?)"),
    ],
)
def test_a_misspelt_bound_quantity_gets_a_did_you_mean(text, said):
    with pytest.raises(ValueError, match=re.escape(said)) as raised:
        expect.parse(text, WORKLOAD)
    assert "slack_share[host] >= 20%" in str(raised.value)  # the bound's forms, to copy
    assert "\n" not in str(raised.value)


def test_a_misspelt_metric_still_gets_the_metric_it_is_close_to():
    with pytest.raises(ValueError, match=re.escape("unknown metric 'speedp' for sync_async (did you mean 'speedup'?)")):
        expect.parse("speedp >= 1", WORKLOAD)


@pytest.mark.parametrize("text", ["slack_s[host] >= 0ms", "slack_share[device] <= 0%", "ceiling[host] <= 1"])
def test_a_threshold_that_injects_no_delay_is_refused(text):
    with pytest.raises(ValueError, match="a slack of 0|a ceiling of 1"):
        expect.parse(text, WORKLOAD)


STEP = """\
import asyncbench


@asyncbench.step(sync_every=(0,), steps=2)
def train(backend, device, params):
    x = backend.random((16, 16), "float32", device)()
    return lambda: x @ x
"""


def test_validate_accepts_bound_checks_on_a_step_says_they_take_perturbation_rounds_and_refuses_a_bad_one(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    (tmp_path / "step.py").write_text(STEP)
    head = "defaults: {backends: [jax], devices: [cpu]}\nexperiments:\n  - workload: step.py:train\n    expect: "
    good.write_text(head + "['bound == device', 'slack_s[host] >= 1ms', 'slack_share[host] >= 20%']\n")
    bad.write_text(head + "['ceiling[host] <= 0.9']\n")
    done = invoke("validate", str(good))
    assert done.exit_code == 0, done.output
    assert "ok (1 experiment(s); 3 check(s) on what bounds the step: their cases take perturbation rounds" in done.output
    refused = invoke("validate", str(bad))
    assert refused.exit_code == 2
    assert "a ceiling of 0.9: it is a speed-up, at least 1" in refused.output


def test_validate_refuses_a_bound_check_on_a_built_in_experiment_in_one_line_and_a_module_step_passes(tmp_path):
    built_in = tmp_path / "built_in.yaml"
    built_in.write_text(
        "defaults: {backends: [numpy], devices: [cpu]}\nexperiments:\n  - workload: sync_async\n"
        "    expect: ['speedup >= 1', 'slack_s[host] >= 1ms']\n"
    )
    refused = invoke("validate", str(built_in))
    assert refused.exit_code == 2
    (line,) = [line for line in refused.output.splitlines() if line.strip()]
    assert "built_in.yaml:4: experiments[0].expect[1]:" in line
    assert "'slack_s[host] >= 1ms' is a check on what bounds the step, and sync_async is a built-in experiment" in line
    assert "not measured" in line
    module = tmp_path / "module.yaml"
    module.write_text(
        "defaults: {backends: [jax], devices: [cpu]}\nexperiments:\n  - workload: asyncbench.workloads.bound_planted:planted\n"
        "    expect: ['bound == host', 'ceiling[host] <= 1.10']\n"
    )
    done = invoke("validate", str(module))
    assert done.exit_code == 0, done.output
    assert "2 check(s) on what bounds the step" in done.output


def _bound_check_config(folder, name, backends, devices):
    """A config of the step-form STEP on `backends` and `devices` with one check on what bounds its step."""
    (folder / "step.py").write_text(STEP)
    config = folder / name
    config.write_text(
        f"defaults: {{backends: {backends}, devices: {devices}}}\nexperiments:\n  - workload: step.py:train\n"
        "    expect: ['bound == host']\n"
    )
    return config


@pytest.mark.parametrize(
    ("backends", "devices", "case"),
    [("[numpy]", "[cpu]", "numpy on cpu"), ("[torch]", "[cpu]", "torch on cpu"), ("[jax, numpy]", "[auto]", "numpy on auto")],
)
def test_validate_refuses_a_bound_check_on_a_synchronous_backend_in_one_line(tmp_path, backends, devices, case):
    # issue 52: `bound == host` on a numpy case was accepted, and a run could only call it not measured
    refused = invoke("validate", str(_bound_check_config(tmp_path, "sync.yaml", backends, devices)))
    assert refused.exit_code == 2, refused.output
    (line,) = [line for line in refused.output.splitlines() if line.strip()]
    assert "sync.yaml:4: experiments[0].expect[0]:" in line
    assert f"'bound == host' is a check on what bounds the step, and {case} runs synchronously (the host is the device)" in line
    assert "not measured" in line


@pytest.mark.parametrize(("backends", "devices"), [("[torch]", "[auto]"), ("[torch]", "[cuda]"), ("[jax, mxnet]", "[cpu]")])
def test_validate_accepts_a_bound_check_where_the_backend_may_run_ahead(tmp_path, backends, devices):
    done = invoke("validate", str(_bound_check_config(tmp_path, "ahead.yaml", backends, devices)))
    assert done.exit_code == 0, done.output


@pytest.mark.parametrize(
    ("params", "sweep"),
    [("{steps: 1, sync_every: [0, 1]}", "{}"), ("{sync_every: [0, 1]}", "{steps: [1, 20]}"), ("{}", "{}")],
    ids=["params", "sweep", "default"],
)
def test_validate_refuses_a_bound_check_on_one_step_a_sample_in_one_line(tmp_path, params, sweep):
    # a case of one step a sample takes no perturbation rounds: its bound check could only end "not measured"
    (tmp_path / "step.py").write_text(STEP)
    config = tmp_path / "one.yaml"
    config.write_text(
        "defaults: {backends: [jax], devices: [cpu]}\nexperiments:\n  - workload: step.py:train\n"
        f"    params: {params}\n    sweep: {sweep}\n    expect: ['bound == host']\n"
    )
    done = invoke("validate", str(config))
    if "steps" not in params + sweep:  # 20 steps a sample by default: measurable
        assert done.exit_code == 0, done.output
        return
    assert done.exit_code == 2, done.output
    (line,) = [line for line in done.output.splitlines() if line.strip()]
    assert "one.yaml:6: experiments[0].expect[0]: 'bound == host' is a check on what bounds the step, and a case of it runs steps=1" in line
    assert "not measured" in line
    assert "steps 2 or more" in line
