"""One side measured (no device delay on the backend: MXNet, numpy's threads): the note says the side has "no slack
worth naming" only where its slack interval shows that (its upper end within BALANCE_BAND of the step).

An MXNet step of heavy device work on a loaded 2-core machine stored a host slack of 20.8 ms [0–20.8 ms] of a
20.8 ms step, shown `~0 [≤ 20.8 ms] (≤ 100%)`, beside "the host has no slack worth naming": an interval that reaches
the whole step does not decide that. Such a note says the interval does not decide, as the two-sided reading does
(bound_readings.undecided), in a fresh fit, in a results file that stored the old words (`show`), and in the check
line that quotes the note."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from asyncbench.results import bound_rule
from asyncbench.results.bound import Bound, BoundKind, Side
from asyncbench.session import reading
from asyncbench.verdicts import bound
from tests.support.bounds import stored_file
from tests.verdicts.test_bound import STEPS, planted

NO_SLACK = "the host has no slack worth naming"
#: the words the rule before this one gave every host-only step without a low end past the margin (files keep them)
FORMER = "the host has no slack worth naming: it is the bound or balanced with the device, whose delay was not measured here"


def _host_only(noise: float, rounds: int) -> Bound:
    observations, _ = planted(1.0, 0.6, sides=(Side.HOST,), noise=noise, rounds=rounds)
    return bound.fit("a", observations, True, steps_per_call=STEPS)


def _upper_share(fitted: Bound) -> float:
    host = fitted.side(Side.HOST)
    assert host is not None
    assert host.slack_ci_s is not None
    return host.slack_ci_s[1] / fitted.step_s


def test_a_host_slack_whose_interval_reaches_past_the_band_is_not_called_no_slack():
    fitted = _host_only(noise=0.4, rounds=6)
    assert _upper_share(fitted) > 2 * bound.BALANCE_BAND  # the interval reaches far past the band
    assert fitted.bound == BoundKind.INCONCLUSIVE
    assert fitted.note is not None
    assert NO_SLACK not in fitted.note
    assert "does not decide" in fitted.note
    assert "the device's delay was not measured here" in fitted.note


def test_a_host_slack_whose_interval_lies_within_the_band_is_still_no_slack():
    fitted = _host_only(noise=0.02, rounds=30)
    assert _upper_share(fitted) <= bound.BALANCE_BAND
    assert fitted.bound == BoundKind.INCONCLUSIVE
    assert fitted.note is not None
    assert NO_SLACK in fitted.note
    assert "does not decide" not in fitted.note


def test_the_words_follow_the_intervals_upper_end():
    step = 20.8e-3
    assert bound_rule.one_side(Side.HOST, (0.0, 0.07 * step), step).startswith(NO_SLACK)
    wide = bound_rule.one_side(Side.HOST, (0.0, step), step)
    assert NO_SLACK not in wide
    assert "100%" in wide
    assert "20.8 ms" in wide
    assert "does not decide" in wide
    assert "has no interval" in bound_rule.one_side(Side.DEVICE, None, step)


def _stored_with_old_words(fitted: Bound, tmp_path: Path, observations: bool) -> Path:
    return stored_file(dataclasses.replace(fitted, note=FORMER), tmp_path, observations)


def test_a_results_file_that_stored_no_slack_beside_a_wide_interval_is_shown_as_undecided(tmp_path):
    fitted = _host_only(noise=0.4, rounds=6)
    for observations in (True, False):
        [result] = reading.load_results(_stored_with_old_words(fitted, tmp_path, observations)).results
        read = result.bound["a"]
        assert read.bound == BoundKind.INCONCLUSIVE, observations
        assert read.note is not None
        assert NO_SLACK not in read.note, observations
        assert "does not decide" in read.note, observations


def test_a_results_file_whose_narrow_interval_shows_no_slack_reads_as_stored(tmp_path):
    fitted = _host_only(noise=0.02, rounds=30)
    assert fitted.note == FORMER
    for observations in (True, False):
        [result] = reading.load_results(_stored_with_old_words(fitted, tmp_path, observations)).results
        assert result.bound["a"].note == FORMER, observations


def test_a_stored_notes_old_words_are_reworded_from_the_stored_interval_alone():
    """An `ab` file's readings keep no observations (results.bound_change): the words come from the stored interval."""
    step = 20.8e-3
    note = f"no device delay on this backend; {FORMER}"
    wide = bound_rule.one_side_reworded(note, {"host": (0.0, step)}, step)
    assert wide is not None
    assert wide.startswith("no device delay on this backend; the host's slack 0 ns to 20.8 ms (0% to 100% of the step)")
    assert NO_SLACK not in wide
    assert bound_rule.one_side_reworded(note, {"host": (0.0, 0.05 * step)}, step) == note
    both = {"host": (0.0, step), "device": (0.0, step)}
    assert bound_rule.one_side_reworded(note, both, step) == note  # two sides: the one-side words are not the rule's
