"""A step-form row whose samples are so short that the harness's own sync is more than 2% of each says so."""

from __future__ import annotations

import dataclasses

from asyncbench.engine import sanity
from asyncbench.results.model import HarnessCost
from asyncbench.workloads import BUILT_IN
from asyncbench.workloads.step_form import StepWorkload
from tests.support.helpers import ok_result


def _step(x):
    return x


def _row(done_s: float, sync_s: float, steps: int = 20, issue_s: float = 0.0):
    result = ok_result("s[jax,cpu]")
    variant = result.variants["matmul"]
    scaled = dataclasses.replace(variant.done_s, median=done_s)
    result = dataclasses.replace(result, variants={"sync_every=0": dataclasses.replace(variant, done_s=scaled)})
    return dataclasses.replace(result, params={"steps": steps}, harness=HarnessCost(sync_s * 0.8, sync_s, issue_s, 20))


def test_a_short_sample_says_the_harness_s_sync_is_in_each_step_and_how_many_steps_take_it_out():
    """JAX's sync wakes its worker (about 0.1 ms) after 20 inline steps of 8 µs: 39% of a sample."""
    workload = StepWorkload(_step, name="s")
    (line,) = sanity.warnings_of(_row(done_s=260e-6, sync_s=103e-6), workload, {})
    assert "40% of a sample's done time" in line
    # 7.85 µs of work a step: 643 × 7.85 µs + 103 µs is a sample the 103 µs are under 2% of
    assert "steps=643 or more" in line


def test_the_steps_said_are_those_whose_sample_the_cost_is_under_2_percent_of_not_a_multiple_of_the_share():
    """A trial: 12.6 µs of harness in 47.6 µs per 5 steps (27%) said steps=67 (5 × 27% / 2%, as if the cost grew with
    the steps), where a 67-step sample (482 µs) still carries 2.6%: 89 steps of 7 µs are what bring it under 2%."""
    workload = StepWorkload(_step, name="s")
    (line,) = sanity.warnings_of(_row(done_s=47.6e-6, sync_s=12.6e-6, steps=5), workload, {})
    assert "steps=89 or more brings it under 2%" in line
    assert 12.6e-6 / (89 * 7e-6 + 12.6e-6) < 0.02 < 12.6e-6 / (88 * 7e-6 + 12.6e-6)  # the figure said, checked
    (none,) = sanity.warnings_of(_row(done_s=12.0e-6, sync_s=12.6e-6, steps=5), workload, {})
    assert "more than this row's whole sample" in none
    assert "more steps a sample, or more work a step" in none


def test_long_samples_and_built_in_workloads_say_nothing_of_it():
    workload = StepWorkload(_step, name="s")
    assert sanity.warnings_of(_row(done_s=26e-3, sync_s=103e-6), workload, {}) == ()
    assert sanity.warnings_of(_row(done_s=260e-6, sync_s=103e-6), BUILT_IN["matmul"], {}) == ()


def test_a_share_just_above_the_threshold_never_reads_as_the_threshold():
    """2.76 µs of 113 µs (2.4%) was printed '2%', the threshold it was said to be above."""
    workload = StepWorkload(_step, name="s")
    (line,) = sanity.warnings_of(_row(done_s=113e-6, sync_s=2.76e-6), workload, {})
    assert "is 2.4% of a sample's done time" in line
    assert "under 2%" in line
    (line,) = sanity.warnings_of(_row(done_s=100e-6, sync_s=2.004e-6), workload, {})
    assert "is 2.004% of" in line


def test_the_call_and_clock_reads_count_with_the_sync():
    """NumPy's sync with nothing queued is nothing, yet 20 steps of a 0.65 µs op read 1.8-4.5% slow against pyperf
    (docs/measured.md): the no-op sample's call and clock reads are in every sample too."""
    workload = StepWorkload(_step, name="s")
    assert sanity.warnings_of(_row(done_s=13e-6, sync_s=0.05e-6), workload, {}) == ()
    (line,) = sanity.warnings_of(_row(done_s=13e-6, sync_s=0.05e-6, issue_s=0.25e-6), workload, {})
    assert "own cost per sample (300 ns with nothing queued" in line
    assert "is 2.3% of a sample's done time" in line


def test_a_probed_cost_above_the_whole_sample_is_said_as_a_bound_never_as_a_share_over_100_percent():
    """A trial: a JAX step of no work, 33.2 µs a sample of 20 steps, beside a probed cost of 91.5 µs (its sync after an
    idle spell, the costliest condition probed) read '276% of a sample's done time: each per-step time carries
    4.58 µs of it' beside a per-step time of 1.66 µs: a part larger than its whole. The probe bounds the cost from
    above; inside these back-to-back samples it is less, and at most the sample itself."""
    workload = StepWorkload(_step, name="s")
    (line,) = sanity.warnings_of(_row(done_s=33.2e-6, sync_s=91.5e-6), workload, {})
    assert "%" not in line.split(";")[0], line
    assert "more than this row's whole sample (33.2 µs)" in line
    assert "up to 1.66 µs" in line  # the sample's own per step, not the probe's 4.58 µs
    assert "4.58" not in line
    (line,) = sanity.warnings_of(_row(done_s=260e-6, sync_s=103e-6), workload, {})
    assert "each per-step time carries up to 5.15 µs of it" in line  # under the sample: its own share, as a bound


def test_a_bound_reading_beside_a_sample_shorter_than_the_harness_s_sync_is_said_to_be_unreadable_too():
    """A trial: a JAX step of no work read DEVICE-BOUND in 1 of 3 `--bound` runs, its 33 µs sample under the 91.5 µs
    probed sync, whose cost the delays before each step change."""
    from tests.support.bounds import host_bound

    workload = StepWorkload(_step, name="s")
    row = _row(done_s=33.2e-6, sync_s=91.5e-6)
    (plain,) = sanity.warnings_of(row, workload, {})
    assert "--bound" not in plain
    (line,) = sanity.warnings_of(dataclasses.replace(row, bound={"sync_every=0": host_bound()}), workload, {})
    assert sanity.BOUND_TOO in line


def test_a_captured_step_whose_samples_carry_the_harness_s_cost_says_so_as_the_plain_row_does():
    """A trial: `--bound-verify jit` at 5 steps a sample read 41.5 µs a step where a hand loop of the jitted step read
    16.6 µs: the plain row (8.6 ms a step) had no cost to warn of, the captured step's short samples carried the
    harness's sync, and nothing said so."""
    from asyncbench.results.bound import Bound, BoundKind, Verified, VerifyHow

    workload = StepWorkload(_step, name="s")
    plain = _row(done_s=43e-3, sync_s=103e-6, steps=5)
    assert sanity.warnings_of(plain, workload, {}) == ()
    captured = Verified(VerifyHow.JIT, step_s=41.5e-6, step_ci_s=(33.4e-6, 82.6e-6), pairs=((8.6e-3, 41.5e-6),))
    bound = Bound("sync_every=0", BoundKind.INCONCLUSIVE, step_s=8.6e-3, rounds=10, steps_per_call=5, verified=captured)
    (line,) = sanity.warnings_of(dataclasses.replace(plain, bound={"sync_every=0": bound}), workload, {})
    assert line.startswith("--bound-verify's captured step: the harness's own cost per sample"), line
    assert "50% of a sample's done time" in line  # 103 µs of 5 × 41.5 µs
    unhurt = dataclasses.replace(bound, verified=dataclasses.replace(captured, step_s=5e-3))
    assert sanity.warnings_of(dataclasses.replace(plain, bound={"sync_every=0": unhurt}), workload, {}) == ()
