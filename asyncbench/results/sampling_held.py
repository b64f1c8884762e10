"""How a result says it was taken — its sampling (rounds, why it stopped), the steps each sample ran, the harness's
own cost — each held to what a run of asyncbench can have written (results.records checks a result key by key and
calls these): a count no measurement reaches, more rounds than the samples came from, a step count that is not the
one its per-step figures were divided by, a sync above its own interval, are edits, refused in one line naming the
key before anything is shown.
"""

from __future__ import annotations

from typing import Any, Mapping

from asyncbench.results import fields, recordable, step_figures
from asyncbench.results.fields import At
from asyncbench.results.model import StopReason

# A count (samples, rounds) above this is no measurement's: a billion samples of the fastest op take minutes.
MAX_COUNT = 10**9
STOP_REASONS = [str(reason) for reason in StopReason]


def check_steps(result: Mapping[str, Any], at: At) -> None:
    """A step form's `steps` (the user's steps one sample runs, what every per-step figure was divided by: its
    `step_s_kK` metrics, a census's or a bound's `steps_per_call`) is a count of at least one, and the count those
    figures say they were divided by, where they took rounds. `steps: -20` beside per-step times would be shown as if measured."""
    stepped = any(name.startswith(step_figures.STEP_METRIC) for name in result.get("metrics") or {})
    if not stepped or "steps" not in (result.get("params") or {}):
        return
    steps = fields.count(result["params"]["steps"], at)
    if steps < 1:
        at.fail("a sample runs at least one step")
    for kind in ("syncs", "bound"):
        for variant, stored in fields.optional_mapping(result.get(kind), at).items():
            if not isinstance(stored, Mapping) or not stored.get("rounds"):
                continue  # no rounds divided by anything (a synchronous backend's census says 1): checked later
            said = stored.get("steps_per_call")
            if said is not None and said != steps:
                at.fail(f"{steps} steps a sample, but its {kind} of {variant} divided by {said!r}: {recordable.NOT_WRITTEN}")


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
    if not raw:
        return
    sampling = fields.mapping(raw, at)
    rounds = fields.count(sampling.get("rounds"), at / "rounds")
    if rounds > MAX_COUNT:
        (at / "rounds").fail(f"{rounds} rounds is more than any run takes ({MAX_COUNT:g})")
    fields.word(sampling.get("stopped_by"), at / "stopped_by", STOP_REASONS)
    recordable.measured_time(sampling.get("elapsed_s"), at / "elapsed_s")
    recordable.duration(sampling.get("max_time_s"), at / "max_time_s")  # a setting: a user's "no limit" may be any time
    for key in ("rel_noise", "max_rel_noise", "lag1_autocorrelation"):
        fields.optional_number(sampling.get(key), at / key)
