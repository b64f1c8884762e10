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


def test_validate_accepts_bound_checks_says_they_take_perturbation_rounds_and_refuses_a_bad_one(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    head = "defaults: {backends: [numpy], devices: [cpu]}\nexperiments:\n  - workload: sync_async\n    expect: "
    good.write_text(head + "['bound == device', 'slack_s[host] >= 1ms', 'speedup >= 1']\n")
    bad.write_text(head + "['ceiling[host] <= 0.9']\n")
    done = invoke("validate", str(good))
    assert done.exit_code == 0, done.output
    assert "ok (1 experiment(s); 2 check(s) on what bounds the step: their cases take perturbation rounds" in done.output
    refused = invoke("validate", str(bad))
    assert refused.exit_code == 2
    assert "a ceiling of 0.9: it is a speed-up, at least 1" in refused.output
