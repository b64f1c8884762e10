"""How much of the ceiling a captured step reached (verdicts.verified), from hand-made bounds and round pairs:
reached = median(T0 − T_verify) / the device's slack, its interval the worse ends of the two; faster than the floor
flagged; a synchronous backend timed with no ceiling; a refused capture kept as its line."""

from __future__ import annotations

import dataclasses

import pytest

from asyncbench.results.bound import Bound, VerifyHow
from asyncbench.verdicts import verified
from tests.support.bounds import device_bound, host_bound, synchronous


def _pairs(plain_s: float, captured_s: float, rounds: int = 12, spread: float = 2e-6) -> list[tuple[float, float]]:
    return [(plain_s + spread * (r % 3), captured_s + spread * ((r + 1) % 3)) for r in range(rounds)]


def test_a_capture_that_saved_most_of_the_devices_slack_reached_that_share_of_the_ceiling() -> None:
    bound = host_bound()  # step 1 ms, device slack 300 µs [280–320]
    found = verified.verified("jit", _pairs(0.001, 0.00076), bound)
    assert found.how == VerifyHow.JIT
    assert found.step_s == pytest.approx(0.000762)
    assert found.step_ci_s is not None
    assert found.step_ci_s[0] <= found.step_s <= found.step_ci_s[1]
    assert found.reached == pytest.approx(0.24 / 0.3, abs=0.01)
    assert found.reached_ci is not None
    low, high = found.reached_ci
    assert low < found.reached < high
    assert low == pytest.approx(0.236 / 0.32, abs=0.01)
    assert high == pytest.approx(0.244 / 0.28, abs=0.01)
    assert found.note is None
    assert not found.past_floor
    assert len(found.pairs) == 12


def test_a_capture_faster_than_the_floor_is_flagged() -> None:
    found = verified.verified("compile", _pairs(0.001, 0.0005), host_bound())  # saved 500 µs of a 300 µs slack
    assert found.past_floor
    assert found.note == verified.PAST_FLOOR
    assert "changed the device's work too" in found.note


def test_a_capture_slower_than_the_plain_step_says_so() -> None:
    found = verified.verified("jit", _pairs(0.001, 0.0012), host_bound())
    assert found.reached is not None
    assert found.reached < 0
    assert found.note is not None
    assert found.note.startswith("slower than the plain step")


def test_a_synchronous_backend_is_timed_with_no_ceiling_to_compare_with() -> None:
    found = verified.verified("compile", _pairs(0.002, 0.0015), synchronous())
    assert found.step_s == pytest.approx(0.0015, abs=3e-6)
    assert (found.reached, found.reached_ci) == (None, None)
    assert found.note is not None
    assert found.note.startswith("synchronous: no ceiling to compare with (the sides' own medians: captured 1.50 ms vs plain 2.00 ms")


def test_a_device_without_slack_has_no_share_to_reach() -> None:
    # a device slack of [0, 0] past which each delay costs the step the whole delay (one bottleneck): no slack, surely
    # (one costing part of each delay has no knee, and no floor: test_bound_no_knee)
    none_at_all = _with_device_slack(0.0, (0.0, 0.0))
    host, device = none_at_all.sides
    none_at_all = dataclasses.replace(none_at_all, sides=(host, dataclasses.replace(device, cost_past=1.0, cost_past_ci=(0.95, 1.05))))
    found = verified.verified("jit", _pairs(0.0011, 0.0011), none_at_all)
    assert found.reached is None
    assert found.note is not None
    assert found.note.startswith(verified.NO_SLACK)


def test_a_device_slack_of_about_zero_whose_interval_reaches_above_is_said_from_its_interval() -> None:
    """JAX: the table read '~0 [≤ 1.1 ms]' and '≤ 1.00× [1.00–1.68]', the line 'the device has no slack: cutting
    host work cannot save anything', said from the estimate its own interval (and the ceiling beside it) denies."""
    bound = dataclasses.replace(_with_device_slack(0.0, (0.0, 0.001095)), step_s=0.00272, ceiling=1.0, ceiling_ci=(1.0, 1.68))
    found = verified.verified("jit", _pairs(0.00280, 0.00276), bound)
    assert found.reached is None
    assert found.note is not None
    assert "has no slack" not in found.note
    assert "cannot save anything" not in found.note
    assert found.note.startswith(
        "the device's slack is ~0 [≤ 1.09 ms]: cutting host work may save up to that (ceiling ≤ 1.68×); "
        "jit saved 38.0 µs [38.0–44.0] a step"
    ), found.note


def test_a_refused_capture_keeps_its_line_and_no_time() -> None:
    found = verified.verified("jit", [], host_bound(), refused="not jitted: the step reads a value on the host at t.py:3")
    assert (found.step_s, found.reached, found.pairs) == (None, None, ())
    assert found.note == "not jitted: the step reads a value on the host at t.py:3"


def test_a_capture_faster_than_a_floor_of_no_slack_is_flagged_not_given_a_share() -> None:
    """A jitted step whose work XLA folded away (its inputs closure constants) ran far under a step with no slack."""
    found = verified.verified("jit", _pairs(0.0011, 0.00003), device_bound())  # device slack ~0 [≤ 12 µs]
    assert found.reached is None
    assert found.past_floor
    assert found.note is not None
    assert found.note.startswith(verified.PAST_FLOOR)


def test_a_capture_past_the_floor_with_a_share_without_an_interval_says_what_the_share_rests_on() -> None:
    """A planted run: 'reached 4338% ±? of the ceiling; faster than the floor …', where the guide promised the clause
    'no interval for the share: it saved … against a device slack of …' that the share without an interval rests on."""
    found = verified.verified("jit", _pairs(0.001, 0.0005), _with_device_slack(0.00002, (0.0, 0.00003)))
    assert found.reached == pytest.approx(25, abs=1)
    assert found.reached_ci is None
    assert found.past_floor
    assert found.note is not None
    assert found.note.startswith("no interval for the share: it saved 498 µs [498–504] a step, against a device slack of 20.0 µs [0–30.0]")
    assert found.note.endswith(verified.PAST_FLOOR)


def test_a_plain_step_the_captured_ones_runs_disturbed_is_said() -> None:
    """In the verification rounds the plain step ran 3x its timed-rounds time: the saving is not the capture's alone."""
    found = verified.verified("compile", _pairs(0.003, 0.00015), synchronous(), timed_step_s=0.001)
    assert found.note is not None
    assert "the plain step took 3.00 ms in these rounds against 1.00 ms in the timed ones" in found.note
    calm = verified.verified("compile", _pairs(0.0011, 0.00015), synchronous(), timed_step_s=0.001)
    assert "disturbed" not in (calm.note or "")


def test_a_share_of_a_slack_whose_interval_reaches_zero_has_no_interval_and_says_the_saving_in_time() -> None:
    bound = dataclasses.replace(
        host_bound(), sides=(host_bound().sides[0], dataclasses.replace(host_bound().sides[1], slack_ci_s=(0.0, 0.00047)))
    )
    found = verified.verified("jit", _pairs(0.001, 0.0007), bound)
    assert found.reached == pytest.approx(1.0, abs=0.02)
    assert found.reached_ci is None
    assert found.note is not None
    assert found.note == "no interval for the share: it saved 298 µs [298–304] a step, against a device slack of 300 µs [0–470]"


def _with_device_slack(slack_s: float, slack_ci_s: tuple[float, float]) -> Bound:
    host, device = host_bound().sides
    return dataclasses.replace(host_bound(), sides=(host, dataclasses.replace(device, slack_s=slack_s, slack_ci_s=slack_ci_s)))


def test_a_saving_whose_interval_reaches_zero_shows_the_median_the_share_is_read_from() -> None:
    """JAX on a 2-core CPU: 'reached 30% ±? of the ceiling … it saved ~0 [≤ 1.48 ms] a step': the 30% was a median
    saving of 651 µs over a 2.18 ms slack, not shown; the median is shown beside the '~0' its interval allows (a
    saving or loss is stated only where the interval excludes 0)."""
    savings = (-3e-4, -1e-4, 0.0, 2e-4, 4e-4, 6e-4, 7.02e-4, 9e-4, 1.1e-3, 1.48e-3, 1.6e-3, 2e-3)
    pairs = [(0.005, 0.005 - saving) for saving in savings]
    found = verified.verified("jit", pairs, _with_device_slack(0.00218, (0.0, 0.003)))
    assert found.reached == pytest.approx(0.651 / 2.18, abs=0.001)
    assert found.reached_ci is None
    assert (
        found.note == "no interval for the share: it saved ~0 a step [≤ 1.48 ms; median 651 µs], against a device slack of 2.18 ms [0–3.00]"
    )
    # an interval reaching below 0: no saving stated, the median still shown, the low end as time lost, never a negative time
    below = [(0.005, 0.005 - saving) for saving in (-4e-4, -3e-4, -2e-4, *savings[3:])]
    said = verified.verified("jit", below, _with_device_slack(0.00218, (0.0, 0.003))).note
    assert said is not None
    assert said.startswith(
        "no interval for the share: it changed the step by ~0 a step [from 200 µs lost to 1.48 ms saved; median 651 µs saved]"
    ), said
    assert "−" not in said
    assert "-" not in said
    # a median of 0: no median said beside the '~0'
    zero = [(0.005, 0.005 - saving) for saving in (-2e-4, -1e-4, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1e-4, 2e-4, 3e-4)]
    said = verified.verified("jit", zero, _with_device_slack(0.00218, (0.0, 0.003))).note
    assert said is not None
    assert said.startswith("no interval for the share: it saved ~0 a step [≤ 100 µs],"), said


def _one_round(bound: Bound) -> Bound:
    """The bound with its device's slack as one perturbation round leaves it: a point estimate, no interval."""
    host, device = bound.sides
    return dataclasses.replace(bound, rounds=1, sides=(host, dataclasses.replace(device, slack_ci_s=None)))


def test_a_capture_past_a_slack_without_an_interval_is_not_called_faster_than_the_floor() -> None:
    """The trial: 'device 0 ns ±? (0%)' from one round, yet 'faster than the floor … it changed the device's work'."""
    found = verified.verified("jit", _pairs(0.0011, 0.00003), _one_round(device_bound()))  # device slack 0 ±?
    assert not found.past_floor
    assert found.note is not None
    assert verified.PAST_FLOOR not in found.note
    assert found.note.startswith(f"{verified.NOT_JUDGED}: it saved 1.068 ms [1.068–1.074] a step, against a device slack of 0 ns ±?")
    assert found.reached is None


def test_a_share_of_a_slack_without_an_interval_keeps_its_point_and_judges_no_floor() -> None:
    found = verified.verified("compile", _pairs(0.001, 0.0005), _one_round(host_bound()))  # saved 500 µs of 300 µs ±?
    assert not found.past_floor
    assert found.reached == pytest.approx(0.5 / 0.3, abs=0.02)
    assert found.reached_ci is None
    assert found.note is not None
    assert found.note.startswith(verified.NOT_JUDGED)
    assert "against a device slack of 300 µs ±?" in found.note


def test_a_median_paired_saving_beside_the_sides_medians_says_which_is_which() -> None:
    """sync_every=1 on JAX: 'it saved 647 µs a step … (captured 4.25 ms vs plain 7.39 ms a step)': the saving is the
    median of the paired differences, the two steps each side's own median, and a reader subtracting got 3.14 ms."""
    bound = dataclasses.replace(_with_device_slack(0.0, (0.0, 0.001095)), step_s=0.0074, ceiling=1.0, ceiling_ci=(1.0, 1.17))
    # plain and captured steps drift together between rounds: the paired savings stay small, the medians apart
    pairs = [(0.004 + 0.001 * r, 0.0035 + 0.001 * r - (0.0006 if r < 6 else -0.0004)) for r in range(12)]
    found = verified.verified("jit", pairs, bound)
    assert found.note is not None
    assert f"({verified.PAIRED}; {verified.SIDES_MEDIANS}: captured " in found.note, found.note
    assert "jit saved" in found.note.split(verified.PAIRED)[0]


def test_a_capture_past_a_floor_of_no_slack_still_states_the_saving_it_measured() -> None:
    """A user saw 'jit: 21.9 µs [14.9–234] a step; faster than the floor …: it changed the device's work too (the
    sides' own medians: captured 21.9 µs vs plain 1.90 ms a step)': no share to state, and no saving either."""
    none_at_all = _with_device_slack(0.0, (0.0, 0.0))
    host, device = none_at_all.sides
    none_at_all = dataclasses.replace(none_at_all, sides=(host, dataclasses.replace(device, cost_past=1.0, cost_past_ci=(0.95, 1.05))))
    past = verified.verified("jit", _pairs(0.0019, 0.0000219), none_at_all)
    assert past.past_floor
    assert past.note is not None
    assert past.note.startswith(verified.PAST_FLOOR)
    assert "jit saved 1.88 ms" in past.note
    assert verified.PAIRED in past.note
    nothing = verified.verified("jit", _pairs(0.0011, 0.0011), none_at_all)
    assert nothing.note is not None
    assert nothing.note.startswith(verified.NO_SLACK)
    assert "jit changed the step by ~0 a step [from 2.00 µs lost to 4.00 µs saved; median 2.00 µs lost]" in nothing.note


def test_a_capture_on_a_device_sharing_the_hosts_cores_is_never_said_past_a_floor_nor_given_a_share() -> None:
    """A trial: jit of 100 eager adds on a CPU (1797 µs eager, 7 µs jit a step) read "faster than the floor …: it
    changed the device's work too" under a table saying no ceiling was measured on shared cores: what the device's
    slack does not measure is no floor to pass. The saving is said in time, beside why there is no share."""
    bound = dataclasses.replace(host_bound(), shares_cores=True)  # device slack 300 µs [280–320]
    found = verified.verified("jit", _pairs(0.001, 0.0005), bound)  # saved 500 µs: past that slack
    assert not found.past_floor
    assert (found.reached, found.reached_ci) == (None, None)
    assert found.note is not None
    assert found.note.startswith("no ceiling on a device that shares the host's cores")
    assert ": jit saved 498 µs [498–504] a step" in found.note
    assert verified.PAST_FLOOR not in found.note


def test_a_capture_on_shared_cores_says_why_there_is_no_floor_whatever_the_rounds() -> None:
    """A trial: `--bound-verify jit` on JAX on a CPU after 4 rounds said "whether it ran faster than the floor … is not
    judged: the slack has no interval", where the docs (and the same run with 5 rounds) say there is no floor on
    shared cores at all; and a slack of 0 without a knee said there was no floor for that other reason."""
    for bound in (_one_round(host_bound()), _one_round(device_bound()), device_bound()):
        found = verified.verified("jit", _pairs(0.001, 0.0005), dataclasses.replace(bound, shares_cores=True))
        assert found.note is not None
        assert found.note.startswith("no ceiling on a device that shares the host's cores"), found.note
        assert verified.NOT_JUDGED not in found.note
        assert (found.reached, found.past_floor) == (None, False)


def _savings(savings: tuple[float, ...]) -> list[tuple[float, float]]:
    return [(0.02, 0.02 - saving) for saving in savings]


#: the trial's JAX step on a CPU, sync_every=0: paired savings whose median is −5.21 ms and whose interval is
#: [−12.6 ms, +9.54 ms]: "jit lost 5.21 ms a step [from 12.6 ms lost to 9.54 ms saved]" stated a loss its interval
#: does not show
STRADDLING = (-0.02, -0.015, -0.0126, -0.011, -0.009, -0.00521, -0.00521, -0.002, 0.001, 0.00954, 0.011, 0.015)


def test_a_saving_whose_interval_holds_zero_states_no_loss_nor_saving() -> None:
    bound = dataclasses.replace(host_bound(), shares_cores=True)  # no share: the saving in time is the whole reading
    found = verified.verified("jit", _savings(STRADDLING), bound)
    assert found.note is not None
    said = found.note.split(f" ({verified.PAIRED}")[0]
    assert "jit lost" not in said, said
    assert "jit saved" not in said, said
    assert said.endswith("jit changed the step by ~0 a step [from 12.6 ms lost to 9.54 ms saved; median 5.21 ms lost]"), said
    # an interval wholly on one side still states the loss, or the saving
    assert "jit lost 15.2 ms [" in (verified.verified("jit", _savings(tuple(s - 0.01 for s in STRADDLING)), bound).note or "")
    assert "jit saved 498 µs [498–504] a step" in (verified.verified("jit", _pairs(0.001, 0.0005), bound).note or "")
