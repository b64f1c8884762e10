"""How a result says it was taken — its sampling (rounds, why it stopped), the steps each sample ran, the harness's
own cost — each held to what a run of asyncbench can have written (results.records checks a result key by key and
calls these): a count no measurement reaches, more rounds than the samples came from, a step count that is not the
one its per-step figures were divided by, a sync above its own interval, are edits, refused in one line naming the
key before anything is shown.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.results import case_held, fields, recordable, step_figures
from asyncbench.results.fields import At
from asyncbench.results.model import StopReason

# A count (samples, rounds) above this is no measurement's: a billion samples of the fastest op take minutes.
MAX_COUNT = 10**9
STOP_REASONS = [str(reason) for reason in StopReason]
#: the keys of a case's sampling (model.Sampling's fields); all but lag1_autocorrelation (None where absent) needed, as Sampling takes them
SAMPLING_KEYS = frozenset({"rounds", "elapsed_s", "stopped_by", "rel_noise", "max_rel_noise", "max_time_s", "lag1_autocorrelation"})
SAMPLING_NEEDED = ("rounds", "elapsed_s", "stopped_by", "rel_noise", "max_rel_noise", "max_time_s")
# The widest noise a run can write (rel_noise, stats.relative_ci_half_width: half its median's 95% interval over the
# median): an interval no wider than the longest time a run measures (a year, recordable.MAX_MEASURED_S) about a
# positive median no shorter than half the nanosecond its clocks tick in (the middle of a 0 and a 1 ns sample): a
# year over a nanosecond, about 3.2e16. The noise target (max_rel_noise, a
# setting) is held to it too: since 403c990 a target of 1 or more is refused as not a fraction, but an older run took
# a plain 3 (meant as 3%), and a target wider than any noise is met by every run and was no setting's. A wider share is
# an edit (`show` printed ±1e+300%).
MAX_REL_NOISE = recordable.MAX_MEASURED_S / recordable.SAMPLE_ROUNDING_S


def check_steps(result: Mapping[str, Any], at: At) -> None:
    """A step form's `steps` (the user's steps one sample runs, what every per-step figure was divided by: its
    `step_s_kK` metrics, a census's or a bound's `steps_per_call`) is a count of at least one, and the count those
    figures say they were divided by, where they took rounds. `steps: -20` beside per-step times would be shown as if measured.
    `at`: the result's (a census or bound that is no object is named at its own key, not at `params.steps`)."""
    stepped = any(name.startswith(step_figures.STEP_METRIC) for name in result.get("metrics") or {})
    if not stepped or "steps" not in (result.get("params") or {}):
        return
    at_steps = at / "params" / "steps"
    steps = fields.count(result["params"]["steps"], at_steps)
    if steps < 1:
        at_steps.fail("a sample runs at least one step")
    for kind in ("syncs", "bound"):
        for variant, stored in fields.optional_mapping(result.get(kind), at / kind).items():
            if not isinstance(stored, Mapping) or not stored.get("rounds"):
                continue  # no rounds divided by anything (a synchronous backend's census says 1): checked later
            said = stored.get("steps_per_call")
            if said is not None and said != steps:
                at_steps.fail(f"{steps} steps a sample, but its {kind} of {variant} divided by {said!r}: {recordable.NOT_WRITTEN}")


def check_rounds_taken(sampling: Any, timed: int, at: At, variants: Mapping[str, Any]) -> None:
    """The rounds a case says it took (checked by _check_sampling before) are rounds its samples came from: each
    timed round adds one sample to every variant (measure.timing), so a case keeps as many samples as it took
    rounds. More rounds than any variant's samples ("after 100000 rounds" beside 17 samples) were never taken, and
    a variant with other than the rounds' samples (check_samples_per_round) was no run's. `at`: the result's."""
    if sampling and timed and sampling["rounds"] > timed:  # no samples kept (an error row): nothing to hold it to
        (at / "sampling" / "rounds").fail(f"{sampling['rounds']} rounds said, {timed} kept in the samples: {recordable.NOT_WRITTEN}")
    check_samples_per_round(sampling, variants, at / "variants")


def check_samples_per_round(sampling: Any, variants: Mapping[str, Any], at: At) -> None:
    """Each variant's count of timed samples (its done and issue times kept, and their summaries' `n`) is the case's
    rounds: measure.timing's timed round adds one sample to every variant, warm-up rounds add none, and none is
    dropped after. One variant holding 1,220,000 samples beside others' 61 and 61 rounds is no run's (its interval
    was shown as measured): refused in one line naming the variant."""
    if not sampling:
        return
    rounds = sampling["rounds"]
    for name, variant in variants.items():
        samples = variant.get("samples") or {}
        for clock in ("done_s", "issue_s"):
            kept = samples.get(clock)
            count, where = (
                (len(kept), at / name / "samples" / clock) if kept else ((variant.get(clock) or {}).get("n"), at / name / clock / "n")
            )
            if count is not None and count != rounds:
                where.fail(
                    f"{count} samples, but the case took {rounds} rounds (sampling.rounds), one sample of every variant each: "
                    f"{recordable.NOT_WRITTEN}"
                )


def check_harness(raw: Any, at: At) -> None:
    """The harness's own cost (schema 7; model.HarnessCost): times, not negative, of n no-op samples, with the median
    sync (`sync_s`) no higher than the upper end of its own 95% interval (`sync_high_s`, its upper quartile where the
    samples drifted: either lies at or above the median). A sync of 100 s beside a high end of 76 µs is an edit."""
    if not raw:
        return
    harness = fields.mapping(raw, at)
    for key in ("sync_s", "sync_high_s", "issue_s"):
        if recordable.measured_time(harness.get(key), at / key) is None:
            (at / key).fail("expected a time, got null")
    if fields.count(harness.get("n"), at / "n") > MAX_COUNT:
        (at / "n").fail(f"{harness['n']} samples is more than any run takes ({MAX_COUNT:g})")
    sync, high = harness["sync_s"], harness["sync_high_s"]
    if sync > high + recordable.SUMMARY_TOLERANCE * high:
        (at / "sync_s").fail(f"{sync:g} lies above its own interval's upper end ({high:g}): {recordable.NOT_WRITTEN}")


def timed_rounds(variant: Mapping[str, Any]) -> int:
    """The timed rounds a variant's samples hold (checked by _variant before)."""
    return len((variant.get("samples") or {}).get("done_s") or ())


def check_sampling(raw: Any, at: At) -> None:
    """A case's sampling (model.Sampling) as a run writes it, each key named where it is not: its rounds a count,
    its stop one of StopReason's words, its elapsed time a measured one, its time limit and noise target the positive
    settings spec.schema.coerce_setting takes, its noise a relative half-width no wider than MAX_REL_NOISE, its
    autocorrelation within [-1, 1]. `show` printed a ±1e+300% noise and an autocorrelation of 1.5 as measured, and a
    null time limit ended in a traceback."""
    if not raw:
        return
    sampling = fields.mapping(raw, at)
    case_held.known_keys(sampling, SAMPLING_KEYS, at)
    for key in SAMPLING_NEEDED:
        if key not in sampling:
            (at / key).fail("missing")
    rounds = fields.count(sampling.get("rounds"), at / "rounds")
    if rounds > MAX_COUNT:
        (at / "rounds").fail(f"{rounds} rounds is more than any run takes ({MAX_COUNT:g})")
    fields.word(sampling.get("stopped_by"), at / "stopped_by", STOP_REASONS)
    if recordable.measured_time(sampling.get("elapsed_s"), at / "elapsed_s") is None:
        (at / "elapsed_s").fail("expected a time, got null")
    # a setting, not a measurement: a user's "no limit" may be any finite time (coerce_setting takes it, and a
    # timeout_s past it), so it is held to no ceiling; coerce_setting has refused 0 and less since the first release
    if fields.number(sampling.get("max_time_s"), at / "max_time_s") <= 0:
        (at / "max_time_s").fail(f"a time limit is above 0, got {sampling['max_time_s']:g}")
    # and a stop by it (the only place its number is shown) comes once the samples took it (measure.timing stops by
    # max_time_s only where elapsed_s >= max_time_s), so it is no more than the measured elapsed_s, itself a year at
    # most: "stopped by max_time_s (1e+300 s)" after 0.68 s is an edit. A limit a run never reached stays unheld.
    if sampling["stopped_by"] == StopReason.TIME and sampling["max_time_s"] > sampling["elapsed_s"] * (1 + recordable.SUMMARY_TOLERANCE):
        (at / "max_time_s").fail(
            f"stopped by max_time_s ({sampling['max_time_s']:g} s) after {sampling['elapsed_s']:g} s: a run stops by it only once "
            f"its samples took it, {recordable.NOT_WRITTEN}"
        )
    if fields.number(sampling.get("max_rel_noise"), at / "max_rel_noise") <= 0:
        (at / "max_rel_noise").fail(f"a noise target is above 0, got {sampling['max_rel_noise']:g}")
    for key in ("rel_noise", "max_rel_noise"):
        share = fields.optional_number(sampling.get(key), at / key)
        if share is not None and share < 0:
            (at / key).fail(f"a relative half-width cannot be negative ({share:g})")
        if share is not None and share > MAX_REL_NOISE:
            (at / key).fail(f"{share:g} is wider than any interval a run measures ({MAX_REL_NOISE:.3g}: a year over a nanosecond)")
    rho = fields.optional_number(sampling.get("lag1_autocorrelation"), at / "lag1_autocorrelation")
    if rho is not None and not -1 <= rho <= 1:
        (at / "lag1_autocorrelation").fail(f"{rho:g} is not an autocorrelation (within -1 and 1)")
