"""`expect:` checks on the census (`run --syncs`): syncs_per_step and sync_wait_s, of the whole step, a kind or a line,
in every variant or one; == only for the count."""

from __future__ import annotations

import pytest

from asyncbench.spec import expect
from asyncbench.workloads import BUILT_IN
from tests.support.cli import invoke

CONVERSION = BUILT_IN["conversion"]


@pytest.mark.parametrize(
    "text, quantity, op, threshold, variant, at",
    [
        ("syncs_per_step == 0", "syncs_per_step", "==", 0.0, None, None),
        ("sync_wait_s < 1ms", "sync_wait_s", "<", 1e-3, None, None),
        ("sync_wait_s[print] < 1ms", "sync_wait_s", "<", 1e-3, None, "print"),  # a kind before a variant of the same name
        ("syncs_per_step[variant=print] <= 11", "syncs_per_step", "<=", 11.0, "print", None),
        ("syncs_per_step[explicit_wait] == 0", "syncs_per_step", "==", 0.0, None, "explicit wait"),
        ("syncs_per_step[kind=control flow, item] == 0", "syncs_per_step", "==", 0.0, "item", "control flow"),
        ("syncs_per_step[train.py:42] == 0", "syncs_per_step", "==", 0.0, None, "train.py:42"),
        ("syncs_per_step[src/train.py:42, variant=numpy] < 2", "syncs_per_step", "<", 2.0, "numpy", "src/train.py:42"),
    ],
)
def test_census_checks_parse_their_part_of_the_step_and_variant(text, quantity, op, threshold, variant, at):
    parsed = expect.parse(text, CONVERSION)
    assert (parsed.quantity, parsed.op, parsed.variant, parsed.at, parsed.stat) == (quantity, op, variant, at, None)
    assert parsed.threshold == pytest.approx(threshold)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("speedup == 3", "== is for a count of waits: syncs_per_step"),
        ("sync_wait_s == 0", "== is for a count of waits: syncs_per_step"),
        ("syncs_per_step[prnt] == 0", "did you mean 'print'"),
        ("syncs_per_step[kind=waiting] == 0", "unknown kind 'waiting'"),
        ("syncs_per_step[variant=nope] == 0", "no kind, FILE:LINE or variant of conversion"),
        ("syncs_per_step[print, a.py:3] == 0", "more than one kind or line"),
        ("syncs_per_step[item, numpy] == 0", "more than one variant"),
        ("syncs_per_step[print,] == 0", "an empty part"),
        ("syncs_per_step[where=a] == 0", "unknown 'where'="),
        ("syncs_per_step.median == 0", "has no statistics"),
        ("syncs_per_step < 1ms", "a plain number"),
        ("sync_wait_s < 1x", "one of s, ms"),
        ("syncs_per_step = 0", "== only for syncs_per_step"),
    ],
)
def test_malformed_census_checks_say_what_was_expected(text, fragment):
    with pytest.raises(ValueError) as raised:
        expect.parse(text, CONVERSION)
    assert fragment in str(raised.value)


def test_validate_says_a_census_check_takes_census_rounds_as_syncs_does(tmp_path):
    """A run takes a census check's rounds without --syncs (as a bound check's without --bound): validate says so."""
    config = tmp_path / "c.yaml"
    config.write_text(
        "defaults: {backends: [jax], devices: [cpu]}\nexperiments:\n  - workload: conversion\n"
        "    expect: ['syncs_per_step == 0', 'sync_wait_s[print] < 1ms', 'slowdown_item <= 1.5']\n"
    )
    done = invoke("validate", str(config))
    assert done.exit_code == 0, done.output
    assert (
        "ok (1 experiment(s); 2 check(s) on where the step waits: their cases take census rounds, as --syncs "
        "(none on a backend that runs synchronously: nothing there waits for a device))"
    ) in done.output
