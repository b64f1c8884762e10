"""The ceiling checked (`run --bound --bound-verify jit|compile|graph`): how much of it a captured step reached.

The ceiling of `--bound` (verdicts.bound) is a counterfactual: cutting host work can save at most the device's slack
s, so the step cannot get faster than its floor, T0 − s. `--bound-verify` runs the counterfactual where the backend can
capture the step (jax.jit, torch.compile, a CUDA graph: Backend.capture_step) and times the captured step in rounds of
its own, each with a plain sample beside it (measure.verification): per round the saving T0 − T_verify pairs, so a
machine that drifts between rounds cancels out.

    reached = median(T0 − T_verify over rounds) / s

1 is the whole ceiling; 0 nothing; above 1 beyond its interval the captured step ran faster than the floor, which
removing host cost alone cannot do: the capture changed the device's work too (fused ops, another kernel). Its
interval: each end is the worse of the saving's interval (the median's, distribution-free) and the slack's
(the bootstrap's), so it is at least as wide as either; a slack whose interval reaches 0 leaves it open (None), and
the line says the saving and the slack it rests on (before "faster than the floor", where it is that too). A slack
of 0 is said from its interval: "no slack" only where that is [0, 0], else what it may save up to (NO_SLACK). A
slack without an interval (fewer perturbation rounds than an interval needs) judges nothing: the line says the
saving in time beside it and that the floor was not judged (NOT_JUDGED), never "faster than the floor". A saving
said beside the two steps is named the median of the paired savings, and the steps each side's own median (PAIRED,
SIDES_MEDIANS): the difference of the medians is not the median of the differences.
"""

from __future__ import annotations

import dataclasses
import math
import re
import statistics
from typing import Sequence

from asyncbench.results import stats, units
from asyncbench.results.bound import Bound, BoundKind, Side, Verified, VerifyHow
from asyncbench.verdicts import bound as fitting

#: what the line says of a capture on a synchronous backend: it is timed, but there is no ceiling
SYNCHRONOUS = "synchronous: no ceiling to compare with"
#: the plain step in the verification rounds against the timed rounds' plain step, beyond which (either way) the
#: line says the captured step's runs disturbed it: on a 2-core CPU a torch.compile'd step's plain neighbours took
#: 0.75-14 ms against 0.77 ms in the timed rounds (its OpenMP threads left spinning), far past a round's noise
DISTURBED = 1.5
#: what the line says of a capture that ran faster than the floor beyond its interval
PAST_FLOOR = "faster than the floor (step − the device's slack): it changed the device's work too"
#: what a saving beside the sides' medians is: the median over rounds of each round's plain − captured, which need
#: not be the difference of the two medians (a note read "saved 647 µs a step … (captured 4.25 ms vs plain 7.39 ms a
#: step)", and a reader subtracting got 3.14 ms)
PAIRED = "the median of the rounds' paired savings"
#: what the two step times beside it are: each side's own median over the rounds
SIDES_MEDIANS = "the sides' own medians"
#: what the line says where the device's slack and its whole interval are 0: cutting host work surely saves nothing
NO_SLACK = "the device has no slack: cutting host work cannot save anything"
#: what the line says where the device's slack is 0 without a knee (verdicts.bound.floor_unmeasured): the floor is not
#: measured, so neither "no slack: cannot save anything" nor "faster than the floor" (a step jit ran 123× faster was
#: said both ways of one slack of 0); the saving is said in time. It begins as results.bound_held.NOTE_PARTS's
#: "the device's slack is " does
NO_FLOOR = "the device's slack is 0 without a knee, so the floor (step − that slack) is not measured"
#: what the line says where the device's slack has no interval (too few perturbation rounds): passing the floor is a
#: claim on two intervals, and a point estimate of the slack (a "0 ns ±?" from one round) bears none
NOT_JUDGED = "whether it ran faster than the floor (step − the device's slack) is not judged: the slack has no interval"
#: how torch.compile's caveat begins (backends.step_capture): the backend's words, appended to the note after the
#: tool's own parts; its example is dynamo's and may hold anything, "; " included
CAVEAT = re.compile(r"compile: \d+ graph break\(s\): the compiled step runs partly eagerly; e\.g\. ")
#: how the part said of a plain step the captured one's runs disturbed begins (`verified`): the note's last part
DISTURBED_PART = "the plain step took "


def verified(
    how: VerifyHow | str,
    pairs: Sequence[tuple[float, float]],
    bound: Bound,
    refused: str | None = None,
    confidence: float = stats.CONFIDENCE,
    timed_step_s: float | None = None,
    caveat: str | None = None,
) -> Verified:
    """A variant's Verified from its rounds' (plain, captured) times per step and its bound; `refused`: why the step
    was not captured (then nothing was timed); `timed_step_s`: the plain step's median in the timed rounds, against
    which a plain step the captured one's runs disturbed is said (DISTURBED); `caveat`: what the capture said of a
    step it did capture (torch.compile's graph breaks: backends.step_capture), added to the note."""
    found = _verified(how, pairs, bound, refused, confidence)
    if caveat is not None and refused is None:
        found = dataclasses.replace(found, note="; ".join(filter(None, (found.note, caveat))))
    said = _disturbed(found.pairs, timed_step_s)
    if said is not None:
        found = dataclasses.replace(found, note="; ".join(filter(None, (found.note, said))))
    return found


def rebuilt(stored: Verified, bound: Bound, timed_step_s: float | None, confidence: float = stats.CONFIDENCE) -> Verified:
    """A stored verification made again by `verified` from its stored pairs, the stored bound and the plain step's
    median in the timed rounds (`timed_step_s`, from the stored samples; None: not said): a reader shows the note,
    the share and the floor as the tool writes them from these figures, never as the file wrote them (an edited
    "saved 9.99 s" beside pairs that give 664 µs). Two parts are not the tool's words and are kept as stored: a
    refused capture's reason (nothing was timed: the whole `stored` is returned) and torch.compile's graph-break
    caveat (the backend's, `CAVEAT`), put back where the writer puts it. `confidence`: the run's; `run` writes every
    verification at stats.CONFIDENCE, which is the default."""
    if stored.step_s is None or not stored.pairs:
        return stored  # refused, or no round taken: the backend's reason (or that), as stored
    caveat = _caveat(stored.note) if stored.how == VerifyHow.COMPILE else None
    return verified(stored.how, stored.pairs, bound, None, confidence, timed_step_s, caveat)


def _caveat(note: str | None) -> str | None:
    """torch.compile's caveat in a stored note: from where it begins to the part said of a disturbed plain step (which
    `verified` says again from the figures), or to the end."""
    found = CAVEAT.search(note or "")
    if found is None or note is None:
        return None
    said = note[found.start() :]
    end = said.rfind("; " + DISTURBED_PART)
    return said[:end] if end >= 0 else said


def _disturbed(pairs: Sequence[tuple[float, float]], timed_step_s: float | None) -> str | None:
    """What the note says of a plain step whose time in the verification rounds is not the timed rounds' (DISTURBED),
    None where it is, or where either is not there."""
    if not pairs or timed_step_s is None or timed_step_s <= 0:
        return None
    plain_s = statistics.median(p for p, _ in pairs)
    if 1 / DISTURBED <= plain_s / timed_step_s <= DISTURBED:
        return None
    return (
        f"{DISTURBED_PART}{units.seconds(plain_s)} in these rounds against {units.seconds(timed_step_s)} in the "
        "timed ones: the captured step's runs disturbed it, so the saving is not the capture's alone"
    )


def _verified(how: VerifyHow | str, pairs: Sequence[tuple[float, float]], bound: Bound, refused: str | None, confidence: float) -> Verified:
    how = VerifyHow(how)
    if refused is not None or not pairs:
        return Verified(how, note=refused or "the captured step was not timed (no round taken)")
    plain = [p for p, _ in pairs]
    captured = [c for _, c in pairs]
    step_s = statistics.median(captured)
    step_ci = stats.median_ci(captured, confidence)
    base = Verified(how, step_s=step_s, step_ci_s=step_ci, pairs=tuple(pairs))
    # each side's own median: not the median of the paired savings, which a saving beside them is (PAIRED)
    versus = f"{SIDES_MEDIANS}: captured {units.seconds(step_s)} vs plain {units.seconds(statistics.median(plain))} a step"
    if bound.bound == BoundKind.SYNCHRONOUS:
        return _noted(base, f"{SYNCHRONOUS} ({versus})")
    device = bound.side(Side.DEVICE)
    if device is None:
        return _noted(base, f"no device slack measured: no ceiling to compare with ({versus})")
    savings = [p - c for p, c in pairs]
    saving = statistics.median(savings)
    saving_ci = stats.median_ci(savings, confidence)
    saved = _saved(saving, saving_ci)
    if bound.shares_cores:  # the device's slack does not measure the floor there (NO_SHARED_CEILING): nothing to pass,
        # whatever the rounds or the slack. A trial: "faster than the floor … it changed the device's work too" of jit
        # on a CPU, under a table that said no ceiling was measured, where jit had removed host dispatch (1797 µs
        # eager, 7 µs jit a step); another's, after 4 rounds: "… is not judged: the slack has no interval"
        return _noted(base, f"{fitting.NO_SHARED_CEILING}: {how} {saved} ({PAIRED}; {versus})")
    if device.slack_ci_s is None:  # no claim on the floor from a point estimate: the saving, in time, beside it
        said = f"{NOT_JUDGED}: it {saved}, against a device slack of {units.seconds(device.slack_s)} ±?"
        if device.slack_s <= 0:
            return _noted(base, f"{said} ({PAIRED}; {versus})")
        return Verified(how, step_s, step_ci, saving / device.slack_s, None, said, tuple(pairs))
    if fitting.floor_unmeasured(bound):  # a slack of 0 without a knee: no floor to pass, nor to fall short of
        return _noted(base, f"{NO_FLOOR}: {how} {saved} ({PAIRED}; {versus})")
    # the floor passed beyond both intervals: the saving's low end above the slack's high end
    past = saving_ci is not None and saving_ci[0] > device.slack_ci_s[1]
    if device.slack_s <= 0:  # no share of a slack of 0 to state: the paired saving measured, in time
        if past:
            said = f"{PAST_FLOOR}: {how} {saved}"
        elif device.slack_ci_s[1] <= 0:  # [0, 0]: no slack, surely
            said = f"{NO_SLACK}: {how} {saved}"
        else:  # ~0 whose interval reaches above: said from the interval, as the table and the ceiling beside it are
            said = f"{_may_save(device.slack_ci_s[1], bound)}; {how} {saved} ({PAIRED}; {versus})"
            return dataclasses.replace(_noted(base, said), past_floor=past)
        return dataclasses.replace(_noted(base, f"{said} ({PAIRED}; {versus})"), past_floor=past)
    reached = saving / device.slack_s
    reached_ci = None
    if saving_ci is not None and device.slack_ci_s is not None and device.slack_ci_s[0] > 0:
        ends = [s / d for s in saving_ci for d in device.slack_ci_s]
        reached_ci = (min(ends), max(ends))
    note = None
    if reached_ci is None:  # a share of a slack that may be 0 is unbounded: the saving itself, in time
        low, high = device.slack_ci_s
        # the slack's estimate, which the share is of, shown where its interval reaches 0 (not '~0 [≤ x]' beside a share)
        slack = _from_zero(device.slack_s, high) if low <= 0 else units.with_bounds(device.slack_s, device.slack_ci_s, "s")
        note = f"no interval for the share: it {saved}, against a device slack of {slack}"
        if past:  # past the floor beyond both intervals: said too, after what the share without an interval rests on
            note = f"{note}; {PAST_FLOOR}"
    elif past:
        note = PAST_FLOOR
    elif reached_ci[1] < 0:
        note = f"slower than the plain step ({versus})"
    return Verified(how, step_s, step_ci, reached, reached_ci, note, tuple(pairs), past)


def _may_save(high_s: float, bound: Bound) -> str:
    """What a device slack of ~0 whose interval reaches `high_s` leaves cutting host work, said from the interval
    (not from its estimate of 0, which the ceiling's interval beside it contradicts): "the device's slack is ~0
    [≤ 1.1 ms]: cutting host work may save up to that (ceiling ≤ 1.68×)"; no ceiling quoted where the bound has none
    to show (verdicts.bound.no_ceiling: the table's column reads '–')."""
    said = f"the device's slack is {units.with_bounds(0.0, (0.0, high_s), 's')}: cutting host work may save up to that"
    if bound.ceiling_ci is None or fitting.no_ceiling(bound):  # the table's ceiling reads '–': none to quote
        return said
    top = bound.ceiling_ci[1]
    return f"{said} (ceiling ≤ {units.quantity(top, 'x')})" if math.isfinite(top) else f"{said} (a ceiling with no upper bound)"


def _saved(saving: float, interval: tuple[float, float] | None) -> str:
    """The median saving a step with its interval, in words that state a saving or a loss only where the interval
    excludes 0: 'saved 651 µs [600–700] a step', 'lost 200 µs [150–250] a step'. Where the interval holds 0, no
    difference is shown, and the words say '~0' as the threshold checks' lines do (verdicts.bound_checks), with the
    median the share beside it is read from ('reached 30%' of a 2.18 ms slack is a median saving of 651 µs): 'changed
    the step by ~0 a step [from 200 µs lost to 1.48 ms saved; median 651 µs saved]' where it reaches either way,
    'saved ~0 a step [≤ 1.48 ms; median 651 µs]' where it starts at 0 (a trial printed "jit lost 5.21 ms a step
    [from 12.6 ms lost to 9.54 ms saved]", a loss its own interval does not show). Never a negative time."""
    if interval is None:
        return f"saved {units.seconds(saving)} ±? a step" if saving >= 0 else f"lost {units.seconds(-saving)} ±? a step"
    low, high = interval
    if not low <= 0 <= high or low == high == 0:  # an interval off 0 (or [0, 0]): as any time with its interval
        if saving < 0:
            return f"lost {units.with_bounds(-saving, (-high, -low), 's')} a step"
        return f"saved {units.with_bounds(saving, interval, 's')} a step"
    verb, amount = ("saved", saving) if saving > 0 else ("lost", -saving)
    median = "" if saving == 0 else f"; median {units.seconds(amount)}"
    if low < 0 < high:
        either_way = f"from {units.seconds(-low)} lost to {units.seconds(high)} saved"
        return f"changed the step by {units.NOT_DISTINGUISHABLE} a step [{either_way}{median}{'' if saving == 0 else ' ' + verb}]"
    if low == 0:  # a saving of no more than `high`
        return f"saved {units.NOT_DISTINGUISHABLE} a step [≤ {units.seconds(high)}{median}]"
    return f"lost {units.NOT_DISTINGUISHABLE} a step [≤ {units.seconds(-low)}{median}]"  # of no more than −low


def _from_zero(value: float, high: float) -> str:
    """A time above 0 whose interval is [0, high], its estimate kept: '651 µs [0–1.48 ms]', '2.18 ms [0–3]' (a share
    beside it is of the estimate, which '~0 [≤ x]' does not show)."""
    text, end = units.seconds(value), units.seconds(high)
    unit = text.split(" ", 1)[1]
    return f"{text} [0–{end.removesuffix(' ' + unit) if end.endswith(' ' + unit) else end}]"


def _noted(base: Verified, note: str) -> Verified:
    return Verified(base.how, base.step_s, base.step_ci_s, None, None, note, base.pairs)
