"""A case's `sampling` block held to what a run writes (results.sampling_held.check_sampling): its noise, target,
time limit and autocorrelation within the ranges a run can give them, and every value a run can give them still read
(the hostile corpus, tests/hostile, holds one refused file of each kind, through `show`)."""

from __future__ import annotations

from typing import Any

import pytest

from asyncbench.errors import InputError
from asyncbench.results.fields import At
from asyncbench.results.sampling_held import check_sampling

#: a real case's sampling block (tests/hostile/cases/good/results.json's)
GOOD = {
    "rounds": 6,
    "elapsed_s": 0.0141,
    "stopped_by": "max_rel_noise",
    "rel_noise": 0.0116,
    "max_rel_noise": 0.05,
    "max_time_s": 1.0,
    "lag1_autocorrelation": -0.2,
}


def _checked(**changed: Any) -> None:
    check_sampling({**GOOD, **changed}, At("r.json") / "sampling")


@pytest.mark.parametrize(
    "changed",
    [
        {"rel_noise": 0.0},  # every sample the same: an interval of no width
        {"rel_noise": None},  # too few rounds for an interval
        {"rel_noise": 1.66},  # a noisy case far past its target (a committed file's own)
        {"rel_noise": 1e9},  # a nanosecond's median beside a one-second high end
        {"max_rel_noise": 3.0},  # a plain 3 an older asyncbench took (before targets of 1 and more were refused)
        {"max_time_s": 1e300},  # a user's "no limit": the tool takes any finite positive time (and a timeout past it)
        {"lag1_autocorrelation": 1.0},  # rounds all on one side of the median, then all on the other
        {"lag1_autocorrelation": -1.0},  # rounds alternating about the median
        {"lag1_autocorrelation": None},  # too few rounds
    ],
)
def test_what_a_run_can_write_is_read(changed: dict[str, Any]) -> None:
    _checked(**changed)


@pytest.mark.parametrize(
    ("changed", "said"),
    [
        ({"rel_noise": 1e300}, "is wider than any interval a run measures"),
        ({"rel_noise": -0.5}, "a relative half-width cannot be negative"),
        ({"max_rel_noise": 1e300}, "is wider than any interval a run measures"),
        ({"max_rel_noise": 0}, "a noise target is above 0"),
        ({"max_rel_noise": None}, "expected a number, got null"),
        ({"max_time_s": 0}, "a time limit is above 0"),
        ({"max_time_s": None}, "expected a number, got null"),
        ({"lag1_autocorrelation": 1.5}, "1.5 is not an autocorrelation"),
        ({"lag1_autocorrelation": -1e300}, "is not an autocorrelation"),
        ({"lag1_autocorrelation": True}, "expected a number"),
        ({"elapsed_s": None}, "expected a time, got null"),  # `show` ended in a traceback
    ],
)
def test_what_no_run_writes_is_refused_naming_its_key(changed: dict[str, Any], said: str) -> None:
    with pytest.raises(InputError) as refused:
        _checked(**changed)
    [key] = changed
    assert f"sampling.{key}" in str(refused.value)
    assert said in str(refused.value)


def test_a_key_missing_or_unknown_is_named() -> None:
    """A missing key read as "malformed results (TypeError: Sampling.__init__() missing ...)", an unknown one as an
    unexpected keyword: neither named the key."""
    without = {key: value for key, value in GOOD.items() if key != "max_time_s"}
    with pytest.raises(InputError, match=r"sampling\.max_time_s: missing"):
        check_sampling(without, At("r.json") / "sampling")
    with pytest.raises(InputError, match=r"sampling\.max_time_ms: 'max_time_ms' is no key"):
        check_sampling({**GOOD, "max_time_ms": 1000}, At("r.json") / "sampling")
    check_sampling({key: value for key, value in GOOD.items() if key != "lag1_autocorrelation"}, At("r.json") / "sampling")
