"""verdicts.bound's INCONCLUSIVE reason for two measured sides: each branch of the rule names its own cause, and
every figure it states agrees with the words beside it (constructed intervals, not fitted ones)."""

from __future__ import annotations

import re

import numpy
import pytest

from asyncbench.results.bound import BoundKind, Side, SideBound
from asyncbench.verdicts import bound

#: the step of the run that printed "−2.6% to 7.4% of the step: not beyond ±7.5% nor within it": its device's
#: slack interval reached 190 µs, 7.7% of it
STEP_S = 0.00247


def _reading(difference: tuple[float, float], host: tuple[float, float], device: tuple[float, float]) -> tuple[BoundKind, str | None]:
    fits = {
        Side.HOST: SideBound(Side.HOST, host[0], host, 1.0, (0.9, 1.1), (0.0002, 0.001)),
        Side.DEVICE: SideBound(Side.DEVICE, device[0], device, 1.0, (0.9, 1.1), (0.0002, 0.001)),
    }
    slacks = {side: numpy.zeros(2) for side in fits}
    kind, said, _ = bound._reading(fits, slacks, slacks, lambda _: difference, STEP_S)
    return kind, said


def _shares(said: str | None) -> list[float]:
    """Every share of the step the reason states, as fractions (the project's minus sign read as one)."""
    assert said is not None
    return [float(found.replace("−", "-")) / 100 for found in re.findall(r"(−?\d+(?:\.\d+)?)%", said)]


def test_a_difference_within_the_band_beside_a_slack_past_it_names_that_slack_not_the_difference():
    kind, said = _reading((-0.026, 0.074), host=(0.0, 0.00005), device=(0.0, 0.00019))
    assert kind == BoundKind.INCONCLUSIVE
    assert said == (
        "device − host slack −2.6% to 7.4% of the step lies within ±7.5%, but the device's slack may reach 7.7% of it "
        "(190 µs), past 7.5%: neither side shown bound nor both slacks shown small"
    )


def test_both_slacks_past_the_band_are_both_named():
    _, said = _reading((-0.03, 0.03), host=(0.0, 0.0002), device=(0.0, 0.00021))
    assert said is not None
    assert "the host's slack may reach 8.1% of it (200 µs) and the device's slack may reach 8.5% of it (210 µs)" in said


@pytest.mark.parametrize("difference", [(-0.026, 0.12), (-0.2, 0.01), (-0.1, 0.1)])
def test_a_difference_that_reaches_past_the_band_says_so(difference):
    kind, said = _reading(difference, host=(0.0, 0.00005), device=(0.0, 0.00005))
    assert kind == BoundKind.INCONCLUSIVE
    assert said is not None
    assert "reaches past ±7.5% but does not lie wholly beyond ±7.5%" in said
    low, high = _shares(said)[:2]
    assert low < -bound.BALANCE_BAND or high > bound.BALANCE_BAND  # what the words say, of the figures printed
    assert low <= bound.DECISION_MARGIN
    assert high >= -bound.DECISION_MARGIN


def test_a_share_that_would_round_onto_the_band_keeps_its_side():
    _, within = _reading((-0.0749, 0.0749), host=(0.0, 0.00005), device=(0.0, 0.0751 * STEP_S))
    assert _shares(within)[:2] == pytest.approx([-0.0749, 0.0749])
    assert within is not None
    assert "may reach 7.51% of it" in within
    _, past = _reading((-0.026, 0.07502), host=(0.0, 0.00005), device=(0.0, 0.00005))
    assert past is not None
    assert "to 7.502% of the step reaches past ±7.5%" in past


def test_the_other_readings_are_unchanged():
    # the sides' intervals as the difference has them (device − host above the margin: the device has the slack)
    assert _reading((0.08, 0.2), host=(0.0, 0.00001), device=(0.0002, 0.0004))[0] == BoundKind.HOST
    assert _reading((-0.2, -0.08), host=(0.0002, 0.0004), device=(0.0, 0.00001))[0] == BoundKind.DEVICE
    fits = {side: SideBound(side, 0.0, (0.0, 0.0001), 1.0, (0.9, 1.1), (0.0002, 0.001)) for side in (Side.HOST, Side.DEVICE)}
    assert bound._reading(fits, (zeros := {side: numpy.zeros(2) for side in fits}), zeros, lambda _: (-0.03, 0.03), STEP_S) == (
        BoundKind.BALANCED,
        None,
        (-0.03, 0.03),
    )
